//! `evolve`: each event moves the episode one step; a new attempt keeps the
//! episode's identity and counts. Total: an event that does not fit its state
//! leaves it unchanged (the audit's edge check names it).

use super::event::Event;
use super::state::{Episode, State};

/// The state after `event`.
pub(super) fn evolve(state: State, event: &Event) -> State {
    match (state, event) {
        (
            state,
            Event::AttemptPrepared {
                episode_id,
                intent_id,
                anchor_bead,
                attempt_id,
                ..
            },
        ) => State::Prepared {
            episode: Episode {
                episode_id: *episode_id,
                intent_id: *intent_id,
                anchor_bead: anchor_bead.clone(),
                attempt_id: *attempt_id,
                attempts: state.episode().map_or(0, |e| e.attempts) + 1,
            },
        },
        (
            State::Prepared { episode } | State::CheckpointAuthorized { episode, .. },
            Event::CheckpointAuthorized { evaluation, .. },
        ) => State::CheckpointAuthorized {
            episode,
            evaluation: evaluation.clone(),
        },
        (
            State::Prepared { episode }
            | State::CheckpointAuthorized { episode, .. }
            | State::ReceiptAuthorized { episode, .. },
            Event::ReceiptAuthorized {
                evaluation, placed, ..
            },
        ) => State::ReceiptAuthorized {
            episode,
            evaluation: evaluation.clone(),
            placed: placed.clone(),
        },
        (
            State::ReceiptAuthorized {
                episode, placed, ..
            }
            | State::ReceiptValidated {
                episode, placed, ..
            },
            Event::ReceiptValidated {
                receipt_sha256,
                outcome,
                ..
            },
        ) => State::ReceiptValidated {
            episode,
            receipt_sha256: receipt_sha256.clone(),
            outcome: *outcome,
            placed,
        },
        (
            State::ReceiptValidated { episode, .. },
            Event::ReceiptConfirmed {
                receipt_sha256,
                outcome,
                comment_id,
                safe_to_close,
                ..
            },
        ) => State::SafeToClose {
            episode,
            receipt_sha256: receipt_sha256.clone(),
            outcome: *outcome,
            comment_id: comment_id.clone(),
            safe_to_close: *safe_to_close,
        },
        // Total: an event that does not fit its state leaves it unchanged; the audit's edge check names it.
        (
            state,
            Event::CheckpointAuthorized { .. }
            | Event::ReceiptAuthorized { .. }
            | Event::ReceiptValidated { .. }
            | Event::ReceiptConfirmed { .. },
        ) => state,
    }
}
