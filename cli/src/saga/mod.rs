//! `cairn saga <verb>`: the work thread. One stream per thread (`saga/<saga_id>`);
//! `scan` and `restore` read the journal, never a cache.
//!
//! `save` (ticks, restore, show, scan), `observed` (the verbs whose commands carry
//! git runs cairn made itself: `pr-ready`, `merge-turn release`), `qa`; the gate
//! verbs whose input is exactly their command are here.

mod observed;
mod qa;
mod save;
pub(crate) mod view;

use cairn::journal::Options;
use cairn::machines::evidence::{FullCommit, RefName};
use cairn::machines::saga::{self, gates, Command, Saga, State};
use cairn::StreamId;
use serde_json::json;

use crate::args::{MergeTurnCommand, SagaCommand};
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};

/// A caller's name that git will read (a branch, a target) must not look like an
/// option: refused at input, before anything is recorded or run.
fn not_option_like(field: &str, value: &str) -> Result<RefName, Failure> {
    RefName::parse(value).map_err(|e| {
        input(
            field,
            e.rule,
            "must not start with `-` (git would read it as an option)",
        )
    })
}

/// A full commit id the caller names, refused at input (under the rule the machine
/// once refused it with) when it is short, symbolic or not lower-case hex.
fn full_commit(field: &str, rule: &str, message: &str, value: &str) -> Result<FullCommit, Failure> {
    FullCommit::parse(value).map_err(|_| input(field, rule, message))
}

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

fn load(db: &Db, options: &Options, s: &StreamId) -> Result<State, Failure> {
    Recorder::reader(db, options).current::<Saga>(s)
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
    output::json(&view::GatesView {
        saga_id: saga_id.to_owned(),
        stream: done.stream.to_string(),
        version: done.version,
        events: done.names(),
        submits: !done.events.is_empty(),
        gates: json!(g),
    });
}

/// A gate command whose input is exactly the command.
fn gate(rec: &Recorder, saga_id: &str, command: Command) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    gate_verb(rec, saga_id, Step::new(&s, &command))
}

pub fn run(verb: &SagaCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let rec = |key| Recorder::new(db, options, key);
    match verb {
        SagaCommand::Save(a) => save::save(&rec(&a.key)?, a),
        SagaCommand::Restore { saga_id } => save::restore(db, options, saga_id),
        SagaCommand::Show { saga_id } => save::show(db, options, saga_id),
        SagaCommand::Scan {
            issue_ref,
            plan_path,
            branch,
            max_candidates,
        } => save::scan(db, options, issue_ref, plan_path, branch, *max_candidates),
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
            from,
            key,
        } => {
            let outcome: gates::ReviewOutcome = serde_json::from_value(json!(outcome))
                .map_err(|_| input("outcome", "enum", "an outcome"))?;
            let rec = rec(key)?;
            let s = stream(saga_id)?;
            // The key stands for the request as typed: a retry of `--from` after the
            // loop moved replays the first answer, it is not another request.
            let request = Request::new(
                "saga review",
                json!({ "outcome": outcome, "reviewed_sha": reviewed_sha, "from": from }),
            );
            if let Some(done) = rec.recall::<Saga>(&s, &request)? {
                print_gates(saga_id, &done);
                return Ok(Done::Recorded(done.outcome));
            }
            // A revision taken from the loop (none typed) is read again when the
            // decision, reading the loop itself, refuses it: the loop handed another
            // revision in between (found: losing that race exited 2, as if the
            // caller had typed a wrong one). A few such rounds, then the refusal.
            let mut attempts = 0;
            loop {
                let handed = from
                    .as_deref()
                    .map(|f| observed::handed_by(&rec, f))
                    .transpose()?;
                let sha = match (reviewed_sha.as_deref(), &handed) {
                    (Some(typed), _) => typed.to_owned(),
                    (None, Some(Some(handed))) => handed.clone(),
                    _ => {
                        return Err(input(
                            "from",
                            cairn::machines::reads::JOURNAL_AGREES,
                            &format!(
                                "`{}` has handed nothing to code review (the journal holds no green iteration of it)",
                                from.as_deref().unwrap_or_default()
                            ),
                        ))
                    }
                };
                let command = Command::Review {
                    review: gates::Review {
                        outcome,
                        reviewed_sha: full_commit(
                            "reviewed_sha",
                            "full-sha",
                            "the full reviewed SHA",
                            &sha,
                        )?,
                    },
                    from: from.clone(),
                };
                match gate_verb(
                    &rec,
                    saga_id,
                    Step::new(&s, &command).request(request.clone()),
                ) {
                    Err(Failure::Cairn(cairn::Error::Rejected(_)))
                        if reviewed_sha.is_none()
                            && attempts < 5
                            && from
                                .as_deref()
                                .map(|f| observed::handed_by(&rec, f))
                                .transpose()?
                                != handed =>
                    {
                        attempts += 1;
                    }
                    done => return done,
                }
            }
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
        SagaCommand::PrReady {
            saga_id,
            repo,
            issue,
            key,
        } => observed::pr_ready(&rec(key)?, db, options, saga_id, repo, *issue),
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
        }) => {
            let branch = not_option_like("branch", branch)?;
            let merge_worktree =
                crate::failure::require_abs_path("merge_worktree", merge_worktree)?;
            gate(
                &rec(key)?,
                saga_id,
                Command::TakeTurn {
                    unit: unit.clone(),
                    branch,
                    merge_worktree,
                    holder: holder.clone(),
                },
            )
        }
        SagaCommand::MergeTurn(MergeTurnCommand::Release {
            saga_id,
            unit,
            repo,
            target,
            key,
        }) => observed::release_turn(&rec(key)?, db, options, saga_id, unit, repo, target),
        SagaCommand::MergeTurn(MergeTurnCommand::Merged {
            saga_id,
            unit,
            holder,
            merged_tip,
            repo,
            target,
            from,
            key,
        }) => observed::merged(
            &rec(key)?,
            db,
            options,
            saga_id,
            observed::MergedArgs {
                unit,
                holder,
                merged_tip: merged_tip.as_deref(),
                repo: repo.as_deref(),
                target: target.as_deref(),
                from: from.as_deref(),
            },
        ),
        SagaCommand::Release {
            saga_id,
            destination,
            reviewed_head,
            landed_commit,
            absence_reason,
            repo,
            target,
            from,
            key,
        } => observed::release(
            &rec(key)?,
            saga_id,
            observed::ReleaseArgs {
                destination,
                reviewed_head: reviewed_head.as_deref(),
                landed_commit: landed_commit.as_deref(),
                absence_reason: absence_reason.as_deref(),
                repo: repo.as_deref(),
                target: target.as_deref(),
                from: from.as_deref(),
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
            record,
            key,
        } => qa::qa(
            &rec(key)?,
            saga_id,
            scenarios,
            *extension,
            record.as_deref(),
        ),
    }
}
