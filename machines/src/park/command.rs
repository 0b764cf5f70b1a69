//! The park machine's commands, each carrying the exact input document it is
//! decided on, so `journal audit` re-runs the whole evaluation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::state::{AttemptId, EpisodeId, IntentId};
use crate::Names;

/// A park command, carrying the exact input document it was decided on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    command.variant_name()
}
