//! The park machine's events: an attempt prepared, a checkpoint or receipt
//! authorized by an evaluation, a receipt validated, and its read-back confirmed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fold::{Candidate, Evaluation};
use super::state::{AttemptId, EpisodeId, IntentId, Placed};
use crate::{Names, Timestamp};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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
        /// The work nodes ever placed in the bound repository, at the versions
        /// read when the receipt was authorized (park rules 5; absent before).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        placed: Vec<Placed>,
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

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    event.variant_name()
}
