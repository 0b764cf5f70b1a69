//! The node's events: past-tense facts, each one edge of the graph.

use serde::{Deserialize, Serialize};

use super::{PlanReceipt, ReviewVerdict, ScopeRequest, Verification};
use crate::evidence::{AbsPath, FullCommit};
use crate::work::amend::AmendRequest;
use crate::Names;

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    CriterionAmended {
        request: AmendRequest,
        at: String,
        spec_sha256_before: String,
        spec_sha256_after: String,
    },
    ScopeRaised {
        request: ScopeRequest,
    },
    ScopePassedUp {
        request_id: String,
        context: String,
        recommendation: String,
    },
    ScopeApproved {
        request_id: String,
        selected: usize,
        add_touches: Vec<String>,
        note: String,
        operator: String,
        on_behalf_of_user: bool,
    },
    /// Rejected (or answered with a custom instruction): nothing changes.
    ScopeNotApproved {
        request_id: String,
        selected: usize,
        note: String,
        custom_instruction: Option<String>,
        operator: String,
        on_behalf_of_user: bool,
    },
    Planned {
        address: Vec<String>,
        receipt: PlanReceipt,
    },
    Dispatched {
        run_id: String,
        worktree_path: AbsPath,
        expected_commit: FullCommit,
        budget: u32,
        session: Option<String>,
        /// The worker tree's repository (git common dir), as cairn read it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<AbsPath>,
        /// That repository's identity on disk (`evidence::git::identity_argv`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<String>,
    },
    /// A degraded `not-dispatched` result: carries the plan back, advances nothing.
    NotDispatched {
        finding: String,
        plan: PlanReceipt,
    },
    Verified {
        verification: Verification,
    },
    VerificationFailed {
        verification: Verification,
    },
    ReviewRecorded {
        verdict: ReviewVerdict,
        failed_criteria: Vec<String>,
        concerns: Vec<String>,
    },
    RemediationDispatched {
        round: u32,
        run_id: String,
        /// The dispatched worker tree (a remediation names the same one).
        worktree_path: AbsPath,
    },
    Escalated {
        reason: String,
    },
    Merged {
        merged_tree: AbsPath,
        commit: FullCommit,
        /// The branch the merged tree had checked out (`branch --show-current`,
        /// read by the merge; work-node rules 12, absent before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    Done {
        session: String,
    },
}

/// A review's journal names: the event is serde's `review-recorded`, recorded
/// (and drawn in the graph) by its verdict since before names were derived — the
/// names every journal holds, kept so each replays and audits byte for byte.
pub const REVIEW_NAMES: [&str; 2] = ["review-approved", "review-rejected"];

impl Event {
    /// The event's type name: its edge label in the graph and its journal
    /// `event_type` — serde's tag (derived), save for a review ([`REVIEW_NAMES`]).
    pub(super) fn name(&self) -> &'static str {
        match self {
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Approve,
                ..
            } => REVIEW_NAMES[0],
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Reject,
                ..
            } => REVIEW_NAMES[1],
            other => other.variant_name(),
        }
    }
}
