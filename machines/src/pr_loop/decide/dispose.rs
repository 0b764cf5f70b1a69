//! `dispose`: the operator pauses or abandons the loop — a closed PR, or an open
//! one — with who answered and why. Pausing withdraws any offer or confirmation; a
//! paused loop resumes on its next observation, or is abandoned.

use super::super::command::Disposition;
use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::evidence::names;
use crate::{Rejection, Violation};

/// `dispose`: a PR is observed and the loop open (not already paused, to pause),
/// naming the reason and the operator.
pub(super) fn decide_dispose(
    r: &Refuse,
    disposition: Disposition,
    reason: &str,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    let mut v = Vec::new();
    match (r.state, disposition) {
        (State::Idle, _) => v.push(Violation::new(
            "pr-observed",
            None,
            "observe the PR before pausing or abandoning its loop",
        )),
        (State::Paused { .. }, Disposition::Paused) => v.push(Violation::new(
            "not-paused",
            None,
            "the loop is paused already",
        )),
        _ => {}
    }
    if reason.trim().is_empty() {
        v.push(Violation::new(
            "reason-named",
            Some("reason"),
            "record why the loop is paused or abandoned",
        ));
    }
    if operator.trim().is_empty() {
        v.push(Violation::new(
            "operator-named",
            Some("operator"),
            "record the operator who answered",
        ));
    }
    if let Err((rule, m)) = names::text(reason) {
        v.push(Violation::new(rule, Some("reason"), &m));
    }
    v.extend(r.operator(operator));
    r.all(v)?;
    let (reason, operator) = (reason.to_owned(), operator.to_owned());
    Ok(vec![match disposition {
        Disposition::Paused => Event::Paused { reason, operator },
        Disposition::Abandoned => Event::Abandoned { reason, operator },
    }])
}
