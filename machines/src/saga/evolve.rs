//! `evolve`: a tick replaces the thread, QA events move its allowance and phase, and
//! every gate event updates the gate record. Total: it validates nothing.

use super::event::Event;
use super::gates;
use super::state::{GateRecord, Phase, State};

/// The state after `event`.
pub(super) fn evolve(state: State, event: &Event) -> State {
    match (state, event) {
        (_, Event::TickSaved { thread } | Event::RetroTickSaved { thread }) => State::Thread {
            thread: thread.clone(),
        },
        (State::Thread { mut thread }, Event::QaExtensionGranted) => {
            thread.qa.extension_taken = true;
            State::Thread { thread }
        }
        (
            State::Thread { mut thread },
            Event::QaCycleRecorded {
                cycle,
                outcome,
                limits,
                ..
            },
        ) => {
            thread.qa.post_merge_cycles = *cycle;
            thread.qa.last_outcome = Some(*outcome);
            if limits.is_some() {
                thread.qa.limits = *limits;
            }
            State::Thread { thread }
        }
        (State::Thread { mut thread }, Event::AdvancedToQa) => {
            thread.lifecycle_phase = Phase::Qa;
            State::Thread { thread }
        }
        (State::Thread { mut thread }, e) => {
            evolve_gate(&mut thread.gates, e);
            State::Thread { thread }
        }
        // Total: an event before any tick changes nothing.
        (State::Empty, _) => State::Empty,
    }
}

/// A gate event's change to the gate record (every other event leaves it as it is).
fn evolve_gate(g: &mut GateRecord, e: &Event) {
    match e {
        Event::DocReviewRecorded { review } => g.doc_review = Some(review.clone()),
        Event::ReviewRecorded { review } => {
            g.review = Some(review.clone());
            g.ready_for_pr = None;
            g.ready_unit = None;
            g.ready_repository = None;
        }
        Event::OverrideRecorded { r#override } => g.overrides.push(r#override.clone()),
        Event::ReadyForPr {
            reviewed_sha,
            unit,
            repository,
            ..
        } => {
            g.ready_for_pr = Some(reviewed_sha.clone());
            g.ready_unit = unit.clone();
            g.ready_repository = repository.clone();
            if g.repository.is_none() {
                g.repository = repository.clone();
            }
        }
        Event::DirectiveSet { directive } => {
            if *directive == gates::Directive::Continue {
                g.paused_at = None;
                g.directive = None;
            } else {
                g.directive = Some(directive.clone());
            }
        }
        Event::PausedAtBoundary { boundary } => g.paused_at = Some(boundary.clone()),
        Event::TurnTaken {
            unit,
            branch,
            merge_worktree,
            holder,
            reviewed,
            repository,
        } => {
            g.units.insert(
                unit.clone(),
                gates::UnitRow {
                    merge_state: gates::MergeState::Merging,
                    holder: Some(holder.clone()),
                    branch: branch.clone(),
                    merge_worktree: Some(merge_worktree.clone()),
                    merged_tip: None,
                    reviewed: reviewed.clone(),
                    repository: repository.clone(),
                },
            );
        }
        Event::TurnReleased { unit, evidence, .. } => {
            if let Some(r) = g.units.get_mut(unit) {
                r.holder = None;
                r.merge_state = if *evidence == gates::TurnEvidence::Merged {
                    gates::MergeState::Merged
                } else {
                    gates::MergeState::Ready
                };
            }
        }
        Event::UnitMerged {
            unit, merged_tip, ..
        } => {
            if let Some(r) = g.units.get_mut(unit) {
                r.holder = None;
                r.merge_state = gates::MergeState::Merged;
                r.merged_tip = Some(merged_tip.clone());
            }
        }
        Event::Released { release } => g.release = Some(release.clone()),
        Event::BoardMoved {
            boundary,
            stage,
            status,
        } => g
            .board
            .push((boundary.clone(), stage.clone(), status.clone())),
        Event::TickSaved { .. }
        | Event::RetroTickSaved { .. }
        | Event::QaExtensionGranted
        | Event::QaCycleRecorded { .. }
        | Event::AdvancedToQa
        | Event::BoundaryCrossed { .. }
        | Event::BoundaryHeld { .. }
        | Event::BoardHalfWrite { .. } => {}
    }
}
