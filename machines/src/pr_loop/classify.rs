//! The PR-state classifier: a parsed reading (see `reading`), the review's
//! freshness and the destination → exactly one of nine states.
//!
//! Total and exclusive by construction: every row's guard includes the negation of
//! every earlier row, so at most one guard holds, and the last rows cover what is
//! left; a reading the table cannot place (a missing field, an unknown enum value,
//! a contradiction — refused by the parser) or an approved clean PR whose freshness
//! cairn did not observe is a typed input error, never a guess.

use serde::{Deserialize, Serialize};

pub use super::reading::{
    parse_reading, rollup, Checks, GhState, MergeStateStatus, Mergeable, Reading, ReviewDecision,
};
use crate::evidence::wire::{InputError, Result};

/// The nine PR states, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PrState {
    Draft,
    AwaitReview,
    ChangesRequested,
    PendingOrFailingChecks,
    Conflicting,
    ApprovedStale,
    ApprovedFresh,
    Merged,
    Closed,
}

impl PrState {
    pub const ALL: [PrState; 9] = [
        PrState::Draft,
        PrState::AwaitReview,
        PrState::ChangesRequested,
        PrState::PendingOrFailingChecks,
        PrState::Conflicting,
        PrState::ApprovedStale,
        PrState::ApprovedFresh,
        PrState::Merged,
        PrState::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PrState::Draft => "draft",
            PrState::AwaitReview => "await-review",
            PrState::ChangesRequested => "changes-requested",
            PrState::PendingOrFailingChecks => "pending-or-failing-checks",
            PrState::Conflicting => "conflicting",
            PrState::ApprovedStale => "approved-stale",
            PrState::ApprovedFresh => "approved-fresh",
            PrState::Merged => "merged",
            PrState::Closed => "closed",
        }
    }

    /// True for the rows that start a new round (re-enter the build loop).
    pub fn starts_round(self, checks: Checks) -> bool {
        self == PrState::Conflicting || self.is_failure_row(checks)
    }

    /// True for the failure rows, whose depth-shaped failures may escalate the tier:
    /// changes requested and failing checks (the work fell short). A conflict starts
    /// a round too, but the base moved: a rebase is not a shortfall of the tier.
    pub fn is_failure_row(self, checks: Checks) -> bool {
        match self {
            PrState::ChangesRequested => true,
            PrState::PendingOrFailingChecks => checks == Checks::Failing,
            PrState::Draft
            | PrState::AwaitReview
            | PrState::Conflicting
            | PrState::ApprovedStale
            | PrState::ApprovedFresh
            | PrState::Merged
            | PrState::Closed => false,
        }
    }
}

/// Where the work is headed (`admission.destination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Destination {
    PlanOnly,
    Pr,
    Merge,
    NonprodDeploy,
}

impl Destination {
    /// True when the destination includes a merge.
    pub fn includes_merge(self) -> bool {
        matches!(self, Destination::Merge | Destination::NonprodDeploy)
    }
}

/// Whether the review still covers the code the PR would merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Review {
    /// cairn's own runs show the reviewed commit is `HEAD` (an ancestor, nothing since).
    Fresh,
    /// Commits landed since, the reviewed commit is not an ancestor of `HEAD`, the
    /// PR's head is another commit, or the caller counted commits since.
    Stale,
    /// Nobody observed it: never fresh.
    Unknown,
}

/// What classification needs besides the reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Freshness {
    /// The review's freshness (fresh only on cairn's own observation).
    pub review: Review,
    /// Unresolved review threads, when the caller read them.
    pub unresolved_threads: u64,
}

/// What to do in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Offer `gh pr ready` (confirmed); never request review on a draft.
    OfferReady,
    /// Pause: await review.
    AwaitReview,
    /// A new round: re-run phases 2–5 and the gates, re-push, re-request review.
    NewRound,
    /// A new round that fixes failing checks.
    FixRound,
    /// Checks still running: wait; no merge offer.
    Wait,
    /// A new round: rebase, re-run the gates, re-push.
    RebaseRound,
    /// Re-run code review before any merge offer.
    ReReview,
    /// Offer a merge; it happens only after the operator confirms.
    OfferMerge,
    /// Destination `pr`: done, route to QA.
    DoneToQa,
    /// Merged: phase status complete, route to QA; lifecycle phase stays `work`.
    CompleteToQa,
    /// Closed unmerged: ask the operator; record `paused` or `abandoned`.
    AskOperator,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Classification {
    pub state: PrState,
    pub action: Action,
    pub checks: Checks,
    pub merge_offer: bool,
    pub request_review: bool,
    pub next_step: String,
}

/// Every row's guard, in order; exactly one holds for any reading (see the tests).
pub fn guards(r: &Reading, f: &Freshness) -> [(PrState, bool); 9] {
    let merged = r.merged_at.is_some() || r.state == GhState::Merged;
    let open = r.state == GhState::Open && !merged;
    let draft = open && r.is_draft;
    let await_review = open
        && !draft
        && r.review_decision != ReviewDecision::ChangesRequested
        && f.unresolved_threads == 0
        && matches!(
            r.review_decision,
            ReviewDecision::None | ReviewDecision::ReviewRequired
        );
    let changes = open
        && !draft
        && (r.review_decision == ReviewDecision::ChangesRequested || f.unresolved_threads > 0);
    let approved = open && !draft && !changes && r.review_decision == ReviewDecision::Approved;
    let pending = approved
        && (r.checks != Checks::Passing
            || matches!(
                r.merge_state_status,
                MergeStateStatus::Blocked | MergeStateStatus::Unstable | MergeStateStatus::Unknown
            )
            || r.mergeable == Mergeable::Unknown);
    let conflicting = approved
        && !pending
        && (r.mergeable == Mergeable::Conflicting
            || matches!(
                r.merge_state_status,
                MergeStateStatus::Dirty | MergeStateStatus::Behind
            ));
    let clean = approved && !pending && !conflicting;
    let stale = clean && f.review == Review::Stale;
    let fresh = clean && f.review == Review::Fresh;
    let closed = r.state == GhState::Closed && !merged;
    [
        (PrState::Draft, draft),
        (PrState::AwaitReview, await_review),
        (PrState::ChangesRequested, changes),
        (PrState::PendingOrFailingChecks, pending),
        (PrState::Conflicting, conflicting),
        (PrState::ApprovedStale, stale),
        (PrState::ApprovedFresh, fresh),
        (PrState::Merged, merged),
        (PrState::Closed, closed),
    ]
}

/// Classifies a reading: exactly one state, or a typed error.
pub fn classify(
    r: &Reading,
    f: &Freshness,
    destination: Destination,
    pr: &str,
) -> Result<Classification> {
    let matched: Vec<PrState> = guards(r, f)
        .iter()
        .filter(|(_, g)| *g)
        .map(|(s, _)| *s)
        .collect();
    let state = match matched.as_slice() {
        [one] => *one,
        [] => {
            // Only an approved, clean PR whose freshness is unknown falls through the table.
            return Err(InputError::new(
                "repo",
                "review-freshness-unknown",
                "the PR is approved and clean: give reviewed_sha and --repo so cairn observes the review's freshness itself (a caller's commits_since_review can only make it stale)",
            ));
        }
        many => {
            return Err(InputError::new(
                "reading",
                "ambiguous-reading",
                format!("the table matched {} rows: {:?}", many.len(), many),
            ));
        }
    };
    let (action, merge_offer, request_review, next_step) = match state {
        PrState::Draft => (
            Action::OfferReady,
            false,
            false,
            format!("offer `gh pr ready` for {pr} (confirmed); no review request on a draft"),
        ),
        PrState::AwaitReview => (
            Action::AwaitReview,
            false,
            false,
            format!("await review on {pr}"),
        ),
        PrState::ChangesRequested => (
            Action::NewRound,
            false,
            true,
            "new round: re-run phases 2-5 and the gates, re-push, re-request review".into(),
        ),
        PrState::PendingOrFailingChecks if r.checks == Checks::Failing => (
            Action::FixRound,
            false,
            false,
            "new round: fix the failing checks".into(),
        ),
        PrState::PendingOrFailingChecks => (
            Action::Wait,
            false,
            false,
            "checks running or merge blocked: wait; no merge offer".into(),
        ),
        PrState::Conflicting => (
            Action::RebaseRound,
            false,
            false,
            "new round: rebase, re-run the gates, re-push".into(),
        ),
        PrState::ApprovedStale => (
            Action::ReReview,
            false,
            false,
            "commits since the reviewed SHA: re-run code review before any merge offer".into(),
        ),
        PrState::ApprovedFresh if destination.includes_merge() => (
            Action::OfferMerge,
            true,
            false,
            format!("offer to merge {pr}; merge only on the operator's confirmation"),
        ),
        PrState::ApprovedFresh => (
            Action::DoneToQa,
            false,
            false,
            "destination pr: status done, route to QA".into(),
        ),
        PrState::Merged => (
            Action::CompleteToQa,
            false,
            false,
            "merged: phase status complete, route to QA; lifecycle phase stays work".into(),
        ),
        PrState::Closed => (
            Action::AskOperator,
            false,
            false,
            format!("{pr} is closed unmerged: ask the operator whether to pause or abandon"),
        ),
    };
    Ok(Classification {
        state,
        action,
        checks: r.checks,
        merge_offer,
        request_review,
        next_step,
    })
}
