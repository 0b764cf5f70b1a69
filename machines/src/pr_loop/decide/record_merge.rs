//! `record-merge`: the skill merged after the operator confirmed the offered merge;
//! `merged-by-loop` is reachable only through `merge-confirmed`.

use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::{Rejection, Timestamp};

/// `record-merge`: only once the offered merge was confirmed.
pub(super) fn decide_record_merge(
    r: &Refuse,
    merged_at: &Timestamp,
) -> Result<Vec<Event>, Rejection> {
    match r.state {
        State::MergeConfirmed { .. } => Ok(vec![Event::MergedByLoop {
            merged_at: merged_at.clone(),
        }]),
        _ => Err(r.rejection(
            "merge-confirmed",
            None,
            "cairn records a merge only after the operator confirmed the offered merge",
        )),
    }
}
