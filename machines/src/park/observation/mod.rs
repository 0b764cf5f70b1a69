//! The typed observation (`evaluate` / `check` input): the fixed check set, its
//! categories, and one evidence type per check.
//!
//! Every check's outcome is a pure function of its evidence ([`derive`](fn@derive)); a
//! stated outcome that disagrees with its evidence is contradictory evidence and
//! refused (exit 2). So a truthy string, an empty list or a model summary can
//! never stand in for evidence: the evidence has to say *why*.
//!
//! Layout: this file holds the check set, the categories and the validated
//! [`Observation`]; `evidence` the evidence types; `parse` the document parsing;
//! `derive` the outcomes each evidence type supports.

mod derive;
mod evidence;
mod parse;

pub use derive::{derive, pr_outcome};
pub use evidence::{
    AnchorEvidence, AnchorSource, BeadEvidence, BeadSource, ChildEvidence, ChildSource,
    CloseEvidence, CloseSource, CommandRun, DispatchEvidence, DispatchSource, Evidence, PrEvidence,
    PrSource, PreservationEvidence, PreservationSource, PreservationState, Provider,
    RepositoryEvidence, RepositorySource, ResumeEvidence, ResumeTarget, TargetKind, VcsEvidence,
};
pub use parse::{parse, parse_at};

use serde::{Deserialize, Serialize};

use super::bind::BindOutput;
use crate::evidence::{FullCommit, JjChange};
use crate::{Outcome, Timestamp};

/// The fixed check set, in canonical order.
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
pub enum CheckName {
    AnchorConfirmed,
    RepositoryResolved,
    NoActiveDispatch,
    NoRunningChildOperation,
    NoVcsOperationOrConflict,
    TreePreserved,
    CommitsReachableOrCheckpointResolvable,
    CloseConditionSatisfied,
    BeadTerminal,
    PrMerged,
    ResumeTargetResolvable,
}

/// The fixed categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Identity,
    Quiescence,
    Preservation,
    Completion,
    Resume,
}

impl CheckName {
    pub const ALL: [CheckName; 11] = [
        CheckName::AnchorConfirmed,
        CheckName::RepositoryResolved,
        CheckName::NoActiveDispatch,
        CheckName::NoRunningChildOperation,
        CheckName::NoVcsOperationOrConflict,
        CheckName::TreePreserved,
        CheckName::CommitsReachableOrCheckpointResolvable,
        CheckName::CloseConditionSatisfied,
        CheckName::BeadTerminal,
        CheckName::PrMerged,
        CheckName::ResumeTargetResolvable,
    ];

    /// The one category this check belongs to.
    pub fn category(self) -> Category {
        match self {
            CheckName::AnchorConfirmed | CheckName::RepositoryResolved => Category::Identity,
            CheckName::NoActiveDispatch
            | CheckName::NoRunningChildOperation
            | CheckName::NoVcsOperationOrConflict => Category::Quiescence,
            CheckName::TreePreserved | CheckName::CommitsReachableOrCheckpointResolvable => {
                Category::Preservation
            }
            CheckName::CloseConditionSatisfied | CheckName::BeadTerminal | CheckName::PrMerged => {
                Category::Completion
            }
            CheckName::ResumeTargetResolvable => Category::Resume,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::AnchorConfirmed => "anchor_confirmed",
            CheckName::RepositoryResolved => "repository_resolved",
            CheckName::NoActiveDispatch => "no_active_dispatch",
            CheckName::NoRunningChildOperation => "no_running_child_operation",
            CheckName::NoVcsOperationOrConflict => "no_vcs_operation_or_conflict",
            CheckName::TreePreserved => "tree_preserved",
            CheckName::CommitsReachableOrCheckpointResolvable => {
                "commits_reachable_or_checkpoint_resolvable"
            }
            CheckName::CloseConditionSatisfied => "close_condition_satisfied",
            CheckName::BeadTerminal => "bead_terminal",
            CheckName::PrMerged => "pr_merged",
            CheckName::ResumeTargetResolvable => "resume_target_resolvable",
        }
    }
}

/// `preflight` (checkpoint authorization) or `durable` (receipt authorization).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Preflight,
    Durable,
}

/// The VCS backend of the bound workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Git,
    Jj,
}

impl Backend {
    /// The argv prefix every bound command starts with.
    pub fn bound_prefix(self, root: &str) -> [String; 3] {
        match self {
            Backend::Git => ["git".into(), "-C".into(), root.into()],
            Backend::Jj => ["jj".into(), "--repository".into(), root.into()],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Git => "git",
            Backend::Jj => "jj",
        }
    }

    /// True for a full immutable head of this backend (git object id / jj change id).
    /// The documents park reads keep their heads as text (their errors name the
    /// first broken field in document order); the check is the newtypes'.
    pub fn is_full_head(self, s: &str) -> bool {
        match self {
            Backend::Git => FullCommit::parse(s).is_ok(),
            Backend::Jj => JjChange::parse(s).is_ok(),
        }
    }
}

/// The bead's structured fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bead {
    pub acceptance_command: String,
    pub pr_url: Option<String>,
}

/// One validated check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckItem {
    pub name: CheckName,
    pub category: Category,
    pub outcome: Outcome,
    pub evidence: Evidence,
    pub observed_at: Timestamp,
}

/// A validated observation: checks in canonical order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    pub schema_version: u32,
    pub protocol_phase: Phase,
    pub pr_backed: bool,
    pub bead: Bead,
    pub checks: Vec<CheckItem>,
}

/// The observation's top-level keys.
pub const OBSERVATION_KEYS: [&str; 5] = [
    "schema_version",
    "protocol_phase",
    "pr_backed",
    "bead",
    "checks",
];

/// The enumerated non-terminal bead statuses.
pub const NONTERMINAL_STATUSES: [&str; 3] = ["open", "in_progress", "blocked"];
/// The terminal bead statuses.
pub const TERMINAL_STATUSES: [&str; 2] = ["done", "closed"];

impl Observation {
    /// The check named `name`, if present.
    pub fn check(&self, name: CheckName) -> Option<&CheckItem> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The outcome of `name` (`unknown` when absent: absence never passes).
    pub fn outcome(&self, name: CheckName) -> Outcome {
        self.check(name).map_or(Outcome::Unknown, |c| c.outcome)
    }

    /// The binding of a passing `repository_resolved`.
    pub fn binding(&self) -> Option<&BindOutput> {
        match self
            .check(CheckName::RepositoryResolved)
            .map(|c| &c.evidence)
        {
            Some(Evidence::Repository(r)) => r.binding.as_deref(),
            _ => None,
        }
    }

    /// The anchor of `anchor_confirmed`.
    pub fn anchor(&self) -> Option<&str> {
        match self.check(CheckName::AnchorConfirmed).map(|c| &c.evidence) {
            Some(Evidence::Anchor(a)) => a.anchor.as_deref(),
            _ => None,
        }
    }

    /// The preservation evidence of `name` (one of the two preservation checks).
    pub fn preservation(&self, name: CheckName) -> Option<&PreservationEvidence> {
        match self.check(name).map(|c| &c.evidence) {
            Some(Evidence::Preservation(p)) => Some(p),
            _ => None,
        }
    }

    /// The resume target of `resume_target_resolvable`.
    pub fn resume_target(&self) -> Option<&ResumeTarget> {
        match self
            .check(CheckName::ResumeTargetResolvable)
            .map(|c| &c.evidence)
        {
            Some(Evidence::Resume(r)) => r.target.as_ref(),
            _ => None,
        }
    }
}

/// The wire spelling of an outcome.
pub fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Unknown => "unknown",
    }
}
