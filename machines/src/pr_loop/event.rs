//! The pr-loop's events: an observation and the round it starts, escalation
//! proposals and answers, offers and their confirmations, and how the loop ends.

use serde::{Deserialize, Serialize};

use super::classify::Classification;
use super::escalation::{Clamp, Proposal, Tiers};
use super::input::{FreshnessRecord, ReadingSource};
use super::plan::TargetBranch;
use super::state::RoundBasis;
use crate::evidence::FullCommit;
use crate::{Names, Timestamp};

/// How cairn saw the loop's merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum MergeVia {
    /// A `gh pr view` reading showing `MERGED` with `mergedAt` and the merged head.
    Gh,
    /// git showing `target` contains `head`.
    Git {
        target: TargetBranch,
        head: FullCommit,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    /// A classification was recorded (its reading is in the transition record).
    Observed {
        pr: String,
        classification: Classification,
        at: Timestamp,
        /// Where the reading came from (absent in rules-v1 events: not recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<ReadingSource>,
        /// cairn's freshness reading, when it made one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        freshness: Option<Box<FreshnessRecord>>,
        /// The tier context, checked against the journal's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tiers: Option<Tiers>,
        /// The saga thread's rounds, adopted by a new loop.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        saga_rounds_seen: Option<Vec<u32>>,
        /// The saga thread the observation named (`from`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<Box<str>>,
        /// The branch the PR merges into, when the reading named it
        /// (`baseRefName`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<Box<str>>,
    },
    /// A round began: `round` joins `rounds_seen`; `basis` is the head and verdict
    /// it began on (absent in rules-v1 events).
    RoundStarted {
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        basis: Option<RoundBasis>,
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
    /// A depth-shaped failure at the ladder top or the session ceiling: no rung.
    EscalationClamped {
        clamp: Clamp,
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
    /// The skill merged after the confirmation, as cairn observed it (`via`;
    /// absent in rules-v1 events, which took the time on the caller's word).
    MergedByLoop {
        merged_at: Option<Timestamp>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        via: Option<MergeVia>,
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
    event.variant_name()
}
