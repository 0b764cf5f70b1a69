//! The pr-loop's state: `idle`, or the loop (the PR, its rounds and what the last
//! one began on, the last classification and freshness, the tier ladder and the
//! tier the journal's approved escalations make current) in the state of its
//! offers and the operator's answers.

use serde::{Deserialize, Serialize};

use super::classify::{Classification, PrState};
use super::escalation::Proposal;
use super::input::{FreshnessRecord, ReadingSource};
use crate::evidence::{next_round, FullCommit};
use crate::Names;

/// What a round began on: the PR's head (when the reading named it) and the row.
/// A round-starting row starts a new round only on a new basis (see [`RoundBasis::is_new`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundBasis {
    pub head: Option<FullCommit>,
    pub on: PrState,
}

impl RoundBasis {
    /// A new head (both known and different) or a new verdict (another row) than
    /// `last`; with no earlier basis, new.
    pub fn is_new(&self, last: Option<&RoundBasis>) -> bool {
        match last {
            None => true,
            Some(l) => {
                l.on != self.on || matches!((&l.head, &self.head), (Some(a), Some(b)) if a != b)
            }
        }
    }
}

/// The loop's data, carried by every state but `idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    /// The PR's canonical URL.
    pub pr: String,
    pub rounds_seen: Vec<u32>,
    pub last: Classification,
    /// The tier an approved escalation moved the loop to.
    pub tier: Option<String>,
    /// What the last round began on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_basis: Option<RoundBasis>,
    /// The tier ladder the loop started with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<Vec<String>>,
    /// The tier of the loop's first tier context, before any escalation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tier: Option<String>,
    /// Where the last reading came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ReadingSource>,
    /// cairn's freshness reading of the last observation, when it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<FreshnessRecord>,
    /// The saga thread the loop follows (`saga/<saga id>`), once an observation
    /// named it: every later observation reads it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// The branch the PR merges into, as the last reading that named it said
    /// (`baseRefName`): a merge read from git is read on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Whether `base` was named by cairn's own gh reading: only such a base bears
    /// a merge read from git (a reading on stdin is the caller's word).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base_observed: bool,
}

impl Loop {
    /// `max(rounds_seen) + 1`, or 1: derived, never stored or set.
    pub fn next_round(&self) -> u32 {
        next_round(&self.rounds_seen)
    }

    /// The current tier: the last approved escalation's, else the first one seen.
    pub fn current_tier(&self) -> Option<&str> {
        self.tier.as_deref().or(self.base_tier.as_deref())
    }

    /// The head an offered (and confirmed) merge is of: the reviewed commit cairn
    /// observed fresh in the observation that offered it.
    pub fn merge_head(&self) -> Option<&FreshnessRecord> {
        self.freshness.as_ref().filter(|f| f.result.is_fresh())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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
    state.variant_name()
}
