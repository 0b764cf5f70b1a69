//! The node's events: past-tense facts, each one edge of the graph.

use serde::{Deserialize, Serialize};

use super::{PlanReceipt, ReviewVerdict, ScopeRequest, Verification};
use crate::evidence::{AbsPath, FullCommit};
use crate::work::amend::AmendRequest;

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    },
    Done {
        session: String,
    },
}

impl Event {
    /// The event's type name: its edge label in the graph and its journal `event_type`.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Event::CriterionAmended { .. } => "criterion-amended",
            Event::ScopeRaised { .. } => "scope-raised",
            Event::ScopePassedUp { .. } => "scope-passed-up",
            Event::ScopeApproved { .. } => "scope-approved",
            Event::ScopeNotApproved { .. } => "scope-not-approved",
            Event::Planned { .. } => "planned",
            Event::Dispatched { .. } => "dispatched",
            Event::NotDispatched { .. } => "not-dispatched",
            Event::Verified { .. } => "verified",
            Event::VerificationFailed { .. } => "verification-failed",
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Approve,
                ..
            } => "review-approved",
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Reject,
                ..
            } => "review-rejected",
            Event::RemediationDispatched { .. } => "remediation-dispatched",
            Event::Escalated { .. } => "escalated",
            Event::Merged { .. } => "merged",
            Event::Done { .. } => "done",
        }
    }
}
