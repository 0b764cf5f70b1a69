//! The end of the line: `merge` (cairn reads the merged tree and checks that the
//! merged commit contains the verified worker commit) and `done` (every
//! [`terminal_truth()`] item holds).

use super::super::tree::{merge_plan, merge_problem, TreeReading};
use super::super::{terminal_truth, Event, NodeRun, State, NAME};
use super::guards::Guard;
use crate::evidence::{AbsPath, CommandRun, FullCommit};
use crate::{Context, Rejection, Violation};

/// The worker commit the last passing worker-tree verification proved.
pub fn verified_worker_commit(run: &NodeRun) -> Option<&str> {
    run.verifications
        .iter()
        .rev()
        .find(|v| {
            v.passed && !v.integration && run.worktree.as_deref() == Some(v.worktree_path.as_str())
        })
        .map(|v| v.commit.as_str())
}

/// The guard of `merge` before git is read: a node whose worker tree verified (or
/// a re-merge), an absolute merged tree and a full commit. Returns the readings
/// cairn makes of the merged tree ([`merge_plan`]).
pub fn merge_admits(
    state: &State,
    merged_tree: &str,
    commit: &str,
) -> Result<[Vec<String>; 6], Rejection> {
    admit(state, merged_tree, commit).map(|a| a.plan)
}

/// What [`merge_admits`] checked: the readings to make, and the merged tree and
/// commit as checked values.
struct Admitted {
    plan: [Vec<String>; 6],
    tree: AbsPath,
    commit: FullCommit,
}

/// [`merge_admits`], with the tree and commit it checked.
fn admit(state: &State, merged_tree: &str, commit: &str) -> Result<Admitted, Rejection> {
    let g = Guard {
        state,
        command: "merge",
    };
    g.node_open()?;
    let run = match state {
        State::Verified { run } | State::Merged { run } => run,
        _ => return g.no("verified", None, "merge a node whose worker tree verified"),
    };
    let (Ok(tree), Ok(checked)) = (AbsPath::parse(merged_tree), FullCommit::parse(commit)) else {
        return g.no(
            "merged-tree",
            Some("merged_tree"),
            "the merged tree's absolute path and full commit",
        );
    };
    let Some(worker) = verified_worker_commit(run) else {
        return g.no(
            "verified",
            None,
            "no worker-tree verification passed: nothing to merge",
        );
    };
    // The worker's own tree trivially holds its commit: naming it as the merged
    // tree recorded a merge that never happened, and a second verification there
    // passed for integration evidence (found by a hostile pass; work-node rules 6).
    if run.worktree.as_deref() == Some(merged_tree) {
        return g.no(
            "merged-tree",
            Some("merged_tree"),
            "the merged tree is the worker's own tree: name the tree the worker commit was merged into",
        );
    }
    Ok(Admitted {
        plan: merge_plan(merged_tree, worker, commit),
        tree,
        commit: checked,
    })
}

/// [`merge_admits`], a fully valid spec with this node, then cairn's reading of
/// the merged tree: its top level, its HEAD at `commit`, and `commit` containing
/// the verified worker commit.
pub(super) fn decide_merge(
    g: Guard<'_>,
    (spec, draft): (&str, Option<&str>),
    merged_tree: &str,
    commit: &str,
    (reading, identity): (Option<&[CommandRun]>, Option<&CommandRun>),
) -> Result<Vec<Event>, Rejection> {
    let Admitted {
        tree,
        commit: checked,
        ..
    } = admit(g.state, merged_tree, commit)?;
    let Some(run) = g.state.run() else {
        return g.no("verified", None, "merge a node whose worker tree verified");
    };
    g.spec_node(spec, draft, &run.address)?;
    let worker = verified_worker_commit(run).unwrap_or_default();
    if let Some((predicate, message)) = merge_problem(
        reading.unwrap_or_default(),
        merged_tree,
        (worker, run.repository.as_ref().map(|r| r.as_str())),
        commit,
    ) {
        return g.no(predicate, Some("commit"), &message);
    }
    // The merged tree's repository is, on disk, the one dispatch read (rules 11;
    // helper-78: another clone's `.git` moved into its place kept every path).
    if let (Some(common), Some(want)) = (run.repository.as_ref(), run.identity.as_deref()) {
        let seen = identity.and_then(|r| crate::evidence::git::identity_of(common.as_str(), r));
        if seen.as_deref() != Some(want) {
            return g.no(
                "merged-repository",
                Some("merged_tree"),
                &format!(
                    "the merged tree's repository `{common}` is not, on disk, the one the dispatch read (its git directory or refs were replaced)"
                ),
            );
        }
    }
    // The branch the merge landed on: `merge_problem` held it non-empty.
    let reading = reading.unwrap_or_default();
    let branch = super::super::tree::merge_plan(merged_tree, worker, commit)[4].clone();
    let branch = reading
        .iter()
        .find(|r| r.argv == branch && r.ok())
        .map(|r| r.stdout.trim().to_owned())
        .filter(|b| !b.is_empty());
    Ok(vec![Event::Merged {
        merged_tree: tree,
        commit: checked,
        branch,
    }])
}

/// The reading `done` takes of a merged node: `git -C MERGED_TREE merge-base
/// --is-ancestor --end-of-options MERGED refs/heads/BRANCH`, whether the branch
/// the merge landed on still holds the merged commit. `None` for a merge recorded
/// before work-node rules 12 (no branch kept), or a node not merged.
pub fn done_plan(state: &State) -> Option<Vec<String>> {
    let run = state.run()?;
    let ((tree, merged), branch) = (run.merged.as_ref()?, run.merged_branch.as_deref()?);
    Some(super::super::tree::contains_plan(
        tree.as_str(),
        merged.as_str(),
        &format!("refs/heads/{branch}"),
    ))
}

/// A session, a recorded node, a fully valid spec with this node, then one
/// `terminal-truth` violation per failing checklist item; and the merge's branch
/// still holding the merged commit, as cairn read it ([`done_plan`]; helper-80:
/// `main` reset after the integration verification, and `done` was recorded).
pub(super) fn decide_done(
    g: Guard<'_>,
    (spec, draft): (&str, Option<&str>),
    (deps_done, holds, tree): (&[Vec<String>], Option<&CommandRun>, Option<&TreeReading>),
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let session = ctx
        .session
        .clone()
        .ok_or_else(|| g.reject("session", Some("session"), "done is decided in a session"))?;
    let Some(run) = g.state.run() else {
        return g.no("planned", None, "nothing is recorded for this node");
    };
    let (spec, node) = g.spec_node(spec, draft, &run.address)?;
    let missing = terminal_truth(run, &spec, &node, deps_done, &session);
    if !missing.is_empty() {
        let violations = missing
            .iter()
            .map(|m| Violation::new("terminal-truth", None, m.clone()))
            .collect();
        // `missing` is non-empty, so there is a violation to report.
        return Err(
            Rejection::from_violations(NAME, g.command, g.state.name(), violations).unwrap_or_else(
                || {
                    g.reject(
                        "terminal-truth",
                        None,
                        "the terminal truth checklist does not hold",
                    )
                },
            ),
        );
    }
    // The checklist can hold for a node re-planned after a scope amendment approved
    // once it had merged (its run keeps that merge), but `done` follows only the
    // merge of what was planned last. The graph never had another edge into
    // `done`, so no recorded transition that audits clean decides differently.
    if !matches!(g.state, State::Merged { .. }) {
        return g.no(
            "merged",
            None,
            "done follows the merge: a node re-planned after a scope amendment is dispatched, verified and merged again first",
        );
    }
    if let Some(plan) = done_plan(g.state) {
        let run = g.state.run();
        let branch = run
            .and_then(|r| r.merged_branch.clone())
            .unwrap_or_default();
        // The merged tree is still in the node's repository, on disk (work-node
        // rules 14; helper-81: the merged tree's path given to a clone holding the
        // branch had `done` recorded while the repository held no such branch).
        if let Some(expected) = run.and_then(|r| r.repository.as_ref()) {
            let identity = run.and_then(|r| r.identity.as_deref());
            let problem = match tree {
                None => Some("the merged tree was not read again".to_owned()),
                Some(t) => t.repository_problem(expected.as_str(), identity),
            };
            if let Some(p) = problem {
                return g.no("merged-repository", None, &p);
            }
        }
        match holds.filter(|r| r.argv == plan).map(|r| r.exit_status) {
            Some(Some(0)) => {}
            Some(Some(1)) => {
                return g.no(
                    "merge-held",
                    None,
                    &format!("`{branch}` no longer holds the merged commit: the merge was undone since"),
                )
            }
            _ => {
                return g.no(
                    "merge-held",
                    None,
                    &format!("whether `{branch}` still holds the merged commit could not be read in the merged tree `{}` (is a worktree of the repository still there?): nothing is recorded on trust", plan[2]),
                )
            }
        }
    }
    Ok(vec![Event::Done { session }])
}
