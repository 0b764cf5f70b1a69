//! `resolve-escalation`: an attended operator applies the proposed rung (with the
//! approval token cairn minted with that proposal — single-use, since the proposal
//! ends with its answer) or declines it; unattended, the loop holds at the default
//! and records the proposal.

use super::super::command::{Decision, Mode};
use super::super::event::Event;
use super::super::state::State;
use super::Refuse;
use crate::Rejection;

/// `resolve-escalation`: an escalation is proposed; applying it needs its token.
pub(super) fn decide_resolve_escalation(
    r: &Refuse,
    mode: Mode,
    decision: Decision,
    approval_token: Option<&str>,
) -> Result<Vec<Event>, Rejection> {
    let State::EscalationProposed { proposal, .. } = r.state else {
        return Err(r.rejection("escalation-proposed", None, "no escalation is proposed"));
    };
    match (mode, decision) {
        (Mode::Unattended, _) => Ok(vec![Event::EscalationHeld {
            reason: format!(
                "unattended: held at `{}`; the proposal to `{}` is recorded in the round summary",
                proposal.from, proposal.to
            ),
        }]),
        (Mode::Attended, Decision::Decline) => Ok(vec![Event::EscalationHeld {
            reason: "declined by the operator".into(),
        }]),
        (Mode::Attended, Decision::Apply) => match (approval_token, &proposal.token) {
            (Some(given), Some(minted)) if given == minted => Ok(vec![Event::EscalationApplied {
                to: proposal.to.clone(),
                approval_token: given.to_owned(),
            }]),
            (_, None) => Err(r.rejection(
                "approval-token",
                Some("approval_token"),
                "this proposal was recorded without a token (rules v1): observe again for a new one",
            )),
            (_, Some(_)) => Err(r.rejection(
                "approval-token",
                Some("approval_token"),
                "an attended spend increase needs the approval token cairn minted with this proposal",
            )),
        },
    }
}
