//! `evolve`: each event's effect on the run and its stage. Total, validates nothing
//! (every guard is in [`super::decide`]).

use std::collections::BTreeMap;

use super::event::Event;
use super::gates::Phase1d;
use super::preflight::Preflight;
use super::recovery::{self, Action, Failure};
use super::report::RebaseOutcome;
use super::state::{InFlight, Params, Run, Stage, State};
use crate::evidence::AbsPath;

/// The state after `event`.
pub(super) fn evolve(state: State, event: &Event) -> State {
    let (mut run, stage) = match (state, event) {
        (
            State::Idle,
            Event::Opened {
                params,
                repo_root,
                acts_for,
                repository,
                ..
            },
        ) => {
            let mut run = opened(params.clone(), repo_root.clone());
            run.acts_for = acts_for.clone();
            run.repository = repository.clone();
            return State::Active {
                run: Box::new(run),
                // Blocked until the preflight event that always follows.
                stage: Stage::Preflighted {
                    outcome: Preflight::Unreadable("preflight".into()),
                },
            };
        }
        // Total: nothing but `opened` moves an idle stream.
        (State::Idle, _) => return State::Idle,
        (State::Active { run, stage }, _) => (run, stage),
    };
    let stop = |failure: Failure, code: String, phase: u8| match recovery::action(failure) {
        Action::Teardown => Stage::TeardownPending { reason: code },
        _ => Stage::Stopped {
            failure,
            code,
            phase,
        },
    };
    run.begun = in_flight(run.begun, event);
    let stage = match event {
        Event::Opened { .. } | Event::StepBegun { .. } => stage,
        Event::PreflightPassed { outcome, .. } | Event::PreflightBlocked { outcome, .. } => {
            // A preflight after a permission boundary starts a fresh session's budget.
            if matches!(stage, Stage::PermissionBoundary { .. }) {
                run.denials.clear();
            }
            Stage::Preflighted {
                outcome: outcome.clone(),
            }
        }
        Event::AnchorDrifted { .. } => match stage {
            Stage::Preflighted { .. } => Stage::Preflighted {
                outcome: Preflight::RepoAnchorDrift,
            },
            other => other,
        },
        Event::WorktreeCreated { .. } => Stage::Phase1,
        Event::WorktreeCreationFailed { failed, .. } => Stage::CreationFailed {
            failed: failed.clone(),
        },
        Event::Phase1Reported { report } => {
            run.in_scope_paths = report.in_scope_paths.clone();
            stage
        }
        Event::Phase1Verified { .. } => Stage::Phase2,
        Event::ScopeTripped { trip, .. } => Stage::ScopeTripped { trip: trip.clone() },
        Event::Phase1dFailed { failed, .. } => Stage::Stopped {
            failure: Failure::Phase1dVerify,
            code: format!("stopped:phase-1d:{}", failed.join(",")),
            phase: 1,
        },
        Event::LeafStopped {
            phase,
            code,
            failure,
        } => Stage::Stopped {
            failure: *failure,
            code: code.clone(),
            phase: *phase,
        },
        Event::LeafStoppedForTeardown { code, .. } => Stage::TeardownPending {
            reason: code.clone(),
        },
        Event::ScopeProceeded { .. } => {
            // The operator accepted the paths the trip named: they are in scope now.
            if let Stage::ScopeTripped {
                trip: Phase1d::ScopeTripped { out_of_scope, .. },
            } = &stage
            {
                let paths = run.in_scope_paths.get_or_insert_with(Vec::new);
                for path in out_of_scope {
                    if !paths.contains(path) {
                        paths.push(path.clone());
                    }
                }
            }
            Stage::Phase2
        }
        Event::ScopeAborted { .. } => Stage::TeardownPending {
            reason: "scope gate: the user aborted".into(),
        },
        Event::Refined { .. } => {
            run.rebase_done = true;
            run.refine_passed = true;
            Stage::Phase3
        }
        Event::RefineStopped {
            report,
            failure,
            code,
            ..
        } => {
            run.rebase_done = run.rebase_done || report.rebase_outcome != RebaseOutcome::Conflict;
            stop(*failure, code.clone(), 2)
        }
        Event::TiebreakerRaised {
            number,
            context,
            proposed,
            phase,
        } => Stage::Tiebreaker {
            number: *number,
            context: context.clone(),
            proposed: proposed.clone(),
            phase: *phase,
        },
        Event::RespawnedPhase2 { .. } => Stage::Phase2,
        Event::RespawnedPhase3 { .. } => Stage::Phase3,
        Event::PreMergeChecked {
            tip,
            work_nodes,
            vouched,
            shipped,
            history,
            ..
        } => {
            run.work_nodes = work_nodes.clone();
            run.vouched = vouched.clone();
            run.shipped = shipped.clone();
            run.history = history.clone();
            Stage::MergeReady { tip: tip.clone() }
        }
        Event::PreMergeStopped {
            failure,
            code,
            work_nodes,
            ..
        } => {
            run.work_nodes = work_nodes.clone();
            stop(*failure, code.clone(), 3)
        }
        Event::MergeAccepted {
            attempt,
            merged_sha,
            ..
        } => {
            run.merge_attempts = *attempt;
            run.merged_sha = Some(merged_sha.clone());
            Stage::Merged
        }
        Event::MergeRejected { attempt, .. } => {
            run.merge_attempts = *attempt;
            let tip = match stage {
                Stage::MergeReady { tip } | Stage::MergeRejected { tip } => tip,
                _ => None,
            };
            Stage::MergeRejected { tip }
        }
        Event::MergeBlocked { code, .. } => stop(Failure::PreMerge, code.clone(), 3),
        Event::MergeTipMoved { .. } => Stage::Phase3,
        Event::MergeLost { code, .. } => {
            run.merged_sha = None;
            stop(Failure::PreMerge, code.clone(), 3)
        }
        Event::MergeStopped { attempt, code, .. } => {
            run.merge_attempts = *attempt;
            let failure = if code == "stopped:ff-rejected-twice" {
                Failure::FfRejectedTwice
            } else {
                Failure::PreMerge
            };
            stop(failure, code.clone(), 3)
        }
        Event::TornDown { .. } => match stage {
            Stage::TeardownPending { reason } => Stage::TornDown { reason },
            _ => Stage::Shipped,
        },
        Event::TeardownPartial { teardown, .. } => match stage {
            s @ Stage::TeardownPending { .. } => s,
            _ => stop(Failure::TeardownPartial, teardown.clone(), 3),
        },
        Event::ResumedPhase1(r)
        | Event::ResumedPhase2(r)
        | Event::ResumedPhase3(r)
        | Event::ResumedTeardown(r) => {
            run.session = r.session;
            run.merge_attempts = 0;
            run.denials.clear();
            match event {
                Event::ResumedPhase3(_) => Stage::Phase3,
                Event::ResumedTeardown(_) => Stage::Merged,
                _ => Stage::Phase1,
            }
        }
        Event::ResumeBlocked { .. } => stage,
        Event::ExternalOpRecorded { class, denied, .. } => {
            if *denied {
                *run.denials.entry(*class).or_insert(0) += 1;
            } else {
                run.denials.remove(class);
            }
            stage
        }
        Event::PermissionBoundaryReached { code, .. } => Stage::PermissionBoundary {
            code: code.clone(),
            worktree: stage.has_worktree(),
        },
        Event::Abandoned { reason, .. } => Stage::Abandoned {
            reason: reason.clone(),
        },
        Event::AbandonedForTeardown { reason, .. } => Stage::TeardownPending {
            reason: format!("abandoned: {reason}"),
        },
    };
    State::Active { run, stage }
}

/// A run just opened: session 0, nothing recorded yet.
fn opened(params: Params, repo_root: AbsPath) -> Run {
    Run {
        params,
        repo_root,
        session: 0,
        in_scope_paths: None,
        rebase_done: false,
        refine_passed: false,
        merge_attempts: 0,
        merged_sha: None,
        denials: BTreeMap::new(),
        begun: None,
        work_nodes: Vec::new(),
        vouched: None,
        shipped: None,
        acts_for: None,
        history: None,
        repository: None,
    }
}

/// The git mutation in flight after `event`: announced by `step-begun` (with its
/// owner), cleared by the step's result (or a resume's).
fn in_flight(begun: Option<InFlight>, event: &Event) -> Option<InFlight> {
    match event {
        Event::StepBegun { step, owner, .. } => Some(InFlight {
            step: *step,
            owner: owner.clone(),
        }),
        Event::WorktreeCreated { .. }
        | Event::WorktreeCreationFailed { .. }
        | Event::AnchorDrifted { .. }
        | Event::MergeAccepted { .. }
        | Event::MergeRejected { .. }
        | Event::MergeStopped { .. }
        | Event::MergeBlocked { .. }
        | Event::MergeTipMoved { .. }
        | Event::MergeLost { .. }
        | Event::TornDown { .. }
        | Event::TeardownPartial { .. }
        | Event::ResumedPhase1(_)
        | Event::ResumedPhase2(_)
        | Event::ResumedPhase3(_)
        | Event::ResumedTeardown(_)
        | Event::ResumeBlocked { .. } => None,
        _ => begun,
    }
}
