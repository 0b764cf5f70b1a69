//! `verify`: the guard a caller asks before anything runs ([`verify_admits`]),
//! then the verdict [`judge()`] gives on the runs cairn made.

use super::super::tree::{contains_plan, read_contains};
use super::super::{judge, Event, NodeRun, Observed, State};
use super::guards::Guard;
use crate::evidence::{CommandRun, FullCommit};
use crate::{Context, Rejection};

/// The ancestry reading a re-verification of a done node needs before anything
/// runs: does `commit` (in `worktree_path`) contain the merged commit? `None` for
/// every other stage.
pub fn reverify_plan(state: &State, worktree_path: &str, commit: &str) -> Option<Vec<String>> {
    match state {
        State::Done { run } => run
            .merged
            .as_ref()
            .map(|(_, merged)| contains_plan(worktree_path, merged, commit)),
        _ => None,
    }
}

/// The guard of `verify`, before any criterion runs: a session, an open node, a
/// verifiable stage, and the right tree — the dispatched worker tree before a
/// merge; the merged tree at the merged commit after it; for a done node (a later
/// session re-verifying it), a tree whose commit contains the merged commit, as
/// `contains` (the run of [`reverify_plan`]) shows. Returns the run and whether
/// this is integration evidence.
pub fn verify_admits<'a>(
    state: &'a State,
    worktree_path: &str,
    commit: &str,
    session: Option<&str>,
    contains: Option<&CommandRun>,
) -> Result<(&'a NodeRun, bool), Rejection> {
    admit(state, worktree_path, commit, session, contains)
        .map(|(run, integration, _)| (run, integration))
}

/// [`verify_admits`], with the commit it checked.
fn admit<'a>(
    state: &'a State,
    worktree_path: &str,
    commit: &str,
    session: Option<&str>,
    contains: Option<&CommandRun>,
) -> Result<(&'a NodeRun, bool, FullCommit), Rejection> {
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
    g.node_open()?;
    let run = match state {
        State::Dispatched { run }
        | State::Verified { run }
        | State::Merged { run }
        | State::Done { run } => run,
        State::Rejected { .. } => {
            return g.no(
                "remediate-first",
                None,
                "a rejected node is redispatched (`remediate`, within its budget) before its tree is verified again",
            )
        }
        _ => return g.no("dispatched", None, "verify a dispatched node's tree"),
    };
    let checked = FullCommit::parse(commit).map_err(|_| {
        g.reject(
            "full-commit",
            Some("expected_commit"),
            "the full commit of the tree",
        )
    })?;
    let integration = match (state, &run.merged) {
        (State::Done { .. }, Some((_, merged))) => {
            let Some(c) = contains else {
                return g.no(
                    "contains-merge",
                    Some("expected_commit"),
                    "a done node is re-verified in a tree that contains its merged commit (not read)",
                );
            };
            match read_contains(c, worktree_path, merged, commit) {
                Ok(true) => true,
                Ok(false) => return g.no(
                    "contains-merge",
                    Some("expected_commit"),
                    &format!("{commit} does not contain the merged commit {merged}: a done node is re-verified in a tree that contains it"),
                ),
                Err(m) => return g.no("contains-merge", Some("expected_commit"), &m),
            }
        }
        (State::Merged { .. }, Some((t, c))) if t != worktree_path || *c != checked => {
            return g.no(
                "merged-tree",
                Some("worktree_path"),
                "after a merge, verify the merged tree at the merged commit",
            )
        }
        (State::Merged { .. } | State::Done { .. }, _) => true,
        _ if run.worktree.as_deref() != Some(worktree_path) => {
            return g.no(
                "same-worktree",
                Some("worktree_path"),
                "pre-merge evidence runs in the dispatched persistent worker tree",
            )
        }
        _ => false,
    };
    Ok((run, integration, checked))
}

/// `criteria-unchanged` (work-node rules 5): every criterion the node's last
/// verification ran is still in the spec with the contract it ran, unless
/// `amend-criterion` amended it since (found by a hostile pass: the spec's `run`
/// edited by hand after a failure, and the node then verified the very commit
/// it had failed on). A criterion added is only more to pass.
fn criteria_unchanged(
    g: &Guard<'_>,
    run: &super::super::NodeRun,
    node: &crate::work::spec::Node,
) -> Result<(), Rejection> {
    let Some(last) = run.verifications.last() else {
        return Ok(());
    };
    for ran in &last.criteria {
        if run.amended_since.contains(&ran.criterion_id) {
            continue;
        }
        let now = node.acceptance.iter().find(|c| c.id == ran.criterion_id);
        let changed = match now {
            None => Some("is gone from the spec since the node's last verification ran it"),
            Some(c) if super::super::contract_hash(c) != ran.contract_hash => {
                Some("has another contract in the spec than the node's last verification ran")
            }
            Some(_) => None,
        };
        if let Some(how) = changed {
            return g.no(
                "criteria-unchanged",
                Some("spec"),
                &format!(
                    "criterion `{}` {how}, and no `work amend-criterion` amended it since: a contract changes only by amendment",
                    ran.criterion_id
                ),
            );
        }
    }
    Ok(())
}

/// [`verify_admits`] on the recorded ancestry, a fully valid spec (lineage
/// included) with this node, then the judged verification: `verified` when it
/// passed, `verification-failed` otherwise.
pub(super) fn decide_verify(
    g: Guard<'_>,
    (spec, draft): (&str, Option<&str>),
    seen: Observed<'_>,
    contains: Option<&CommandRun>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let (run, integration, commit) = admit(
        g.state,
        &seen.tree.worktree_path,
        &seen.tree.expected_commit,
        ctx.session.as_deref(),
        contains,
    )?;
    let session = ctx.session.clone().unwrap_or_default();
    let (_, node) = g.spec_node(spec, draft, &run.address)?;
    criteria_unchanged(&g, run, &node)?;
    let used: Vec<String> = run
        .verifications
        .iter()
        .flat_map(|v| v.criteria.iter().filter_map(|c| c.challenge.clone()))
        .collect();
    let mut v = judge(
        &node,
        &Observed {
            used_challenges: &used,
            ..seen
        },
        &session,
        integration,
        &commit,
        ctx.now.clone(),
    );
    // The tree is still in the repository its dispatch read (work-node rules 4:
    // a verification of the worker tree in another one fails), the same
    // directories on disk (rules 10); the merged tree too, which `merge` held to
    // that repository (helper-78: a clone's `.git` moved in after the merge had
    // the integration verified and the node `done` there).
    if let Some(expected) = run.repository.as_ref() {
        if let Some(p) = seen
            .tree
            .repository_problem(expected.as_str(), run.identity.as_deref())
        {
            v.failures.push(format!("tree: {p}"));
            v.passed = false;
        }
    }
    // The merged tree's integration evidence is taken with the merge's branch
    // checked out at the merged commit (work-node rules 12; helper-79: the branch
    // reset after the merge, the commit checked out detached, was verified and
    // the node `done` while no branch held the work).
    // A done node's later re-verification too: the tree holding the merge is on
    // that branch (helper-80: the worker's own branch, and a worktree detached at
    // the merged commit, re-verified a done node).
    if let (State::Merged { .. } | State::Done { .. }, Some(branch)) =
        (g.state, run.merged_branch.as_deref())
    {
        if let Some(p) = seen.tree.branch_problem(branch) {
            v.failures.push(format!("tree: {p}"));
            v.passed = false;
        }
    }
    Ok(vec![if v.passed {
        Event::Verified { verification: v }
    } else {
        Event::VerificationFailed { verification: v }
    }])
}
