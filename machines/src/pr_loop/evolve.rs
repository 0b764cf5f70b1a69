//! `evolve`: every event has one target state; the loop's data (the PR, rounds and
//! their basis, last classification and freshness, the tier ladder and tier)
//! travels with it. Total: an event that needs a loop, applied before any
//! observation, changes nothing.

use super::event::Event;
use super::input::ReadingSource;
use super::state::{Loop, State};

/// The state after `event`.
pub(super) fn evolve(state: State, event: &Event) -> State {
    let l = state.looped().cloned();
    match (event, l) {
        (
            Event::Observed {
                pr,
                classification,
                source,
                freshness,
                tiers,
                saga_rounds_seen,
                thread,
                base,
                ..
            },
            l,
        ) => {
            let mut next = match l {
                // A loop with no round yet adopts the thread's rounds too (found:
                // a loop whose first observation named no thread dropped them).
                Some(l) => Loop {
                    pr: pr.clone(),
                    last: classification.clone(),
                    source: *source,
                    freshness: freshness.as_deref().cloned(),
                    rounds_seen: match saga_rounds_seen {
                        Some(rounds) if l.rounds_seen.is_empty() => rounds.clone(),
                        _ => l.rounds_seen,
                    },
                    ..l
                },
                // A new loop continues the saga thread's rounds.
                None => Loop {
                    pr: pr.clone(),
                    rounds_seen: saga_rounds_seen.clone().unwrap_or_default(),
                    last: classification.clone(),
                    tier: None,
                    round_basis: None,
                    ladder: None,
                    base_tier: None,
                    source: *source,
                    freshness: freshness.as_deref().cloned(),
                    thread: None,
                    base: None,
                    base_observed: false,
                },
            };
            if let Some(t) = thread {
                next.thread = Some(t.to_string());
            }
            // A base a reading on stdin names never replaces one cairn read.
            let read_by_cairn = *source == Some(ReadingSource::Gh);
            if let Some(b) = base
                .as_deref()
                .filter(|_| read_by_cairn || !next.base_observed)
            {
                next.base = Some(b.to_owned());
                next.base_observed = read_by_cairn;
            }
            if let Some(t) = tiers {
                next.ladder.get_or_insert_with(|| t.ladder.clone());
                next.base_tier.get_or_insert_with(|| t.current.clone());
            }
            State::Observing { l: next }
        }
        (Event::RoundStarted { round, basis }, Some(mut l)) => {
            if !l.rounds_seen.contains(round) {
                l.rounds_seen.push(*round);
            }
            if basis.is_some() {
                l.round_basis = basis.clone();
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
        (Event::EscalationHeld { .. } | Event::EscalationClamped { .. }, Some(l)) => {
            State::Observing { l }
        }
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
            | Event::EscalationClamped { .. }
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
