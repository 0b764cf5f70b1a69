//! The run record (`run_record.v1`) on disk: where it is, read once strictly,
//! written with the contract's key order (atomically), and the lock that
//! serialises every rewrite of one record — so units iterating at once never lose
//! an iteration, and the record and the journal never disagree.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use cairn::machines::build_loop::{self, Event};
use cairn::machines::evidence::{wire, FullCommit};
use serde_json::{json, Map, Value};

use crate::args::BuildLoopArgs;
use crate::failure::{input, Failure};

/// The contract's top-level key order.
pub(super) const KEY_ORDER: [&str; 12] = [
    "schema",
    "issue",
    "repo",
    "created_at",
    "updated_at",
    "admission",
    "run_configuration",
    "approval_scope",
    "roster",
    "units",
    "review_cycles",
    "next_step",
];

pub(super) fn git_line(dir: &str, rest: &[&str]) -> Option<String> {
    let r = cairn::observe::run(&cairn::observe::git(dir, rest));
    (r.exit_status == Some(0)).then(|| r.stdout.trim().to_owned())
}

pub(super) fn record_path(a: &BuildLoopArgs, repo: &str) -> Result<PathBuf, Failure> {
    if let Some(p) = &a.record {
        return Ok(PathBuf::from(p));
    }
    let n = a.issue.ok_or_else(|| {
        input(
            "record",
            "record-named",
            "name the run record: --record PATH or --issue N",
        )
    })?;
    if let Some(root) = &a.store_root {
        return Ok(Path::new(root).join(format!("issue-{n}.json")));
    }
    let common = git_line(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok_or_else(|| {
        input(
            "repo_root",
            "git-repository",
            "the repo root is not a readable git repository",
        )
    })?;
    let common = PathBuf::from(common);
    if common.file_name().map_or(true, |f| f != ".git") {
        return Err(input(
            "repo_root",
            "primary-checkout",
            "the git common dir is not named `.git`: pass --record or --store-root",
        ));
    }
    let primary = common.parent().unwrap_or(Path::new("/"));
    Ok(primary
        .join(".claude/saga/runs")
        .join(format!("issue-{n}.json")))
}

/// The record's text and its parsed object (one strict, depth-bounded parse, like
/// every other JSON input).
pub(super) fn read(path: &Path) -> Result<(String, Value), Failure> {
    let text = crate::input::read_file(path, "record", "readable-record")?;
    let record: Value = wire::parse_document(&text).map_err(|e| {
        input(
            "record",
            e.rule,
            &format!("`{}`: {}: {}", path.display(), e.field, e.message),
        )
    })?;
    Ok((text, record))
}

/// An exclusive lock on `<record>.lock`, held from the re-read of the record to
/// the journal append (and the undo if that fails); released when dropped or when
/// the process dies (`flock`).
pub(super) struct Lock {
    _file: File,
}

impl Lock {
    pub(super) fn acquire(record: &Path) -> Result<Self, Failure> {
        let mut name = record.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| input("record", "lock", &format!("`{}`: {e}", path.display())))?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock on a descriptor we own for the lifetime of `file`; it
            // touches no memory of ours. It blocks until the lock is ours.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc != 0 {
                return Err(input(
                    "record",
                    "lock",
                    &format!("`{}`: {}", path.display(), std::io::Error::last_os_error()),
                ));
            }
        }
        Ok(Lock { _file: file })
    }
}

/// Writes the record with the contract's key order at the top level (then any
/// other keys, which are kept), atomically.
pub(super) fn write_record(path: &Path, record: &Map<String, Value>) -> Result<(), Failure> {
    let mut parts = vec![];
    for k in KEY_ORDER.iter().copied().chain(
        record
            .keys()
            .map(String::as_str)
            .filter(|k| !KEY_ORDER.contains(k)),
    ) {
        if let Some(v) = record.get(k) {
            let v = serde_json::to_string_pretty(v)
                .map_err(|e| input("record", "serialization", &e.to_string()))?;
            parts.push(format!(
                "  {}: {}",
                Value::String(k.to_owned()),
                v.replace('\n', "\n  ")
            ));
        }
    }
    let text = format!("{{\n{}\n}}\n", parts.join(",\n"));
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, &text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            input(
                "record",
                "write-error",
                &format!("`{}`: {e}", path.display()),
            )
        })
}

pub(super) fn unit_id(u: &Value) -> Option<String> {
    ["id", "name", "unit_id"]
        .iter()
        .find_map(|k| u.get(*k).and_then(Value::as_str).map(str::to_owned))
}

/// The record with the decided iteration appended to the unit's `build_loop`
/// block (the record's own count numbers it), and the hand-off when it is green.
pub(super) fn with_iteration(
    record: &Map<String, Value>,
    index: usize,
    crit: &build_loop::ExitCriterion,
    events: &[Event],
    at: &cairn::Timestamp,
) -> Result<Map<String, Value>, Failure> {
    let (iteration, handed) = iteration_of(events)?;
    let spell = |s| cairn::machines::time::spell(&at.instant(), s);
    use cairn::machines::time::Spelling;
    let mut new = record.clone();
    if let Some(Value::Array(rows)) = new.get_mut("units") {
        let row = rows[index]
            .as_object_mut()
            .ok_or_else(|| input("units", "unit-row", "a unit row is not an object"))?;
        let mut block = row
            .entry("build_loop")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or_else(|| input("build_loop", "block", "build_loop is not an object"))?
            .clone();
        block.insert(
            "exit_criterion".into(),
            json!({
                "baseline": crit.baseline,
                "functional_checks": crit.functional_checks,
                "scenario_smoke": crit.scenario_smoke,
                "preview": {"declared": crit.preview.declared, "command": crit.preview.command},
            }),
        );
        let iterations = block.entry("iterations").or_insert_with(|| json!([]));
        let mut it = iteration.clone();
        if let Value::Array(list) = iterations {
            it["iteration"] = json!(list.len() + 1);
            list.push(it);
        }
        if let Some(rev) = handed {
            block.insert(
                "handed_to_code_review".into(),
                json!({"revision": rev, "at": spell(Spelling::RecordZ)}),
            );
        }
        row.insert("build_loop".into(), Value::Object(block));
    }
    new.insert("updated_at".into(), json!(spell(Spelling::RecordOffset)));
    Ok(new)
}

/// The iteration an event records, and the revision handed to code review when green.
pub(super) fn iteration_of(events: &[Event]) -> Result<(&Value, Option<&FullCommit>), Failure> {
    match events.first() {
        Some(Event::IterationGreen {
            iteration,
            handed_to_code_review,
            ..
        }) => Ok((iteration, Some(handed_to_code_review))),
        Some(Event::IterationNotGreen { iteration, .. }) => Ok((iteration, None)),
        None => Err(input("unit", "iteration", "nothing to record")),
    }
}
