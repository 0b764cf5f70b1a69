//! `cairn build-loop`: one iteration of a unit's written exit criterion. The run
//! record (`run_record.v1`) is read and written as `build_loop.py` does (a drop-in);
//! each iteration is also journaled on `build-loop/<issue>:<unit>`. `record` holds
//! the record on disk: its path, the strict read, the ordered atomic write and the
//! lock that serialises rewrites; `dry_run` prints the criterion and runs nothing.

pub(crate) mod dry_run;
mod record;

use record::{record_path, unit_id, KEY_ORDER};

use std::path::{Path, PathBuf};

use cairn::journal::Options;
use cairn::machines::build_loop::{self, criterion, planned, BuildLoop, Command, RECORD_SCHEMA};
use cairn::machines::evidence::FullCommit;
use cairn::StreamId;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::BuildLoopArgs;
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};

use cairn::observe::now;

pub fn run(a: &BuildLoopArgs, db: &Db, options: &Options) -> Result<Done, Failure> {
    let rec = Recorder::new(db, options, &a.key)?;
    let repo = match &a.repo_root {
        Some(r) => r.clone(),
        None => std::env::current_dir()
            .map_err(|e| input("repo_root", "cwd", &e.to_string()))?
            .to_string_lossy()
            .into_owned(),
    };
    let repo = std::fs::canonicalize(&repo)
        .map_err(|e| input("repo_root", "readable-dir", &format!("`{repo}`: {e}")))?
        .to_string_lossy()
        .into_owned();
    let path = record_path(a, &repo)?;
    let (_, record) = record::read(&path)?;
    let Some(obj) = record.as_object() else {
        return Err(input(
            "record",
            "json-object",
            "the run record is not a JSON object",
        ));
    };
    let version = obj.get("schema").and_then(Value::as_str).unwrap_or("");
    if version != RECORD_SCHEMA {
        crate::output::stderr_line(format_args!("run_record: unknown record version '{version}' in {}; this saga writes {RECORD_SCHEMA}", path.display()));
        output::json(&crate::failure::ErrorDocument {
            error: crate::failure::ErrorBody {
                kind: crate::failure::Kind::RecordVersion,
                message: format!(
                    "unknown record version '{version}'; this build writes {RECORD_SCHEMA}"
                ),
                field: Some("schema".into()),
                rule: Some("record-version".into()),
                ..Default::default()
            },
        });
        return Ok(Done::UnknownRecordVersion);
    }
    let unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !KEY_ORDER.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        crate::output::stderr_line(format_args!(
            "run_record: keeping keys this build does not own: {}",
            unknown
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let units = obj
        .get("units")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let profile = a
        .profile
        .clone()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&repo).join(".saga-profile.json"));
    // An absent profile names no preview; one that is there is read as every
    // input file is (bounded, a regular file).
    let profile_text = match std::fs::symlink_metadata(&profile) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(crate::input::read_file(
            &profile,
            "profile",
            "readable-profile",
        )?),
    };
    let preview_command = profile_text
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|p| {
            p.get("branch_preview_command")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let name_of = |i: usize| unit_id(&units[i]).unwrap_or_else(|| format!("unit-{i}"));
    let criterion_of = |unit: &Value| {
        criterion(&record, unit, preview_command.clone())
            .map_err(|m| input("record", "exit-criterion", &m))
    };
    let index = match &a.unit {
        Some(u) => Some(
            units
                .iter()
                .position(|x| unit_id(x).as_deref() == Some(u.as_str()))
                .ok_or_else(|| {
                    let known: Vec<String> = (0..units.len()).map(name_of).collect();
                    input(
                        "unit",
                        "unit-exists",
                        &if known.is_empty() {
                            format!("no unit `{u}` in the record; it has no unit rows")
                        } else {
                            format!("no unit `{u}` in the record; it has {}", known.join(", "))
                        },
                    )
                })?,
        ),
        None if units.len() == 1 => Some(0),
        None => None,
    };
    if a.dry_run {
        // Named or implied, one unit; otherwise every unit the record has.
        let previewed: Vec<usize> = match index {
            Some(i) => vec![i],
            None => (0..units.len()).collect(),
        };
        let criteria = previewed
            .iter()
            .map(|&i| Ok((name_of(i), criterion_of(&units[i])?)))
            .collect::<Result<Vec<_>, Failure>>()?;
        let repository = criterion_of(&json!({}))?;
        dry_run::print(&path, index.map(name_of), &repository, &criteria);
        return Ok(Done::Ok);
    }
    let Some(index) = index else {
        return Err(input(
            "unit",
            "unit-named",
            &format!(
                "name the unit with --unit: the record has {} unit rows, so which one this iteration belongs to is not implied",
                units.len()
            ),
        ));
    };
    let unit_name = name_of(index);
    let crit = criterion_of(&units[index])?;

    let issue = issue_of(obj.get("issue"))?;
    let instance = format!("issue-{issue}:{unit_name}");
    let stream = crate::claim::build_loop_instance(&instance)
        .ok_or(())
        .and_then(|i| StreamId::new(build_loop::NAME, &i).map_err(|_| ()))
        .map_err(|_| {
            input(
                "unit",
                "stream-id",
                "the issue and unit must be [A-Za-z0-9._-]",
            )
        })?;

    // The key stands for the request (the record, the unit, where and how long
    // to run): looked up before anything runs, so a retry runs no check and
    // rewrites no record.
    // The timeout in whole seconds, as keys recorded before --timeout-ms read it;
    // a sub-second part only where one was given.
    let timeout = a.timeout();
    let mut fields = json!({"record": path, "unit": unit_name, "repo": repo, "profile": profile, "timeout": timeout.as_secs()});
    if timeout.subsec_millis() != 0 {
        fields["timeout_ms"] = json!(timeout.as_millis() as u64);
    }
    let request = Request::new("build-loop", fields);
    if let Some(done) = rec.recall::<BuildLoop>(&stream, &request)? {
        return print(&done, &path, &unit_name);
    }

    // The tree the checks run in, read before them and again after (build-loop
    // rules 3): the revision is the HEAD read here, and the iteration is green
    // only if the tree stayed at it, clean, throughout.
    let record_rel = std::fs::canonicalize(&path).ok().and_then(|p| {
        p.strip_prefix(&repo)
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
    });
    let plan = cairn::machines::evidence::git::tree_plan(&repo);
    let repository = cairn::observe::repository(&repo);
    let before = cairn::observe::run_all(&plan);
    let revision = before[1]
        .ok()
        .then(|| before[1].stdout.trim().to_owned())
        .filter(|r| r.len() == 40)
        .and_then(|r| FullCommit::parse(&r).ok())
        .ok_or_else(|| {
            input(
                "repo_root",
                "revision",
                "`git rev-parse HEAD` did not give a full 40-hex revision",
            )
        })?;

    // The doc-review gate: execution does not run over an unresolved P0/P1 finding
    // recorded on the saga thread (only a recorded doc-review override passes).
    if let Ok(saga_stream) = StreamId::new(cairn::machines::saga::NAME, &format!("issue-{issue}")) {
        let thread = rec.current::<cairn::machines::saga::Saga>(&saga_stream)?;
        if thread
            .thread()
            .is_some_and(|t| cairn::machines::saga::doc_review_blocks(&t.gates))
        {
            return Err(input("saga", "doc-review-gate", &format!("issue-{issue}: an unresolved P0/P1 plan-review finding blocks execution; only a recorded doc-review override passes")));
        }
    }
    // The tree is watched while the checks run: a change put back, or HEAD moved
    // and moved back, between the readings (no watch: not green).
    let watch = cairn::work::Watch::start(&repo).ok();
    let started_at = now();
    let checks: Vec<build_loop::CheckRun> = planned(&crit)
        .into_iter()
        .map(|(part, n)| cairn::work::run_check(&repo, part, &n.name, &n.command, timeout))
        .collect();
    let finished_at = now();
    let tree = build_loop::TreeHeld {
        repo: repo.clone(),
        record: record_rel,
        before,
        after: cairn::observe::run_all(&plan),
        repository,
        watch: watch.map(cairn::work::Watch::finish),
    };
    let command = Command::Iterate {
        unit: unit_name.clone(),
        revision,
        criterion: crit.clone(),
        checks,
        started_at,
        finished_at,
        tree: Some(Box::new(tree)),
    };

    // Decided once; under the record's lock the record is read again (another
    // unit may have written it while the checks ran), the decided iteration is
    // appended to this unit's row, the record written, the iteration journaled —
    // and the record put back as it was if the journal refuses it. The lock is
    // held until then, so record and journal never disagree.
    let lock = record::Lock::acquire(&path)?;
    let (text, now_record) = record::read(&path)?;
    let current = now_record.as_object().ok_or_else(|| {
        input(
            "record",
            "json-object",
            "the run record is not a JSON object",
        )
    })?;
    let index = current
        .get("units")
        .and_then(Value::as_array)
        .and_then(|rows| {
            rows.iter()
                .position(|x| record::unit_id(x).as_deref() == Some(unit_name.as_str()))
                .or((rows.len() > index).then_some(index))
        })
        .ok_or_else(|| {
            input(
                "unit",
                "unit-exists",
                &format!("unit `{unit_name}` left the record while it ran"),
            )
        })?;
    let ctx = rec.context::<BuildLoop>()?;
    let at = ctx.now.clone();
    let step = Step::new(&stream, &command)
        .at(ctx)
        .request(request)
        .effect(
            |events| {
                record::write_record(
                    &path,
                    &record::with_iteration(current, index, &crit, events, &at)?,
                )
            },
            || {
                let _ = std::fs::write(&path, &text);
            },
        );
    let done = rec.record(step)?;
    drop(lock);
    crate::output::stderr_line(format_args!("cairn: {} updated", path.display()));
    print(&done, &path, &unit_name)
}

/// Prints the recorded (or replayed) iteration; not green is exit 4 (the
/// machine's verdict).
fn print(done: &Recorded<BuildLoop>, path: &Path, unit: &str) -> Result<Done, Failure> {
    let (iteration, handed) = record::iteration_of(&done.events)?;
    output::json(&Iterated {
        record: json!(path),
        unit: unit.to_owned(),
        green: handed.is_some(),
        revision: iteration["revision"].clone(),
        handed_to_code_review: json!(handed),
        iteration: iteration.clone(),
        stream: done.stream.to_string(),
    });
    Ok(Done::Recorded(done.outcome))
}

/// The run record's issue in its one spelling (the stream's `issue-<N>`): a whole
/// JSON number, or a string of digits, without leading zeros; `none` when the
/// record names none. `42.0`, `4.2e1` or `"042"` would be another stream for issue
/// 42 — one its claim does not fence — so they are refused.
fn issue_of(issue: Option<&Value>) -> Result<String, Failure> {
    let digits = match issue {
        None => return Ok("none".into()),
        Some(Value::Number(n)) => n.as_u64().map(|n| n.to_string()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    };
    match digits {
        Some(d) if !d.is_empty() && !d.starts_with('0') && d.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(d)
        }
        _ => Err(input(
            "issue",
            "issue-number",
            "the run record's `issue` must be the issue's number: digits, no leading zero, no fraction or exponent",
        )),
    }
}

/// What `build-loop` prints: the iteration recorded, or the dry run.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // the schema of what `build-loop` prints (`cairn schema build-loop`)
pub enum BuildLoopOutput {
    Iterated(Iterated),
    DryRun(dry_run::DryRun),
}

/// One iteration, recorded (or replayed).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Iterated {
    /// The run record written.
    pub record: Value,
    pub unit: String,
    /// Whether the iteration is green (handed to code review).
    pub green: bool,
    /// The revision the checks ran on.
    pub revision: Value,
    /// The iteration as the run record holds it.
    pub iteration: Value,
    /// The hand-off to code review (null: not green).
    pub handed_to_code_review: Value,
    /// `build-loop/<issue>:<unit>`.
    pub stream: String,
}
