//! `dispose`: the operator's answer to a closed PR — pause or abandon, with who
//! answered and why.

use super::super::command::Disposition;
use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::Rejection;

/// `dispose`: only while awaiting the operator, naming the reason and the operator.
pub(super) fn decide_dispose(
    r: &Refuse,
    disposition: Disposition,
    reason: &str,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    if !matches!(r.state, State::AwaitingOperator { .. }) {
        return Err(r.rejection(
            "closed-observed",
            None,
            "pause or abandon is the operator's answer to a closed PR",
        ));
    }
    if reason.trim().is_empty() || operator.trim().is_empty() {
        return Err(r.rejection(
            "reason-and-operator",
            Some("reason"),
            "record the operator and the reason",
        ));
    }
    let (reason, operator) = (reason.to_owned(), operator.to_owned());
    Ok(vec![match disposition {
        Disposition::Paused => Event::Paused { reason, operator },
        Disposition::Abandoned => Event::Abandoned { reason, operator },
    }])
}
