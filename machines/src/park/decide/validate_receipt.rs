//! `validate-receipt`: the exact receipt bytes, validated for the attempt a durable
//! evaluation authorized; their SHA-256 is what the read-back must match.

use super::super::event::Event;
use super::super::receipt;
use super::super::state::{AttemptId, EpisodeId, IntentId, State};
use super::Refuse;
use crate::evidence::sha256_hex;
use crate::{Rejection, Violation};

/// `validate-receipt`: the identity correlates, a receipt was authorized, the bytes
/// validate, and the receipt names this episode, intent and attempt.
pub(super) fn decide_validate_receipt(
    r: &Refuse,
    episode_id: &EpisodeId,
    intent_id: &IntentId,
    attempt_id: &AttemptId,
    receipt_bytes: &str,
) -> Result<Vec<Event>, Rejection> {
    r.correlate(episode_id, intent_id, attempt_id)?;
    if !matches!(
        r.state,
        State::ReceiptAuthorized { .. } | State::ReceiptValidated { .. }
    ) {
        return Err(r.rejection(
            "receipt-authorized",
            None,
            "no durable evaluation authorized a receipt for this attempt",
        ));
    }
    let receipt = receipt::validate_bytes(receipt_bytes).map_err(|e| r.input(e))?;
    let mut v = Vec::new();
    if &receipt.episode_id != episode_id {
        v.push(Violation::new(
            "receipt-episode",
            Some("episode_id"),
            "the receipt names another episode",
        ));
    }
    if &receipt.intent_id != intent_id {
        v.push(Violation::new(
            "receipt-intent",
            Some("intent_id"),
            "the receipt names another intent",
        ));
    }
    if &receipt.attempt_id != attempt_id {
        v.push(Violation::new(
            "receipt-attempt",
            Some("attempt_id"),
            "the receipt names another attempt",
        ));
    }
    r.all(v)?;
    Ok(vec![Event::ReceiptValidated {
        attempt_id: *attempt_id,
        receipt_sha256: sha256_hex(receipt_bytes),
        outcome: receipt.outcome,
    }])
}
