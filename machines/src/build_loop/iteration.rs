//! One iteration as cairn ran it: each check's status (`pass | fail |
//! could-not-execute`), its result in the run record's format, and whether the
//! iteration is green.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::catalogue::catalogue_check;
use super::criterion::{ExitCriterion, Part, Preview};
use crate::evidence::CommandRun;
use crate::time::{spell, Spelling};
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
    /// The signal that ended the run (none: it exited, or did not start). A check
    /// killed by a signal it did not get from cairn's timeout ran and said no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// `pass` (exit 0), `fail` (ran and said no: a non-zero exit, or killed by a signal
/// that was not cairn's timeout), `could-not-execute` (missing program, timeout, a
/// command that does not split) — never a pass, never a defect.
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
        (_, Some(r)) => match (r.exit_status, c.signal) {
            (Some(0), _) => CheckStatus::Pass,
            (Some(_), _) | (None, Some(_)) => CheckStatus::Fail,
            (None, None) => CheckStatus::CouldNotExecute,
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
            json!({"declared": true, "status": r["status"], "command": c, "exit_code": r["exit_code"], "duration_seconds": r["duration_seconds"], "detail": r["detail"]})
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
    // A criterion with no check to run is never green: nothing was shown to pass.
    let green = !checks.is_empty()
        && all.iter().all(|c| status(c) == CheckStatus::Pass)
        && matches!(
            preview["status"].as_str(),
            Some("pass" | "no-preview-declared")
        );
    let mut v = json!({
        "iteration": n,
        "revision": revision,
        "started_at": spell(&started_at.instant(), Spelling::RecordZ),
        "finished_at": spell(&finished_at.instant(), Spelling::RecordZ),
        "green": green,
        "baseline": part(Part::Baseline),
        "functional_checks": part(Part::FunctionalChecks),
        "preview": preview,
        "scenario_smoke": part(Part::ScenarioSmoke),
    });
    if crit.baseline.is_empty() {
        v["baseline_reason"] = json!("none-configured");
    }
    if crit.functional_checks.is_empty() {
        v["functional_checks_reason"] = json!("none-prescribed");
    }
    if crit.scenario_smoke.is_empty() {
        v["scenario_smoke_reason"] = json!("none-prescribed");
    }
    (v, green)
}

/// The exit code the record shows: none when the check could not execute; a signal
/// as its negative number (as Python's `returncode` shows it).
fn exit_code(c: &CheckRun, st: CheckStatus) -> Option<i32> {
    if st == CheckStatus::CouldNotExecute {
        return None;
    }
    let run = c.run.as_ref()?;
    run.exit_status.or(c.signal.map(|s| -s))
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
        (_, Some(r)) if r.exit_status.is_none() => match c.signal {
            Some(sig) => format!("killed by signal {sig}"),
            None => last_line(&r.stderr),
        },
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
        "exit_code": exit_code(c, st),
        "duration_seconds": c.run.as_ref().map_or(0.0, seconds),
        "detail": detail,
    })
}
