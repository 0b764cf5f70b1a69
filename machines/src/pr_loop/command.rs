//! The pr-loop's commands: an observation, the operator's answers to what was
//! offered (confirm, resolve an escalation, pause or abandon), and the merge the
//! skill made after a confirmation.

use serde::{Deserialize, Serialize};

use super::input::ObserveInput;
use crate::Timestamp;

/// Something offered to the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Offer {
    Ready,
    Merge,
    ReviewRequest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Attended,
    Unattended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    Apply,
    Decline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    Paused,
    Abandoned,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Observe {
        input: Box<ObserveInput>,
    },
    OfferReviewRequest,
    Confirm {
        what: Offer,
        operator: String,
    },
    ResolveEscalation {
        mode: Mode,
        decision: Decision,
        approval_token: Option<String>,
    },
    RecordMerge {
        merged_at: Timestamp,
    },
    Dispose {
        disposition: Disposition,
        reason: String,
        operator: String,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Observe { .. } => "observe",
        Command::OfferReviewRequest => "offer-review-request",
        Command::Confirm { .. } => "confirm",
        Command::ResolveEscalation { .. } => "resolve-escalation",
        Command::RecordMerge { .. } => "record-merge",
        Command::Dispose { .. } => "dispose",
    }
}
