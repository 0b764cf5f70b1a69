//! What cairn runs for the pr-loop, planned here (argv only; the facade's one
//! observer runs it) and read back from the recorded runs, so `journal audit`
//! re-derives each fact: the `gh pr view` reading, and git's answer to "does the
//! target branch contain the merged head?".

use serde_json::Value;

use crate::evidence::git::git;
use crate::evidence::ids::checked_string;
use crate::evidence::wire::{self, InputError, Result};
use crate::evidence::{CommandRun, FullCommit, RefName};

/// The fields cairn reads: the seed's seven, and the head the PR points at.
pub const GH_FIELDS: &str =
    "state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt,headRefOid,baseRefName";

/// `gh pr view <canonical URL> --json …`.
pub fn gh_view(pr: &str) -> Vec<String> {
    ["gh", "pr", "view", pr, "--json", GH_FIELDS]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// The reading a recorded `gh pr view` run printed: the run must be exactly
/// [`gh_view`]`(pr)` and have exited 0. Errors name `field`.
pub fn read_gh(pr: &str, run: &CommandRun, field: &str) -> Result<Value> {
    if run.argv != gh_view(pr) {
        return Err(InputError::new(
            field,
            "gh-reading",
            "the recorded run is not cairn's `gh pr view` of this PR",
        ));
    }
    if !run.ok() {
        return Err(InputError::new(
            field,
            "gh-reading",
            format!("`gh pr view` failed: {}", run.stderr.trim()),
        ));
    }
    wire::parse_document(&run.stdout).map_err(|e| InputError {
        field: format!("{field}.stdout"),
        ..e
    })
}

checked_string!(
    /// A branch a merge lands on, as the caller may name it: not an option, not
    /// `HEAD`, not a commit id or revision expression (which could name the head
    /// itself).
    TargetBranch,
    is_target_name,
    "target-branch",
    "a branch name a merge lands on"
);

fn is_target_name(s: &str) -> bool {
    !s.is_empty()
        && RefName::parse(s).is_ok()
        && FullCommit::parse(s).is_err()
        && !matches!(s, "HEAD" | "@" | "FETCH_HEAD" | "ORIG_HEAD" | "MERGE_HEAD")
        && !s.contains("..")
        && !s.contains("@{")
        && !s.ends_with('/')
        && !s.ends_with(".lock")
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
}

/// `git -C <repo> merge-base --is-ancestor --end-of-options <head>
/// refs/heads/<target>`: the branch by its full ref (found by a hostile pass: a
/// tag named `main` at the head made a bare `main` ambiguous, and git read the
/// tag).
pub fn merge_plan(repo: &str, head: &str, target: &str) -> Vec<String> {
    git(
        repo,
        &[
            "merge-base",
            "--is-ancestor",
            "--end-of-options",
            head,
            &format!("refs/heads/{target}"),
        ],
    )
}

/// What the recorded merge run shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contains {
    /// Exit 0: the target contains the head.
    Yes,
    /// Exit 1: it does not.
    No,
    /// Anything else (an unknown ref, git failing): nothing is shown.
    Unreadable,
}

/// Reads a recorded merge run back; `None` when it is not exactly [`merge_plan`].
pub fn read_merge(repo: &str, head: &str, target: &str, run: &CommandRun) -> Option<Contains> {
    if run.argv != merge_plan(repo, head, target) {
        return None;
    }
    Some(match run.exit_status {
        Some(0) => Contains::Yes,
        Some(1) => Contains::No,
        _ => Contains::Unreadable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_branch_names_only() {
        for ok in ["main", "origin/main", "release/1.2", "feature-x"] {
            assert!(is_target_name(ok), "{ok}");
        }
        for bad in [
            "",
            "--all",
            "-x",
            "HEAD",
            "@",
            "main~1",
            "main^",
            "a..b",
            "main@{1}",
            "x y",
            "refs/",
            &"a".repeat(40),
        ] {
            assert!(!is_target_name(bad), "{bad}");
        }
    }
}
