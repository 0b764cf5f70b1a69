//! `judge`: a verification's verdict from the runs cairn made, criterion by
//! criterion against its contract hash, plus the tree and the checklist. Pure, so
//! `journal audit` re-judges every recorded verification.

use serde::{Deserialize, Serialize};

use super::{sha256_hex, ChecklistReport, CriterionRun, TreeReading};
use crate::work::spec::{Criterion, Evidence, Node};
use crate::Timestamp;

/// The criterion-contract hash: SHA-256 of the criterion as written (canonical JSON).
pub fn contract_hash(c: &Criterion) -> String {
    sha256_hex(c.raw.to_string().as_bytes())
}

/// A criterion's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion.
    pub criterion_id: String,
    /// Its contract hash.
    pub contract_hash: String,
    /// Passed?
    pub passed: bool,
    /// Why not (`exit-mismatch`, `floor-missing`, `timeout`, `shell-unavailable`,
    /// `agent-unavailable`, `user-confirmation-missing`, `not-run`).
    pub failure: Option<String>,
}

/// A recorded verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// The session it ran in.
    pub session: String,
    /// Pre-merge (worker tree) or integration (merged tree).
    pub integration: bool,
    /// The tree.
    pub worktree_path: String,
    /// Its full commit.
    pub commit: String,
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

/// Judges a verification from the runs cairn made (pure: the audit re-judges).
pub fn judge(
    node: &Node,
    tree: &TreeReading,
    runs: &[CriterionRun],
    checklist: &[ChecklistReport],
    session: &str,
    integration: bool,
    at: Timestamp,
) -> Verification {
    let mut failures = vec![];
    if let Some(p) = tree.problem() {
        failures.push(format!("tree: {p}"));
    }
    let mut criteria = vec![];
    for c in &node.acceptance {
        let hash = contract_hash(c);
        let run = runs
            .iter()
            .find(|r| r.criterion_id == c.id && r.contract_hash == hash);
        let failure = match (&c.evidence, run) {
            (_, None) => Some("not-run".to_owned()),
            (Evidence::Agent { .. }, _) => Some("agent-unavailable".to_owned()),
            (Evidence::User { .. }, Some(r)) => match &r.confirmation {
                Some(c) if !c.trim().is_empty() => None,
                _ => Some("user-confirmation-missing".to_owned()),
            },
            (
                Evidence::Command {
                    exit,
                    output_includes,
                    ..
                },
                Some(r),
            ) => match &r.run {
                None => Some("not-run".to_owned()),
                Some(_) if r.timed_out => Some("timeout".to_owned()),
                Some(cr) => match cr.exit_status {
                    None => Some("shell-unavailable".to_owned()),
                    Some(126 | 127) if *exit != 126 && *exit != 127 => {
                        Some("shell-unavailable".to_owned())
                    }
                    Some(e) if i64::from(e) != *exit => Some("exit-mismatch".to_owned()),
                    Some(_)
                        if !cr.stdout.contains(output_includes.as_str())
                            && !cr.stderr.contains(output_includes.as_str()) =>
                    {
                        Some("floor-missing".to_owned())
                    }
                    Some(_) => None,
                },
            },
        };
        if let Some(f) = &failure {
            failures.push(format!("{}: {f}", c.id));
        }
        criteria.push(CriterionResult {
            criterion_id: c.id.clone(),
            contract_hash: hash,
            passed: failure.is_none(),
            failure,
        });
    }
    // Every checklist item needs exactly one `done` report.
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
        commit: tree.expected_commit.clone(),
        passed: failures.is_empty(),
        criteria,
        checklist_ok,
        failures,
        at,
    }
}
