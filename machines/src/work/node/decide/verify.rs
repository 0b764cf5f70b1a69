//! `verify`: the guard a caller asks before anything runs ([`verify_admits`]),
//! then the verdict [`judge()`] gives on the runs cairn made.

use super::super::{judge, ChecklistReport, CriterionRun, Event, NodeRun, State, TreeReading};
use super::guards::Guard;
use crate::evidence::is_full_git_id;
use crate::{Context, Rejection};

/// The guard of `verify`, before anything runs: a session, a verifiable stage, and
/// the right tree (the dispatched worker tree before a merge, the merged tree at
/// the merged commit after it). Returns the run and whether this is integration evidence.
pub fn verify_admits<'a>(
    state: &'a State,
    worktree_path: &str,
    commit: &str,
    session: Option<&str>,
) -> Result<(&'a NodeRun, bool), Rejection> {
    let g = Guard {
        state,
        command: "verify",
    };
    if session.map_or(true, |s| s.trim().is_empty()) {
        return g.no(
            "session",
            Some("session"),
            "verification is bound to a session",
        );
    }
    let run = match state {
        State::Dispatched { run }
        | State::Verified { run }
        | State::Rejected { run }
        | State::Merged { run } => run,
        _ => return g.no("dispatched", None, "verify a dispatched node's tree"),
    };
    if !is_full_git_id(commit) {
        return g.no(
            "full-commit",
            Some("expected_commit"),
            "the full commit of the tree",
        );
    }
    let integration = matches!(state, State::Merged { .. });
    match &run.merged {
        Some((t, c)) if integration && (t != worktree_path || c != commit) => g.no(
            "merged-tree",
            Some("worktree_path"),
            "after a merge, verify the merged tree at the merged commit",
        ),
        _ if !integration && run.worktree.as_deref() != Some(worktree_path) => g.no(
            "same-worktree",
            Some("worktree_path"),
            "pre-merge evidence runs in the dispatched persistent worker tree",
        ),
        _ => Ok((run, integration)),
    }
}

/// [`verify_admits`], a valid spec with this node, then the judged verification:
/// `verified` when it passed, `verification-failed` otherwise.
pub(super) fn decide_verify(
    g: Guard<'_>,
    spec: &str,
    tree: &TreeReading,
    runs: &[CriterionRun],
    checklist: &[ChecklistReport],
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let (run, integration) = verify_admits(
        g.state,
        &tree.worktree_path,
        &tree.expected_commit,
        ctx.session.as_deref(),
    )?;
    let session = ctx.session.clone().unwrap_or_default();
    let (_, node) = g.spec_node(spec, &run.address)?;
    let v = judge(
        &node,
        tree,
        runs,
        checklist,
        &session,
        integration,
        ctx.now.clone(),
    );
    Ok(vec![if v.passed {
        Event::Verified { verification: v }
    } else {
        Event::VerificationFailed { verification: v }
    }])
}
