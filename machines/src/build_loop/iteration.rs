//! One iteration as cairn ran it: each check's status (`pass | fail |
//! could-not-execute`), its result in the run record's format, and whether the
//! iteration is green.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::criterion::{catalogue_check, ExitCriterion, Part, Preview};
use crate::evidence::CommandRun;
use crate::Timestamp;

/// The record version this build writes.
pub const RECORD_SCHEMA: &str = "run_record.v1";

/// One check as cairn ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// Its part.
    pub part: Part,
    /// Its name.
    pub name: String,
    /// The command string.
    pub command: String,
    /// The argv it split into (none: it did not split).
    pub argv: Option<Vec<String>>,
    /// The run (none: not started).
    pub run: Option<CommandRun>,
    /// Killed at the timeout.
    pub timed_out: bool,
}

/// `pass` (exit 0), `fail` (ran, non-zero), `could-not-execute` (missing program,
/// timeout, a command that does not split) — never a pass, never a defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum CheckStatus {
    Pass,
    Fail,
    CouldNotExecute,
}

/// The status a run implies.
pub fn status(c: &CheckRun) -> CheckStatus {
    match (&c.argv, &c.run) {
        (None, _) | (_, None) => CheckStatus::CouldNotExecute,
        (_, Some(_)) if c.timed_out => CheckStatus::CouldNotExecute,
        (_, Some(r)) => match r.exit_status {
            None => CheckStatus::CouldNotExecute,
            Some(0) => CheckStatus::Pass,
            Some(_) => CheckStatus::Fail,
        },
    }
}

/// The iteration record (the run record's format) and whether it is green.
pub fn iteration(
    n: u32,
    revision: &str,
    started_at: &Timestamp,
    finished_at: &Timestamp,
    crit: &ExitCriterion,
    checks: &[CheckRun],
) -> (Value, bool) {
    let part = |p: Part| {
        checks
            .iter()
            .filter(|c| c.part == p)
            .map(result_json)
            .collect::<Vec<_>>()
    };
    let preview_run = checks.iter().find(|c| c.part == Part::Preview);
    let preview = match (&crit.preview, preview_run) {
        (
            Preview {
                declared: false, ..
            },
            _,
        ) => {
            json!({"declared": false, "status": "no-preview-declared", "command": null, "detail": "none"})
        }
        (
            Preview {
                declared: true,
                command: None,
            },
            _,
        ) => {
            json!({"declared": true, "status": "could-not-execute", "command": null, "detail": "a preview is declared but the repository declares no branch_preview_command"})
        }
        (
            Preview {
                declared: true,
                command: Some(c),
            },
            Some(run),
        ) => {
            let r = result_json(run);
            json!({"declared": true, "status": r["status"], "command": c, "detail": r["detail"]})
        }
        (
            Preview {
                declared: true,
                command: Some(c),
            },
            None,
        ) => {
            json!({"declared": true, "status": "could-not-execute", "command": c, "detail": "not run"})
        }
    };
    let all: Vec<&CheckRun> = checks.iter().filter(|c| c.part != Part::Preview).collect();
    let green = all.iter().all(|c| status(c) == CheckStatus::Pass)
        && matches!(
            preview["status"].as_str(),
            Some("pass" | "no-preview-declared")
        );
    let mut v = json!({
        "iteration": n,
        "revision": revision,
        "started_at": started_at.instant().with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "finished_at": finished_at.instant().with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "green": green,
        "baseline": part(Part::Baseline),
        "functional_checks": part(Part::FunctionalChecks),
        "preview": preview,
        "scenario_smoke": part(Part::ScenarioSmoke),
    });
    if crit.functional_checks.is_empty() {
        v["functional_checks_reason"] = json!("none-prescribed");
    }
    if crit.scenario_smoke.is_empty() {
        v["scenario_smoke_reason"] = json!("none-prescribed");
    }
    (v, green)
}

/// The run's wall time in seconds, to the millisecond.
fn seconds(r: &CommandRun) -> f64 {
    let d = r.finished_at.instant() - r.started_at.instant();
    (d.num_milliseconds() as f64 / 1000.0 * 1000.0).round() / 1000.0
}

/// One check's result as the run record writes it.
fn result_json(c: &CheckRun) -> Value {
    let st = status(c);
    let last_line = |s: &str| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let detail = match (&c.argv, &c.run) {
        (None, _) => "the command does not split into words".to_owned(),
        (_, Some(_)) if c.timed_out => "timed out".to_owned(),
        (_, Some(r)) if r.exit_status.is_none() => last_line(&r.stderr),
        (_, Some(r)) => {
            let out = last_line(&r.stdout);
            if out.is_empty() {
                last_line(&r.stderr)
            } else {
                out
            }
        }
        (_, None) => "not run".to_owned(),
    };
    json!({
        "name": c.name,
        "command": c.command,
        "catalogue_check": c.argv.as_deref().and_then(catalogue_check),
        "status": st,
        "exit_code": if st == CheckStatus::CouldNotExecute { None } else { c.run.as_ref().and_then(|r| r.exit_status) },
        "duration_seconds": c.run.as_ref().map_or(0.0, seconds),
        "detail": detail,
    })
}
