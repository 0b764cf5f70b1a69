//! `park`: the park-work lifecycle (seed `000_a138a20f5c719cdf`). Decide whether a
//! work episode is mechanically safe to close; park incomplete work behind a
//! verified durable checkpoint and receipt; refuse active resume.
//!
//! One stream per episode (`park/ep-<uuid>`):
//!
//! ```text
//! fresh ─attempt-prepared→ prepared ─checkpoint-authorized→ checkpoint-authorized
//!   prepared | checkpoint-authorized ─receipt-authorized→ receipt-authorized
//!   receipt-authorized ─receipt-validated→ receipt-validated ─receipt-confirmed→ safe-to-close
//! ```
//!
//! An unsafe evaluation or an unproven read-back appends nothing. Only
//! `receipt-confirmed` carries `safe_to_close`, and it is reachable only through a
//! receipt validated for the same attempt and read back byte for byte.

pub mod bind;
pub mod fold;
pub mod gate;
pub mod observation;
pub mod prepare;
pub mod receipt;
pub mod vcs;
pub use crate::evidence::wire; // shared by every machine; kept under its old path

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::wire::InputError;
use crate::{
    Context, EdgeSpec, GraphSpec, Id, IdKind, Machine, Rejection, StateSpec, Timestamp, Violation,
};
use fold::{Action, Candidate, Evaluation};

/// The machine's name.
pub const NAME: &str = "park";

pub struct EpisodeKind;
impl IdKind for EpisodeKind {
    const PREFIX: &'static str = "ep-";
}
pub struct IntentKind;
impl IdKind for IntentKind {
    const PREFIX: &'static str = "park-";
}
pub struct AttemptKind;
impl IdKind for AttemptKind {
    const PREFIX: &'static str = "attempt-";
}
pub type EpisodeId = Id<EpisodeKind>;
pub type IntentId = Id<IntentKind>;
pub type AttemptId = Id<AttemptKind>;

pub use crate::evidence::sha256_hex;

/// The episode's identity, preserved across attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Episode {
    pub episode_id: EpisodeId,
    pub intent_id: IntentId,
    pub anchor_bead: String,
    /// The current attempt.
    pub attempt_id: AttemptId,
    /// How many attempts were prepared.
    pub attempts: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    Fresh,
    Prepared {
        episode: Episode,
    },
    CheckpointAuthorized {
        episode: Episode,
        evaluation: Evaluation,
    },
    ReceiptAuthorized {
        episode: Episode,
        evaluation: Evaluation,
    },
    ReceiptValidated {
        episode: Episode,
        receipt_sha256: String,
        outcome: Candidate,
    },
    SafeToClose {
        episode: Episode,
        receipt_sha256: String,
        outcome: Candidate,
        comment_id: Value,
        safe_to_close: bool,
    },
}

impl State {
    fn episode(&self) -> Option<&Episode> {
        match self {
            State::Fresh => None,
            State::Prepared { episode }
            | State::CheckpointAuthorized { episode, .. }
            | State::ReceiptAuthorized { episode, .. }
            | State::ReceiptValidated { episode, .. }
            | State::SafeToClose { episode, .. } => Some(episode),
        }
    }
}

/// A park command, carrying the exact input document it was decided on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    /// `prepare-attempt` (recorded only when it hands out a fresh attempt).
    PrepareAttempt { input: Value },
    /// `evaluate` with journal identity.
    Evaluate {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        observation: Value,
    },
    /// `validate-receipt` with journal identity, on the exact receipt bytes.
    ValidateReceipt {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        receipt_bytes: String,
    },
    /// `confirm-readback` with journal identity.
    ConfirmReadback {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        input: Value,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    AttemptPrepared {
        episode_id: EpisodeId,
        intent_id: IntentId,
        anchor_bead: String,
        attempt_id: AttemptId,
        at: Timestamp,
    },
    CheckpointAuthorized {
        attempt_id: AttemptId,
        evaluation: Evaluation,
    },
    ReceiptAuthorized {
        attempt_id: AttemptId,
        evaluation: Evaluation,
    },
    ReceiptValidated {
        attempt_id: AttemptId,
        receipt_sha256: String,
        outcome: Candidate,
    },
    ReceiptConfirmed {
        attempt_id: AttemptId,
        receipt_sha256: String,
        outcome: Candidate,
        comment_id: Value,
        safe_to_close: bool,
    },
}

/// The park machine.
pub struct Park;

fn reject(
    state: &State,
    command: &str,
    predicate: &str,
    field: Option<&str>,
    message: &str,
) -> Rejection {
    Rejection::single(
        NAME,
        command,
        Park::state_name(state),
        Violation::new(predicate, field, message),
    )
}

/// The guards every identity-carrying command shares: same episode, intent and current attempt.
fn correlate(
    state: &State,
    command: &str,
    episode_id: &EpisodeId,
    intent_id: &IntentId,
    attempt_id: &AttemptId,
) -> Result<Episode, Rejection> {
    let ep = state.episode().ok_or_else(|| {
        reject(
            state,
            command,
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
    match Rejection::from_violations(NAME, command, Park::state_name(state), v) {
        Some(r) => Err(r),
        None => Ok(ep.clone()),
    }
}

fn input_err<'a>(state: &'a State, command: &str) -> impl Fn(InputError) -> Rejection + 'a {
    let command = command.to_owned();
    move |e| e.into_rejection(NAME, &command, Park::state_name(state))
}

impl Machine for Park {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    const FRESH_IDS: usize = 3;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Fresh
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let name = Self::command_name(command);
        match command {
            Command::PrepareAttempt { input } => {
                let prepared = prepare::prepare(input, ctx).map_err(input_err(state, name))?;
                if prepared.action != prepare::PrepareAction::Evaluate {
                    return Ok(vec![]);
                }
                let bad = |e: crate::Error| reject(state, name, "id", None, &e.to_string());
                let episode_id = EpisodeId::parse(&prepared.episode_id).map_err(bad)?;
                let intent_id = IntentId::parse(&prepared.intent_id).map_err(bad)?;
                let attempt_id =
                    AttemptId::parse(prepared.attempt_id.as_deref().unwrap_or_default())
                        .map_err(bad)?;
                if let Some(ep) = state.episode() {
                    let mut v = Vec::new();
                    if matches!(state, State::SafeToClose { .. }) {
                        v.push(Violation::new("episode-open", None, "the episode is already safe to close: pass its receipt as a prior receipt"));
                    }
                    if ep.episode_id != episode_id {
                        v.push(Violation::new(
                            "episode-matches",
                            Some("episode_id"),
                            "the stream belongs to another episode",
                        ));
                    }
                    if ep.intent_id != intent_id {
                        v.push(Violation::new(
                            "intent-preserved",
                            Some("intent_id"),
                            format!("this episode's intent is {}", ep.intent_id),
                        ));
                    }
                    if ep.anchor_bead != prepared.anchor_bead {
                        v.push(Violation::new(
                            "anchor-preserved",
                            Some("anchor_bead"),
                            format!("this episode's anchor is {}", ep.anchor_bead),
                        ));
                    }
                    if let Some(r) =
                        Rejection::from_violations(NAME, name, Self::state_name(state), v)
                    {
                        return Err(r);
                    }
                }
                Ok(vec![Event::AttemptPrepared {
                    episode_id,
                    intent_id,
                    anchor_bead: prepared.anchor_bead,
                    attempt_id,
                    at: ctx.now.clone(),
                }])
            }
            Command::Evaluate {
                episode_id,
                intent_id,
                attempt_id,
                observation,
            } => {
                let ep = correlate(state, name, episode_id, intent_id, attempt_id)?;
                if !matches!(
                    state,
                    State::Prepared { .. }
                        | State::CheckpointAuthorized { .. }
                        | State::ReceiptAuthorized { .. }
                ) {
                    return Err(reject(
                        state,
                        name,
                        "evaluate-allowed",
                        None,
                        "this attempt is past evaluation: prepare a new attempt",
                    ));
                }
                let obs = observation::parse(observation).map_err(input_err(state, name))?;
                if obs.anchor().is_some_and(|a| a != ep.anchor_bead) {
                    return Err(reject(
                        state,
                        name,
                        "anchor-matches",
                        Some("checks"),
                        "anchor_confirmed names another anchor than the prepared episode",
                    ));
                }
                let evaluation = fold::evaluate(&obs);
                Ok(match evaluation.action {
                    Some(Action::Checkpoint)
                        if !matches!(state, State::ReceiptAuthorized { .. }) =>
                    {
                        vec![Event::CheckpointAuthorized {
                            attempt_id: *attempt_id,
                            evaluation,
                        }]
                    }
                    Some(Action::Checkpoint) => {
                        return Err(reject(
                            state,
                            name,
                            "checkpoint-after-receipt",
                            None,
                            "a receipt was already authorized for this attempt",
                        ))
                    }
                    Some(Action::WriteReceipt) => vec![Event::ReceiptAuthorized {
                        attempt_id: *attempt_id,
                        evaluation,
                    }],
                    // Unsafe: no transition.
                    None => vec![],
                })
            }
            Command::ValidateReceipt {
                episode_id,
                intent_id,
                attempt_id,
                receipt_bytes,
            } => {
                correlate(state, name, episode_id, intent_id, attempt_id)?;
                if !matches!(
                    state,
                    State::ReceiptAuthorized { .. } | State::ReceiptValidated { .. }
                ) {
                    return Err(reject(
                        state,
                        name,
                        "receipt-authorized",
                        None,
                        "no durable evaluation authorized a receipt for this attempt",
                    ));
                }
                let receipt =
                    receipt::validate_bytes(receipt_bytes).map_err(input_err(state, name))?;
                let mut v = Vec::new();
                if &receipt.episode_id != episode_id {
                    v.push(Violation::new(
                        "receipt-episode",
                        Some("episode_id"),
                        "the receipt names another episode",
                    ));
                }
                if &receipt.intent_id != intent_id {
                    v.push(Violation::new(
                        "receipt-intent",
                        Some("intent_id"),
                        "the receipt names another intent",
                    ));
                }
                if &receipt.attempt_id != attempt_id {
                    v.push(Violation::new(
                        "receipt-attempt",
                        Some("attempt_id"),
                        "the receipt names another attempt",
                    ));
                }
                if let Some(r) = Rejection::from_violations(NAME, name, Self::state_name(state), v)
                {
                    return Err(r);
                }
                Ok(vec![Event::ReceiptValidated {
                    attempt_id: *attempt_id,
                    receipt_sha256: sha256_hex(receipt_bytes),
                    outcome: receipt.outcome,
                }])
            }
            Command::ConfirmReadback {
                episode_id,
                intent_id,
                attempt_id,
                input,
            } => {
                correlate(state, name, episode_id, intent_id, attempt_id)?;
                let parsed = receipt::parse_readback(input).map_err(input_err(state, name))?;
                let (receipt, readback) =
                    receipt::confirm(&parsed).map_err(input_err(state, name))?;
                if &receipt.intent_id != intent_id
                    || &receipt.attempt_id != attempt_id
                    || &receipt.episode_id != episode_id
                {
                    return Err(reject(
                        state,
                        name,
                        "receipt-identity",
                        Some("receipt_bytes"),
                        "the receipt names another episode, intent or attempt",
                    ));
                }
                let sha = sha256_hex(&parsed.receipt_bytes);
                match state {
                    State::ReceiptValidated { receipt_sha256, .. } if *receipt_sha256 == sha => {}
                    // Already confirmed with these bytes: nothing new to record.
                    State::SafeToClose { receipt_sha256, .. } if *receipt_sha256 == sha => {
                        return Ok(vec![])
                    }
                    _ => {
                        return Err(reject(
                            state,
                            name,
                            "receipt-validated",
                            Some("receipt_bytes"),
                            "these exact bytes were not validated for this attempt",
                        ))
                    }
                }
                if !readback.durable {
                    return Ok(vec![]);
                }
                Ok(vec![Event::ReceiptConfirmed {
                    attempt_id: *attempt_id,
                    receipt_sha256: sha,
                    outcome: receipt.outcome,
                    comment_id: readback.comment_id.unwrap_or(Value::Null),
                    safe_to_close: true,
                }])
            }
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        match (state, event) {
            (
                state,
                Event::AttemptPrepared {
                    episode_id,
                    intent_id,
                    anchor_bead,
                    attempt_id,
                    ..
                },
            ) => State::Prepared {
                episode: Episode {
                    episode_id: *episode_id,
                    intent_id: *intent_id,
                    anchor_bead: anchor_bead.clone(),
                    attempt_id: *attempt_id,
                    attempts: state.episode().map_or(0, |e| e.attempts) + 1,
                },
            },
            (
                State::Prepared { episode } | State::CheckpointAuthorized { episode, .. },
                Event::CheckpointAuthorized { evaluation, .. },
            ) => State::CheckpointAuthorized {
                episode,
                evaluation: evaluation.clone(),
            },
            (
                State::Prepared { episode }
                | State::CheckpointAuthorized { episode, .. }
                | State::ReceiptAuthorized { episode, .. },
                Event::ReceiptAuthorized { evaluation, .. },
            ) => State::ReceiptAuthorized {
                episode,
                evaluation: evaluation.clone(),
            },
            (
                State::ReceiptAuthorized { episode, .. } | State::ReceiptValidated { episode, .. },
                Event::ReceiptValidated {
                    receipt_sha256,
                    outcome,
                    ..
                },
            ) => State::ReceiptValidated {
                episode,
                receipt_sha256: receipt_sha256.clone(),
                outcome: *outcome,
            },
            (
                State::ReceiptValidated { episode, .. },
                Event::ReceiptConfirmed {
                    receipt_sha256,
                    outcome,
                    comment_id,
                    safe_to_close,
                    ..
                },
            ) => State::SafeToClose {
                episode,
                receipt_sha256: receipt_sha256.clone(),
                outcome: *outcome,
                comment_id: comment_id.clone(),
                safe_to_close: *safe_to_close,
            },
            // Total: an event that does not fit its state leaves it unchanged; the audit's edge check names it.
            (
                state,
                Event::CheckpointAuthorized { .. }
                | Event::ReceiptAuthorized { .. }
                | Event::ReceiptValidated { .. }
                | Event::ReceiptConfirmed { .. },
            ) => state,
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state {
            State::Fresh => "fresh",
            State::Prepared { .. } => "prepared",
            State::CheckpointAuthorized { .. } => "checkpoint-authorized",
            State::ReceiptAuthorized { .. } => "receipt-authorized",
            State::ReceiptValidated { .. } => "receipt-validated",
            State::SafeToClose { .. } => "safe-to-close",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::AttemptPrepared { .. } => "attempt-prepared",
            Event::CheckpointAuthorized { .. } => "checkpoint-authorized",
            Event::ReceiptAuthorized { .. } => "receipt-authorized",
            Event::ReceiptValidated { .. } => "receipt-validated",
            Event::ReceiptConfirmed { .. } => "receipt-confirmed",
        }
    }

    fn command_name(command: &Command) -> &'static str {
        match command {
            Command::PrepareAttempt { .. } => "prepare-attempt",
            Command::Evaluate { .. } => "evaluate",
            Command::ValidateReceipt { .. } => "validate-receipt",
            Command::ConfirmReadback { .. } => "confirm-readback",
        }
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name, terminal| StateSpec { name, terminal };
        GraphSpec {
            machine: NAME,
            initial: "fresh",
            states: vec![
                s("fresh", false),
                s("prepared", false),
                s("checkpoint-authorized", false),
                s("receipt-authorized", false),
                s("receipt-validated", false),
                s("safe-to-close", true),
            ],
            edges: vec![
                e("fresh", "attempt-prepared", "prepared"),
                e("prepared", "attempt-prepared", "prepared"),
                e("checkpoint-authorized", "attempt-prepared", "prepared"),
                e("receipt-authorized", "attempt-prepared", "prepared"),
                e("receipt-validated", "attempt-prepared", "prepared"),
                e("prepared", "checkpoint-authorized", "checkpoint-authorized"),
                e(
                    "checkpoint-authorized",
                    "checkpoint-authorized",
                    "checkpoint-authorized",
                ),
                e("prepared", "receipt-authorized", "receipt-authorized"),
                e(
                    "checkpoint-authorized",
                    "receipt-authorized",
                    "receipt-authorized",
                ),
                e(
                    "receipt-authorized",
                    "receipt-authorized",
                    "receipt-authorized",
                ),
                e(
                    "receipt-authorized",
                    "receipt-validated",
                    "receipt-validated",
                ),
                e(
                    "receipt-validated",
                    "receipt-validated",
                    "receipt-validated",
                ),
                e("receipt-validated", "receipt-confirmed", "safe-to-close"),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_park_graph_is_sound() {
        assert_eq!(Park::graph().defects(), vec![]);
    }
}
