//! `confirm`: the operator confirms what is offered now (ready, a review request or
//! the merge), by name.

use super::super::command::Offer;
use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::Rejection;

/// `confirm`: a named operator, and an offer of that kind pending.
pub(super) fn decide_confirm(
    r: &Refuse,
    what: Offer,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    if operator.trim().is_empty() {
        return Err(r.rejection(
            "operator-named",
            Some("operator"),
            "a confirmation names the operator who gave it",
        ));
    }
    let operator = operator.to_owned();
    match (r.state, what) {
        (State::ReadyOffered { .. }, Offer::Ready) => Ok(vec![Event::ReadyConfirmed { operator }]),
        (State::ReviewRequestOffered { .. }, Offer::ReviewRequest) => {
            Ok(vec![Event::ReviewRequestConfirmed { operator }])
        }
        (State::MergeOffered { .. }, Offer::Merge) => Ok(vec![Event::MergeConfirmed { operator }]),
        _ => Err(r.rejection(
            "offer-pending",
            Some("what"),
            "nothing of that kind is offered now",
        )),
    }
}
