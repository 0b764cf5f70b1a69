//! `cairn saga <verb>`: the work thread. One stream per thread (`saga/<saga_id>`);
//! `scan` and `restore` read the journal, never a cache.

use std::path::PathBuf;

use cairn::journal::Options;
use cairn::machines::saga::{
    self, Command, Kind, Phase, PhaseStatus, QaOutcome, Saga, Save, Scenario, ScenarioResult,
    State, Status, Thread,
};
use cairn::{Engine, Machine, Registry, StreamId};
use serde_json::{json, Value};

use crate::args::{MergeTurnCommand, SagaCommand, SagaSave};
use crate::failure::{code, input, Failure, NoJournalLocation};
use crate::output;
use cairn::machines::saga::gates;

type Db = Result<PathBuf, NoJournalLocation>;

fn stream(saga_id: &str) -> Result<StreamId, Failure> {
    if !saga::valid_saga_id(saga_id) {
        return Err(input(
            "saga_id",
            "saga-id",
            "`issue-<N>` or `task-<slug>` ([a-z0-9-])",
        ));
    }
    Ok(StreamId::new(saga::NAME, saga_id)?)
}

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
                    r.trim().parse::<u32>().map_err(|_| {
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
    })
}

/// A thread as the helpers print it: every field, plus the derived ones.
fn view(t: &Thread) -> Value {
    let mut v = json!(t);
    v["next_round"] = json!(t.next_round());
    v["next_phase"] = json!(t.next_phase());
    v["qa"]["allowed_cycles"] = json!(t.qa.allowed());
    v
}

fn load(db: &Db, options: &Options, s: &StreamId) -> Result<State, Failure> {
    crate::record::current::<Saga>(db, options, s)
}

fn record(
    db: &Db,
    options: &Options,
    s: &StreamId,
    command: Command,
) -> Result<cairn::Executed<Saga>, Failure> {
    let done = crate::record::execute::<Saga>(
        db,
        options,
        s,
        &command,
        &crate::record::context::<Saga>(),
        None,
    )?;
    let names: Vec<&str> = done.events.iter().map(Saga::event_name).collect();
    eprintln!(
        "cairn: recorded {} on {s} (version {})",
        names.join(", "),
        done.version
    );
    Ok(done)
}

fn scenario(s: &str) -> Result<Scenario, Failure> {
    let (name, result) = s.split_once('=').ok_or_else(|| {
        input(
            "scenario",
            "name-equals-result",
            &format!("`{s}`: expected NAME=RESULT"),
        )
    })?;
    let (result, cause) = match result.split_once(':') {
        Some(("blocked", cause)) => (ScenarioResult::Blocked, Some(cause.to_owned())),
        _ => (
            match result {
                "passed" => ScenarioResult::Passed,
                "failed" => ScenarioResult::Failed,
                "not-run" => ScenarioResult::NotRun,
                "blocked" => ScenarioResult::Blocked,
                other => {
                    return Err(input(
                        "scenario",
                        "scenario-result",
                        &format!("`{other}`: passed | failed | not-run | blocked:CAUSE"),
                    ))
                }
            },
            None,
        ),
    };
    Ok(Scenario {
        name: name.to_owned(),
        result,
        cause,
        evidence: None,
    })
}

/// Records a gate command; exit 4 when the recorded outcome is a hold, a pause or a half-write.
fn gate_verb(db: &Db, options: &Options, saga_id: &str, command: Command) -> Result<u8, Failure> {
    let s = stream(saga_id)?;
    let done = record(db, options, &s, command)?;
    let names: Vec<&str> = done.events.iter().map(Saga::event_name).collect();
    let g = done
        .state
        .thread()
        .map(|t| t.gates.clone())
        .unwrap_or_default();
    let not_green = names.iter().any(|n| {
        matches!(
            *n,
            "boundary-held" | "paused-at-boundary" | "board-half-write"
        )
    });
    output::json(&json!({
        "saga_id": saga_id,
        "stream": s.to_string(),
        "version": done.version,
        "events": names,
        "submits": !done.events.is_empty(),
        "gates": g,
    }));
    Ok(if not_green { code::NOT_GREEN } else { code::OK })
}

pub fn run(verb: &SagaCommand, db: &Db, options: &Options) -> Result<u8, Failure> {
    match verb {
        SagaCommand::Save(a) => {
            let s = stream(&a.id)?;
            let save = save_of(a)?;
            let done = record(
                db,
                options,
                &s,
                Command::Save {
                    saga_id: a.id.clone(),
                    save: Box::new(save),
                },
            )?;
            let t = done
                .state
                .thread()
                .ok_or_else(|| input("id", "saved", "nothing was saved"))?;
            output::json(&json!({
                "saga_id": t.saga_id,
                "stream": s.to_string(),
                "version": done.version,
                "lifecycle_phase": t.lifecycle_phase,
                "phase": t.phase,
                "status": t.status,
                "next_phase": t.next_phase(),
                "next_round": t.next_round(),
            }));
            Ok(code::OK)
        }
        SagaCommand::Restore { saga_id } => {
            let s = stream(saga_id)?;
            let out = match load(db, options, &s)?.thread() {
                None => json!({"saga_id": saga_id, "found": false}),
                Some(t) => {
                    let mut v = view(t);
                    v["found"] = json!(true);
                    v
                }
            };
            output::json(&out);
            Ok(code::OK)
        }
        SagaCommand::Show { saga_id } => {
            let s = stream(saga_id)?;
            let state = load(db, options, &s)?;
            let t = state.thread().ok_or_else(|| {
                input(
                    "saga_id",
                    "thread-exists",
                    "no thread is saved under this id",
                )
            })?;
            let mut v = view(t);
            v["state"] = json!(Saga::state_name(&state));
            output::json(&v);
            Ok(code::OK)
        }
        SagaCommand::Scan {
            issue_ref,
            plan_path,
            branch,
            max_candidates,
        } => {
            let path = db.clone()?;
            let mut candidates: Vec<(String, Value)> = vec![];
            if std::fs::symlink_metadata(&path).is_ok() {
                let engine = Engine::open_read_only(&path, options, Registry::builtin())?;
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
                        candidates.push((info.last_recorded_at.clone(), json!({
                            "saga_id": t.saga_id, "issue_ref": t.issue_ref, "plan_path": t.plan_path, "branch": t.branch,
                            "lifecycle_phase": t.lifecycle_phase, "status": t.status, "next_step": t.next_step, "next_round": t.next_round(),
                        })));
                    }
                }
            }
            candidates.sort_by(|a, b| b.0.cmp(&a.0));
            let list: Vec<Value> = candidates
                .into_iter()
                .take(*max_candidates)
                .map(|(_, v)| v)
                .collect();
            output::json(&json!({"candidates": list, "count": list.len()}));
            Ok(code::OK)
        }
        SagaCommand::DocReview {
            saga_id,
            unresolved_p0_p1,
            source,
        } => gate_verb(
            db,
            options,
            saga_id,
            Command::DocReview {
                review: gates::DocReview {
                    unresolved_p0_p1: *unresolved_p0_p1,
                    source: source.clone(),
                },
            },
        ),
        SagaCommand::Review {
            saga_id,
            outcome,
            reviewed_sha,
        } => {
            let outcome: gates::ReviewOutcome = serde_json::from_value(json!(outcome))
                .map_err(|_| input("outcome", "enum", "an outcome"))?;
            gate_verb(
                db,
                options,
                saga_id,
                Command::Review {
                    review: gates::Review {
                        outcome,
                        reviewed_sha: reviewed_sha.clone(),
                    },
                },
            )
        }
        SagaCommand::Override {
            saga_id,
            gate,
            rationale,
            operator,
        } => {
            let gate: gates::Gate = serde_json::from_value(json!(gate))
                .map_err(|_| input("gate", "enum", "doc-review | review-gate"))?;
            gate_verb(
                db,
                options,
                saga_id,
                Command::Override {
                    gate,
                    rationale: rationale.clone(),
                    operator: operator.clone(),
                },
            )
        }
        SagaCommand::PrReady { saga_id, repo } => {
            crate::failure::require_abs_path("repo", repo)?;
            let s = stream(saga_id)?;
            let state = load(db, options, &s)?;
            let sha = state
                .thread()
                .and_then(|t| t.gates.review.as_ref())
                .map(|r| r.reviewed_sha.clone());
            let count = match sha {
                Some(sha) => cairn::observe::run(&cairn::observe::git(
                    repo,
                    &["rev-list", &format!("{sha}..HEAD"), "--count"],
                )),
                None => {
                    let now = crate::record::context::<Saga>().now;
                    cairn::machines::evidence::CommandRun {
                        argv: vec![],
                        env: None,
                        exit_status: None,
                        stdout: String::new(),
                        stderr: "no reviewed SHA is recorded: nothing to count".into(),
                        started_at: now.clone(),
                        finished_at: now,
                    }
                }
            };
            gate_verb(
                db,
                options,
                saga_id,
                Command::PrReady {
                    repo: repo.clone(),
                    count,
                },
            )
        }
        SagaCommand::Adjust { saga_id, directive } => gate_verb(
            db,
            options,
            saga_id,
            Command::Adjust {
                directive: directive.clone(),
            },
        ),
        SagaCommand::Boundary { saga_id, boundary } => gate_verb(
            db,
            options,
            saga_id,
            Command::Boundary {
                boundary: boundary.clone(),
            },
        ),
        SagaCommand::MergeTurn(MergeTurnCommand::Take {
            saga_id,
            unit,
            branch,
            merge_worktree,
            holder,
        }) => gate_verb(
            db,
            options,
            saga_id,
            Command::TakeTurn {
                unit: unit.clone(),
                branch: branch.clone(),
                merge_worktree: merge_worktree.clone(),
                holder: holder.clone(),
            },
        ),
        SagaCommand::MergeTurn(MergeTurnCommand::Release {
            saga_id,
            unit,
            repo,
            target,
        }) => {
            crate::failure::require_abs_path("repo", repo)?;
            let s = stream(saga_id)?;
            let state = load(db, options, &s)?;
            let row = state
                .thread()
                .and_then(|t| t.gates.units.get(unit).cloned())
                .ok_or_else(|| input("unit", "merging", "the unit does not hold the merge turn"))?;
            let ancestor = cairn::observe::run(&cairn::observe::git(
                repo,
                &["merge-base", "--is-ancestor", &row.branch, target],
            ));
            let merge_head = row
                .merge_worktree
                .as_ref()
                .filter(|wt| std::path::Path::new(wt).exists())
                .map(|wt| {
                    cairn::observe::run(&cairn::observe::git(
                        wt,
                        &["rev-parse", "-q", "--verify", "MERGE_HEAD"],
                    ))
                });
            gate_verb(
                db,
                options,
                saga_id,
                Command::ReleaseTurn {
                    unit: unit.clone(),
                    ancestor,
                    merge_head,
                },
            )
        }
        SagaCommand::MergeTurn(MergeTurnCommand::Merged {
            saga_id,
            unit,
            holder,
            merged_tip,
        }) => gate_verb(
            db,
            options,
            saga_id,
            Command::MarkMerged {
                unit: unit.clone(),
                holder: holder.clone(),
                merged_tip: merged_tip.clone(),
            },
        ),
        SagaCommand::Release {
            saga_id,
            destination,
            reviewed_head,
            landed_commit,
            absence_reason,
        } => gate_verb(
            db,
            options,
            saga_id,
            Command::Release {
                release: gates::Release {
                    destination: destination.clone(),
                    reviewed_head: reviewed_head.clone(),
                    landed_commit: landed_commit.clone(),
                    absence_reason: absence_reason.clone(),
                },
            },
        ),
        SagaCommand::Board {
            saga_id,
            boundary,
            written_field,
            deployment,
            retro_trigger_fired,
            stage,
            status,
        } => {
            let deployment: Option<gates::Deployment> = deployment
                .as_ref()
                .map(|d| serde_json::from_value(json!(d)))
                .transpose()
                .map_err(|_| input("deployment", "enum", "a deployment result"))?;
            gate_verb(
                db,
                options,
                saga_id,
                Command::Board {
                    boundary: boundary.clone(),
                    written_field: written_field.clone(),
                    deployment,
                    retro_trigger_fired: *retro_trigger_fired,
                    pair: stage.clone().zip(status.clone()),
                },
            )
        }
        SagaCommand::Qa {
            saga_id,
            scenarios,
            extension,
        } => {
            let s = stream(saga_id)?;
            let scenarios = scenarios
                .iter()
                .map(|x| scenario(x))
                .collect::<Result<Vec<_>, _>>()?;
            let done = record(
                db,
                options,
                &s,
                Command::Qa {
                    scenarios,
                    extension: *extension,
                },
            )?;
            let t = done
                .state
                .thread()
                .ok_or_else(|| input("saga_id", "thread-exists", "no thread"))?;
            let passed = t.qa.last_outcome == Some(QaOutcome::Passed);
            output::json(&json!({
                "saga_id": t.saga_id,
                "outcome": t.qa.last_outcome,
                "lifecycle_phase": t.lifecycle_phase,
                "post_merge_cycles": t.qa.post_merge_cycles,
                "allowed_cycles": t.qa.allowed(),
                "extension_taken": t.qa.extension_taken,
                "events": done.events.iter().map(Saga::event_name).collect::<Vec<_>>(),
            }));
            Ok(if passed { code::OK } else { code::NOT_GREEN })
        }
    }
}
