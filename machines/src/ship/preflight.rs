//! §preflight-classifier: a read-only debris check that emits exactly one outcome,
//! first match wins, so a `git worktree add` known to collide is never attempted.
//!
//! The facts come from bound git readings (taken by the caller, recorded as
//! evidence); this module only classifies them. A fact git could not report is
//! `stopped:unreadable:<fact>` — never a later, more permissive outcome.

use serde::{Deserialize, Serialize};

/// What the bound git readings said. `None` is "could not be read".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// `REPO_ROOT` as captured at preflight (absolute).
    pub repo_root: String,
    /// The consumer's `EXPECTED_REPO_BASENAME`.
    pub expected_basename: String,
    /// `git -C REPO_ROOT rev-parse --show-toplevel`.
    pub toplevel: Option<String>,
    /// `git -C REPO_ROOT status --porcelain` printed nothing.
    pub primary_clean: Option<bool>,
    /// `git -C REPO_ROOT branch --show-current`.
    pub current_branch: Option<String>,
    /// `TARGET_BRANCH`.
    pub target_branch: String,
    /// `BRANCH`.
    pub branch: String,
    /// `WORKTREE_PATH` (absolute).
    pub worktree_path: String,
    /// `git show-ref --verify --quiet refs/heads/BRANCH` succeeded.
    pub branch_exists: Option<bool>,
    /// `git worktree list --porcelain` has a line `branch refs/heads/BRANCH`.
    pub worktree_on_branch: Option<bool>,
    /// `WORKTREE_PATH` exists.
    pub path_exists: Option<bool>,
    /// `git -C REPO_ROOT rev-parse --path-format=absolute --git-dir
    /// --git-common-dir` printed `REPO_ROOT/.git` twice: REPO_ROOT's checkout is
    /// the primary one of the repository kept there (not a `.git` link, a gitfile
    /// or a `commondir` file naming another).
    pub own_git_dir: Option<bool>,
}

/// The classifier's outcomes, in the seed's order (plus `wrong-repo` from
/// §repo-anchor and `unreadable` for a fact git could not report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "subject", rename_all = "kebab-case")]
pub enum Preflight {
    /// `stopped:wrong-repo:<root>`: the anchor is not the expected repository.
    WrongRepo(String),
    /// `stopped:repo-anchor-drift`.
    RepoAnchorDrift,
    /// `stopped:primary-dirty`.
    PrimaryDirty,
    /// `stopped:primary-off-branch`.
    PrimaryOffBranch,
    /// `stopped:worktree-live:<branch>`: a live (possibly concurrent) ship. Never strip it.
    WorktreeLive(String),
    /// `reclaimable:dead-lock:<branch>`: branch and path, no linked worktree.
    DeadLock(String),
    /// `reclaimable:branch-only:<branch>`: a `--resume` re-attach candidate, or a stale branch.
    BranchOnly(String),
    /// `reclaimable:path-only:<path>`: stale directory debris.
    PathOnly(String),
    /// `stopped:unreadable:<fact>`: git could not report a fact the classification needs.
    Unreadable(String),
    /// `stopped:not-shipped:review-status-<fail|unknown>`: §preflight-shared gate 3,
    /// the review tool's status (an observation in the input), did not pass.
    ReviewStatus(crate::Outcome),
    /// `clean`: the only outcome that may proceed to `git worktree add`.
    Clean,
}

impl Preflight {
    /// The outcome code as the seed prints it.
    pub fn code(&self) -> String {
        match self {
            Preflight::WrongRepo(root) => format!("stopped:wrong-repo:{root}"),
            Preflight::RepoAnchorDrift => "stopped:repo-anchor-drift".into(),
            Preflight::PrimaryDirty => "stopped:primary-dirty".into(),
            Preflight::PrimaryOffBranch => "stopped:primary-off-branch".into(),
            Preflight::WorktreeLive(b) => format!("stopped:worktree-live:{b}"),
            Preflight::DeadLock(b) => format!("reclaimable:dead-lock:{b}"),
            Preflight::BranchOnly(b) => format!("reclaimable:branch-only:{b}"),
            Preflight::PathOnly(p) => format!("reclaimable:path-only:{p}"),
            Preflight::Unreadable(what) => format!("stopped:unreadable:{what}"),
            Preflight::ReviewStatus(o) => format!(
                "stopped:not-shipped:review-status-{}",
                match o {
                    crate::Outcome::Fail => "fail",
                    _ => "unknown",
                }
            ),
            Preflight::Clean => "clean".into(),
        }
    }

    /// The seed's disposition for the outcome.
    pub fn action(&self) -> &'static str {
        match self {
            Preflight::Clean => "proceed to worktree creation",
            Preflight::WrongRepo(_) | Preflight::RepoAnchorDrift | Preflight::Unreadable(_) => {
                "halt: the anchor cannot be trusted; surface it, never cd"
            }
            Preflight::PrimaryDirty => "halt: the primary checkout must be clean",
            Preflight::ReviewStatus(_) => {
                "halt: the review tool's status must exit 0 before any side effect"
            }
            Preflight::PrimaryOffBranch => {
                "halt: the primary checkout must be on the target branch"
            }
            Preflight::WorktreeLive(_) => {
                "halt: surface the owner; never strip a live lock; not --resume"
            }
            Preflight::DeadLock(_) => {
                "ask: reclaim (prune and remove the path, delete the branch) / skip / abort"
            }
            Preflight::BranchOnly(_) => {
                "on a known --resume re-attach the worktree; else offer cleanup or ask"
            }
            Preflight::PathOnly(_) => "offer cleanup: git worktree prune, then remove the path",
        }
    }

    /// True only for `clean`.
    pub fn may_create_worktree(&self) -> bool {
        matches!(self, Preflight::Clean)
    }
}

impl Preflight {
    /// §preflight-shared gate 3 between the primary gates and the debris checks:
    /// a pass of every earlier gate with a review status that did not pass stops.
    pub fn with_review_status(self, review: crate::Outcome) -> Preflight {
        match self {
            Preflight::WrongRepo(_)
            | Preflight::RepoAnchorDrift
            | Preflight::PrimaryDirty
            | Preflight::PrimaryOffBranch
            | Preflight::Unreadable(_) => self,
            _ if review != crate::Outcome::Pass => Preflight::ReviewStatus(review),
            _ => self,
        }
    }

    /// Whether this outcome is a hard stop (`stopped:*`) rather than reclaimable debris.
    pub fn is_stop(&self) -> bool {
        self.code().starts_with("stopped:")
    }
}

/// Classifies; first match wins.
pub fn classify(f: &Facts) -> Preflight {
    let basename = f.repo_root.rsplit('/').next().unwrap_or("");
    if basename != f.expected_basename {
        return Preflight::WrongRepo(f.repo_root.clone());
    }
    match &f.toplevel {
        None => return Preflight::Unreadable("toplevel".into()),
        Some(t) if *t != f.repo_root => return Preflight::RepoAnchorDrift,
        Some(_) => {}
    }
    // The merge lands in REPO_ROOT's own repository only (ship rules 14–16):
    // a run whose primary keeps its git data elsewhere stops here, at open,
    // not at create or the merge (helper-78 F5: a `.git` link was opened).
    match f.own_git_dir {
        None => return Preflight::Unreadable("repository".into()),
        Some(false) => return Preflight::WrongRepo(f.repo_root.clone()),
        Some(true) => {}
    }
    match f.primary_clean {
        None => return Preflight::Unreadable("status".into()),
        Some(false) => return Preflight::PrimaryDirty,
        Some(true) => {}
    }
    match &f.current_branch {
        None => return Preflight::Unreadable("current-branch".into()),
        Some(b) if *b != f.target_branch || f.target_branch.is_empty() => {
            return Preflight::PrimaryOffBranch
        }
        Some(_) => {}
    }
    let (Some(branch), Some(worktree), Some(path)) =
        (f.branch_exists, f.worktree_on_branch, f.path_exists)
    else {
        let what = if f.branch_exists.is_none() {
            "branch"
        } else if f.worktree_on_branch.is_none() {
            "worktree-list"
        } else {
            "worktree-path"
        };
        return Preflight::Unreadable(what.into());
    };
    match (worktree, branch, path) {
        (true, _, _) => Preflight::WorktreeLive(f.branch.clone()),
        (false, true, true) => Preflight::DeadLock(f.branch.clone()),
        (false, true, false) => Preflight::BranchOnly(f.branch.clone()),
        (false, false, true) => Preflight::PathOnly(f.worktree_path.clone()),
        (false, false, false) => Preflight::Clean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            repo_root: "/srv/consumer-repo".into(),
            expected_basename: "consumer-repo".into(),
            toplevel: Some("/srv/consumer-repo".into()),
            primary_clean: Some(true),
            current_branch: Some("main".into()),
            target_branch: "main".into(),
            branch: "worktree-abc".into(),
            worktree_path: "/srv/consumer-repo/.claude/worktrees/abc".into(),
            branch_exists: Some(false),
            worktree_on_branch: Some(false),
            path_exists: Some(false),
            own_git_dir: Some(true),
        }
    }

    #[test]
    fn first_match_wins_and_unknown_never_passes() {
        assert_eq!(classify(&facts()), Preflight::Clean);
        // A dirty primary on another branch with debris: the earliest check decides.
        let mut f = facts();
        f.primary_clean = Some(false);
        f.current_branch = Some("other".into());
        f.branch_exists = Some(true);
        assert_eq!(classify(&f), Preflight::PrimaryDirty);
        // Every fact unknown in turn: never clean.
        for k in 0..7 {
            let mut f = facts();
            match k {
                0 => f.toplevel = None,
                6 => f.own_git_dir = None,
                1 => f.primary_clean = None,
                2 => f.current_branch = None,
                3 => f.branch_exists = None,
                4 => f.worktree_on_branch = None,
                _ => f.path_exists = None,
            }
            let o = classify(&f);
            assert!(
                matches!(o, Preflight::Unreadable(_)) && !o.may_create_worktree(),
                "{k}: {o:?}"
            );
        }
        let mut f = facts();
        f.target_branch = String::new();
        f.current_branch = Some(String::new());
        assert_eq!(
            classify(&f),
            Preflight::PrimaryOffBranch,
            "an empty target branch never passes"
        );
        // Git data kept elsewhere stops before the primary's state is read.
        let mut f = facts();
        f.own_git_dir = Some(false);
        f.primary_clean = Some(false);
        assert_eq!(
            classify(&f),
            Preflight::WrongRepo("/srv/consumer-repo".into())
        );
    }
}
