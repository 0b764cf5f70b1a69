//! The rejection loop: `review` (reporting data, never verification),
//! `remediate` (a bounded redispatch in the same worktree) and `escalate` (to the
//! user, once the budget is spent).

use super::super::{Event, ReviewVerdict, State};
use super::guards::Guard;
use crate::Rejection;

/// A dispatched or verified node; a rejection names the failed criteria.
pub(super) fn decide_review(
    g: Guard<'_>,
    verdict: ReviewVerdict,
    failed_criteria: &[String],
    concerns: &[String],
) -> Result<Vec<Event>, Rejection> {
    if !matches!(g.state, State::Verified { .. } | State::Dispatched { .. }) {
        return g.no("reviewable", None, "review a dispatched or verified node");
    }
    if verdict == ReviewVerdict::Reject && failed_criteria.is_empty() {
        return g.no(
            "rejection-data",
            Some("failed_criteria"),
            "a rejection names the failed criterion ids",
        );
    }
    Ok(vec![Event::ReviewRecorded {
        verdict,
        failed_criteria: failed_criteria.to_vec(),
        concerns: concerns.to_vec(),
    }])
}

/// A rejected node with rounds left, the same persistent worktree, a run id.
pub(super) fn decide_remediate(
    g: Guard<'_>,
    run_id: &str,
    worktree_path: &str,
) -> Result<Vec<Event>, Rejection> {
    let State::Rejected { run } = g.state else {
        return g.no("rejected", None, "remediation follows a rejection");
    };
    if run.remediation_rounds >= run.budget {
        return g.no(
            "budget",
            None,
            "the remediation budget is spent: the only transition is an escalation to the user",
        );
    }
    let Some(worktree) = run.worktree.as_ref().filter(|w| *w == worktree_path) else {
        return g.no(
            "same-worktree",
            Some("worktree_path"),
            "a redispatch names the same persistent worktree",
        );
    };
    if run_id.trim().is_empty() {
        return g.no(
            "dispatch-receipt",
            Some("run_id"),
            "the redispatch's run id",
        );
    }
    Ok(vec![Event::RemediationDispatched {
        round: run.remediation_rounds + 1,
        run_id: run_id.to_owned(),
        worktree_path: worktree.clone(),
    }])
}

/// A rejected node whose budget is spent, and the reason.
pub(super) fn decide_escalate(g: Guard<'_>, reason: &str) -> Result<Vec<Event>, Rejection> {
    let State::Rejected { run } = g.state else {
        return g.no(
            "rejected",
            None,
            "escalate a rejected node whose budget is spent",
        );
    };
    if run.remediation_rounds < run.budget {
        return g.no("budget-spent", None, "rounds remain: remediate, or re-plan");
    }
    if reason.trim().is_empty() {
        return g.no("nonempty-string", Some("reason"), "name the reason");
    }
    Ok(vec![Event::Escalated {
        reason: reason.to_owned(),
    }])
}
