//! The park machine's state: the episode's identity (episode, intent, current
//! attempt) and how far its current attempt got, from `fresh` to `safe-to-close`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fold::{Candidate, Evaluation};
use crate::{Id, IdKind, Names};

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

/// A work node placed in the bound repository, at the version a park decision
/// read it (`work-node/<spec>:<node>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placed {
    pub stream: String,
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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
        /// The work nodes placed in the bound repository when the receipt was
        /// authorized, at the versions read.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        placed: Vec<Placed>,
    },
    ReceiptValidated {
        episode: Episode,
        receipt_sha256: String,
        outcome: Candidate,
        /// Carried from the authorization: what the read-back compares.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        placed: Vec<Placed>,
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
    pub(super) fn episode(&self) -> Option<&Episode> {
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

/// The state's name in the graph.
pub(super) fn state_name(state: &State) -> &'static str {
    state.variant_name()
}
