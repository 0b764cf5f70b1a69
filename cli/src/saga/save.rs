//! `cairn saga save`, `restore`, `show` and `scan`: a tick (a full snapshot) and
//! the thread read back from the journal, never a cache.

use cairn::journal::Options;
use cairn::machines::evidence::AbsPath;
use cairn::machines::saga::{self, Command, Kind, Phase, PhaseStatus, Saga, Save, Status, Thread};
use cairn::{Machine, StreamId};
use serde_json::{json, Value};

use super::view::{Candidate, Restored, Saved, Scanned, ThreadView};
use super::{load, stream};
use crate::args::SagaSave;
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};

/// A `a|b` list flag: omitted = carried forward (`None`), `""` = cleared.
fn list(v: &Option<String>) -> Option<Vec<String>> {
    v.as_ref().map(|s| {
        if s.is_empty() {
            vec![]
        } else {
            s.split('|').map(str::to_owned).collect()
        }
    })
}

fn parse_enum<T: serde::de::DeserializeOwned>(
    field: &str,
    v: &Option<String>,
) -> Result<Option<T>, Failure> {
    v.as_ref()
        .map(|s| {
            serde_json::from_value(json!(s)).map_err(|_| {
                input(
                    field,
                    "enum",
                    &format!("`{s}` is not a value of --{}", field.replace('_', "-")),
                )
            })
        })
        .transpose()
}

fn save_of(a: &SagaSave) -> Result<Save, Failure> {
    let rounds = match &a.rounds_seen {
        None => None,
        Some(s) if s.is_empty() => Some(vec![]),
        Some(s) => Some(
            s.split('|')
                .map(|r| {
                    r.parse::<u32>().map_err(|_| {
                        input(
                            "rounds_seen",
                            "round-number",
                            &format!("`{r}` is not a round number"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    Ok(Save {
        kind: parse_enum::<Kind>("kind", &a.kind)?,
        lifecycle_phase: parse_enum::<Phase>("lifecycle_phase", &a.lifecycle_phase)?,
        phase_status: parse_enum::<PhaseStatus>("phase_status", &a.phase_status)?,
        status: parse_enum::<Status>("status", &a.status)?,
        phase: a.phase,
        destination: a.destination.clone(),
        issue_ref: a.issue_ref.clone(),
        plan_path: a.plan_path.clone(),
        branch: a.branch.clone(),
        head_sha: a.head_sha.clone(),
        next_step: a.next_step.clone(),
        rounds_seen: rounds,
        checks_run: list(&a.checks_run),
        work_session_paths: list(&a.work_session_paths),
        files_modified: list(&a.files_modified),
        pr_refs: list(&a.pr_refs),
        review_paths: list(&a.review_paths),
        gate_verdicts: a.gate_verdicts.clone(),
        next_round: a.next_round,
        orchestration_mode: a.orchestration_mode.clone(),
        orchestration_recommended: a.orchestration_recommended.clone(),
        orchestration_operator_choice: a.orchestration_operator_choice.clone(),
        repo: None,
        git: vec![],
    })
}

/// The repository a save captures: `--repo`, else the current directory (where
/// the seed's `saga.py` reads git).
fn capture_repo(a: &SagaSave) -> Result<Option<AbsPath>, Failure> {
    if let Some(r) = &a.repo {
        return crate::failure::require_abs_path("repo", r).map(Some);
    }
    Ok(std::env::current_dir()
        .ok()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .and_then(|d| AbsPath::parse(&d.to_string_lossy()).ok()))
}

/// A thread as the helpers print it: every field, plus the derived ones.
fn view(t: &Thread) -> ThreadView {
    let mut thread = match json!(t) {
        Value::Object(m) => m,
        // A thread serializes as an object (a struct).
        _ => serde_json::Map::new(),
    };
    if let Some(Value::Object(qa)) = thread.get_mut("qa") {
        qa.insert("allowed_cycles".into(), json!(t.qa.allowed()));
    }
    ThreadView {
        thread,
        next_round: t.next_round(),
        next_phase: json!(t.next_phase()),
        state: None,
        found: None,
    }
}

/// `saga save`: one tick. The saga id is derived from `--kind` and `--id` as the
/// seed's `saga.py` derives it; the branch and `HEAD` are read with git in the repo
/// (`--repo`, else the current directory) and recorded with the command.
pub(super) fn save(rec: &Recorder, a: &SagaSave) -> Result<Done, Failure> {
    let mut save = save_of(a)?;
    for (field, v) in [
        ("orchestration_mode", &save.orchestration_mode),
        ("orchestration_recommended", &save.orchestration_recommended),
        (
            "orchestration_operator_choice",
            &save.orchestration_operator_choice,
        ),
    ] {
        if let Some(v) = v {
            saga::tick::check_mode(v).map_err(|m| input(field, "orchestration-mode", &m))?;
        }
    }
    let saga_id = saga::derive_saga_id(save.kind, &a.id).map_err(|m| input("id", "saga-id", &m))?;
    let s = stream(&saga_id)?;
    let repo = capture_repo(a)?;
    // The key stands for the request (the tick and where it was saved); a retry
    // reads git no more.
    let request = Request::new(
        "saga save",
        json!({ "saga_id": saga_id, "save": save, "repo": repo }),
    );
    if let Some(done) = rec.recall::<Saga>(&s, &request)? {
        return print_saved(&s, &done);
    }
    if let Some(repo) = repo {
        save.git = saga::tick::capture_plan(&repo)
            .iter()
            .map(|argv| cairn::observe::run(argv))
            .collect();
        save.repo = Some(repo);
    }
    let command = Command::Save {
        saga_id,
        save: Box::new(save),
    };
    let done = rec.record(Step::<Saga>::new(&s, &command).request(request))?;
    print_saved(&s, &done)
}

fn print_saved(s: &StreamId, done: &Recorded<Saga>) -> Result<Done, Failure> {
    let t = done
        .state
        .thread()
        .ok_or_else(|| input("id", "saved", "nothing was saved"))?;
    output::json(&Saved {
        saga_id: json!(t.saga_id),
        stream: s.to_string(),
        version: done.version,
        lifecycle_phase: json!(t.lifecycle_phase),
        phase: json!(t.phase),
        status: json!(t.status),
        next_phase: json!(t.next_phase()),
        next_round: t.next_round(),
    });
    Ok(Done::Recorded(done.outcome))
}

/// `saga restore`: the thread, or `found: false`.
pub(super) fn restore(db: &Db, options: &Options, saga_id: &str) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    let out = match load(db, options, &s)?.thread() {
        None => Restored::Missing {
            saga_id: saga_id.to_owned(),
            found: false,
        },
        Some(t) => Restored::Found(ThreadView {
            found: Some(true),
            ..view(t)
        }),
    };
    output::json(&out);
    Ok(Done::Ok)
}

/// `saga show`: the whole thread (refused when none is saved).
pub(super) fn show(db: &Db, options: &Options, saga_id: &str) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    // No journal is `no-journal`, as for `state` (`restore` and `scan` answer
    // their empty answers instead, as saga.py does on a first run).
    let (state, _) = Recorder::reader(db, options).engine()?.load::<Saga>(&s)?;
    // Nothing saved under this id: the one not-found rule (`restore` answers
    // `found: false` instead, as saga.py does).
    let t = state.thread().ok_or_else(|| Failure::NoSuchStream {
        field: "saga_id",
        stream: s.to_string(),
    })?;
    output::json(&ThreadView {
        state: Some(Saga::state_name(&state)),
        ..view(t)
    });
    Ok(Done::Ok)
}

/// Threads to resume, newest first: read from the journal, never a cache.
pub(super) fn scan(
    db: &Db,
    options: &Options,
    issue_ref: &Option<String>,
    plan_path: &Option<String>,
    branch: &Option<String>,
    max_candidates: usize,
) -> Result<Done, Failure> {
    let mut candidates: Vec<(String, Candidate)> = vec![];
    if let Some(engine) = Recorder::reader(db, options).existing_engine()? {
        for info in engine.journal().streams()? {
            if info.machine != saga::NAME {
                continue;
            }
            let s = StreamId::parse(&info.stream)?;
            let (state, _) = engine.load::<Saga>(&s)?;
            let Some(t) = state.thread() else { continue };
            let any_key = issue_ref.is_some() || plan_path.is_some() || branch.is_some();
            let hit = !any_key
                || (issue_ref.is_some() && t.issue_ref == *issue_ref)
                || (plan_path.is_some() && t.plan_path == *plan_path)
                || (branch.is_some() && t.branch == *branch);
            if hit {
                candidates.push((
                    info.last_recorded_at.clone(),
                    Candidate {
                        saga_id: json!(t.saga_id),
                        issue_ref: json!(t.issue_ref),
                        plan_path: json!(t.plan_path),
                        branch: json!(t.branch),
                        lifecycle_phase: json!(t.lifecycle_phase),
                        status: json!(t.status),
                        next_step: json!(t.next_step),
                        next_round: t.next_round(),
                    },
                ));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0));
    let list: Vec<Candidate> = candidates
        .into_iter()
        .take(max_candidates)
        .map(|(_, v)| v)
        .collect();
    output::json(&Scanned {
        count: list.len(),
        candidates: list,
    });
    Ok(Done::Ok)
}
