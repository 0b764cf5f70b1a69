//! The evidence types: one per check (with the source each may come from), and
//! [`Evidence`], the typed evidence of one check.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::bind::BindOutput;
use super::Backend;

pub use crate::evidence::CommandRun;

/// Where the anchor came from. Only `explicit` and `human_confirmation` can confirm
/// it; the three detected sources name a proposal, which `derive` refuses (seed:
/// "Require human confirmation of a detected anchor").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnchorSource {
    Explicit,
    HumanConfirmation,
    ActiveDispatch,
    CurrentBranch,
    RecentlyTouchedBead,
}

impl AnchorSource {
    /// True for a source that confirms the anchor: given explicitly, or a
    /// detected proposal a human confirmed.
    pub fn confirms(self) -> bool {
        match self {
            AnchorSource::Explicit | AnchorSource::HumanConfirmation => true,
            AnchorSource::ActiveDispatch
            | AnchorSource::CurrentBranch
            | AnchorSource::RecentlyTouchedBead => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnchorEvidence {
    pub source: AnchorSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum RepositorySource {
    #[serde(rename = "registered_repository_binding")]
    RegisteredRepositoryBinding,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositoryEvidence {
    pub source: RepositorySource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Box<BindOutput>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum DispatchSource {
    #[serde(rename = "rsry_active+rsry_dispatch_history")]
    RsryActiveAndDispatchHistory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DispatchEvidence {
    pub source: DispatchSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_records: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ChildSource {
    #[serde(rename = "codex.current_child_operations")]
    Codex,
    #[serde(rename = "claude.current_child_operations")]
    Claude,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    Codex,
    Claude,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChildEvidence {
    pub source: ChildSource,
    pub detail: String,
    pub client: Provider,
    pub authoritative: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcsEvidence {
    pub source: Backend,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreservationSource {
    RsryWorkspaceCheckpoint,
    Git,
    Jj,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreservationState {
    Checkpointable,
    Durable,
    Unpreserved,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreservationEvidence {
    pub source: PreservationSource,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    pub workspace: String,
    pub state: PreservationState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured_head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_available: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolver_command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseSource {
    RsryBeadHistory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseEvidence {
    pub source: CloseSource,
    pub detail: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BeadSource {
    RsryListBeads,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BeadEvidence {
    pub source: BeadSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrSource {
    Gh,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrEvidence {
    pub source: PrSource,
    pub detail: String,
    /// The exact argv: `gh pr view <pr_url> --json state,mergedAt,url`.
    pub command: Vec<String>,
    /// What `gh` printed, as JSON; read leniently (missing or malformed fields are `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Branch,
    Checkpoint,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeTarget {
    pub kind: TargetKind,
    pub value: String,
    pub resolved_head: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeEvidence {
    pub source: Backend,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolver_command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ResumeTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

/// The typed evidence of one check: exactly one variant per check name.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Evidence {
    Anchor(AnchorEvidence),
    Repository(RepositoryEvidence),
    Dispatch(DispatchEvidence),
    Child(ChildEvidence),
    Vcs(VcsEvidence),
    Preservation(PreservationEvidence),
    Close(CloseEvidence),
    Bead(BeadEvidence),
    Pr(PrEvidence),
    Resume(ResumeEvidence),
}
