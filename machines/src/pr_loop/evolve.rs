//! `evolve`: every event has one target state; the loop's data (the PR, rounds,
//! last classification, tier) travels with it. Total: an event that needs a loop,
//! applied before any observation, changes nothing.

use super::event::Event;
use super::state::{Loop, State};

/// The state after `event`.
pub(super) fn evolve(state: State, event: &Event) -> State {
    let l = state.looped().cloned();
    match (event, l) {
        (
            Event::Observed {
                pr, classification, ..
            },
            l,
        ) => State::Observing {
            l: Loop {
                pr: pr.clone(),
                rounds_seen: l
                    .as_ref()
                    .map(|l| l.rounds_seen.clone())
                    .unwrap_or_default(),
                last: classification.clone(),
                tier: l.and_then(|l| l.tier),
            },
        },
        (Event::RoundStarted { round }, Some(mut l)) => {
            if !l.rounds_seen.contains(round) {
                l.rounds_seen.push(*round);
            }
            State::Observing { l }
        }
        (Event::EscalationProposed { proposal }, Some(l)) => State::EscalationProposed {
            l,
            proposal: proposal.clone(),
        },
        (Event::EscalationApplied { to, .. }, Some(mut l)) => {
            l.tier = Some(to.clone());
            State::Observing { l }
        }
        (Event::EscalationHeld { .. }, Some(l)) => State::Observing { l },
        (Event::ReadyOffered, Some(l)) => State::ReadyOffered { l },
        (Event::ReadyConfirmed { .. }, Some(l)) => State::Observing { l },
        (Event::ReviewRequestOffered, Some(l)) => State::ReviewRequestOffered { l },
        (Event::ReviewRequestConfirmed { .. }, Some(l)) => State::Observing { l },
        (Event::MergeOffered, Some(l)) => State::MergeOffered { l },
        (Event::MergeConfirmed { operator }, Some(l)) => State::MergeConfirmed {
            l,
            operator: operator.clone(),
        },
        (Event::MergedByLoop { .. } | Event::MergeObserved { .. }, Some(l)) => {
            State::Complete { l }
        }
        (Event::ClosedObserved, Some(l)) => State::AwaitingOperator { l },
        (Event::Paused { reason, .. }, Some(l)) => State::Paused {
            l,
            reason: reason.clone(),
        },
        (Event::Abandoned { reason, .. }, Some(l)) => State::Abandoned {
            l,
            reason: reason.clone(),
        },
        // Total: an event that needs a loop, applied before any observation, changes nothing.
        (
            Event::RoundStarted { .. }
            | Event::EscalationProposed { .. }
            | Event::EscalationApplied { .. }
            | Event::EscalationHeld { .. }
            | Event::ReadyOffered
            | Event::ReadyConfirmed { .. }
            | Event::ReviewRequestOffered
            | Event::ReviewRequestConfirmed { .. }
            | Event::MergeOffered
            | Event::MergeConfirmed { .. }
            | Event::MergedByLoop { .. }
            | Event::MergeObserved { .. }
            | Event::ClosedObserved
            | Event::Paused { .. }
            | Event::Abandoned { .. },
            None,
        ) => state,
    }
}
