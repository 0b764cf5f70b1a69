//! `cairn build-loop`: one iteration of a unit's written exit criterion. The run
//! record (`run_record.v1`) is read and written as `build_loop.py` does (a drop-in);
//! each iteration is also journaled on `build-loop/<issue>:<unit>`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn::journal::Options;
use cairn::machines::build_loop::{
    self, criterion, planned, BuildLoop, Command, Event, RECORD_SCHEMA,
};
use cairn::machines::evidence::wire;
use cairn::StreamId;
use serde_json::{json, Map, Value};

use crate::args::BuildLoopArgs;
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};

/// The contract's top-level key order.
const KEY_ORDER: [&str; 12] = [
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

use cairn::observe::now;

fn git_line(dir: &str, rest: &[&str]) -> Option<String> {
    let r = cairn::observe::run(&cairn::observe::git(dir, rest));
    (r.exit_status == Some(0)).then(|| r.stdout.trim().to_owned())
}

fn record_path(a: &BuildLoopArgs, repo: &str) -> Result<PathBuf, Failure> {
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

/// Writes the record with the contract's key order at the top level (then any
/// other keys, which are kept), atomically.
fn write_record(path: &Path, record: &Map<String, Value>) -> Result<(), Failure> {
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

fn unit_id(u: &Value) -> Option<String> {
    ["id", "name", "unit_id"]
        .iter()
        .find_map(|k| u.get(*k).and_then(Value::as_str).map(str::to_owned))
}

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
    let text = std::fs::read_to_string(&path).map_err(|e| {
        input(
            "record",
            "readable-record",
            &format!("`{}`: {e}", path.display()),
        )
    })?;
    // The run record is read like every other JSON input (one strict, depth-bounded parse).
    let record: Value = wire::parse_document(&text).map_err(|e| {
        input(
            "record",
            e.rule,
            &format!("`{}`: {}: {}", path.display(), e.field, e.message),
        )
    })?;
    let Some(obj) = record.as_object() else {
        return Err(input(
            "record",
            "json-object",
            "the run record is not a JSON object",
        ));
    };
    let version = obj.get("schema").and_then(Value::as_str).unwrap_or("");
    if version != RECORD_SCHEMA {
        eprintln!("run_record: unknown record version '{version}' in {}; this saga writes {RECORD_SCHEMA}", path.display());
        output::json(
            &json!({"error": {"kind": "record-version", "field": "schema", "rule": "record-version", "message": format!("unknown record version '{version}'; this build writes {RECORD_SCHEMA}")}}),
        );
        return Ok(Done::UnknownRecordVersion);
    }
    let unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !KEY_ORDER.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        eprintln!(
            "run_record: keeping keys this build does not own: {}",
            unknown
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let units = obj
        .get("units")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let index = match &a.unit {
        Some(u) => units
            .iter()
            .position(|x| unit_id(x).as_deref() == Some(u.as_str()))
            .ok_or_else(|| {
                input(
                    "unit",
                    "unit-exists",
                    &format!("no unit `{u}` in the record"),
                )
            })?,
        None if units.len() == 1 => 0,
        None => {
            return Err(input(
                "unit",
                "unit-named",
                "name the unit with --unit (the record has several rows, or none)",
            ))
        }
    };
    let unit_name = unit_id(&units[index]).unwrap_or_else(|| format!("unit-{index}"));
    let profile = a
        .profile
        .clone()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&repo).join(".saga-profile.json"));
    let preview_command = std::fs::read_to_string(&profile)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|p| {
            p.get("branch_preview_command")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let crit = criterion(&record, &units[index], preview_command)
        .map_err(|m| input("record", "exit-criterion", &m))?;

    if a.dry_run {
        let baseline: Vec<Value> = crit
            .baseline
            .iter()
            .map(|c| json!({"command": c, "catalogue_check": build_loop::split_words(c).ok().as_deref().and_then(build_loop::catalogue_check)}))
            .collect();
        output::json(&json!({
            "dry_run": true,
            "record": path,
            "unit": unit_name,
            "baseline": baseline,
            "functional_checks": crit.functional_checks,
            "scenario_smoke": crit.scenario_smoke,
            "preview": crit.preview,
        }));
        return Ok(Done::Ok);
    }

    let issue = match obj.get("issue") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "none".into(),
    };
    let instance = format!("issue-{issue}:{unit_name}");
    let stream = StreamId::new(build_loop::NAME, &instance).map_err(|_| {
        input(
            "unit",
            "stream-id",
            "the issue and unit must be [A-Za-z0-9._-]",
        )
    })?;

    // The key stands for the request (the record, the unit, where and how long
    // to run): looked up before anything runs, so a retry runs no check and
    // rewrites no record.
    let request = Request::new(
        "build-loop",
        json!({"record": path, "unit": unit_name, "repo": repo, "profile": profile, "timeout": a.timeout}),
    );
    if let Some(done) = rec.recall::<BuildLoop>(&stream, &request)? {
        return print(&done, &path, &unit_name);
    }

    let revision = git_line(&repo, &["rev-parse", "HEAD"])
        .filter(|r| r.len() == 40 && r.bytes().all(|b| b.is_ascii_hexdigit()))
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
    let started_at = now();
    let checks: Vec<build_loop::CheckRun> = planned(&crit)
        .into_iter()
        .map(|(part, n)| {
            cairn::work::run_check(
                &repo,
                part,
                &n.name,
                &n.command,
                Duration::from_secs(a.timeout),
            )
        })
        .collect();
    let finished_at = now();
    let command = Command::Iterate {
        unit: unit_name.clone(),
        revision,
        criterion: crit.clone(),
        checks,
        started_at,
        finished_at,
    };

    // Decided once; the record is written from the decided iteration before the
    // append, and put back if the journal refuses it.
    let ctx = crate::record::context::<BuildLoop>();
    let at = ctx.now.clone();
    let step = Step::new(&stream, &command)
        .at(ctx)
        .request(request)
        .effect(
            |events| write_record(&path, &with_iteration(obj, index, &crit, events, &at)?),
            || {
                let _ = std::fs::write(&path, &text);
            },
        );
    let done = rec.record(step)?;
    eprintln!("cairn: {} updated", path.display());
    print(&done, &path, &unit_name)
}

/// The record with the decided iteration appended to the unit's `build_loop`
/// block (the record's own count numbers it), and the hand-off when it is green.
fn with_iteration(
    record: &Map<String, Value>,
    index: usize,
    crit: &build_loop::ExitCriterion,
    events: &[Event],
    at: &cairn::Timestamp,
) -> Result<Map<String, Value>, Failure> {
    let (iteration, handed) = iteration_of(events)?;
    let utc = at.instant().with_timezone(&chrono::Utc);
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
                json!({"revision": rev, "at": utc.format("%Y-%m-%dT%H:%M:%SZ").to_string()}),
            );
        }
        row.insert("build_loop".into(), Value::Object(block));
    }
    new.insert("updated_at".into(), json!(utc.to_rfc3339()));
    Ok(new)
}

/// The iteration an event records, and the revision handed to code review when green.
fn iteration_of(events: &[Event]) -> Result<(&Value, Option<&String>), Failure> {
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

/// Prints the recorded (or replayed) iteration; not green is exit 4 (the
/// machine's verdict).
fn print(done: &Recorded<BuildLoop>, path: &Path, unit: &str) -> Result<Done, Failure> {
    let (iteration, handed) = iteration_of(&done.events)?;
    output::json(&json!({
        "record": path,
        "unit": unit,
        "green": handed.is_some(),
        "revision": iteration["revision"],
        "iteration": iteration,
        "handed_to_code_review": handed,
        "stream": done.stream.to_string(),
    }));
    Ok(Done::Recorded(done.outcome))
}
