//! `verify`: the phase-1 report and §phase-1d-verify-shared (isolation, the head,
//! commits ahead, the scope floor and the in-scope set), and the leaf stops.

use serde_json::Value;

use super::super::event::Event;
use super::super::gates::{self, Gate, Phase1d};
use super::super::recovery::{self, Action, Failure};
use super::super::report::{self, Phase1Report};
use super::super::state::Run;
use super::guards::Guard;
use crate::evidence::CommandRun;
use crate::{Outcome, Rejection};

/// `verify`: the report parses and carries the `INTENT_FIELD` excerpt; a stopped
/// leaf ran nothing and follows the recovery table; an `ok` report names a head of
/// 7+ hex digits, the phase-1d plan ran, and the gates decide (with the report's
/// own worktree path and branch as two more gates).
pub(super) fn decide_verify(
    guard: Guard<'_>,
    report: &Value,
    runs: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let p = &run.params;
    let r: Phase1Report = guard.parse(report)?;
    match r.extra.get(&p.intent_field) {
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        _ => {
            return Err(guard.bad(
                &format!("report.{}", p.intent_field),
                "intent-excerpt",
                "the INTENT_FIELD excerpt (1–3 sentences) is required",
            ))
        }
    }
    if let Some(reason) = report::stopped_reason(&r.verdict) {
        guard.nonempty("report.verdict", reason)?;
        if !runs.is_empty() {
            return Err(guard.bad("runs", "not-verified", "a stopped leaf is not verified"));
        }
        let failure = failure_of_leaf(reason);
        return Ok(vec![
            Event::Phase1Reported { report: r.clone() },
            if recovery::action(failure) == Action::Teardown {
                Event::LeafStoppedForTeardown {
                    phase: 1,
                    code: r.verdict.clone(),
                    failure,
                }
            } else {
                Event::LeafStopped {
                    phase: 1,
                    code: r.verdict.clone(),
                    failure,
                }
            },
        ]);
    }
    if r.verdict != "ok" {
        return Err(guard.bad(
            "report.verdict",
            "verdict",
            "expected `ok` or `stopped:<reason>`",
        ));
    }
    let head = r.head_sha.as_deref().ok_or_else(|| {
        guard.bad(
            "report.head_sha",
            "required",
            "an `ok` report names its head",
        )
    })?;
    if head.len() < 7 || !head.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(guard.bad("report.head_sha", "git-id", "at least 7 hex digits"));
    }
    guard.exact("runs", runs, &gates::phase1d_plan(p, &run.repo_root))?;
    let extra = report_gates(run, &r);
    let mut with = run.clone();
    with.in_scope_paths = r.in_scope_paths.clone();
    Ok(vec![
        Event::Phase1Reported { report: r.clone() },
        phase1d_event(&with, runs, Some(head), extra),
    ])
}

/// The report's own claims as gates: its worktree path (relative to `REPO_ROOT`
/// when not absolute) and its branch.
fn report_gates(run: &Run, r: &Phase1Report) -> Vec<Gate> {
    let p = &run.params;
    let claimed = if r.worktree_path.starts_with('/') {
        r.worktree_path.clone()
    } else {
        format!(
            "{}/{}",
            run.repo_root,
            r.worktree_path.trim_start_matches("./")
        )
    };
    let claimed = claimed.trim_end_matches('/').to_owned();
    vec![
        if claimed == p.worktree_path {
            Gate {
                name: "report-worktree-path".into(),
                outcome: Outcome::Pass,
                detail: claimed,
            }
        } else {
            Gate {
                name: "report-worktree-path".into(),
                outcome: Outcome::Fail,
                detail: format!(
                    "the report claims `{}`; the worktree is `{}`",
                    r.worktree_path, p.worktree_path
                ),
            }
        },
        Gate {
            name: "report-branch".into(),
            outcome: if r.branch == p.branch {
                Outcome::Pass
            } else {
                Outcome::Fail
            },
            detail: format!("`{}`", r.branch),
        },
    ]
}

/// The phase-1d outcome as one event; `extra` gates that did not pass fail it.
pub(super) fn phase1d_event(
    run: &Run,
    runs: &[CommandRun],
    head: Option<&str>,
    extra: Vec<Gate>,
) -> Event {
    let in_scope = run.in_scope_paths.clone().unwrap_or_default();
    let (result, mut gates) = gates::phase1d(&run.params, &run.repo_root, runs, head, &in_scope);
    let hard_extra: Vec<String> = extra
        .iter()
        .filter(|g| g.outcome != Outcome::Pass)
        .map(|g| g.name.clone())
        .collect();
    gates.extend(extra);
    let result = if hard_extra.is_empty() {
        result
    } else {
        match result {
            Phase1d::Failed { mut failed } => {
                failed.extend(hard_extra);
                Phase1d::Failed { failed }
            }
            _ => Phase1d::Failed { failed: hard_extra },
        }
    };
    let runs = runs.to_vec();
    match result {
        Phase1d::Verified => Event::Phase1Verified { runs, gates },
        trip @ Phase1d::ScopeTripped { .. } => Event::ScopeTripped { trip, runs, gates },
        Phase1d::Failed { failed } => Event::Phase1dFailed {
            failed,
            runs,
            gates,
        },
    }
}

/// The recovery table's failure for a leaf's `stopped:<reason>`.
fn failure_of_leaf(reason: &str) -> Failure {
    match reason {
        "worktree-isolation-failed" => Failure::WorktreeIsolationFailed,
        "empty-result" => Failure::EmptyResult,
        _ => Failure::LeafStopped,
    }
}
