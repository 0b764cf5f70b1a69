//! `confirm`: the operator confirms what is offered now (ready, a review request or
//! the merge), by name.

use super::super::command::Offer;
use super::super::event::Event;
use super::super::state::{Loop, State};
use super::Refuse;
use crate::reads::{Fact, JOURNAL_AGREES};
use crate::{Context, Rejection};

/// `confirm`: a named operator, and an offer of that kind pending; a merge of a
/// loop that follows a saga thread, only while the thread's PR-ready stands for
/// the head the merge was offered at (the engine read the thread).
pub(super) fn decide_confirm(
    r: &Refuse,
    what: Offer,
    operator: &str,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    if operator.trim().is_empty() {
        return Err(r.rejection(
            "operator-named",
            Some("operator"),
            "a confirmation names the operator who gave it",
        ));
    }
    r.all(r.operator(operator).into_iter().collect())?;
    let operator = operator.to_owned();
    match (r.state, what) {
        (State::ReadyOffered { .. }, Offer::Ready) => Ok(vec![Event::ReadyConfirmed { operator }]),
        (State::ReviewRequestOffered { .. }, Offer::ReviewRequest) => {
            Ok(vec![Event::ReviewRequestConfirmed { operator }])
        }
        (State::MergeOffered { l, .. }, Offer::Merge) => {
            thread_still_ready(r, l, ctx)?;
            Ok(vec![Event::MergeConfirmed { operator }])
        }
        _ => Err(r.rejection(
            "offer-pending",
            Some("what"),
            "nothing of that kind is offered now",
        )),
    }
}

/// The thread a loop follows still stands behind the offered merge: PR-ready holds
/// for its current review, and that review reviewed the head the merge was offered
/// at (found: a review withdrawn after the offer, and the merge was confirmed and
/// recorded all the same).
fn thread_still_ready(r: &Refuse, l: &Loop, ctx: &Context) -> Result<(), Rejection> {
    let Some(thread) = l.thread.as_deref() else {
        return Ok(());
    };
    let offered = l.merge_head().map(|f| f.reviewed_sha.as_str());
    let why = match ctx
        .read(thread)
        .filter(|read| read.version > 0)
        .and_then(|read| read.fact.as_ref())
    {
        Some(Fact::Saga {
            ready: true,
            reviewed: Some(reviewed),
            ..
        }) if Some(reviewed.as_str()) == offered => return Ok(()),
        Some(Fact::Saga { ready: false, .. }) => {
            "PR-ready no longer stands for its current review".to_owned()
        }
        Some(Fact::Saga {
            reviewed: Some(reviewed),
            ..
        }) => format!(
            "its code review reviewed {reviewed}, not the head the merge was offered at ({})",
            offered.unwrap_or("none")
        ),
        Some(_) => "it records no code review".to_owned(),
        None => "it is not in the journal".to_owned(),
    };
    Err(r.rejection(
        JOURNAL_AGREES,
        Some("what"),
        &format!("this loop follows `{thread}`, and {why}: review and pass PR-ready again, then observe the PR"),
    ))
}
