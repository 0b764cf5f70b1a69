//! Each step's exact argv: `git -C <absolute dir> …` (and `test -e`), built from
//! the run's parameters and `REPO_ROOT` only, so `decide` can require exactly them.

use super::super::Params;
use super::{exists, git, Runs};
use crate::evidence::CommandRun;

/// The anchor re-assertion: `git -C REPO_ROOT rev-parse --show-toplevel`.
pub fn anchor_argv(root: &str) -> Vec<String> {
    git(root, &["rev-parse", "--show-toplevel"])
}

/// §preflight-classifier readings.
pub fn preflight_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        anchor_argv(root),
        git(root, &["status", "--porcelain"]),
        git(root, &["branch", "--show-current"]),
        git(
            root,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{}", p.branch),
            ],
        ),
        git(root, &["worktree", "list", "--porcelain"]),
        exists(&p.worktree_path),
    ]
}

/// §repo-anchor divergence advisory, first reading: the target's upstream (no fetch).
pub fn upstream_argv(p: &Params, root: &str) -> Vec<String> {
    git(
        root,
        &[
            "rev-parse",
            "--abbrev-ref",
            &format!("{}@{{upstream}}", p.target_branch),
        ],
    )
}

/// Second reading, when there is an upstream: `rev-list --left-right --count TARGET...UP`.
pub fn divergence_argv(p: &Params, root: &str, upstream: &str) -> Vec<String> {
    git(
        root,
        &[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{}...{upstream}", p.target_branch),
        ],
    )
}

/// The advisory plan as run: the upstream reading, then the count when it named one.
pub fn advisory_plan(p: &Params, root: &str, runs: &[CommandRun]) -> Vec<Vec<String>> {
    let mut plan = vec![upstream_argv(p, root)];
    if let Some(up) = Runs(runs).line(&plan[0]).filter(|u| !u.is_empty()) {
        plan.push(divergence_argv(p, root, &up));
    }
    plan
}

/// §phase-1b step 1: `git -C REPO_ROOT worktree add -b BRANCH WORKTREE_PATH TARGET_BRANCH`.
pub fn create_argv(p: &Params, root: &str) -> Vec<String> {
    git(
        root,
        &[
            "worktree",
            "add",
            "-b",
            &p.branch,
            &p.worktree_path,
            &p.target_branch,
        ],
    )
}

/// §phase-1b step 2: the four verifications.
pub fn create_verify_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["worktree", "list", "--porcelain"]),
        git(root, &["rev-parse", "--git-dir"]),
        git(root, &["status", "--porcelain"]),
        git(&p.worktree_path, &["rev-parse", "HEAD"]),
        git(
            root,
            &[
                "rev-parse",
                "--verify",
                &format!("refs/heads/{}", p.target_branch),
            ],
        ),
    ]
}

/// Removing a partial worktree after a failed creation (and the branch `-b` made).
pub fn create_cleanup_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["worktree", "remove", "--force", &p.worktree_path]),
        git(root, &["branch", "-D", &p.branch]),
    ]
}

/// `git -C DIR rev-parse HEAD`.
pub fn head_argv(dir: &str) -> Vec<String> {
    git(dir, &["rev-parse", "HEAD"])
}

/// The §worktree-isolation-gate and the after-every-phase checks, read from `runs`.
pub(super) fn isolation_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    let w = p.worktree_path.as_str();
    vec![
        git(
            w,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ),
        git(
            root,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ),
        git(w, &["rev-parse", "--git-dir"]),
        git(w, &["rev-parse", "--git-common-dir"]),
        git(root, &["branch", "--show-current"]),
        git(w, &["branch", "--show-current"]),
        git(root, &["status", "--porcelain"]),
        git(root, &["worktree", "list", "--porcelain"]),
        head_argv(w),
    ]
}

/// §phase-1d-verify-shared. Diffs use `TARGET...HEAD` (from the merge base), so a
/// target that moved under the worktree never counts a peer's changes as this
/// branch's; the seed's two-dot form would.
pub fn phase1d_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    let w = p.worktree_path.as_str();
    let range = format!("{}..HEAD", p.target_branch);
    let sym = format!("{}...HEAD", p.target_branch);
    let mut plan = isolation_plan(p, root);
    plan.extend([
        git(w, &["rev-list", "--count", &range]),
        git(w, &["diff", "--shortstat", &sym]),
        git(w, &["log", "-1", "--format=%B"]),
        git(w, &["diff", "--name-only", &sym]),
    ]);
    plan
}

/// §phase-2 "Gate + worktree re-verify": isolation, branch, primary, and the reported tip.
pub fn refine_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    isolation_plan(p, root)
}

/// §phase-3 pre-merge checks (worktree clean, isolation, branch), and the squash
/// post-check when a squash is reported (`pre_squash` is the full pre-squash id).
pub fn premerge_plan(p: &Params, root: &str, pre_squash: Option<&str>) -> Vec<Vec<String>> {
    let mut plan = isolation_plan(p, root);
    plan.push(git(&p.worktree_path, &["status", "--porcelain"]));
    if let Some(pre) = pre_squash {
        plan.push(git(&p.worktree_path, &["diff", &format!("{pre}..HEAD")]));
    }
    plan
}

/// §phase-3 step 5: `git -C REPO_ROOT merge --ff-only BRANCH`, and the readings after.
pub fn merge_argv(p: &Params, root: &str) -> Vec<String> {
    git(root, &["merge", "--ff-only", &p.branch])
}

/// After a merge: the primary's HEAD and the branch tip must be the same commit.
pub fn merge_after_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        head_argv(root),
        git(
            root,
            &["rev-parse", "--verify", &format!("refs/heads/{}", p.branch)],
        ),
    ]
}

/// §phase-3 step 6 (and the abort teardown): readings first, then only what exists is removed.
pub fn teardown_before_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["worktree", "list", "--porcelain"]),
        git(
            root,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{}", p.branch),
            ],
        ),
    ]
}

/// `git worktree remove` (forced only on an abort teardown: nothing there is kept).
pub fn teardown_remove_argv(p: &Params, root: &str, force: bool) -> Vec<String> {
    if force {
        git(root, &["worktree", "remove", "--force", &p.worktree_path])
    } else {
        git(root, &["worktree", "remove", &p.worktree_path])
    }
}

/// `git branch -d` after a merge (safe: reachable); `-D` on an abort teardown.
pub fn teardown_delete_argv(p: &Params, root: &str, force: bool) -> Vec<String> {
    git(
        root,
        &["branch", if force { "-D" } else { "-d" }, &p.branch],
    )
}

/// §resume-mechanics readings: the primary's state and where the worktree is.
pub fn resume_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["status", "--porcelain"]),
        git(root, &["branch", "--show-current"]),
        git(root, &["worktree", "list", "--porcelain"]),
        git(
            root,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{}", p.branch),
            ],
        ),
    ]
}

/// Re-attach: `git -C REPO_ROOT worktree add WORKTREE_PATH BRANCH`.
pub fn reattach_argv(p: &Params, root: &str) -> Vec<String> {
    git(root, &["worktree", "add", &p.worktree_path, &p.branch])
}

/// The tip reading that decides the phase: `git -C WORKTREE_PATH rev-list --count TARGET..HEAD`.
pub fn ahead_argv(p: &Params) -> Vec<String> {
    git(
        &p.worktree_path,
        &["rev-list", "--count", &format!("{}..HEAD", p.target_branch)],
    )
}
