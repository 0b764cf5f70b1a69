//! Each step's exact argv: `git -C <absolute dir> …` (and `test -e`), built from
//! the run's parameters and `REPO_ROOT` only, so `decide` can require exactly them.
//!
//! Every value that comes from the caller (a branch, a ref, a path) follows
//! `--end-of-options`, so git never reads it as an option; revision ranges are
//! closed with `--`, so none is ever read as a path. Listings that carry paths
//! are read in git's `-z` form (NUL-separated).

use super::super::Params;
use super::{exists, git, Runs};
use crate::evidence::git::worktree_list;
use crate::evidence::CommandRun;

/// Everything after it is an operand, never an option (git ≥ 2.24; `rev-parse`
/// honours it only with `--verify`).
const EOO: &str = "--end-of-options";

/// `git show-ref --verify --quiet --end-of-options refs/heads/BRANCH`: exit 0 when
/// the branch exists, 1 when it does not.
fn branch_exists(p: &Params, root: &str) -> Vec<String> {
    git(
        root,
        &[
            "show-ref",
            "--verify",
            "--quiet",
            EOO,
            &format!("refs/heads/{}", p.branch),
        ],
    )
}

/// `git rev-parse --verify --end-of-options refs/heads/BRANCH`: the branch's tip.
fn branch_tip(root: &str, branch: &str) -> Vec<String> {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            EOO,
            &format!("refs/heads/{branch}"),
        ],
    )
}

/// `refs/heads/TARGET`: the target branch spelled in full wherever a revision is
/// read. Spelled bare, git resolves `refs/TARGET` and `refs/tags/TARGET` before
/// the branch (found by a hostile pass: a tag named like the target hid an
/// out-of-scope commit from the scope gate, and the ship merged it).
fn target_ref(p: &Params) -> String {
    format!("refs/heads/{}", p.target_branch)
}

/// Which repository REPO_ROOT's checkout is now: `git -C REPO_ROOT rev-parse
/// --path-format=absolute --git-dir --git-common-dir`. The top level alone does
/// not say it (helper-77: a `.git` swapped for a gitfile naming a clone, or a
/// `commondir` file in it, after pre-merge had the merge land in the other
/// repository, recorded `merged` and `shipped`).
pub fn repository_argv(root: &str) -> Vec<String> {
    git(
        root,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
        ],
    )
}

/// The repository's identity on disk: `stat -L --format=%d:%i REPO_ROOT/.git
/// REPO_ROOT/.git/refs`, the device and inode of its git directory and of its refs.
/// A path names whatever is there now; these name the directories the run was
/// opened in (helper-78: another clone's `.git` moved into REPO_ROOT, or `.git/refs`
/// made a link to a copy, had the merge land there with every path as before).
pub fn identity_argv(root: &str) -> Vec<String> {
    crate::evidence::git::identity_argv(&format!("{root}/.git"))
}

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
        branch_exists(p, root),
        worktree_list(root),
        exists(&p.worktree_path),
        identity_argv(root),
        repository_argv(root),
    ]
}

/// §repo-anchor divergence advisory, first reading: the target's upstream (no
/// fetch), named in full (`refs/remotes/origin/main`: a short name can be shadowed
/// as the target's can). `TARGET@{upstream}` reads TARGET as a branch name.
pub fn upstream_argv(p: &Params, root: &str) -> Vec<String> {
    git(
        root,
        &[
            "rev-parse",
            "--symbolic-full-name",
            "--verify",
            EOO,
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
            EOO,
            &format!("{}...{upstream}", target_ref(p)),
            "--",
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

/// §phase-1b step 1: `git -C REPO_ROOT worktree add -b BRANCH --end-of-options
/// WORKTREE_PATH TARGET_BRANCH` (`-b` takes its value whatever it looks like).
pub fn create_argv(p: &Params, root: &str) -> Vec<String> {
    git(
        root,
        &[
            "worktree",
            "add",
            "-b",
            &p.branch,
            EOO,
            &p.worktree_path,
            &target_ref(p),
        ],
    )
}

/// §phase-1b step 2: the four verifications.
pub fn create_verify_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        worktree_list(root),
        git(root, &["rev-parse", "--git-dir"]),
        git(root, &["status", "--porcelain"]),
        git(&p.worktree_path, &["rev-parse", "HEAD"]),
        branch_tip(root, &p.target_branch),
        repository_argv(root),
        identity_argv(root),
    ]
}

/// Removing a partial worktree after a failed creation (and the branch `-b` made).
pub fn create_cleanup_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        teardown_remove_argv(p, root, true),
        teardown_delete_argv(p, root, true),
    ]
}

/// Right before `git worktree add -b`: whether the branch exists (it must not).
pub fn create_before_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![branch_exists(p, root)]
}

/// After a failed `git worktree add -b` (which makes the branch before it fails on
/// the path): whether the branch exists now, and whether a worktree holds it.
pub fn create_failed_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![branch_exists(p, root), worktree_list(root)]
}

/// Removing the branch a failed `git worktree add -b` made: `git branch -D`.
pub fn create_failed_cleanup_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![teardown_delete_argv(p, root, true)]
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
        worktree_list(root),
        head_argv(w),
    ]
}

/// §phase-1d-verify-shared. Diffs use `TARGET...HEAD` (from the merge base), so a
/// target that moved under the worktree never counts a peer's changes as this
/// branch's; the seed's two-dot form would.
pub fn phase1d_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    let w = p.worktree_path.as_str();
    let range = format!("{}..HEAD", target_ref(p));
    let sym = format!("{}...HEAD", target_ref(p));
    let mut plan = isolation_plan(p, root);
    plan.extend([
        git(w, &["rev-list", "--count", EOO, &range, "--"]),
        git(w, &["diff", "--shortstat", EOO, &sym, "--"]),
        // The body and git's own trailer block, NUL-separated: trailers are read
        // as git reads them (the last paragraph only), never line by line.
        git(w, &["log", "-1", "--format=%b%x00%(trailers)"]),
        changed_paths_argv(p),
    ]);
    plan
}

/// §phase-2 "Gate + worktree re-verify": isolation, branch, primary, and the reported tip.
pub fn refine_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    isolation_plan(p, root)
}

/// The paths the branch changes since it left the target: `git diff --name-only
/// -z TARGET...HEAD --` in the worktree (NUL-separated, from the merge base).
pub(super) fn changed_paths_argv(p: &Params) -> Vec<String> {
    let sym = format!("{}...HEAD", target_ref(p));
    git(
        &p.worktree_path,
        &["diff", "--name-only", "-z", EOO, &sym, "--"],
    )
}

/// §phase-3 pre-merge checks (isolation, branch, the tip, worktree clean, the
/// changed paths against the accepted scope), and the squash post-check when a
/// squash is reported (`pre_squash` is the full pre-squash id).
pub fn premerge_plan(p: &Params, root: &str, pre_squash: Option<&str>) -> Vec<Vec<String>> {
    let mut plan = isolation_plan(p, root);
    plan.push(git(&p.worktree_path, &["status", "--porcelain"]));
    plan.push(changed_paths_argv(p));
    if let Some(pre) = pre_squash {
        plan.push(git(
            &p.worktree_path,
            &[
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                EOO,
                &format!("{pre}..HEAD"),
                "--",
            ],
        ));
    }
    plan
}

/// Right before the merge, in REPO_ROOT: the primary's branch, its status, and the
/// branch tip (which must still be the tip pre-merge checked).
pub fn merge_before_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["branch", "--show-current"]),
        git(root, &["status", "--porcelain"]),
        branch_tip(root, &p.branch),
        repository_argv(root),
        identity_argv(root),
    ]
}

/// §phase-3 step 5: `git -C REPO_ROOT merge --ff-only --end-of-options TIP`: the
/// commit pre-merge checked, never whatever the branch names by then.
pub fn merge_argv(root: &str, tip: &str) -> Vec<String> {
    git(root, &["merge", "--ff-only", EOO, tip])
}

/// `git -C REPO_ROOT merge-base --is-ancestor --end-of-options SHA refs/heads/TARGET`:
/// exit 0 when TARGET_BRANCH holds the commit, 1 when it does not.
pub fn contains_argv(p: &Params, root: &str, sha: &str) -> Vec<String> {
    git(
        root,
        &["merge-base", "--is-ancestor", EOO, sha, &target_ref(p)],
    )
}

/// After a merge: the primary is still on TARGET_BRANCH, and TARGET_BRANCH holds
/// the merged commit.
pub fn merge_after_plan(p: &Params, root: &str, tip: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["branch", "--show-current"]),
        contains_argv(p, root, tip),
        repository_argv(root),
        identity_argv(root),
    ]
}

/// §phase-3 step 6 (and the abort teardown): readings first, then only what exists
/// is removed. After a merge, TARGET_BRANCH must still hold the merged commit.
pub fn teardown_before_plan(p: &Params, root: &str, merged: Option<&str>) -> Vec<Vec<String>> {
    let mut plan = vec![worktree_list(root), branch_exists(p, root)];
    if let Some(sha) = merged {
        plan.push(contains_argv(p, root, sha));
        plan.push(repository_argv(root));
        plan.push(identity_argv(root));
    }
    plan
}

/// `git worktree remove` (forced only on an abort teardown: nothing there is kept).
pub fn teardown_remove_argv(p: &Params, root: &str, force: bool) -> Vec<String> {
    if force {
        git(
            root,
            &["worktree", "remove", "--force", EOO, &p.worktree_path],
        )
    } else {
        git(root, &["worktree", "remove", EOO, &p.worktree_path])
    }
}

/// `git branch -d` after a merge (safe: reachable); `-D` on an abort teardown.
pub fn teardown_delete_argv(p: &Params, root: &str, force: bool) -> Vec<String> {
    git(
        root,
        &["branch", if force { "-D" } else { "-d" }, EOO, &p.branch],
    )
}

/// §resume-mechanics readings: the primary's state and where the worktree is.
pub fn resume_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    vec![
        git(root, &["status", "--porcelain"]),
        git(root, &["branch", "--show-current"]),
        worktree_list(root),
        branch_exists(p, root),
    ]
}

/// Re-attach: `git -C REPO_ROOT worktree add --end-of-options WORKTREE_PATH BRANCH`.
pub fn reattach_argv(p: &Params, root: &str) -> Vec<String> {
    git(root, &["worktree", "add", EOO, &p.worktree_path, &p.branch])
}

/// The tip reading that decides the phase: `git -C WORKTREE_PATH rev-list --count
/// --end-of-options TARGET..HEAD --`.
pub fn ahead_argv(p: &Params) -> Vec<String> {
    git(
        &p.worktree_path,
        &[
            "rev-list",
            "--count",
            EOO,
            &format!("{}..HEAD", target_ref(p)),
            "--",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRE: &str = "0123456789abcdef0123456789abcdef01234567";

    fn every_argv(p: &Params, root: &str) -> Vec<Vec<String>> {
        let mut all = vec![];
        for plan in [
            preflight_plan(p, root),
            create_verify_plan(p, root),
            create_cleanup_plan(p, root),
            phase1d_plan(p, root),
            refine_plan(p, root),
            premerge_plan(p, root, Some(PRE)),
            merge_before_plan(p, root),
            merge_after_plan(p, root, PRE),
            teardown_before_plan(p, root, Some(PRE)),
            resume_plan(p, root),
        ] {
            all.extend(plan);
        }
        all.extend([
            upstream_argv(p, root),
            divergence_argv(p, root, "refs/remotes/origin/trunk"),
            create_argv(p, root),
            merge_argv(root, PRE),
            teardown_remove_argv(p, root, true),
            teardown_remove_argv(p, root, false),
            teardown_delete_argv(p, root, true),
            teardown_delete_argv(p, root, false),
            reattach_argv(p, root),
            ahead_argv(p),
        ]);
        all
    }

    /// The target is read as the branch wherever it names a revision: bare, a tag
    /// or a `refs/TARGET` of the same name would be read instead. Only
    /// `TARGET@{upstream}` names it bare (git reads that as a branch name).
    #[test]
    fn the_target_is_read_as_its_branch_in_every_revision() {
        let p = Params::sample();
        let mut seen = 0;
        for argv in every_argv(&p, "/srv/repo") {
            for a in argv.iter().skip(3) {
                if !a.contains("trunk") || a == "trunk@{upstream}" {
                    continue;
                }
                seen += 1;
                let revisions = a.split("..").map(|r| r.trim_start_matches('.'));
                for r in revisions.filter(|r| r.contains("trunk")) {
                    assert!(
                        r == "refs/heads/trunk" || r == "refs/remotes/origin/trunk",
                        "`{a}` names the target otherwise in {argv:?}"
                    );
                }
            }
        }
        assert!(
            seen >= 7,
            "the ranges, the start point and the containment check"
        );
    }

    #[test]
    fn every_caller_value_follows_end_of_options_and_every_range_ends_the_revisions() {
        let p = Params::sample();
        let root = "/srv/repo";
        let caller = [
            p.branch.as_str(),
            p.target_branch.as_str(),
            p.worktree_path.as_str(),
            PRE,
        ];
        let mut operands = 0;
        for argv in every_argv(&p, root) {
            if argv[0] != "git" {
                // `test -e WORKTREE_PATH`, `stat … REPO_ROOT/.git …`: absolute
                // paths, never option-like.
                assert!(
                    argv == exists(&p.worktree_path) || argv == identity_argv(root),
                    "{argv:?}"
                );
                continue;
            }
            // `git -C DIR`: `-C` takes DIR (absolute) as its value.
            assert_eq!(argv[1], "-C", "{argv:?}");
            for (i, a) in argv.iter().enumerate().skip(3) {
                let derived = caller.iter().any(|c| a.contains(c));
                if !derived || argv[i - 1] == "-b" {
                    continue;
                }
                operands += 1;
                assert!(
                    argv[3..i].iter().any(|x| x == EOO),
                    "`{a}` is not after --end-of-options in {argv:?}"
                );
            }
            if argv.iter().any(|a| a.contains("..")) {
                assert_eq!(argv.last().map(String::as_str), Some("--"), "{argv:?}");
            }
            if argv[3] == "rev-parse" && argv.iter().any(|a| a == EOO) {
                // Without `--verify`, rev-parse echoes `--end-of-options` to stdout.
                assert!(argv.iter().any(|a| a == "--verify"), "{argv:?}");
            }
            if argv[3..5] == ["worktree", "list"] {
                assert!(argv.iter().any(|a| a == "-z"), "{argv:?}");
            }
        }
        assert!(operands >= 20, "the check saw {operands} operands");
    }

    #[test]
    fn the_changed_path_list_is_read_nul_separated() {
        let plan = phase1d_plan(&Params::sample(), "/srv/repo");
        let names = plan.last().expect("phase-1d ends with the changed paths");
        assert!(names.iter().any(|a| a == "--name-only"), "{names:?}");
        assert!(names.iter().any(|a| a == "-z"), "{names:?}");
    }
}
