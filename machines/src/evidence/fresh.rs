//! Review freshness, observed by cairn: is a reviewed commit still what `HEAD` is?
//!
//! Counting `rev-list REVIEWED..HEAD` alone calls an old checkout fresh (it is 0
//! when `HEAD` is *behind* the reviewed commit). Fresh means: the reviewed commit
//! is an ancestor of `HEAD` (`merge-base --is-ancestor`) and nothing landed since
//! (the count is 0). The saga's PR-ready gate and the PR loop's merge offer both
//! read these two runs; the audit re-reads them from the journal.

use serde::{Deserialize, Serialize};

use super::git::git;
use super::{AbsPath, CommandRun, FullCommit};

/// The two readings, in order: ancestry, then the count of commits since. The
/// reviewed commit is a full id by its type (a symbolic name could move).
pub fn plan(repo: &AbsPath, reviewed: &FullCommit) -> Vec<Vec<String>> {
    vec![
        git(
            repo,
            &[
                "merge-base",
                "--is-ancestor",
                "--end-of-options",
                reviewed,
                "HEAD",
            ],
        ),
        git(
            repo,
            &[
                "rev-list",
                "--count",
                "--end-of-options",
                &format!("{reviewed}..HEAD"),
            ],
        ),
    ]
}

/// What the readings show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "freshness", rename_all = "kebab-case")]
pub enum Freshness {
    /// The reviewed commit is `HEAD`'s ancestor and no commit landed since.
    Fresh,
    /// `commits` landed on top of the reviewed commit.
    Stale {
        /// How many.
        commits: u64,
    },
    /// The reviewed commit is not an ancestor of `HEAD` (behind, diverged or
    /// rewritten): never fresh.
    NotAncestor,
    /// The readings are missing, failed or unreadable: never fresh.
    Unknown {
        /// Why.
        reason: String,
    },
}

impl Freshness {
    /// True only for [`Freshness::Fresh`].
    pub fn is_fresh(&self) -> bool {
        matches!(self, Freshness::Fresh)
    }

    /// The commits since the review, where the readings show them.
    pub fn commits_since(&self) -> Option<u64> {
        match self {
            Freshness::Fresh => Some(0),
            Freshness::Stale { commits } => Some(*commits),
            Freshness::NotAncestor | Freshness::Unknown { .. } => None,
        }
    }
}

/// Reads `runs` (which must be exactly [`plan`]`(repo, reviewed)`) back.
pub fn read(repo: &AbsPath, reviewed: &FullCommit, runs: &[CommandRun]) -> Freshness {
    let unknown = |reason: &str| Freshness::Unknown {
        reason: reason.to_owned(),
    };
    let want = plan(repo, reviewed);
    if runs.len() != want.len() || runs.iter().zip(&want).any(|(r, w)| &r.argv != w) {
        return unknown("the recorded runs are not the planned freshness readings");
    }
    match runs[0].exit_status {
        Some(0) => {}
        Some(1) => return Freshness::NotAncestor,
        _ => return unknown("git merge-base --is-ancestor failed"),
    }
    if !runs[1].ok() {
        return unknown("git rev-list --count failed");
    }
    match runs[1].stdout.trim_end_matches('\n').parse::<u64>() {
        Ok(0) => Freshness::Fresh,
        Ok(commits) => Freshness::Stale { commits },
        Err(_) => unknown("git rev-list --count printed no count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn runs(repo: &AbsPath, sha: &FullCommit, anc: Option<i32>, count: &str) -> Vec<CommandRun> {
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
        plan(repo, sha)
            .into_iter()
            .zip([(anc, ""), (Some(0), count)])
            .map(|(argv, (exit_status, stdout))| CommandRun {
                argv,
                env: None,
                exit_status,
                stdout: stdout.to_owned(),
                stderr: String::new(),
                started_at: at.clone(),
                finished_at: at.clone(),
            })
            .collect()
    }

    #[test]
    fn behind_is_never_fresh() {
        let sha = FullCommit::parse(&"a".repeat(40)).expect("40 hex digits");
        let r = AbsPath::parse("/r").expect("absolute");
        let other = AbsPath::parse("/other").expect("absolute");
        assert_eq!(
            read(&r, &sha, &runs(&r, &sha, Some(0), "0\n")),
            Freshness::Fresh
        );
        assert_eq!(
            read(&r, &sha, &runs(&r, &sha, Some(0), "2\n")),
            Freshness::Stale { commits: 2 }
        );
        // HEAD behind the reviewed commit: rev-list counts 0, ancestry says no.
        assert_eq!(
            read(&r, &sha, &runs(&r, &sha, Some(1), "0\n")),
            Freshness::NotAncestor
        );
        assert!(!read(&r, &sha, &runs(&r, &sha, Some(128), "0\n")).is_fresh());
        assert!(!read(&r, &sha, &runs(&r, &sha, Some(0), "x\n")).is_fresh());
        assert!(!read(&r, &sha, &runs(&other, &sha, Some(0), "0\n")).is_fresh());
        assert!(!read(&r, &sha, &[]).is_fresh());
    }
}
