//! The journal's trust verbs: the signing key a writer uses, `journal verify` with
//! a kept head, a signed anchor and a trusted key, `journal anchor`, `journal key`,
//! and `journal copy` between locations.

use std::path::Path;

use cairn::journal::{
    Anchor, ChainHead, CopyReport, Journal, Location, Options, SigningKey, VerifyOptions,
};
use schemars::JsonSchema;
use serde::Serialize;

use crate::args::Cli;
use crate::failure::{input, Done, Failure};
use crate::output;

/// This user's signing key: `--signing-key`, else `CAIRN_SIGNING_KEY`, else the
/// default file under the config directory, created (0600) on first use.
pub fn signing_key(cli: &Cli) -> Result<SigningKey, Failure> {
    Ok(SigningKey::load_or_create(&signing_key_path(cli)?)?)
}

/// Where this user's signing key is (checked, not read or created): verbs that
/// may record pass it to the journal, which loads or creates the key at its
/// first append — a verb that ends up recording nothing never touches it.
pub fn signing_key_path(cli: &Cli) -> Result<std::path::PathBuf, Failure> {
    let path = match &cli.signing_key {
        Some(p) => p.clone(),
        None => cairn::journal::default_key_path().ok_or_else(|| {
            input(
                "signing_key",
                "key-location",
                "no signing key location: pass --signing-key, or set CAIRN_SIGNING_KEY, XDG_CONFIG_HOME or HOME",
            )
        })?,
    };
    // The key must not be the journal or one of SQLite's files beside it (SQLite
    // would overwrite it, and every write would mint a new key). A PostgreSQL
    // journal has no file beside the key to collide with.
    if let Ok(Location::Sqlite(db)) = crate::verbs::db_location(cli) {
        let taken: Vec<std::path::PathBuf> = ["", "-wal", "-shm", "-journal"]
            .iter()
            .map(|s| {
                let mut p = db.as_os_str().to_owned();
                p.push(s);
                std::path::PathBuf::from(p)
            })
            .collect();
        if taken.iter().any(|t| same_file(t, &path)) {
            return Err(input(
                "signing_key",
                "key-not-journal",
                "the signing key cannot be the journal or one of its -wal, -shm, -journal files",
            ));
        }
    }
    Ok(path)
}

/// Whether `a` and `b` name one file however each is spelled (helper-75:
/// `../k/j.db-wal` from inside `k` passed a comparison of the text): the same
/// inode when both exist, else the same path with each directory resolved.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    let resolved = |p: &Path| {
        let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        match (abs.parent().map(std::fs::canonicalize), abs.file_name()) {
            (Some(Ok(dir)), Some(name)) => dir.join(name),
            _ => abs,
        }
    };
    resolved(a) == resolved(b)
}

/// `SEQ:HASH` as printed in a verify report's `head`, or a signed anchor.
enum Kept {
    Head(ChainHead),
    Anchor(Anchor),
}

fn parse_kept(text: &str) -> Result<Kept, Failure> {
    let text = text.trim();
    if text.starts_with("cairn-anchor-v1:") {
        return Anchor::parse(text).map(Kept::Anchor).ok_or_else(|| {
            input(
                "expect_head",
                "anchor-format",
                "expected cairn-anchor-v1:SEQ:HASH:PUBLIC_KEY:SIGNATURE as `cairn journal anchor` prints it",
            )
        });
    }
    let bad = || {
        input(
            "expect_head",
            "head-format",
            "expected SEQ:HASH (a sequence number and 64 hex digits) or a signed anchor",
        )
    };
    let (seq, hash) = text.split_once(':').ok_or_else(bad)?;
    let seq: i64 = seq.parse().map_err(|_| bad())?;
    if seq < 1 || hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    Ok(Kept::Head(ChainHead {
        seq,
        hash: hash.to_ascii_lowercase(),
    }))
}

fn is_public_key(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `cairn journal verify [--expect-head SEQ:HASH|ANCHOR] [--trusted-key KEY]`.
pub fn verify(
    db: &Location,
    options: &Options,
    expect_head: Option<&str>,
    trusted_key: Option<&str>,
) -> Result<Done, Failure> {
    let mut checks = VerifyOptions::default();
    match expect_head.map(parse_kept).transpose()? {
        None => {}
        Some(Kept::Head(h)) => checks.expect = Some(h),
        Some(Kept::Anchor(a)) => checks.anchor = Some(a),
    }
    if let Some(k) = trusted_key {
        if !is_public_key(k) {
            return Err(input(
                "trusted_key",
                "public-key",
                "expected an Ed25519 public key: 64 lower-case hex digits, as `cairn journal key` prints it",
            ));
        }
        checks.trusted_key = Some(k.to_owned());
    }
    let journal = Journal::open_read_only(db, options)?;
    // Only the progress bar's total: a head that cannot be read (damage at the
    // end of the file, the likeliest kind) is for the walk to report, with
    // everything before it (helper-49: it ended the verb with an error).
    let total = journal
        .head()
        .ok()
        .flatten()
        .map_or(0, |(seq, _)| u64::try_from(seq).unwrap_or(0));
    let progress = crate::progress::Progress::new("verify", total);
    let report = journal.verify_observed(&checks, &mut |n| progress.set(n));
    progress.clear();
    let report = report?;
    output::json(&report);
    match report.problems.first() {
        None => {
            crate::output::stderr_line(format_args!(
                "cairn: journal intact: {} in {}, {}; {} ({} signed, {} unsigned){}{}",
                output::count(report.events, "event"),
                output::count(report.streams, "stream"),
                output::count(report.transitions, "transition"),
                report.signing.status,
                report.signing.signed,
                report.signing.unsigned,
                match (&report.head, report.tail) {
                    (Some(h), "unanchored") => format!(
                        "; tail unanchored: keep `cairn journal anchor` (or --expect-head {}:{}) to detect a truncated tail later",
                        h.seq, h.hash
                    ),
                    _ => String::new(),
                },
                report
                    .loose_permissions
                    .as_ref()
                    .map(|m| format!("; warning: the file has mode {m}: chmod 600 it"))
                    .unwrap_or_default()
            ));
            if !report.unguarded.is_empty() {
                crate::output::stderr_line(format_args!(
                    "cairn: warning: the database no longer refuses {} (an append-only trigger was dropped or disabled); the history itself verifies",
                    report.unguarded.join(", ")
                ));
            }
            Ok(Done::Ok)
        }
        Some(p) => Err(Failure::Integrity(format!(
            "journal verify found {} problem(s); first: {} at seq {} ({}): {}",
            report.problem_count,
            serde_json::to_value(p.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            p.seq.map_or("-".into(), |s| s.to_string()),
            p.stream.as_deref().unwrap_or("-"),
            p.detail
        ))),
    }
}

/// `journal anchor`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnchorView {
    /// `cairn-anchor-v1:SEQ:HASH:PUBLIC_KEY:SIGNATURE`, what `verify --expect-head` takes.
    pub anchor: String,
    /// The head's sequence number.
    pub seq: i64,
    /// The head's hash.
    pub hash: String,
    /// The signing key's public half (hex).
    pub public_key: String,
}

/// `journal key`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyView {
    /// The public half (64 hex digits), what `verify --trusted-key` takes.
    pub public_key: String,
    /// The key file.
    pub path: Option<String>,
}

/// `journal copy`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CopyView {
    pub from: Side,
    pub to: Side,
    pub copy: CopyReport,
}

/// One side of a copy.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Side {
    /// The location, a password in a URL masked.
    pub location: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
}

impl Side {
    fn of(l: &Location) -> Self {
        Self {
            location: l.to_string(),
            backend: l.backend(),
        }
    }
}

/// `cairn journal anchor`: the head, signed by this user's key.
pub fn anchor(db: &Location, options: &Options, cli: &Cli) -> Result<Done, Failure> {
    let journal = Journal::open_read_only(db, options)?;
    // Never sign a head the journal's own checks refuse.
    let report = journal.verify()?;
    if !report.ok {
        return Err(Failure::Unsound(format!(
            "journal verify found {}: no anchor is signed for a journal that does not verify (`cairn journal verify` lists them)",
            output::count(report.problem_count, "problem")
        )));
    }
    let (seq, hash) = journal.head()?.ok_or_else(|| {
        input(
            "db",
            "journal-has-events",
            "the journal has no events: there is no head to anchor",
        )
    })?;
    let key = signing_key(cli)?;
    let anchor = key.anchor(seq, &hash);
    output::json(&AnchorView {
        anchor: anchor.text(),
        seq: anchor.seq,
        hash: anchor.hash,
        public_key: anchor.public_key,
    });
    crate::output::stderr_line(format_args!(
        "cairn: keep this anchor outside the journal; `cairn journal verify --expect-head <anchor>` checks it later"
    ));
    Ok(Done::Ok)
}

/// `cairn journal key`: the public half of this user's signing key.
pub fn key(cli: &Cli) -> Result<Done, Failure> {
    let key = signing_key(cli)?;
    output::json(&KeyView {
        public_key: key.public_hex(),
        path: key.path().map(|p| p.display().to_string()),
    });
    Ok(Done::Ok)
}

/// `cairn journal copy --from A --to B`: every row verbatim into an empty journal,
/// the chain verified on both sides.
pub fn copy(from: &Location, to: &Location, options: &Options) -> Result<Done, Failure> {
    let source = Journal::open_read_only(from, options).map_err(|e| Failure::Flag {
        field: "from",
        inner: Box::new(Failure::from(e)),
    })?;
    let target_options = Options {
        signing_key: None,
        signing_key_at: None,
        ..options.clone()
    };
    // The source is verified before the target is opened: a source that fails
    // verify creates no target journal.
    let verified = source.verify()?;
    let report = if verified.ok {
        // A target that is not a journal is `--to`'s fault (helper-70: it named
        // `db`); failures of the copy itself are the copy's.
        let mut target = Journal::open(to, &target_options).map_err(|e| Failure::Flag {
            field: "to",
            inner: Box::new(Failure::from(e)),
        })?;
        source.copy_verified(verified, &mut target)?
    } else {
        cairn::journal::CopyReport::refused(verified)
    };
    output::json(&CopyView {
        from: Side::of(from),
        to: Side::of(to),
        copy: report.clone(),
    });
    if !report.copied {
        return Err(Failure::Integrity(format!(
            "the source failed verify ({} problem(s)); nothing was copied",
            report.source.problem_count
        )));
    }
    if !report.ok {
        return Err(Failure::Integrity(
            "the copy does not verify as the source did (see `copy.target`)".into(),
        ));
    }
    crate::output::stderr_line(format_args!(
        "cairn: copied {}, {}, {} and {} from {from} to {to}; both verify{}",
        output::count(report.events, "event"),
        output::count(report.transitions, "transition"),
        output::count(report.keys, "signing key"),
        output::count(report.signatures, "signature"),
        report
            .head
            .as_ref()
            .map(|h| format!(", head {}:{}", h.seq, h.hash))
            .unwrap_or_default()
    ));
    Ok(Done::Ok)
}
