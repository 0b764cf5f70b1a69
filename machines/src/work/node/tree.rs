//! The trees the node's evidence names, as git reports them: each reading's exact
//! argv is planned here (the one git argv builder, caller values after
//! `--end-of-options` or `--`), cairn runs it through its one observer, and the
//! machine reads the recorded runs back — so `journal audit` re-derives every
//! verdict on a tree: the verified tree before and after the criteria, the merge's
//! provenance, a later session's tree containing the merge, and what a watch saw.

use serde::{Deserialize, Serialize};

use crate::evidence::git::{against_head, git, worktree_list};
use crate::evidence::CommandRun;

/// The tree a verification ran against, as git reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeReading {
    /// The absolute worktree path.
    pub worktree_path: String,
    /// The expected full commit.
    pub expected_commit: String,
    /// `git rev-parse --show-toplevel`.
    pub toplevel: CommandRun,
    /// `git rev-parse HEAD`.
    pub head: CommandRun,
    /// `git status --porcelain --untracked-files=all`, taken against HEAD
    /// itself ([`against_head`]: no mark or cached stat of the repository's
    /// index hides an edit; work-node rules 7).
    pub status: CommandRun,
    /// `git ls-files -v -z`, the index's marks, as work-node rules 6 read them
    /// beside a status on the repository's own index. Kept so those readings
    /// read back as recorded; never made since (rules 7) and never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<CommandRun>,
    /// The tree's top level and repository, read as `work dispatch` reads them
    /// ([`dispatch_plan`](super::dispatch_plan)): the repository must still be
    /// the one the dispatch read (absent in readings made before cairn took it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<CommandRun>,
    /// That repository's identity on disk, read for the common dir its dispatch
    /// read (`evidence::git::identity_argv`; absent before work-node rules 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<CommandRun>,
    /// `git branch --show-current` ([`branch_plan`]): the branch the tree has
    /// checked out (absent before work-node rules 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<CommandRun>,
}

/// The reading of the branch a tree has checked out: `git -C <tree> branch
/// --show-current` (empty when HEAD is detached).
pub fn branch_plan(worktree: &str) -> Vec<String> {
    git(worktree, &["branch", "--show-current"])
}

pub use crate::evidence::git::tree_plan;

impl TreeReading {
    /// `None` when the tree is the expected one at the expected commit and clean
    /// (read by exactly the planned argv); else what is wrong.
    pub fn problem(&self) -> Option<String> {
        let plan = tree_plan(&self.worktree_path);
        if [&self.toplevel, &self.head, &self.status]
            .iter()
            .zip(plan.iter())
            .any(|(r, argv)| &r.argv != argv)
        {
            return Some("the tree was not read by cairn's planned git argv".into());
        }
        match self.toplevel.first_line() {
            Some(t) if t == self.worktree_path => {}
            Some(t) => return Some(format!("the tree's top level is `{t}`, not the worktree")),
            None => return Some("the worktree is not a readable git tree".into()),
        }
        match self.head.first_line() {
            Some(h) if h == self.expected_commit => {}
            Some(h) => {
                return Some(format!(
                    "HEAD is {h}, not the expected {}",
                    self.expected_commit
                ))
            }
            None => return Some("HEAD could not be read".into()),
        }
        match (self.status.ok(), self.status.stdout.trim().is_empty()) {
            (true, true) if against_head(&self.status) => None,
            (true, true) => Some(
                "the tree's status was not taken against HEAD: the repository's index can hide an edit from it"
                    .into(),
            ),
            (true, false) => Some("the tree has uncommitted or untracked changes".into()),
            (false, _) => Some("the tree's status could not be read".into()),
        }
    }

    /// `None` when the tree's repository, as read, is `expected` (the git common
    /// dir `work dispatch` read); else what is wrong. Found by a hostile pass: a
    /// worker tree swapped after its dispatch for a worktree of another
    /// repository was verified there, and a park episode bound to that repository
    /// never saw the node.
    /// With `identity` (what dispatch read on disk), the repository must be those
    /// very directories too (work-node rules 10; helper-78: another clone's `.git`
    /// moved into the repository's place kept every path, and a node was recorded
    /// `verified`, `merged` and `done` on a commit its repository never held).
    pub fn repository_problem(&self, expected: &str, identity: Option<&str>) -> Option<String> {
        if let Some(p) = self.repository_path_problem(expected) {
            return Some(p);
        }
        let want = identity?;
        let seen = self
            .identity
            .as_ref()
            .and_then(|r| crate::evidence::git::identity_of(expected, r));
        (seen.as_deref() != Some(want)).then(|| {
            format!(
                "the tree's repository `{expected}` is not, on disk, the one its dispatch read (its git directory or refs were replaced)"
            )
        })
    }

    /// `None` when the tree has `expected` checked out, as [`branch_plan`]'s run
    /// shows it; else what is wrong.
    pub fn branch_problem(&self, expected: &str) -> Option<String> {
        let run = self
            .branch
            .as_ref()
            .filter(|r| r.argv == branch_plan(&self.worktree_path));
        match run.and_then(CommandRun::first_line) {
            Some(b) if b == expected => None,
            Some("") => Some(format!(
                "the merged tree's HEAD is detached: the merge landed on `{expected}`, and no branch is shown holding it here"
            )),
            Some(b) => Some(format!(
                "the merged tree has `{b}` checked out, not `{expected}`, the branch the merge landed on"
            )),
            None => Some("the merged tree's branch was not read".into()),
        }
    }

    /// The repository's path as read, against the one dispatch read.
    fn repository_path_problem(&self, expected: &str) -> Option<String> {
        let Some(run) = &self.repository else {
            return Some("the tree's repository was not read".into());
        };
        if run.argv != super::dispatch_plan(&self.worktree_path) {
            return Some("the tree's repository was not read by cairn's planned git argv".into());
        }
        let mut lines = run.stdout.lines();
        match (run.ok(), lines.next(), lines.next()) {
            (true, Some(_), Some(common)) if common == expected => None,
            (true, Some(_), Some(common)) => Some(format!(
                "the tree's repository is `{common}`, not `{expected}`, the one its dispatch read"
            )),
            _ => Some("the tree's repository could not be read".into()),
        }
    }
}

/// What cairn reads before recording a merge, in order: the merged tree's top
/// level, its HEAD, whether the merged commit contains the verified worker
/// commit (`merge-base --is-ancestor`: exit 0 yes, 1 no), its repository (as
/// `work dispatch` reads a tree's), its branch, and the repository's worktrees
/// (work-node rules 6: a detached checkout of the worker commit, a clone, or a
/// directory whose `.git` file points at another worktree's git dir is no merge).
pub fn merge_plan(merged_tree: &str, worker_commit: &str, commit: &str) -> [Vec<String>; 6] {
    [
        git(merged_tree, &["rev-parse", "--show-toplevel"]),
        git(merged_tree, &["rev-parse", "HEAD"]),
        contains_plan(merged_tree, worker_commit, commit),
        super::dispatch_plan(merged_tree),
        git(merged_tree, &["branch", "--show-current"]),
        worktree_list(merged_tree),
    ]
}

/// `git -C <tree> merge-base --is-ancestor --end-of-options <ancestor> <commit>`.
pub fn contains_plan(tree: &str, ancestor: &str, commit: &str) -> Vec<String> {
    git(
        tree,
        &[
            "merge-base",
            "--is-ancestor",
            "--end-of-options",
            ancestor,
            commit,
        ],
    )
}

/// Whether a recorded `contains_plan` run says `commit` contains `ancestor`:
/// `Ok(true)` yes, `Ok(false)` no, `Err` when it is not that run or git failed.
pub fn read_contains(
    run: &CommandRun,
    tree: &str,
    ancestor: &str,
    commit: &str,
) -> Result<bool, String> {
    if run.argv != contains_plan(tree, ancestor, commit) {
        return Err("the ancestry was not read by cairn's planned git argv".into());
    }
    match run.exit_status {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(format!(
            "git could not read the ancestry: {}",
            run.stderr.trim()
        )),
    }
}

/// Why a merge reading does not show `commit` as the merged tree's HEAD containing
/// the worker commit, on a branch, in the repository the node's dispatch read
/// (`dispatched_repository`, when it read one); `None` when it does. Each item is
/// (predicate, message).
pub fn merge_problem(
    reading: &[CommandRun],
    merged_tree: &str,
    (worker_commit, dispatched_repository): (&str, Option<&str>),
    commit: &str,
) -> Option<(&'static str, String)> {
    let plan = merge_plan(merged_tree, worker_commit, commit);
    let [toplevel, head, contains, repository, branch, worktrees] = reading else {
        return Some((
            "merge-reading",
            "cairn's six readings of the merged tree".into(),
        ));
    };
    // (The containment run's argv is `read_contains`'s to check.)
    if [
        (toplevel, &plan[0]),
        (head, &plan[1]),
        (repository, &plan[3]),
        (branch, &plan[4]),
        (worktrees, &plan[5]),
    ]
    .iter()
    .any(|(r, a)| &r.argv != *a)
    {
        return Some((
            "merge-reading",
            "the merged tree was not read by cairn's planned git argv".into(),
        ));
    }
    match toplevel.first_line() {
        Some(t) if t == merged_tree => {}
        _ => {
            return Some((
                "merged-tree",
                format!("`{merged_tree}` is not the top level of a git tree"),
            ))
        }
    }
    match head.first_line() {
        Some(h) if h == commit => {}
        Some(h) => {
            return Some((
                "merged-head",
                format!("the merged tree's HEAD is {h}, not {commit}: confirm the merge landed in the intended tree"),
            ))
        }
        None => return Some(("merged-head", "the merged tree's HEAD could not be read".into())),
    }
    match read_contains(contains, merged_tree, worker_commit, commit) {
        Ok(true) => {}
        Ok(false) => {
            return Some((
                "contains-worker-commit",
                format!("{commit} does not contain the verified worker commit {worker_commit}"),
            ))
        }
        Err(m) => return Some(("contains-worker-commit", m)),
    }
    // The merge landed in the dispatch's repository (a clone of the worker tree
    // holds its commit too), on a branch (a detached checkout of the worker
    // commit holds it trivially): found by a hostile pass, either led to `done`
    // with the target untouched.
    let common = repository
        .ok()
        .then(|| repository.stdout.lines().nth(1))
        .flatten();
    match (common, dispatched_repository) {
        (Some(c), Some(want)) if c == want => {}
        (Some(c), Some(want)) => {
            return Some((
                "merged-repository",
                format!("the merged tree's repository is `{c}`, not `{want}`, the one the node's dispatch read"),
            ))
        }
        (Some(_), None) => {}
        (None, _) => {
            return Some((
                "merged-repository",
                "the merged tree's repository could not be read".into(),
            ))
        }
    }
    // A tree git lists as one of the repository's worktrees, at its own path (a
    // directory with a `.git` file naming the worker's git dir reads as the
    // worker tree under another path: helper-73).
    let listed = worktrees.ok().then(|| {
        worktrees
            .stdout
            .split('\0')
            .any(|f| f.strip_prefix("worktree ") == Some(merged_tree))
    });
    match listed {
        Some(true) => {}
        Some(false) => {
            return Some((
                "merged-tree",
                format!("git does not list `{merged_tree}` among the repository's worktrees"),
            ))
        }
        None => {
            return Some((
                "merged-tree",
                "the repository's worktrees could not be read".into(),
            ))
        }
    }
    match branch.first_line() {
        Some(b) if !b.is_empty() => None,
        Some(_) => Some((
            "merged-branch",
            "the merged tree's HEAD is detached: a merge lands on a branch".into(),
        )),
        None => Some((
            "merged-branch",
            "the merged tree's branch could not be read".into(),
        )),
    }
}

pub use crate::evidence::watch::{ignore_plan, watched_changes};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::as_observed;
    use crate::Timestamp;

    fn ran(argv: &[String], stdout: &str) -> CommandRun {
        let at = Timestamp::parse("2026-12-05T09:00:00Z").expect("a fixed time parses");
        as_observed(CommandRun {
            argv: argv.to_vec(),
            env: None,
            exit_status: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
            started_at: at.clone(),
            finished_at: at,
        })
    }

    const TREE: &str = "/srv/lane";
    const COMMIT: &str = "1111111111111111111111111111111111111111";

    fn reading(status: &str) -> TreeReading {
        let [t, h, s] = tree_plan(TREE);
        TreeReading {
            worktree_path: TREE.into(),
            expected_commit: COMMIT.into(),
            toplevel: ran(&t, &format!("{TREE}\n")),
            head: ran(&h, &format!("{COMMIT}\n")),
            status: ran(&s, status),
            flags: None,
            repository: None,
            identity: None,
            branch: None,
        }
    }

    /// A silent status is a clean tree only when it was taken against HEAD
    /// (work-node rules 7): one on the repository's own index, where a
    /// skip-worktree mark hides an edit, is not.
    #[test]
    fn a_tree_is_clean_only_by_a_status_taken_against_head() {
        assert_eq!(reading("").problem(), None);
        assert_eq!(
            reading(" M src/lib.rs\n").problem().as_deref(),
            Some("the tree has uncommitted or untracked changes")
        );
        let mut own_index = reading("");
        own_index.status.env = Some(Default::default());
        assert!(own_index
            .problem()
            .is_some_and(|p| p.contains("not taken against HEAD")));
        let mut unrecorded = reading("");
        unrecorded.status.env = None;
        assert!(unrecorded.problem().is_some());
        let mut failed = reading("");
        failed.status.exit_status = Some(128);
        assert_eq!(
            failed.problem().as_deref(),
            Some("the tree's status could not be read")
        );
    }
}
