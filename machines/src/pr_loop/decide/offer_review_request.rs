//! `offer-review-request`: requesting review is offered, never automatic, and never
//! on a draft.

use super::super::classify::PrState;
use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::Rejection;

/// `offer-review-request`: only while observing a PR that is not a draft.
pub(super) fn decide_offer_review_request(r: &Refuse) -> Result<Vec<Event>, Rejection> {
    match r.state {
        State::Observing { l } if l.last.state != PrState::Draft => {
            Ok(vec![Event::ReviewRequestOffered])
        }
        State::Observing { .. } => {
            Err(r.rejection("not-draft", None, "never request review on a draft"))
        }
        _ => Err(r.rejection(
            "observing",
            None,
            "offer a review request only while observing",
        )),
    }
}
