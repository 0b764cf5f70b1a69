//! The gates read back from the recorded runs: each looks its run up by the exact
//! planned argv, and a missing, failed or unreadable run is `unknown`.

use super::super::preflight::Facts;
use super::super::Params;
use super::plans::{
    anchor_argv, changed_paths_argv, contains_argv, create_before_plan, create_failed_plan,
    create_verify_plan, divergence_argv, head_argv, identity_argv, isolation_plan,
    merge_after_plan, merge_before_plan, preflight_plan, premerge_plan, repository_argv,
    resume_plan, teardown_before_plan, upstream_argv,
};
use super::{Gate, Runs, Squash};
use crate::evidence::git::clean;
use crate::evidence::{CommandRun, FullCommit};
use crate::Outcome;

/// Whether a recorded anchor run shows `REPO_ROOT` still is the top level.
pub fn anchor_gate(run: &CommandRun, root: &str) -> Gate {
    if run.argv != anchor_argv(root) {
        return Gate::new(
            "repo-anchor",
            Outcome::Unknown,
            "the anchor run is not the bound argv",
        );
    }
    Gate::eq(
        "repo-anchor",
        Runs(std::slice::from_ref(run)).line(&run.argv),
        root,
    )
}

/// The fields of git's `-z` output: split on NUL, empty fields (a record's end)
/// dropped. A path is one field whatever bytes it holds (`docs/café.md`, a newline).
pub(super) fn nul_fields(s: &str) -> impl Iterator<Item = &str> {
    s.split('\0').filter(|f| !f.is_empty())
}

/// Whether `git worktree list --porcelain -z` has a worktree on `refs/heads/BRANCH`
/// (a field, so no worktree path can forge the line).
pub(super) fn lists_branch(list: Option<&str>, branch: &str) -> Option<bool> {
    let line = format!("branch refs/heads/{branch}");
    list.map(|l| nul_fields(l).any(|x| x == line))
}

/// The classifier's facts, read back from the preflight runs.
pub fn preflight_facts(p: &Params, root: &str, runs: &[CommandRun]) -> Facts {
    let r = Runs(runs);
    let plan = preflight_plan(p, root);
    Facts {
        repo_root: root.to_owned(),
        expected_basename: p.expected_basename.clone(),
        toplevel: r.line(&plan[0]),
        primary_clean: clean(r.get(&plan[1])),
        current_branch: r.line(&plan[2]),
        target_branch: p.target_branch.clone(),
        branch: p.branch.clone(),
        worktree_path: p.worktree_path.clone(),
        branch_exists: r.yes_no(&plan[3]),
        worktree_on_branch: lists_branch(r.ok(&plan[4]), &p.branch),
        path_exists: r.yes_no(&plan[5]),
        own_git_dir: own_git_dir(root, runs),
    }
}

/// The non-fatal note: `local TARGET a ahead / b behind UP (local is truth; no fetch)`,
/// only when both counts were read and are not `0 0` (the seed's `$# -eq 2` guard).
pub fn divergence_note(p: &Params, root: &str, runs: &[CommandRun]) -> Option<String> {
    let r = Runs(runs);
    let up = r.line(&upstream_argv(p, root)).filter(|u| !u.is_empty())?;
    let counts = r.line(&divergence_argv(p, root, &up))?;
    let n: Vec<u64> = counts
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    match n[..] {
        [0, 0] => None,
        [a, b] => Some(format!(
            "note: local {} {a} ahead / {b} behind {} (local is truth; no fetch)",
            p.target_branch,
            up.strip_prefix("refs/remotes/").unwrap_or(&up)
        )),
        _ => None,
    }
}

/// Whether a failed `git worktree add -b` made the branch itself: absent right
/// before it (`before`, the runs of `create_before_plan`), present after it and
/// held by no worktree (`after`, the runs of `create_failed_plan`). Only then is
/// the branch this run's to remove.
pub fn add_made_branch(
    p: &Params,
    root: &str,
    before: &[CommandRun],
    after: &[CommandRun],
) -> bool {
    let was = Runs(before).yes_no(&create_before_plan(p, root)[0]);
    let plan = create_failed_plan(p, root);
    let (r, listed) = (
        Runs(after),
        lists_branch(Runs(after).ok(&plan[1]), &p.branch),
    );
    was == Some(false) && r.yes_no(&plan[0]) == Some(true) && listed == Some(false)
}

/// The verifications as gates; `opened` is the identity open read (`Run::repository`).
pub fn create_gates(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    opened: Option<&str>,
) -> Vec<Gate> {
    let r = Runs(runs);
    let plan = create_verify_plan(p, root);
    let wt_head = r.line(&plan[3]);
    let target = r.line(&plan[4]);
    vec![
        Gate::holds(
            "worktree-listed",
            lists_branch(r.ok(&plan[0]), &p.branch),
            "a linked worktree holds the branch",
            "no linked worktree holds the branch",
        ),
        Gate::eq("anchor-is-primary", r.line(&plan[1]), ".git"),
        // The worktree is made in the repository the run was opened in (ship rules
        // 16; helper-78: with a `commondir` file naming a bare clone, it was made
        // in the clone and every phase passed there until the merge).
        Gate::holds(
            "primary-repository",
            primary_repository(root, runs, opened),
            "REPO_ROOT's git data is the repository the run was opened in",
            "REPO_ROOT's git data is not the repository the run was opened in",
        ),
        Gate::holds(
            "primary-clean",
            clean(r.get(&plan[2])),
            "the primary checkout is clean",
            "the primary checkout has changes",
        ),
        match (wt_head, target) {
            (Some(h), Some(t)) => Gate::eq("worktree-at-target", Some(h), &t),
            _ => Gate::new("worktree-at-target", Outcome::Unknown, "a reading failed"),
        },
    ]
}

pub(super) fn isolation_gates(p: &Params, root: &str, r: Runs<'_>) -> Vec<Gate> {
    let plan = isolation_plan(p, root);
    let same_repo = match (r.line(&plan[0]), r.line(&plan[1])) {
        (Some(a), Some(b)) => Some(a == b),
        _ => None,
    };
    let linked = match (r.line(&plan[2]), r.line(&plan[3])) {
        (Some(a), Some(b)) => Some(a != b),
        _ => None,
    };
    vec![
        Gate::holds(
            "isolation-same-repo",
            same_repo,
            "the worktree and REPO_ROOT share one (normalised) common dir",
            "the worktree belongs to another repository",
        ),
        Gate::holds(
            "isolation-linked",
            linked,
            "the worktree is linked, not the primary",
            "the worktree's git dir is the common dir: this is a primary checkout",
        ),
        Gate::eq("primary-on-target", r.line(&plan[4]), &p.target_branch),
        Gate::eq("worktree-on-branch", r.line(&plan[5]), &p.branch),
        Gate::holds(
            "primary-clean",
            clean(r.get(&plan[6])),
            "the primary checkout is clean",
            "the primary checkout has changes: a leaf wrote outside its worktree",
        ),
        Gate::holds(
            "worktree-listed",
            lists_branch(r.ok(&plan[7]), &p.branch),
            "a linked worktree holds the branch",
            "no linked worktree holds the branch",
        ),
    ]
}

/// `head` (short or full) names the commit the worktree's HEAD is at.
pub(super) fn head_gate(name: &str, r: Runs<'_>, p: &Params, reported: &str) -> Gate {
    match r.line(&head_argv(&p.worktree_path)) {
        None => Gate::new(name, Outcome::Unknown, "HEAD could not be read"),
        Some(h) if reported.len() >= 7 && h.starts_with(reported) => {
            Gate::new(name, Outcome::Pass, format!("HEAD is {h}"))
        }
        Some(h) => Gate::new(
            name,
            Outcome::Fail,
            format!("HEAD is {h}; the report says `{reported}`"),
        ),
    }
}

/// Phase-2 gates.
pub fn refine_gates(p: &Params, root: &str, runs: &[CommandRun], tip: &str) -> Vec<Gate> {
    let r = Runs(runs);
    let mut g = isolation_gates(p, root, r);
    g.push(head_gate("tip-matches-report", r, p, tip));
    g
}

/// The tip the pre-merge checks read (`git -C WORKTREE_PATH rev-parse HEAD`), when
/// it is a full commit id: the one commit `merge` may merge.
pub fn premerge_tip(p: &Params, runs: &[CommandRun]) -> Option<FullCommit> {
    Runs(runs)
        .line(&head_argv(&p.worktree_path))
        .and_then(|h| FullCommit::parse(&h).ok())
}

/// Phase-3 pre-merge gates: isolation, the tip read, the worktree clean, every
/// changed path inside the accepted scope, and the squash post-checks.
pub fn premerge_gates(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    (squash, pre_squash): (Squash, Option<&str>),
    in_scope: &[String],
) -> Vec<Gate> {
    let r = Runs(runs);
    let plan = premerge_plan(p, root, pre_squash);
    let mut g = isolation_gates(p, root, r);
    g.push(match premerge_tip(p, runs) {
        Some(t) => Gate::new("tip-read", Outcome::Pass, format!("the tip is {t}")),
        None => Gate::new("tip-read", Outcome::Unknown, "HEAD could not be read"),
    });
    g.push(Gate::holds(
        "worktree-clean",
        clean(r.get(&plan[9])),
        "the worktree has no uncommitted state",
        "the worktree has uncommitted state",
    ));
    g.push(in_scope_gate(r.ok(&changed_paths_argv(p)), in_scope).1);
    match (squash, pre_squash) {
        (Squash::Squashed, Some(_)) => g.push(Gate::holds(
            "squash-diff-empty",
            r.ok(&plan[11]).map(|s| s.is_empty()),
            "git diff PRE_SQUASH..HEAD is empty",
            "the squash changed the tree: git diff PRE_SQUASH..HEAD is not empty",
        )),
        (Squash::FellBack, Some(pre)) => {
            g.push(Gate::eq(
                "fell-back-to-pre-squash",
                r.line(&head_argv(&p.worktree_path)),
                pre,
            ));
        }
        _ => {}
    }
    g
}

/// `in-scope-paths`: every path of a `diff --name-only -z` output is in `in_scope`;
/// with the paths that are not (`None` when the output could not be read).
pub(super) fn in_scope_gate(
    names: Option<&str>,
    in_scope: &[String],
) -> (Option<Vec<String>>, Gate) {
    let out: Option<Vec<String>> = names.map(|s| {
        nul_fields(s)
            .filter(|x| !in_scope.iter().any(|i| i == x))
            .map(str::to_owned)
            .collect()
    });
    let gate = match &out {
        None => Gate::new(
            "in-scope-paths",
            Outcome::Unknown,
            "--name-only was unreadable",
        ),
        Some(o) if o.is_empty() => Gate::new(
            "in-scope-paths",
            Outcome::Pass,
            "every changed path is in in_scope_paths",
        ),
        Some(o) => Gate::new(
            "in-scope-paths",
            Outcome::Fail,
            format!("out of scope: {}", o.join(", ")),
        ),
    };
    (out, gate)
}

/// What the teardown readings said was there: (worktree listed, branch exists).
pub fn teardown_present(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
) -> (Option<bool>, Option<bool>) {
    let r = Runs(runs);
    let plan = teardown_before_plan(p, root, None);
    (lists_branch(r.ok(&plan[0]), &p.branch), r.yes_no(&plan[1]))
}

/// The primary right before a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeBefore {
    /// `branch --show-current` (empty when detached).
    pub current: Option<String>,
    /// `status --porcelain` printed nothing.
    pub clean: Option<bool>,
    /// The branch's tip now.
    pub tip: Option<String>,
    /// REPO_ROOT is still the primary checkout of its own repository
    /// ([`primary_repository`]).
    pub repository: Option<bool>,
}

impl MergeBefore {
    /// Whether these readings let the merge of `tip` run: the primary still its
    /// own repository's, on `target`, clean, the branch still at `tip` (the
    /// decision names which one failed; the CLI runs nothing unless all hold).
    pub fn admits(&self, target: &str, tip: &str) -> bool {
        self.repository == Some(true)
            && self.current.as_deref() == Some(target)
            && self.clean == Some(true)
            && self.tip.as_deref() == Some(tip)
    }
}

/// After a merge, whether the teardown's readings show TARGET_BRANCH of the run's
/// own repository still holding `merged` (else nothing is removed: `merge-lost`).
pub fn merge_held(
    p: &Params,
    root: &str,
    before: &[CommandRun],
    merged: &str,
    opened: Option<&str>,
) -> bool {
    primary_repository(root, before, opened) == Some(true)
        && Runs(before).yes_no(&contains_argv(p, root, merged)) == Some(true)
}

/// Whether REPO_ROOT's checkout is the primary one of the repository the run was
/// opened in: its git dir and common dir are both `REPO_ROOT/.git` (the run of
/// [`repository_argv`]; create's `anchor-is-primary` held the git dir to `.git`
/// already), and those directories are the ones open found there
/// ([`identity_argv`], against `opened`: `Run::repository`). `None` when either
/// could not be read, or open read no identity.
pub fn primary_repository(root: &str, runs: &[CommandRun], opened: Option<&str>) -> Option<bool> {
    if !own_git_dir(root, runs)? {
        return Some(false);
    }
    let now = identity(root, runs)?;
    opened.map(|o| o == now)
}

/// Whether the run of [`repository_argv`] shows REPO_ROOT's git dir and common dir
/// both `REPO_ROOT/.git`: its checkout is the primary one of the repository kept
/// there, not one a gitfile, a `commondir` file or a `.git` link points to
/// elsewhere. `None` when it was not read.
pub fn own_git_dir(root: &str, runs: &[CommandRun]) -> Option<bool> {
    let out = Runs(runs).ok(&repository_argv(root))?;
    let own = format!("{root}/.git");
    let lines: Vec<&str> = out.lines().collect();
    Some(lines == [own.as_str(), own.as_str()])
}

/// The repository's identity as [`identity_argv`] read it (its output, trimmed),
/// when it was read.
pub fn identity(root: &str, runs: &[CommandRun]) -> Option<String> {
    Runs(runs)
        .ok(&identity_argv(root))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Reads [`MergeBefore`] from the runs of [`merge_before_plan`].
pub fn merge_before(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    opened: Option<&str>,
) -> MergeBefore {
    let r = Runs(runs);
    let plan = merge_before_plan(p, root);
    MergeBefore {
        current: r.ok(&plan[0]).map(|s| s.trim_end().to_owned()),
        clean: clean(r.get(&plan[1])),
        tip: r.line(&plan[2]),
        repository: primary_repository(root, runs, opened),
    }
}

/// The primary right after a merge of `tip`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeAfter {
    /// `branch --show-current`.
    pub current: Option<String>,
    /// TARGET_BRANCH holds `tip` (`merge-base --is-ancestor`).
    pub holds: Option<bool>,
    /// REPO_ROOT is still the primary checkout of its own repository.
    pub repository: Option<bool>,
}

/// Reads [`MergeAfter`] from the runs of [`merge_after_plan`].
pub fn merge_after(
    p: &Params,
    root: &str,
    tip: &str,
    runs: &[CommandRun],
    opened: Option<&str>,
) -> MergeAfter {
    let r = Runs(runs);
    let plan = merge_after_plan(p, root, tip);
    MergeAfter {
        current: r.ok(&plan[0]).map(|s| s.trim_end().to_owned()),
        holds: r.yes_no(&contains_argv(p, root, tip)),
        repository: primary_repository(root, runs, opened),
    }
}

/// Where resume found things: (primary clean, primary branch, worktree listed, branch exists).
pub fn resume_facts(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
) -> (Option<bool>, Option<String>, Option<bool>, Option<bool>) {
    let r = Runs(runs);
    let plan = resume_plan(p, root);
    (
        clean(r.get(&plan[0])),
        r.line(&plan[1]),
        lists_branch(r.ok(&plan[2]), &p.branch),
        r.yes_no(&plan[3]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_path_cannot_forge_the_branch_line() {
        let forged = "worktree /srv/repo\nbranch refs/heads/wt-branch\0HEAD 1111111111111111111111111111111111111111\0branch refs/heads/trunk\0\0";
        assert_eq!(lists_branch(Some(forged), "wt-branch"), Some(false));
        assert_eq!(lists_branch(Some(forged), "trunk"), Some(true));
        assert_eq!(lists_branch(None, "trunk"), None);
        assert_eq!(
            nul_fields("docs/café.md\0odd\nname.txt\0").collect::<Vec<_>>(),
            ["docs/café.md", "odd\nname.txt"]
        );
    }
}
