//! The pr-loop's state: `idle`, or the loop (the PR, its rounds, the last
//! classification, the tier) in the state of its offers and the operator's answers.

use serde::{Deserialize, Serialize};

use super::classify::Classification;
use super::escalation::Proposal;
use crate::evidence::next_round;

/// The loop's data, carried by every state but `idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    pub pr: String,
    pub rounds_seen: Vec<u32>,
    pub last: Classification,
    pub tier: Option<String>,
}

impl Loop {
    /// `max(rounds_seen) + 1`, or 1: derived, never stored or set.
    pub fn next_round(&self) -> u32 {
        next_round(&self.rounds_seen)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    Idle,
    Observing { l: Loop },
    ReadyOffered { l: Loop },
    ReviewRequestOffered { l: Loop },
    MergeOffered { l: Loop },
    MergeConfirmed { l: Loop, operator: String },
    EscalationProposed { l: Loop, proposal: Proposal },
    AwaitingOperator { l: Loop },
    Paused { l: Loop, reason: String },
    Abandoned { l: Loop, reason: String },
    Complete { l: Loop },
}

impl State {
    pub fn looped(&self) -> Option<&Loop> {
        match self {
            State::Idle => None,
            State::Observing { l }
            | State::ReadyOffered { l }
            | State::ReviewRequestOffered { l }
            | State::MergeOffered { l }
            | State::MergeConfirmed { l, .. }
            | State::EscalationProposed { l, .. }
            | State::AwaitingOperator { l }
            | State::Paused { l, .. }
            | State::Abandoned { l, .. }
            | State::Complete { l } => Some(l),
        }
    }
}

/// The state's name in the graph.
pub(super) fn state_name(state: &State) -> &'static str {
    match state {
        State::Idle => "idle",
        State::Observing { .. } => "observing",
        State::ReadyOffered { .. } => "ready-offered",
        State::ReviewRequestOffered { .. } => "review-request-offered",
        State::MergeOffered { .. } => "merge-offered",
        State::MergeConfirmed { .. } => "merge-confirmed",
        State::EscalationProposed { .. } => "escalation-proposed",
        State::AwaitingOperator { .. } => "awaiting-operator",
        State::Paused { .. } => "paused",
        State::Abandoned { .. } => "abandoned",
        State::Complete { .. } => "complete",
    }
}
