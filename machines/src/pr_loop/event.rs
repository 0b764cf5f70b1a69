//! The pr-loop's events: an observation and the round it starts, escalation
//! proposals and answers, offers and their confirmations, and how the loop ends.

use serde::{Deserialize, Serialize};

use super::classify::Classification;
use super::escalation::Proposal;
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    /// A classification was recorded (its reading is in the transition record).
    Observed {
        pr: String,
        classification: Classification,
        at: Timestamp,
    },
    /// A round began: `round` joins `rounds_seen`.
    RoundStarted {
        round: u32,
    },
    EscalationProposed {
        proposal: Proposal,
    },
    /// Attended, with the operator's approval token.
    EscalationApplied {
        to: String,
        approval_token: String,
    },
    /// Held at the default: declined, or unattended (recorded in the round summary).
    EscalationHeld {
        reason: String,
    },
    ReadyOffered,
    ReadyConfirmed {
        operator: String,
    },
    ReviewRequestOffered,
    ReviewRequestConfirmed {
        operator: String,
    },
    MergeOffered,
    MergeConfirmed {
        operator: String,
    },
    /// The skill merged after the confirmation.
    MergedByLoop {
        merged_at: Timestamp,
    },
    /// An observation found the PR merged (by anyone).
    MergeObserved {
        merged_at: Option<Timestamp>,
    },
    ClosedObserved,
    Paused {
        reason: String,
        operator: String,
    },
    Abandoned {
        reason: String,
        operator: String,
    },
}

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    match event {
        Event::Observed { .. } => "observed",
        Event::RoundStarted { .. } => "round-started",
        Event::EscalationProposed { .. } => "escalation-proposed",
        Event::EscalationApplied { .. } => "escalation-applied",
        Event::EscalationHeld { .. } => "escalation-held",
        Event::ReadyOffered => "ready-offered",
        Event::ReadyConfirmed { .. } => "ready-confirmed",
        Event::ReviewRequestOffered => "review-request-offered",
        Event::ReviewRequestConfirmed { .. } => "review-request-confirmed",
        Event::MergeOffered => "merge-offered",
        Event::MergeConfirmed { .. } => "merge-confirmed",
        Event::MergedByLoop { .. } => "merged-by-loop",
        Event::MergeObserved { .. } => "merge-observed",
        Event::ClosedObserved => "closed-observed",
        Event::Paused { .. } => "paused",
        Event::Abandoned { .. } => "abandoned",
    }
}
