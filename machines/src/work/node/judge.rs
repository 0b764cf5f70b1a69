//! `judge`: a verification's verdict from the runs cairn made, criterion by
//! criterion against its contract hash, plus the tree and the checklist. Pure, so
//! `journal audit` re-judges every recorded verification.

use serde::{Deserialize, Serialize};

use super::tree::watched_changes;
use super::{
    sha256_hex, ChecklistReport, Containment, CriterionRun, TreeReading, CONTROLLING_TERMINAL,
};
use crate::evidence::{CommandRun, FullCommit};
use crate::work::spec::{Criterion, Evidence, Node};
use crate::Timestamp;

/// The criterion-contract hash: SHA-256 of the criterion as written (canonical JSON).
pub fn contract_hash(c: &Criterion) -> String {
    sha256_hex(c.raw.to_string().as_bytes())
}

/// A criterion's verdict, with its proof: the statement it proved, the command
/// run cairn made (argv, captured output, exit status, times), how it was
/// contained, what the tree watch saw, and a user criterion's challenge and
/// channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion.
    pub criterion_id: String,
    /// Its contract hash.
    pub contract_hash: String,
    /// Passed?
    pub passed: bool,
    /// Why not (`exit-mismatch`, `floor-missing`, `timeout`, `shell-unavailable`,
    /// `tree-changed`, `tree-unwatched`, `agent-unavailable`,
    /// `user-confirmation-missing`, `user-confirmation-unavailable`,
    /// `user-confirmation-mismatch`, `challenge-reused`, `not-run`).
    pub failure: Option<String>,
    /// The criterion's accepted text when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// How a command criterion's process tree was contained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
    /// The command run: argv, environment, captured stdout and stderr, exit status, times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<CommandRun>,
    /// The paths the tree watch saw change (and that count) while it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_changes: Option<Vec<String>>,
    /// A user criterion's one-time challenge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
    /// Where a user criterion's confirmation was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

/// A recorded verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// The session it ran in.
    pub session: String,
    /// Pre-merge (worker tree) or integration (merged tree).
    pub integration: bool,
    /// The tree. A string: a re-verification of a done node (rules v2) admits any
    /// tree whose commit contains the merge, and the machine never required that
    /// tree absolute (the CLI does), so a stored one may not be.
    pub worktree_path: String,
    /// Its full commit.
    pub commit: FullCommit,
    /// Per criterion.
    pub criteria: Vec<CriterionResult>,
    /// Checklist accounting complete (each item exactly one `done` report).
    pub checklist_ok: bool,
    /// Every criterion passed, the tree was right, the checklist accounted for.
    pub passed: bool,
    /// Why not.
    pub failures: Vec<String>,
    /// When.
    pub at: Timestamp,
}

/// What cairn observed for one verification.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The tree before the first criterion.
    pub tree: &'a TreeReading,
    /// The tree read again after the last criterion.
    pub after: Option<&'a TreeReading>,
    /// Each criterion's run.
    pub runs: &'a [CriterionRun],
    /// The checklist reports.
    pub checklist: &'a [ChecklistReport],
    /// Challenges earlier verifications of this node already used.
    pub used_challenges: &'a [String],
}

/// Judges a verification from the runs cairn made (pure: the audit re-judges).
/// `commit` is the tree's expected commit, checked full ([`verify_admits`](super::verify_admits)).
pub fn judge(
    node: &Node,
    seen: &Observed<'_>,
    session: &str,
    integration: bool,
    commit: &FullCommit,
    at: Timestamp,
) -> Verification {
    let tree = seen.tree;
    let mut failures = vec![];
    if let Some(p) = tree.problem() {
        failures.push(format!("tree: {p}"));
    }
    if node.acceptance.is_empty() {
        failures.push(
            "no-execution-evidence: the node has no criterion, so nothing can prove it".into(),
        );
    }
    let mut criteria = vec![];
    for c in &node.acceptance {
        let hash = contract_hash(c);
        let run = seen
            .runs
            .iter()
            .find(|r| r.criterion_id == c.id && r.contract_hash == hash);
        let mut result = CriterionResult {
            criterion_id: c.id.clone(),
            contract_hash: hash,
            passed: false,
            failure: None,
            statement: Some(c.statement.clone()),
            containment: run.and_then(|r| r.containment),
            run: run.and_then(|r| r.run.clone()),
            tree_changes: None,
            challenge: run.and_then(|r| r.challenge.clone()),
            channel: run.and_then(|r| r.channel.clone()),
        };
        let failure = match (&c.evidence, run) {
            (_, None) => Some("not-run".to_owned()),
            (Evidence::Agent { .. }, _) => Some("agent-unavailable".to_owned()),
            (Evidence::User { .. }, Some(r)) => user_failure(r, seen.used_challenges),
            (Evidence::Command { .. }, Some(r)) => {
                let watched = r
                    .watch
                    .as_ref()
                    .ok_or_else(|| "no watch ran".to_owned())
                    .and_then(|w| watched_changes(&tree.worktree_path, w));
                if let Ok(changes) = &watched {
                    result.tree_changes = Some(changes.clone());
                }
                match watched {
                    Err(m) => {
                        failures.push(format!("{}: tree-unwatched ({m})", c.id));
                        Some("tree-unwatched".to_owned())
                    }
                    Ok(changes) if !changes.is_empty() => {
                        failures.push(format!("{}: tree-changed ({})", c.id, changes.join(", ")));
                        Some("tree-changed".to_owned())
                    }
                    Ok(_) => command_failure(&c.evidence, r),
                }
            }
        };
        if let Some(f) = &failure {
            if !matches!(f.as_str(), "tree-changed" | "tree-unwatched") {
                failures.push(format!("{}: {f}", c.id));
            }
        }
        result.passed = failure.is_none();
        result.failure = failure;
        criteria.push(result);
    }
    match seen.after {
        None => {
            failures.push("tree-unwatched: the tree was not read again after the criteria".into())
        }
        Some(after)
            if after.worktree_path != tree.worktree_path
                || after.expected_commit != tree.expected_commit =>
        {
            failures.push("tree-changed: the reading after the criteria is of another tree".into())
        }
        Some(after) => {
            if let Some(p) = after.problem() {
                failures.push(format!("tree-changed: after the criteria, {p}"));
            }
        }
    }
    // Every checklist item needs exactly one `done` report.
    let checklist = seen.checklist;
    let mut checklist_ok = true;
    for i in 0..node.checklist.len() {
        let reports: Vec<&ChecklistReport> = checklist.iter().filter(|r| r.index == i).collect();
        if reports.len() != 1 || !reports[0].done {
            checklist_ok = false;
            failures.push(format!("checklist[{i}]: needs exactly one `done` report"));
        }
    }
    if let Some(r) = checklist.iter().find(|r| r.index >= node.checklist.len()) {
        checklist_ok = false;
        failures.push(format!("checklist[{}]: no such item", r.index));
    }
    Verification {
        session: session.to_owned(),
        integration,
        worktree_path: tree.worktree_path.clone(),
        commit: commit.clone(),
        passed: failures.is_empty(),
        criteria,
        checklist_ok,
        failures,
        at,
    }
}

/// A command criterion's failure from its run: timeout, no shell, the exit status,
/// the output floor.
fn command_failure(evidence: &Evidence, r: &CriterionRun) -> Option<String> {
    let Evidence::Command {
        exit,
        output_includes,
        ..
    } = evidence
    else {
        return Some("not-run".to_owned());
    };
    let failure = match &r.run {
        None => "not-run",
        Some(_) if r.timed_out => "timeout",
        Some(cr) => match cr.exit_status {
            None => "shell-unavailable",
            Some(126 | 127) if *exit != 126 && *exit != 127 => "shell-unavailable",
            Some(e) if i64::from(e) != *exit => "exit-mismatch",
            Some(_)
                if !cr.stdout.contains(output_includes.as_str())
                    && !cr.stderr.contains(output_includes.as_str()) =>
            {
                "floor-missing"
            }
            Some(_) => return None,
        },
    };
    Some(failure.to_owned())
}

/// A user criterion passes only on a confirmation read from the controlling
/// terminal that quotes the one-time challenge minted for this run.
fn user_failure(r: &CriterionRun, used: &[String]) -> Option<String> {
    let Some(challenge) = r.challenge.as_deref().filter(|c| is_challenge(c)) else {
        return Some("user-confirmation-missing".to_owned());
    };
    if r.channel.as_deref() != Some(CONTROLLING_TERMINAL) {
        return Some("user-confirmation-unavailable".to_owned());
    }
    if used.iter().any(|u| u == challenge) {
        return Some("challenge-reused".to_owned());
    }
    match r.confirmation.as_deref().map(str::trim) {
        None | Some("") => Some("user-confirmation-missing".to_owned()),
        Some(words) if words == format!("I confirm {challenge}") => None,
        Some(_) => Some("user-confirmation-mismatch".to_owned()),
    }
}

/// A challenge: 32 lower-case hex digits (a random 128-bit value).
pub fn is_challenge(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
