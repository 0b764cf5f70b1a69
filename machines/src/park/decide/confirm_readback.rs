//! `confirm-readback`: the receipt read back byte for byte, the same bytes that
//! were validated for this attempt; only a durable read-back makes the episode safe
//! to close.

use serde_json::Value;

use super::super::event::Event;
use super::super::receipt;
use super::super::state::{AttemptId, EpisodeId, IntentId, State};
use super::evaluate::Quiescent;
use super::Refuse;
use crate::evidence::sha256_hex;
use crate::{Context, Rejection};

/// `confirm-readback`: the identity correlates, the read-back parses and confirms,
/// the receipt names this episode, intent and attempt, and its bytes are the
/// validated ones (already confirmed: nothing new; not durable: nothing yet).
pub(super) fn decide_confirm_readback(
    r: &Refuse,
    episode_id: &EpisodeId,
    intent_id: &IntentId,
    attempt_id: &AttemptId,
    input: &Value,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    r.correlate(episode_id, intent_id, attempt_id)?;
    let parsed = receipt::parse_readback(input).map_err(|e| r.input(e))?;
    let receipt::Confirmed {
        receipt, readback, ..
    } = receipt::confirm(&parsed).map_err(|e| r.input(e))?;
    if &receipt.intent_id != intent_id
        || &receipt.attempt_id != attempt_id
        || &receipt.episode_id != episode_id
    {
        return Err(r.rejection(
            "receipt-identity",
            Some("receipt_bytes"),
            "the receipt names another episode, intent or attempt",
        ));
    }
    let sha = sha256_hex(&parsed.receipt_bytes);
    match r.state {
        State::ReceiptValidated { receipt_sha256, .. } if *receipt_sha256 == sha => {}
        // Already confirmed with these bytes: nothing new to record.
        State::SafeToClose { receipt_sha256, .. } if *receipt_sha256 == sha => return Ok(vec![]),
        _ => {
            return Err(r.rejection(
                "receipt-validated",
                Some("receipt_bytes"),
                "these exact bytes were not validated for this attempt",
            ))
        }
    }
    if !readback.durable {
        return Ok(vec![]);
    }
    // Safe to close is entered only while the episode is still quiescent: a work
    // node dispatched in the bound repository since the receipt was authorized
    // refuses it (the engine scanned the live dispatches; park rules 5).
    super::evaluate::no_live_dispatch(r, &receipt.observation, ctx, Quiescent::ReadingBack)?;
    // And none was dispatched (or moved) there since the authorization, even if
    // it was verified or escalated before the read-back (found by a hostile pass:
    // a worker dispatched and verified in between left no live dispatch to see).
    if let State::ReceiptValidated { placed, .. } = r.state {
        let now = super::evaluate::placed_in(receipt.observation.binding(), ctx);
        if let Some(moved) = now.iter().find(|n| !placed.contains(n)) {
            return Err(r.rejection(
                crate::reads::JOURNAL_AGREES,
                Some("receipt_bytes"),
                &format!(
                    "the journal's `{}` was dispatched or moved in the bound repository since the receipt was authorized (now at version {}): the episode was not quiescent; prepare a new attempt and evaluate it",
                    moved.stream, moved.version
                ),
            ));
        }
    }
    Ok(vec![Event::ReceiptConfirmed {
        attempt_id: *attempt_id,
        receipt_sha256: sha,
        outcome: receipt.outcome,
        comment_id: readback.comment_id.unwrap_or(Value::Null),
        safe_to_close: true,
    }])
}
