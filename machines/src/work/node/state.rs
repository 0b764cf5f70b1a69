//! The node's state: the stage it is in, and the run every stage after the plan
//! carries (plan, worker tree, verifications, reviews, merge, scope amendment).

use serde::{Deserialize, Serialize};

use super::{PlanReceipt, ReviewVerdict, Verification};
use crate::evidence::{AbsPath, FullCommit};
use crate::Names;

/// The node's recorded history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRun {
    /// The node's address.
    pub address: Vec<String>,
    /// The last plan.
    pub plan: Option<PlanReceipt>,
    /// The persistent worker tree (fixed by the first dispatch).
    pub worktree: Option<AbsPath>,
    /// Its repository (git common dir) as cairn read it at dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<AbsPath>,
    /// That repository's identity on disk as dispatch read it (none before
    /// work-node rules 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// Remediation rounds dispatched.
    pub remediation_rounds: u32,
    /// The budget (from the last dispatch).
    pub budget: u32,
    /// Every verification.
    pub verifications: Vec<Verification>,
    /// Reviews (reporting data).
    pub reviews: Vec<(ReviewVerdict, Vec<String>)>,
    /// The merged tree and commit, after the last merge.
    pub merged: Option<(AbsPath, FullCommit)>,
    /// Verifications recorded before this index predate the last merge.
    pub merge_mark: usize,
    /// The branch the last merge landed on (work-node rules 12): the merged tree's
    /// integration verification finds it checked out at the merged commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_branch: Option<String>,
    /// The session `done` was recorded in.
    pub done_session: Option<String>,
    /// A pending scope-amendment request.
    #[serde(default)]
    pub scope: Option<ScopeRequest>,
    /// The touches an approved scope amendment added (until the re-plan).
    #[serde(default)]
    pub approved_touches: Option<Vec<String>>,
    /// Criteria amended after a merge: their new contract is proved in the merged
    /// tree (the worker tree is no longer a target), so the worker-tree evidence
    /// before the merge counts for them on the contract it ran against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amended_after_merge: Vec<String>,
    /// Criteria amended (`amend-criterion`) since the last verification: the
    /// only ones whose contract may differ from what it ran (work-node rules 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amended_since: Vec<String>,
}

/// Who holds a scope-amendment request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Holder {
    /// The root (within its declared authority).
    Root,
    /// Passed up: only the operator's explicit choice resolves it.
    User,
}

/// A scope-amendment request (a worker needs a path outside `touches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeRequest {
    /// Its id (minted when raised).
    pub request_id: String,
    /// The opaque target reference.
    pub target: String,
    /// The literal paths the change adds to `touches`.
    pub add_touches: Vec<String>,
    /// The exact proposed change.
    pub change: String,
    /// Why it is needed.
    pub rationale: String,
    /// Who holds it.
    pub holder: Holder,
}

/// The bounded options of an amendment decision, by zero-based index; the last is
/// the structural custom option (`custom: true`).
pub const SCOPE_OPTIONS: [&str; 4] = [
    "Approve",
    "Approve with modifications (see note)",
    "Reject",
    "Custom",
];

/// The machine's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Names)]
#[serde(tag = "stage", rename_all = "kebab-case")]
pub enum State {
    /// Nothing recorded.
    Unplanned,
    /// Planned, not dispatched.
    Planned {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Dispatched (or remediation dispatched) to the worker tree.
    Dispatched {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Verified (pre-merge), awaiting review or merge.
    Verified {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Review rejected: remediation or escalation.
    Rejected {
        /// The run.
        run: Box<NodeRun>,
    },
    /// The budget is spent: the user decides.
    Escalated {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Merged: integration evidence is needed.
    Merged {
        /// The run.
        run: Box<NodeRun>,
    },
    /// A scope amendment was approved: re-validate, re-plan, redispatch in the same worktree.
    AmendmentApproved {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Every terminal-truth item held. The lifecycle stays `done`; a later
    /// session re-verifies it (a new verification: provenance changes) before it
    /// satisfies a dependency there.
    Done {
        /// The run.
        run: Box<NodeRun>,
    },
}

impl State {
    /// The run, once planned.
    pub fn run(&self) -> Option<&NodeRun> {
        match self {
            State::Unplanned => None,
            State::Planned { run }
            | State::Dispatched { run }
            | State::Verified { run }
            | State::Rejected { run }
            | State::Escalated { run }
            | State::Merged { run }
            | State::AmendmentApproved { run }
            | State::Done { run } => Some(run),
        }
    }
}

impl State {
    /// The stage's node name in the graph.
    pub(super) fn name(&self) -> &'static str {
        self.variant_name()
    }
}
