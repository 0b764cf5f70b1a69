//! Which recorded ship transitions are "not green yet": the outcome is recorded
//! (a blocked preflight, a scope trip, a stop, a tiebreaker, a rejected merge, a
//! failed creation, a permission boundary, a drifted anchor, a blocked resume, a
//! partial teardown) and the pipeline did not advance. None of them is a refusal.

use super::{Event, Stage, State};
use crate::Verdict;

/// The pipeline's verdict on a transition: the stage it left the run in, and
/// the last event it appended.
pub(super) fn verdict(state: &State, events: &[Event]) -> Verdict {
    if stopped_stage(state) || events.last().is_some_and(stopping_event) {
        Verdict::NotGreen
    } else {
        Verdict::Green
    }
}

/// A stage the pipeline waits in for an answer, a resume or nothing at all.
fn stopped_stage(state: &State) -> bool {
    match state {
        State::Idle => false,
        State::Active { stage, .. } => match stage {
            Stage::Preflighted { outcome } => !outcome.may_create_worktree(),
            Stage::ScopeTripped { .. }
            | Stage::Stopped { .. }
            | Stage::Tiebreaker { .. }
            | Stage::MergeRejected { .. }
            | Stage::CreationFailed { .. }
            | Stage::PermissionBoundary { .. } => true,
            Stage::Phase1
            | Stage::Phase2
            | Stage::Phase3
            | Stage::MergeReady { .. }
            | Stage::Merged
            | Stage::TeardownPending { .. }
            | Stage::Shipped
            | Stage::TornDown { .. }
            | Stage::Abandoned { .. } => false,
        },
    }
}

/// An event that records a stop without moving to a stopped stage.
fn stopping_event(event: &Event) -> bool {
    match event {
        Event::AnchorDrifted { .. }
        | Event::ResumeBlocked { .. }
        | Event::TeardownPartial { .. }
        | Event::MergeTipMoved { .. }
        | Event::LeafStoppedForTeardown { .. } => true,
        Event::Opened { .. }
        | Event::PreflightPassed { .. }
        | Event::PreflightBlocked { .. }
        | Event::StepBegun { .. }
        | Event::WorktreeCreated { .. }
        | Event::WorktreeCreationFailed { .. }
        | Event::Phase1Reported { .. }
        | Event::Phase1Verified { .. }
        | Event::ScopeTripped { .. }
        | Event::Phase1dFailed { .. }
        | Event::LeafStopped { .. }
        | Event::ScopeProceeded { .. }
        | Event::ScopeAborted { .. }
        | Event::Refined { .. }
        | Event::RefineStopped { .. }
        | Event::TiebreakerRaised { .. }
        | Event::RespawnedPhase2 { .. }
        | Event::RespawnedPhase3 { .. }
        | Event::PreMergeChecked { .. }
        | Event::PreMergeStopped { .. }
        | Event::MergeAccepted { .. }
        | Event::MergeRejected { .. }
        | Event::MergeStopped { .. }
        | Event::MergeBlocked { .. }
        | Event::MergeLost { .. }
        | Event::TornDown { .. }
        | Event::ResumedPhase1(_)
        | Event::ResumedPhase2(_)
        | Event::ResumedPhase3(_)
        | Event::ResumedTeardown(_)
        | Event::ExternalOpRecorded { .. }
        | Event::PermissionBoundaryReached { .. }
        | Event::Abandoned { .. }
        | Event::AbandonedForTeardown { .. } => false,
    }
}
