//! The seed's git gates as data: for each step, the exact argv cairn must run
//! (always `git -C <absolute dir>`, never the caller's cwd), and pure functions
//! that read the recorded runs back into typed gate outcomes.
//!
//! A machine cannot run git, so the CLI runs each planned argv and hands the
//! [`CommandRun`]s to `decide`, which finds every run by its exact argv. A run that
//! is missing, failed, or printed something unreadable is `unknown`, and `unknown`
//! never opens a gate. Because the outcome is derived from the recorded runs (not
//! stated by the caller), the audit re-derives it from the journal.

use serde::{Deserialize, Serialize};

use super::preflight::Facts;
use super::Params;
use crate::evidence::CommandRun;
use crate::Outcome;

pub use crate::evidence::git::{exists, git};

/// One gate's typed result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// The gate's stable name.
    pub name: String,
    /// pass | fail | unknown.
    pub outcome: Outcome,
    /// What was seen.
    pub detail: String,
}

impl Gate {
    fn new(name: &str, outcome: Outcome, detail: impl Into<String>) -> Self {
        Gate {
            name: name.to_owned(),
            outcome,
            detail: detail.into(),
        }
    }
    fn eq(name: &str, seen: Option<String>, want: &str) -> Self {
        match seen {
            None => Gate::new(name, Outcome::Unknown, "the reading failed"),
            Some(s) if s == want => Gate::new(name, Outcome::Pass, format!("`{s}`")),
            Some(s) => Gate::new(name, Outcome::Fail, format!("`{s}`, expected `{want}`")),
        }
    }
    fn holds(name: &str, seen: Option<bool>, pass: &str, fail: &str) -> Self {
        match seen {
            None => Gate::new(name, Outcome::Unknown, "the reading failed"),
            Some(true) => Gate::new(name, Outcome::Pass, pass),
            Some(false) => Gate::new(name, Outcome::Fail, fail),
        }
    }
}

/// The recorded runs of one step, looked up by exact argv.
#[derive(Clone, Copy)]
pub struct Runs<'a>(pub &'a [CommandRun]);

impl<'a> Runs<'a> {
    /// The (last) run of exactly `argv`.
    pub fn get(&self, argv: &[String]) -> Option<&'a CommandRun> {
        self.0.iter().rev().find(|r| r.argv == argv)
    }
    /// Its stdout when it exited 0.
    pub fn ok(&self, argv: &[String]) -> Option<&'a str> {
        self.get(argv)
            .filter(|r| r.exit_status == Some(0))
            .map(|r| r.stdout.as_str())
    }
    /// Its first line when it exited 0.
    pub fn line(&self, argv: &[String]) -> Option<String> {
        self.ok(argv)
            .map(|s| s.lines().next().unwrap_or("").trim_end().to_owned())
    }
    /// Exit 0 → true, exit 1 → false, anything else → unknown.
    pub fn yes_no(&self, argv: &[String]) -> Option<bool> {
        match self.get(argv)?.exit_status {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        }
    }
    /// Whether every planned argv has a recorded run.
    pub fn covers(&self, plan: &[Vec<String>]) -> Result<(), Vec<String>> {
        match plan.iter().find(|a| self.get(a).is_none()) {
            None => Ok(()),
            Some(missing) => Err(missing.clone()),
        }
    }
}

/// The anchor re-assertion: `git -C REPO_ROOT rev-parse --show-toplevel`.
pub fn anchor_argv(root: &str) -> Vec<String> {
    git(root, &["rev-parse", "--show-toplevel"])
}

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

fn branch_line(branch: &str) -> String {
    format!("branch refs/heads/{branch}")
}

fn lists_branch(list: Option<&str>, branch: &str) -> Option<bool> {
    list.map(|l| l.lines().any(|x| x == branch_line(branch)))
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

/// The classifier's facts, read back from the preflight runs.
pub fn preflight_facts(p: &Params, root: &str, runs: &[CommandRun]) -> Facts {
    let r = Runs(runs);
    let plan = preflight_plan(p, root);
    Facts {
        repo_root: root.to_owned(),
        expected_basename: p.expected_basename.clone(),
        toplevel: r.line(&plan[0]),
        primary_clean: r.ok(&plan[1]).map(|s| s.trim().is_empty()),
        current_branch: r.line(&plan[2]),
        target_branch: p.target_branch.clone(),
        branch: p.branch.clone(),
        worktree_path: p.worktree_path.clone(),
        branch_exists: r.yes_no(&plan[3]),
        worktree_on_branch: lists_branch(r.ok(&plan[4]), &p.branch),
        path_exists: r.yes_no(&plan[5]),
    }
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
            "note: local {} {a} ahead / {b} behind {up} (local is truth; no fetch)",
            p.target_branch
        )),
        _ => None,
    }
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

/// The four verifications as gates.
pub fn create_gates(p: &Params, root: &str, runs: &[CommandRun]) -> Vec<Gate> {
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
        Gate::holds(
            "primary-clean",
            r.ok(&plan[2]).map(|s| s.trim().is_empty()),
            "the primary checkout is clean",
            "the primary checkout has changes",
        ),
        match (wt_head, target) {
            (Some(h), Some(t)) => Gate::eq("worktree-at-target", Some(h), &t),
            _ => Gate::new("worktree-at-target", Outcome::Unknown, "a reading failed"),
        },
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
fn isolation_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
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

fn isolation_gates(p: &Params, root: &str, r: Runs<'_>) -> Vec<Gate> {
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
            r.ok(&plan[6]).map(|s| s.trim().is_empty()),
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
fn head_gate(name: &str, r: Runs<'_>, p: &Params, reported: &str) -> Gate {
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

/// `--shortstat` read into (files, deletions); empty output is (0, 0).
pub fn parse_shortstat(s: &str) -> Option<(u64, u64)> {
    let s = s.trim();
    if s.is_empty() {
        return Some((0, 0));
    }
    let (mut files, mut deletions) = (None, 0);
    for part in s.split(',') {
        let mut words = part.split_whitespace();
        let n: u64 = words.next()?.parse().ok()?;
        let what = words.next()?;
        if what.starts_with("file") {
            files = Some(n);
        } else if what.starts_with("deletion") {
            deletions = n;
        } else if !what.starts_with("insertion") {
            return None;
        }
    }
    Some((files?, deletions))
}

/// What phase-1d concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Phase1d {
    /// Every gate passed.
    Verified,
    /// The scope gate tripped (the floor, with a commit body; or paths outside
    /// `in_scope_paths`): the user answers `proceed` or `abort`.
    ScopeTripped {
        /// `files`, `deletions` from `--shortstat`.
        files: u64,
        /// Deletions.
        deletions: u64,
        /// Whether the count floor tripped.
        floor_tripped: bool,
        /// Changed paths not in `in_scope_paths`.
        out_of_scope: Vec<String>,
    },
    /// A gate failed or could not be read: stop intact for `--resume`.
    Failed {
        /// The gates that did not pass.
        failed: Vec<String>,
    },
}

/// Runs the phase-1d gates over `runs`. `head` is the reported head (or the tip
/// itself on resume); `in_scope` is the reported set (missing = empty).
pub fn phase1d(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    head: Option<&str>,
    in_scope: &[String],
) -> (Phase1d, Vec<Gate>) {
    let r = Runs(runs);
    let plan = phase1d_plan(p, root);
    let mut gates = isolation_gates(p, root, r);
    if let Some(h) = head {
        gates.push(head_gate("head-matches-report", r, p, h));
    }
    let ahead = r.line(&plan[9]).and_then(|s| s.parse::<u64>().ok());
    gates.push(match ahead {
        None => Gate::new("commits-ahead", Outcome::Unknown, "rev-list failed"),
        Some(0) => Gate::new(
            "commits-ahead",
            Outcome::Fail,
            "0 commits ahead of the target",
        ),
        Some(n) => Gate::new("commits-ahead", Outcome::Pass, format!("{n} commits ahead")),
    });
    let stat = r.ok(&plan[10]).and_then(parse_shortstat);
    let body = r.ok(&plan[11]).map(|b| {
        b.lines()
            .skip(1)
            .any(|l| !l.trim().is_empty() && !is_trailer(l))
    });
    let changed: Option<Vec<String>> = r.ok(&plan[12]).map(|s| {
        s.lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    });
    let floor = stat.map(|(f, d)| f > p.files_max || d > p.deletions_max);
    gates.push(match stat {
        None => Gate::new(
            "scope-floor",
            Outcome::Unknown,
            "--shortstat was unreadable",
        ),
        Some((f, d)) => Gate::new(
            "scope-floor",
            if floor == Some(true) {
                Outcome::Fail
            } else {
                Outcome::Pass
            },
            format!(
                "{f} files (max {}), {d} deletions (max {})",
                p.files_max, p.deletions_max
            ),
        ),
    });
    if floor != Some(false) {
        gates.push(Gate::holds(
            "body-when-floor-trips",
            body,
            "the commit has a body",
            "the floor tripped and the commit has no body",
        ));
    }
    let out_of_scope: Option<Vec<String>> = changed.as_ref().map(|c| {
        c.iter()
            .filter(|x| !in_scope.contains(x))
            .cloned()
            .collect()
    });
    gates.push(match &out_of_scope {
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
    });
    let hard: Vec<String> = gates
        .iter()
        .filter(|g| {
            g.name != "scope-floor" && g.name != "in-scope-paths" && g.outcome != Outcome::Pass
        })
        .map(|g| g.name.clone())
        .chain(
            gates
                .iter()
                .filter(|g| {
                    (g.name == "scope-floor" || g.name == "in-scope-paths")
                        && g.outcome == Outcome::Unknown
                })
                .map(|g| g.name.clone()),
        )
        .collect();
    let result = if !hard.is_empty() {
        Phase1d::Failed { failed: hard }
    } else {
        let (files, deletions) = stat.unwrap_or((0, 0));
        let out = out_of_scope.unwrap_or_default();
        if floor == Some(true) || !out.is_empty() {
            Phase1d::ScopeTripped {
                files,
                deletions,
                floor_tripped: floor == Some(true),
                out_of_scope: out,
            }
        } else {
            Phase1d::Verified
        }
    };
    (result, gates)
}

fn is_trailer(line: &str) -> bool {
    // `Squashed-from:`, `Signed-off-by:` … are not a body.
    line.split_once(": ").is_some_and(|(k, _)| {
        !k.is_empty()
            && !k.contains(' ')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// §phase-2 "Gate + worktree re-verify": isolation, branch, primary, and the reported tip.
pub fn refine_plan(p: &Params, root: &str) -> Vec<Vec<String>> {
    isolation_plan(p, root)
}

/// Phase-2 gates.
pub fn refine_gates(p: &Params, root: &str, runs: &[CommandRun], tip: &str) -> Vec<Gate> {
    let r = Runs(runs);
    let mut g = isolation_gates(p, root, r);
    g.push(head_gate("tip-matches-report", r, p, tip));
    g
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

/// How the ship agent's squash ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Squash {
    /// Nothing to squash (≤ 1 fixup).
    #[serde(rename = "n/a")]
    NotApplicable,
    /// Squashed; `git diff PRE..HEAD` must be empty.
    Squashed,
    /// The squash failed its post-checks and was reset to the pre-squash commit.
    FellBack,
}

/// Phase-3 pre-merge gates.
pub fn premerge_gates(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    squash: Squash,
    pre_squash: Option<&str>,
) -> Vec<Gate> {
    let r = Runs(runs);
    let plan = premerge_plan(p, root, pre_squash);
    let mut g = isolation_gates(p, root, r);
    g.push(Gate::holds(
        "worktree-clean",
        r.ok(&plan[9]).map(|s| s.trim().is_empty()),
        "the worktree has no uncommitted state",
        "the worktree has uncommitted state",
    ));
    match (squash, pre_squash) {
        (Squash::Squashed, Some(_)) => g.push(Gate::holds(
            "squash-diff-empty",
            r.ok(&plan[10]).map(|s| s.is_empty()),
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

/// What the teardown readings said was there: (worktree listed, branch exists).
pub fn teardown_present(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
) -> (Option<bool>, Option<bool>) {
    let r = Runs(runs);
    let plan = teardown_before_plan(p, root);
    (lists_branch(r.ok(&plan[0]), &p.branch), r.yes_no(&plan[1]))
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

/// Where resume found things: (primary clean, primary branch, worktree listed, branch exists).
pub fn resume_facts(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
) -> (Option<bool>, Option<String>, Option<bool>, Option<bool>) {
    let r = Runs(runs);
    let plan = resume_plan(p, root);
    (
        r.ok(&plan[0]).map(|s| s.trim().is_empty()),
        r.line(&plan[1]),
        lists_branch(r.ok(&plan[2]), &p.branch),
        r.yes_no(&plan[3]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortstat_reads_every_form() {
        assert_eq!(parse_shortstat(""), Some((0, 0)));
        assert_eq!(
            parse_shortstat(" 1 file changed, 1 insertion(+)\n"),
            Some((1, 0))
        );
        assert_eq!(
            parse_shortstat(" 3 files changed, 10 insertions(+), 2 deletions(-)"),
            Some((3, 2))
        );
        assert_eq!(
            parse_shortstat(" 2 files changed, 5 deletions(-)"),
            Some((2, 5))
        );
        assert_eq!(parse_shortstat("garbage"), None);
        assert_eq!(parse_shortstat(" 2 bananas changed"), None);
    }

    #[test]
    fn trailers_are_not_a_body() {
        assert!(is_trailer("Signed-off-by: a <a@b>"));
        assert!(!is_trailer("This explains why: the floor"));
    }
}
