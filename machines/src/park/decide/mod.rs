//! `decide`: every guard of the park machine, one function per command. The
//! commands after `prepare-attempt` carry the episode's identity, checked first
//! (same episode, same intent, the current attempt).

mod confirm_readback;
mod evaluate;
mod prepare_attempt;
mod validate_receipt;

use super::command::{command_name, Command};
use super::event::Event;
use super::state::{state_name, AttemptId, Episode, EpisodeId, IntentId, State};
use super::NAME;
use crate::evidence::wire::InputError;
use crate::{Context, Rejection, Violation};

/// The events `command` produces in `state`, or every reason it is refused.
pub(super) fn decide(
    state: &State,
    command: &Command,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let r = Refuse {
        state,
        command: command_name(command),
    };
    match command {
        Command::PrepareAttempt { input } => {
            prepare_attempt::decide_prepare_attempt(&r, input, ctx)
        }
        Command::Evaluate {
            episode_id,
            intent_id,
            attempt_id,
            observation,
        } => evaluate::decide_evaluate(&r, episode_id, intent_id, attempt_id, observation, ctx),
        Command::ValidateReceipt {
            episode_id,
            intent_id,
            attempt_id,
            receipt_bytes,
        } => validate_receipt::decide_validate_receipt(
            &r,
            episode_id,
            intent_id,
            attempt_id,
            receipt_bytes,
        ),
        Command::ConfirmReadback {
            episode_id,
            intent_id,
            attempt_id,
            input,
        } => confirm_readback::decide_confirm_readback(
            &r, episode_id, intent_id, attempt_id, input, ctx,
        ),
    }
}

/// The rejections of one command in one state: every refusal names the park
/// machine, the command and the state it was in.
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

    /// Refuses with every violation collected, if there is any.
    fn all(&self, violations: Vec<Violation>) -> Result<(), Rejection> {
        match Rejection::from_violations(NAME, self.command, state_name(self.state), violations) {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// An input document's error, as this command's rejection.
    fn input(&self, e: InputError) -> Rejection {
        e.into_rejection(NAME, self.command, state_name(self.state))
    }

    /// The guards every identity-carrying command shares: same episode, intent and
    /// current attempt.
    fn correlate(
        &self,
        episode_id: &EpisodeId,
        intent_id: &IntentId,
        attempt_id: &AttemptId,
    ) -> Result<Episode, Rejection> {
        let ep = self.state.episode().ok_or_else(|| {
            self.rejection(
                "attempt-prepared",
                Some("attempt_id"),
                "no attempt was prepared for this episode: run prepare-attempt first",
            )
        })?;
        let mut v = Vec::new();
        if &ep.episode_id != episode_id {
            v.push(Violation::new(
                "episode-matches",
                Some("episode_id"),
                "the stream belongs to another episode",
            ));
        }
        if &ep.intent_id != intent_id {
            v.push(Violation::new(
                "intent-matches",
                Some("intent_id"),
                format!("this episode's intent is {}", ep.intent_id),
            ));
        }
        if &ep.attempt_id != attempt_id {
            v.push(Violation::new(
                "attempt-current",
                Some("attempt_id"),
                format!("the current attempt is {}", ep.attempt_id),
            ));
        }
        self.all(v)?;
        Ok(ep.clone())
    }
}
