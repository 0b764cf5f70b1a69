//! The pr-loop's commands: an observation (the caller's document and what cairn
//! observed itself), the operator's answers to what was offered (confirm, resolve an
//! escalation, pause or abandon), and the merge the skill made after a confirmation,
//! with cairn's own observation of it.

use serde::{Deserialize, Serialize};

use super::input::{ObserveInput, Observed};
use super::plan::TargetBranch;
use crate::evidence::{AbsPath, CommandRun};
use crate::{Names, Timestamp};

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

/// cairn's own observation of a merge: a `gh pr view` reading, or git showing the
/// target branch contains the merged head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MergeEvidence {
    /// `plan::gh_view(pr)`, recorded.
    Gh { run: CommandRun },
    /// `plan::merge_plan(repo, head, target)`, recorded; the head is the loop's.
    Git {
        repo: AbsPath,
        target: TargetBranch,
        run: CommandRun,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Observe {
        input: Box<ObserveInput>,
        /// What cairn observed while serving it (absent in rules-v1 commands).
        #[serde(default, skip_serializing_if = "Observed::is_empty")]
        observed: Box<Observed>,
        /// The saga thread whose review and rounds the observation carries
        /// (`saga/<saga id>`), when the caller names it: the engine reads it, and
        /// a reviewed SHA or rounds it contradicts are refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
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
        /// Retired with rules v1 (the caller's merge time): read from old journals,
        /// refused now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        merged_at: Option<Timestamp>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence: Option<Box<MergeEvidence>>,
    },
    Dispose {
        disposition: Disposition,
        reason: String,
        operator: String,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    command.variant_name()
}
