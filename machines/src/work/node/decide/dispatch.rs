//! `dispatch`: `work_dispatch`'s outcome for a planned node, a receipt
//! (`dispatched`) or a degraded `not-dispatched` finding that advances nothing.

use super::super::{Event, State, DEFAULT_BUDGET};
use super::guards::Guard;
use crate::evidence::{AbsPath, FullCommit};
use crate::{Context, Rejection};

/// A planned node; a redispatch in the same persistent worktree; then exactly one
/// of a finding (the plan comes back) or a run id with an absolute worker tree, its
/// full starting commit and a budget of at least one round (a redispatch keeps its
/// budget and may not raise it).
pub(super) fn decide_dispatch(
    g: Guard<'_>,
    run_id: Option<&str>,
    worktree_path: &str,
    expected_commit: &str,
    budget: Option<u32>,
    finding: Option<&str>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let State::Planned { run } = g.state else {
        return g.no(
            "planned",
            None,
            "dispatch a planned node (a redispatch after a rejection is `remediate`)",
        );
    };
    if let (Some(w), Some(_)) = (&run.worktree, run_id) {
        if w != worktree_path {
            return g.no(
                "same-worktree",
                Some("worktree_path"),
                "a redispatch reuses the same persistent worktree",
            );
        }
    }
    match (run_id, finding) {
        (None, Some(f)) if !f.trim().is_empty() => {
            // Degraded: the plan comes back; nothing advances.
            let plan = run
                .plan
                .clone()
                .ok_or_else(|| g.reject("planned", None, "no plan"))?;
            Ok(vec![Event::NotDispatched {
                finding: f.to_owned(),
                plan,
            }])
        }
        (Some(id), None) if !id.trim().is_empty() => {
            let worktree_path = AbsPath::parse(worktree_path).map_err(|_| {
                g.reject(
                    "absolute-path",
                    Some("worktree_path"),
                    "the persistent worker tree, absolute",
                )
            })?;
            let expected_commit = FullCommit::parse(expected_commit).map_err(|_| {
                g.reject(
                    "full-commit",
                    Some("expected_commit"),
                    "the full commit the worker starts from",
                )
            })?;
            if budget == Some(0) {
                return g.no(
                    "budget",
                    Some("budget"),
                    "a remediation budget of at least one round",
                );
            }
            // A redispatch (after an approved scope amendment) keeps the rounds
            // already spent and may not raise the budget they count against.
            if run.worktree.is_some() && budget.is_some_and(|b| b > run.budget) {
                return g.no(
                    "budget",
                    Some("budget"),
                    "a redispatch does not raise the remediation budget",
                );
            }
            Ok(vec![Event::Dispatched {
                run_id: id.to_owned(),
                worktree_path,
                expected_commit,
                budget: budget.unwrap_or(if run.worktree.is_some() {
                    run.budget
                } else {
                    DEFAULT_BUDGET
                }),
                session: ctx.session.clone(),
            }])
        }
        _ => g.no(
            "dispatch-receipt",
            Some("run_id"),
            "a dispatch receipt (run id) or a not-dispatched finding, exactly one",
        ),
    }
}
