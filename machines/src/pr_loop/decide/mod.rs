//! `decide`: every guard of the pr-loop, one function per command. An ended loop
//! (merged or abandoned) refuses every command.

mod confirm;
mod dispose;
mod observe;
mod offer_review_request;
mod record_merge;
mod resolve_escalation;
#[cfg(test)]
mod tests;
mod tiers;

use super::command::{command_name, Command};
use super::event::Event;
use super::state::{state_name, State};
use super::NAME;
use crate::evidence::names;
use crate::{Context, Rejection, Violation};

/// The events `command` produces in `state`, or why it is refused.
pub(super) fn decide(
    state: &State,
    command: &Command,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let r = Refuse {
        state,
        command: command_name(command),
    };
    if matches!(state, State::Abandoned { .. } | State::Complete { .. }) {
        return Err(r.rejection(
            "loop-open",
            None,
            "the loop has ended (merged or abandoned)",
        ));
    }
    match command {
        Command::Observe {
            input,
            observed,
            from,
        } => observe::decide_observe(&r, input, observed, from.as_deref(), ctx),
        Command::OfferReviewRequest => offer_review_request::decide_offer_review_request(&r),
        Command::Confirm { what, operator } => confirm::decide_confirm(&r, *what, operator, ctx),
        Command::ResolveEscalation {
            mode,
            decision,
            approval_token,
        } => resolve_escalation::decide_resolve_escalation(
            &r,
            *mode,
            *decision,
            approval_token.as_deref(),
        ),
        Command::RecordMerge {
            merged_at,
            evidence,
        } => record_merge::decide_record_merge(&r, merged_at.as_ref(), evidence.as_deref()),
        Command::Dispose {
            disposition,
            reason,
            operator,
        } => dispose::decide_dispose(&r, *disposition, reason, operator),
    }
}

/// The rejections of one command in one state: every refusal names the pr-loop,
/// the command and the state it was in.
struct Refuse<'a> {
    state: &'a State,
    command: &'static str,
}

impl Refuse<'_> {
    /// A rejection with one violation.
    fn rejection(&self, predicate: &str, field: Option<&str>, message: &str) -> Rejection {
        Rejection::single(
            NAME,
            self.command,
            state_name(self.state),
            Violation::new(predicate, field, message),
        )
    }

    /// A rejection listing every collected violation; `Ok` when there are none.
    fn all(&self, violations: Vec<Violation>) -> Result<(), Rejection> {
        match Rejection::from_violations(NAME, self.command, state_name(self.state), violations) {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// The operator who answered, as a person reads the name (helper-75: a name
    /// with U+202E, a newline or `-x` confirmed an offer); `None` when it is a
    /// name, else the violation. An empty one is left to `operator-named`.
    fn operator(&self, operator: &str) -> Option<Violation> {
        names::label("operator", operator, names::NAME_MAX)
            .err()
            .filter(|_| !operator.trim().is_empty())
            .map(|(rule, m)| Violation::new(rule, Some("operator"), &m))
    }

    /// An input document's error, as this command's rejection.
    fn input(&self, e: crate::evidence::wire::InputError) -> Rejection {
        e.into_rejection(NAME, self.command, state_name(self.state))
    }
}
