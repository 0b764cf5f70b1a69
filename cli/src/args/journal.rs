//! `cairn journal …`: the verbs that read, verify, audit and copy the journal, and
//! their output formats.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum JournalCommand {
    /// Show events in sequence order, a page at a time
    #[command(
        after_help = "A page holds at most --limit events. When more exist, the JSON carries next_since and stderr says so: pass it back as --since for the next page.\n\nExample:\n  cairn journal log --stream park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b \\\n    --format json\n  cairn journal log --since 1000 --limit 500 --format json"
    )]
    Log {
        /// Only this stream
        #[arg(long, value_name = "STREAM")]
        stream: Option<String>,
        /// Only events after this sequence number (a page's `next_since`)
        #[arg(value_parser = clap::value_parser!(i64).range(0..),
            allow_negative_numbers = true,
            long,
            value_name = "SEQ",
            default_value_t = 0
        )]
        since: i64,
        /// At most this many events on the page
        #[arg(allow_negative_numbers = true, long, value_name = "N", default_value_t = LOG_LIMIT,
              value_parser = clap::value_parser!(u64).range(1..i64::MAX as u64))]
        limit: u64,
        /// The output format
        #[arg(long, value_enum, default_value_t = LogFormat::Table)]
        format: LogFormat,
    },
    /// List every stream: its machine, version, last event and when it was recorded
    #[command(
        after_help = "Streams by name. JSON by default (`cairn schema journal streams`).\n\nExample:\n  cairn journal streams\n  cairn journal streams --format table"
    )]
    Streams {
        /// The output format
        #[arg(long, value_enum, default_value_t = LogFormat::Json)]
        format: LogFormat,
    },
    /// Show how lifecycles are linked: every decision that read another stream (a
    /// merge naming its ship run, an evaluation reading a PR loop, an act fenced by
    /// its lease)
    #[command(
        after_help = "A link is the read a transition recorded (hashed and signed with it): the reader's stream and command, the stream read, its version, state and fact. With STREAM, the links on either side of it; without, the whole journal. A stream nothing recorded or read is no-such-stream (exit 2). JSON by default (`cairn schema journal links`).\n\nExample:\n  cairn journal links saga/issue-42 --format table\n  cairn journal links --format dot | dot -Tsvg > links.svg"
    )]
    Links {
        /// Only the links that read this stream or that its transitions recorded
        #[arg(value_name = "STREAM")]
        stream: Option<String>,
        /// The output format
        #[arg(long, value_enum, default_value_t = crate::links::LinksFormat::Json)]
        format: crate::links::LinksFormat,
    },
    /// Check the hash chain, every stream's versions and every transition record
    #[command(
        after_help = "Exit 0 when intact, 5 naming the first broken event otherwise. A chain cannot prove its own tail: keep the reported head outside the journal and pass it back with --expect-head to detect a truncated or rewritten tail.\n\nExample:\n  HEAD=$(cairn journal verify | jq -r '\"\\(.head.seq):\\(.head.hash)\"')\n  cairn journal verify --expect-head \"$HEAD\""
    )]
    Verify {
        /// A head kept from earlier: `SEQ:HASH` from a verify report, or a signed
        /// anchor from `cairn journal anchor` (its signature must hold): the journal
        /// must still contain it
        #[arg(long, allow_hyphen_values = true, value_name = "SEQ:HASH|ANCHOR")]
        expect_head: Option<String>,
        /// Every transition (and the anchor) must be signed by this public key (64
        /// hex digits, as `cairn journal key` prints it)
        #[arg(long, value_name = "PUBLIC_KEY")]
        trusted_key: Option<String>,
    },
    /// Print a signed anchor of the journal's head, to keep outside the journal (a
    /// bead comment, a git note) and pass back to `verify --expect-head`
    #[command(
        after_help = "Example:\n  ANCHOR=$(cairn journal anchor | jq -r .anchor)\n  cairn journal verify --expect-head \"$ANCHOR\""
    )]
    Anchor,
    /// Print the public half of this user's signing key (creating the key on first
    /// use): what `verify --trusted-key` takes
    #[command(after_help = "Example:\n  cairn journal key")]
    Key,
    /// Show one transition record: the command and evidence it carried, its context,
    /// rules version, idempotency key, and the events it produced
    #[command(after_help = "Example:\n  cairn journal show 42 --format json")]
    Show {
        /// The transition id (`transition_id` in `journal log`)
        #[arg(allow_negative_numbers = true)]
        transition: i64,
        /// The output format
        #[arg(long, value_enum, default_value_t = LogFormat::Table)]
        format: LogFormat,
    },
    /// Replay every stream, check each event is an edge of its machine's graph,
    /// and re-decide every recorded transition
    #[command(
        after_help = "Exit 0 when every transition re-decides to its recorded events, 5 otherwise. --format md|html prints a report to read: per stream what was re-decided, and each finding with the recorded and re-decided value of every differing field.\n\nExample:\n  cairn journal audit --stream park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\n  cairn journal audit --format html > audit.html"
    )]
    Audit {
        /// Only this stream
        #[arg(long, value_name = "STREAM")]
        stream: Option<String>,
        /// The output format: the JSON report, or one to read
        #[arg(long, value_enum, default_value_t = AuditFormat::Json)]
        format: AuditFormat,
    },
    /// Copy a journal verbatim into an empty one, between SQLite and PostgreSQL
    /// (either way): events, transition records, signing keys and signatures, the
    /// chain verified on both sides
    #[command(
        after_help = "The source is verified first (a source that fails verify is not copied: exit 5); the rows are written in one transaction of the target, which must be empty (exit 2 otherwise); the target is verified after and must have the source's head and counts (exit 5 otherwise). --db is not used.\n\nExample:\n  cairn journal copy --from ./journal.db --to postgresql://cairn@db/cairn"
    )]
    Copy {
        /// The journal to copy (a SQLite path or a postgres:// URL); opened read-only
        #[arg(long, value_name = "PATH|URL")]
        from: PathBuf,
        /// The empty journal to copy into (created when missing)
        #[arg(long, value_name = "PATH|URL")]
        to: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    /// The report as one JSON object (`cairn schema journal audit`)
    Json,
    /// A Markdown report
    Md,
    /// A standalone HTML page
    Html,
}

/// `journal log`'s page size when `--limit` is not given.
pub const LOG_LIMIT: u64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Table,
    Json,
}
