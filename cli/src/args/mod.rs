//! The raw command line (clap), one module per verb group. Converted once into
//! domain values by the verbs.

mod claim;
mod globals;
mod journal;
mod park;
mod pr;
mod saga;
mod ship;
mod work;

pub use claim::*;
pub use journal::*;
pub use park::*;
pub use pr::*;
pub use saga::*;
pub use ship::*;
pub use work::*;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// cairn: agent-work lifecycles as typed state machines on a journal (an SQLite
/// file, or a PostgreSQL database).
///
/// Machine-facing verbs print exactly one JSON object on stdout and human
/// detail on stderr. Exit codes: 0 accepted; 1 internal or IO failure; 2 bad
/// input, schema, evidence or correlation error (nothing written); 3
/// concurrency conflict or busy journal (nothing written); 4 not green yet;
/// 5 the journal failed verify or audit.
#[derive(Debug, Parser)]
// Help wraps at 80 columns at most (clap's default off a terminal is 100): pages
// read and paste the same in a terminal, a pipe and a man page.
#[command(name = "cairn", version, propagate_version = true, max_term_width = 80)]
#[command(
    after_help = "Example:\n  cairn --db ./journal.db journal verify\n  cairn schema park check\n  cairn completions bash > ~/.local/share/bash-completion/completions/cairn"
)]
pub struct Cli {
    /// The journal: a SQLite file, or a PostgreSQL database as a postgres://… or
    /// postgresql://… URL [default: $CAIRN_DB, else $XDG_STATE_HOME/cairn/journal.db,
    /// else ~/.local/state/cairn/journal.db]
    #[arg(
        long,
        global = true,
        value_name = "PATH|URL",
        help_heading = "Global options"
    )]
    pub db: Option<PathBuf>,

    /// How long a writer waits for another writer's lock before giving up with exit 3
    #[arg(
        allow_negative_numbers = true,
        long,
        global = true,
        help_heading = "Global options",
        value_name = "MS",
        env = "CAIRN_BUSY_TIMEOUT_MS",
        hide_env_values = true,
        default_value_t = 5000,
        // SQLite takes the wait as a C int of milliseconds (~24.8 days at most).
        value_parser = clap::value_parser!(u64).range(0..=i32::MAX as u64)
    )]
    pub busy_timeout_ms: u64,

    /// The Ed25519 key that signs every transition this process records [default:
    /// $XDG_CONFIG_HOME/cairn/signing.key, else ~/.config/cairn/signing.key; created
    /// mode 0600 at the first append]
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "PATH",
        env = "CAIRN_SIGNING_KEY",
        hide_env_values = true
    )]
    pub signing_key: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
// Each verb's arguments are built only when that verb is parsed, or when the
// whole tree is built (`args::built`: help, completions, man pages, schemas):
// building every flag of every verb was most of a short verb's start-up. The
// same on every group enum.
#[command(defer = true)]
pub enum Command {
    /// List the registered machines with their states and events
    #[command(after_help = "Example:\n  cairn machines")]
    Machines,
    /// Export a machine's transition graph
    #[command(
        after_help = "DOT and Mermaid draw parallel edges as one edge and an event every live state takes as one edge from \"any live state\"; json and xstate list every edge.\n\nExample:\n  cairn graph park --format mermaid\n  cairn graph ship --format dot | dot -Tsvg > ship.svg"
    )]
    Graph {
        /// The machine's name (see `cairn machines`)
        machine: String,
        /// The output format
        #[arg(long, value_enum, default_value_t = GraphFormat::Json)]
        format: GraphFormat,
    },
    /// Rebuild a stream's state by replaying its events
    #[command(
        after_help = "Example:\n  cairn state park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b --at 2"
    )]
    State {
        /// The stream id, `<machine>/<instance>`
        stream: String,
        /// Replay only the first VERSION events (time travel)
        #[arg(allow_negative_numbers = true, long, value_name = "VERSION")]
        at: Option<u64>,
    },
    /// Record one JSON command (stdin) on a stream of any registered machine
    #[command(
        after_help = "Reads one JSON command of MACHINE on stdin (the machine's own command, as serde reads it), decides it against STREAM with the same rules, idempotency key and journal as every verb, and records it. A command whose evidence cairn observes itself (git, gh, criterion runs, files as found) is refused, naming the verb that records it. Exit 0 recorded; 2 bad input or refused (nothing written); 3 conflict or busy; 4 recorded, not green yet.\n\nExample:\n  cairn saga save --saga-id issue-42 --lifecycle-phase work\n  echo '{\"command\": \"adjust\",\n    \"directive\": \"drain\"}' | cairn exec saga saga/issue-42"
    )]
    Exec {
        /// The machine's name (see `cairn machines`)
        machine: String,
        /// The stream id, `<machine>/<instance>`
        stream: String,
        #[command(flatten)]
        key: Key,
    },
    /// Read, verify, audit and copy the journal
    #[command(
        subcommand,
        after_help = "Example:\n  cairn journal log --stream park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\n  cairn journal verify\n  cairn journal audit"
    )]
    Journal(JournalCommand),
    /// The worktree ship pipeline: preflight, worktree, phase gates, merge, teardown, resume
    #[command(
        subcommand,
        after_help = "A run: open, create, verify, refine, pre-merge, merge, teardown; `ship status` names what may happen next.\n\nExample:\n  cairn ship status --short-id abc\n  cairn ship create --short-id abc"
    )]
    Ship(ShipCommand),
    /// The PR continuation loop: classify readings, rounds, confirmed offers
    #[command(
        subcommand,
        after_help = "Example:\n  cairn pr fetch --pr https://github.com/o/r/pull/7\n  cairn pr observe --pr https://github.com/o/r/pull/7 < observation.json"
    )]
    Pr(PrCommand),
    /// Work nodes: validate a workspec, status, plan, dispatch, verify, merge, done
    #[command(
        subcommand,
        after_help = "Example:\n  cairn work validate --spec .work/specs/cache.yaml\n  cairn work status --spec .work/specs/cache.yaml --session s-42"
    )]
    Work(WorkCommand),
    /// The saga work thread: ticks, scan, restore, show, QA
    #[command(
        subcommand,
        after_help = "Example:\n  cairn saga save --saga-id issue-42 --lifecycle-phase work\n  cairn saga restore --saga-id issue-42"
    )]
    Saga(SagaCommand),
    /// One build-loop iteration: run the unit's written exit criterion, record it
    #[command(
        after_help = "Runs every command of the criterion without a shell (split into words; globs expanded by cairn from the repo root), each with a timeout, and appends the iteration to the unit's build_loop block in the run record and to the journal. Exit 0 green (the block records handed_to_code_review with the full revision) or dry run; 4 not green yet (an iteration, not a refusal); 2 refusal; 3 record version not one this build writes; 1 internal error.\n\nExample:\n  cairn build-loop --issue 42 --unit U1 --dry-run\n  cairn build-loop --record .claude/saga/runs/issue-42.json --unit U1 \\\n    --timeout-ms 600000"
    )]
    BuildLoop(BuildLoopArgs),
    /// The park-work lifecycle: a drop-in for the park skill's `fold.py` helper
    #[command(
        subcommand,
        after_help = "The park skill's helper verbs: documents on stdin, the helper's bytes on stdout (`cairn schema park <verb>` shows each document's shape).\n\nExample:\n  cairn park check < observation.json\n  cairn park bind-repository < bind.json"
    )]
    Park(ParkCommand),
    /// Claims: an embedded lease with fencing tokens, one per resource
    #[command(
        subcommand,
        after_help = "Example:\n  cairn claim acquire --owner a --claim-id c1 --ttl 30s \\\n    --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\n  cairn claim show --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Claim(ClaimCommand),
    /// Print the JSON Schemas of a verb's stdin document and of its stdout
    #[command(
        after_help = "Prints {verb, stdin, stdout: {success, error}}: each a JSON Schema (2020-12) generated from cairn's types, or null where the verb reads no document (stdin) or prints a view that is not yet one type (success). Without a verb: every verb and which schemas it has.\n\nExample:\n  cairn schema park check\n  cairn schema"
    )]
    Schema {
        /// The verb, as typed after `cairn` (e.g. `park check`, `journal audit`)
        #[arg(value_name = "VERB")]
        verb: Vec<String>,
    },
    /// Print a shell completion script
    #[command(
        after_help = "Example:\n  cairn completions bash > ~/.local/share/bash-completion/completions/cairn\n  cairn completions zsh > ~/.zfunc/_cairn"
    )]
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): cairn's, or one verb's
    #[command(
        after_help = "Example:\n  cairn man > cairn.1 && man ./cairn.1\n  cairn man park check | man -l -"
    )]
    Man {
        /// The verb whose page to print (none: cairn's own)
        #[arg(value_name = "VERB")]
        verb: Vec<String>,
    },
}

// Retry-safe, fenced recording: on every verb that records (and on no other;
// the claim verbs take [`ClaimKey`]).
#[derive(Debug, Clone, clap::Args)]
pub struct Key {
    /// Retry-safe recording: the same key with the same input returns the first
    /// recorded result and writes nothing; with another input it is refused (exit 2)
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// The token of the caller's live claim on the stream this verb acts on (`cairn
    /// claim acquire --resource <that stream>`): while a lease is live, an act needs
    /// its token; a token of no live lease is stale. Refused: exit 3, nothing written
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fencing_token: Option<String>,
}

impl Key {
    /// The key, when one was given.
    pub fn get(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }
}

// Retry-safe recording of a claim verb. A claim's own stream is not fenced: its
// verbs name their token with `--token`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClaimKey {
    /// Retry-safe recording: the same key with the same input returns the first
    /// recorded result and writes nothing; with another input it is refused (exit 2)
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

impl ClaimKey {
    /// As a [`Key`] with no fencing token.
    pub fn key(&self) -> Key {
        Key {
            idempotency_key: self.idempotency_key.clone(),
            fencing_token: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT (`| dot -Tsvg > graph.svg`)
    Dot,
    /// A Mermaid stateDiagram-v2 (paste into a ```mermaid block)
    Mermaid,
    /// cairn's graph: states and every (from, event, to) edge
    Json,
    /// An XState machine config (paste into the XState visualiser)
    Xstate,
}

/// The command line as clap builds it (the parser, `cairn schema`, completions
/// and man pages all read this one).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    globals::hide_where_ignored(Cli::command())
}

/// [`command`] as parsing `argv` reads it (the program name first): the same
/// parse, with only the verb it names prepared for its help (see
/// [`globals::hide_for`]).
pub fn command_for(argv: &[std::ffi::OsString]) -> clap::Command {
    use clap::CommandFactory;
    globals::hide_for(Cli::command(), argv)
}

/// [`command`] with every verb's arguments built (see `Command`'s `defer`): what
/// reads the whole tree — its flags, not only its verbs — starts here.
pub fn built() -> clap::Command {
    let mut cmd = command();
    cmd.build();
    cmd
}

/// [`built`] as completion scripts offer it: clap_complete lists every argument,
/// hidden or not, so the hidden ones (an ignored global's copy, an older
/// spelling) and hidden verbs are left out of a copy of the tree built already
/// (so each verb holds its own copy of the globals it takes, and none is made
/// global again to reach the verbs that ignore it). A completion
/// script offers words and checks nothing, so the copy drops the relations
/// between arguments (conflicts, requirements, groups) that would otherwise name
/// an argument left out.
pub fn for_completion() -> clap::Command {
    use clap::builder::Resettable::Reset;
    fn visible(cmd: &'static clap::Command) -> clap::Command {
        let mut out = clap::Command::new(cmd.get_name())
            .disable_help_flag(true)
            .disable_version_flag(true)
            .disable_help_subcommand(true)
            .visible_aliases(cmd.get_visible_aliases())
            .args(cmd.get_arguments().filter(|a| !a.is_hide_set()).map(|a| {
                a.clone()
                    .global(false)
                    .conflicts_with(Reset)
                    .requires(Reset)
            }))
            .subcommands(
                cmd.get_subcommands()
                    .filter(|c| !c.is_hide_set())
                    .map(visible),
            );
        if let Some(about) = cmd.get_about() {
            out = out.about(about.clone());
        }
        if let Some(version) = cmd.get_version() {
            out = out.version(version);
        }
        out
    }
    // The copy borrows its names from the tree, which lives as long as the
    // process (one completion script per process, as the parsed tree is).
    visible(Box::leak(Box::new(built())))
}

/// The global options' ids.
#[cfg(test)]
const GLOBAL: [&str; 3] = ["db", "busy_timeout_ms", "signing_key"];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every verb and group, with its path.
    fn all(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            let p = format!("{path} {}", sub.get_name());
            out.push((p.clone(), sub.clone()));
            all(sub, p, out);
        }
    }

    fn commands() -> Vec<(String, clap::Command)> {
        let cmd = built();
        let mut out = vec![("cairn".to_owned(), cmd.clone())];
        all(&cmd, "cairn".into(), &mut out);
        out
    }

    /// A verb's page says what the verb does — the line its group lists — and not
    /// the doc of a struct its flags come from: with `defer`, a flattened struct's
    /// doc comment would land after the verb's own (so those are `//` comments).
    #[test]
    fn every_page_opens_with_its_own_description() {
        fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, Option<String>)>) {
            for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
                let p = format!("{path} {}", sub.get_name());
                out.push((p.clone(), sub.get_about().map(ToString::to_string)));
                walk(sub, p, out);
            }
        }
        let (mut listed, mut shown) = (Vec::new(), Vec::new());
        walk(&command(), "cairn".into(), &mut listed);
        walk(&built(), "cairn".into(), &mut shown);
        assert_eq!(listed.len(), shown.len());
        for ((path, listed), (_, shown)) in listed.iter().zip(&shown) {
            assert!(listed.is_some(), "`{path}` has no description");
            assert_eq!(listed, shown, "`{path} --help` opens with another text");
        }
    }

    /// Help reads within 80 columns, on a terminal or not (the usage line, which
    /// clap does not wrap, aside).
    #[test]
    fn every_page_fits_80_columns() {
        let mut cmd = built();
        let mut wide = Vec::new();
        let mut pages = vec![("cairn".to_owned(), cmd.render_help().to_string())];
        fn walk(cmd: &mut clap::Command, path: &str, out: &mut Vec<(String, String)>) {
            for sub in cmd.get_subcommands_mut().filter(|c| c.get_name() != "help") {
                let p = format!("{path} {}", sub.get_name());
                out.push((p.clone(), sub.render_help().to_string()));
                walk(sub, &p, out);
            }
        }
        walk(&mut cmd, "cairn", &mut pages);
        for (path, page) in &pages {
            for line in page.lines().filter(|l| !l.starts_with("Usage:")) {
                if line.chars().count() > 80 {
                    wide.push(format!("{path}: {line}"));
                }
            }
        }
        assert!(pages.len() > 80, "{} pages", pages.len());
        assert!(wide.is_empty(), "{}", wide.join("\n"));
    }

    /// An environment variable's value is never printed in help: a page would show
    /// `[env: CAIRN_SESSION=]` when it is unset, and a secret when it is set.
    #[test]
    fn no_page_prints_an_environment_value() {
        for (path, cmd) in commands() {
            for arg in cmd.get_arguments().filter(|a| a.get_env().is_some()) {
                assert!(arg.is_hide_env_values_set(), "{path} --{}", arg.get_id());
            }
        }
    }

    #[test]
    fn every_flag_is_described() {
        let mut bare = Vec::new();
        for (path, cmd) in commands() {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.is_hide_set() || matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    bare.push(format!("{path} {id}"));
                }
            }
        }
        assert!(
            bare.is_empty(),
            "{} flags without help:\n{}",
            bare.len(),
            bare.join("\n")
        );
    }

    #[test]
    fn every_page_has_an_example_that_pastes() {
        for (path, cmd) in commands() {
            let after = cmd
                .get_after_help()
                .or(cmd.get_after_long_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            let Some((_, example)) = after.split_once("Example:\n") else {
                panic!("`{path} --help` has no example");
            };
            // Inside a single-quoted string, or after a trailing `\\` or `|`, a
            // line continues the command above it.
            let (mut continued, mut quoted) = (false, false);
            for line in example.lines() {
                assert!(
                    line.chars().count() < 80,
                    "`{path} --help`: an example line of {} columns:\n{line}",
                    line.chars().count()
                );
                let command = line.trim_start();
                let assignment = command
                    .split_once('=')
                    .is_some_and(|(name, _)| name.chars().all(|c| c.is_ascii_uppercase()));
                if !continued && !quoted && !command.is_empty() {
                    assert!(
                        command.starts_with("cairn ")
                            || command.starts_with("echo ")
                            || command.starts_with("gh ")
                            || assignment,
                        "`{path} --help`: {line}"
                    );
                }
                quoted ^= line.matches('\'').count() % 2 == 1;
                continued = line.ends_with('\\') || line.ends_with('|');
            }
            assert!(!quoted, "`{path} --help`: an unclosed quote");
        }
    }

    #[test]
    fn global_options_are_under_one_heading() {
        let cmd = command();
        let globals: Vec<_> = cmd
            .get_arguments()
            .filter(|a| GLOBAL.contains(&a.get_id().as_str()))
            .collect();
        assert_eq!(globals.len(), GLOBAL.len());
        for arg in globals {
            assert_eq!(
                arg.get_help_heading(),
                Some("Global options"),
                "{}",
                arg.get_id()
            );
        }
    }
}
