//! `cairn saga <verb>`: the work thread. One stream per thread (`saga/<saga_id>`);
//! `scan` and `restore` read the journal, never a cache.

use cairn::journal::Options;
use cairn::machines::saga::{
    self, Command, Kind, Phase, PhaseStatus, Saga, Save, Scenario, ScenarioResult, State, Status,
    Thread,
};
use cairn::{Machine, StreamId};
use serde_json::{json, Value};

use crate::args::{MergeTurnCommand, SagaCommand, SagaSave};
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};
use cairn::machines::saga::gates;

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
    Recorder::reader(db, options).current::<Saga>(s)
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

/// Records a gate command and prints the gates after it. A hold, a pause or a
/// half-write is recorded and not green yet (the machine's verdict).
fn gate_verb(rec: &Recorder, saga_id: &str, step: Step<'_, Saga>) -> Result<Done, Failure> {
    let done = rec.record(step)?;
    print_gates(saga_id, &done);
    Ok(Done::Recorded(done.outcome))
}

fn print_gates(saga_id: &str, done: &Recorded<Saga>) {
    let g = done
        .state
        .thread()
        .map(|t| t.gates.clone())
        .unwrap_or_default();
    output::json(&json!({
        "saga_id": saga_id,
        "stream": done.stream.to_string(),
        "version": done.version,
        "events": done.names(),
        "submits": !done.events.is_empty(),
        "gates": g,
    }));
}

/// A gate command whose input is exactly the command.
fn gate(rec: &Recorder, saga_id: &str, command: Command) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    gate_verb(rec, saga_id, Step::new(&s, &command))
}

pub fn run(verb: &SagaCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let rec = |key| Recorder::new(db, options, key);
    match verb {
        SagaCommand::Save(a) => {
            let s = stream(&a.id)?;
            let save = save_of(a)?;
            let command = Command::Save {
                saga_id: a.id.clone(),
                save: Box::new(save),
            };
            let done = rec(&a.key)?.record(Step::<Saga>::new(&s, &command))?;
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
            Ok(Done::Recorded(done.outcome))
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
            Ok(Done::Ok)
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
            Ok(Done::Ok)
        }
        SagaCommand::Scan {
            issue_ref,
            plan_path,
            branch,
            max_candidates,
        } => scan(db, options, issue_ref, plan_path, branch, *max_candidates),
        SagaCommand::DocReview {
            saga_id,
            unresolved_p0_p1,
            source,
            key,
        } => gate(
            &rec(key)?,
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
            key,
        } => {
            let outcome: gates::ReviewOutcome = serde_json::from_value(json!(outcome))
                .map_err(|_| input("outcome", "enum", "an outcome"))?;
            gate(
                &rec(key)?,
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
            gate: which,
            rationale,
            operator,
            key,
        } => {
            let which: gates::Gate = serde_json::from_value(json!(which))
                .map_err(|_| input("gate", "enum", "doc-review | review-gate"))?;
            gate(
                &rec(key)?,
                saga_id,
                Command::Override {
                    gate: which,
                    rationale: rationale.clone(),
                    operator: operator.clone(),
                },
            )
        }
        SagaCommand::PrReady { saga_id, repo, key } => {
            crate::failure::require_abs_path("repo", repo)?;
            let rec = rec(key)?;
            let s = stream(saga_id)?;
            // The key stands for the request; a retry counts nothing again.
            let request = Request::new("saga pr-ready", json!({ "repo": repo }));
            if let Some(done) = rec.recall::<Saga>(&s, &request)? {
                print_gates(saga_id, &done);
                return Ok(Done::Recorded(done.outcome));
            }
            let state = load(db, options, &s)?;
            let sha = state
                .thread()
                .and_then(|t| t.gates.review.as_ref())
                .map(|r| r.reviewed_sha.clone());
            let ctx = crate::record::context::<Saga>();
            let count = match sha {
                Some(sha) => cairn::observe::run(&cairn::observe::git(
                    repo,
                    &["rev-list", &format!("{sha}..HEAD"), "--count"],
                )),
                None => cairn::machines::evidence::CommandRun {
                    argv: vec![],
                    env: None,
                    exit_status: None,
                    stdout: String::new(),
                    stderr: "no reviewed SHA is recorded: nothing to count".into(),
                    started_at: ctx.now.clone(),
                    finished_at: ctx.now.clone(),
                },
            };
            let command = Command::PrReady {
                repo: repo.clone(),
                count,
            };
            gate_verb(
                &rec,
                saga_id,
                Step::new(&s, &command).at(ctx).request(request),
            )
        }
        SagaCommand::Adjust {
            saga_id,
            directive,
            key,
        } => gate(
            &rec(key)?,
            saga_id,
            Command::Adjust {
                directive: directive.clone(),
            },
        ),
        SagaCommand::Boundary {
            saga_id,
            boundary,
            key,
        } => gate(
            &rec(key)?,
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
            key,
        }) => gate(
            &rec(key)?,
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
            key,
        }) => {
            crate::failure::require_abs_path("repo", repo)?;
            let rec = rec(key)?;
            let s = stream(saga_id)?;
            // The key stands for the request; a retry reads git no more.
            let request = Request::new(
                "saga merge-turn release",
                json!({ "unit": unit, "repo": repo, "target": target }),
            );
            if let Some(done) = rec.recall::<Saga>(&s, &request)? {
                print_gates(saga_id, &done);
                return Ok(Done::Recorded(done.outcome));
            }
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
            let command = Command::ReleaseTurn {
                unit: unit.clone(),
                ancestor,
                merge_head,
            };
            gate_verb(&rec, saga_id, Step::new(&s, &command).request(request))
        }
        SagaCommand::MergeTurn(MergeTurnCommand::Merged {
            saga_id,
            unit,
            holder,
            merged_tip,
            key,
        }) => gate(
            &rec(key)?,
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
            key,
        } => gate(
            &rec(key)?,
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
            key,
        } => {
            let deployment: Option<gates::Deployment> = deployment
                .as_ref()
                .map(|d| serde_json::from_value(json!(d)))
                .transpose()
                .map_err(|_| input("deployment", "enum", "a deployment result"))?;
            gate(
                &rec(key)?,
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
            key,
        } => {
            let s = stream(saga_id)?;
            let scenarios = scenarios
                .iter()
                .map(|x| scenario(x))
                .collect::<Result<Vec<_>, _>>()?;
            let command = Command::Qa {
                scenarios,
                extension: *extension,
            };
            let done = rec(key)?.record(Step::<Saga>::new(&s, &command))?;
            let t = done
                .state
                .thread()
                .ok_or_else(|| input("saga_id", "thread-exists", "no thread"))?;
            output::json(&json!({
                "saga_id": t.saga_id,
                "outcome": t.qa.last_outcome,
                "lifecycle_phase": t.lifecycle_phase,
                "post_merge_cycles": t.qa.post_merge_cycles,
                "allowed_cycles": t.qa.allowed(),
                "extension_taken": t.qa.extension_taken,
                "events": done.names(),
            }));
            // A cycle that is not a PASS is recorded and not green yet.
            Ok(Done::Recorded(done.outcome))
        }
    }
}

/// Threads to resume, newest first: read from the journal, never a cache.
fn scan(
    db: &Db,
    options: &Options,
    issue_ref: &Option<String>,
    plan_path: &Option<String>,
    branch: &Option<String>,
    max_candidates: usize,
) -> Result<Done, Failure> {
    let mut candidates: Vec<(String, Value)> = vec![];
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
        .take(max_candidates)
        .map(|(_, v)| v)
        .collect();
    output::json(&json!({"candidates": list, "count": list.len()}));
    Ok(Done::Ok)
}
