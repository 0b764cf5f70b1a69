//! `refine` (§phase-2-rebase-refine): the phase-2 report, its dismissals and
//! tiebreakers, the verdict, the one rebase, and the worktree re-verify.

use serde_json::Value;

use super::super::event::Event;
use super::super::gates::{self, Gate};
use super::super::recovery::Failure;
use super::super::report::{self, RebaseOutcome, RefineReport, Tiebreaker};
use super::super::state::{Params, Run, Stage};
use super::guards::Guard;
use crate::evidence::CommandRun;
use crate::{Outcome, Rejection};

/// `refine`: every dismissal and auto-disposed tiebreaker cites its grounding; the
/// verdict is known and consistent with the rebase and the tiebreakers; one rebase
/// per ship (a broadening run skips it); a conflict or a stop tiebreaker asks the
/// operator; anything but `passed` stops; `passed` is re-verified from the runs.
pub(super) fn decide_refine(
    guard: Guard<'_>,
    report: &Value,
    runs: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let p = &run.params;
    let r: RefineReport = guard.parse(report)?;
    let stop_tb = stop_tiebreaker(guard, p, &r)?;
    let passed = r.verdict == "passed";
    if !passed
        && !matches!(r.verdict.as_str(), "flapping" | "daemon_unhealthy")
        && report::stopped_reason(&r.verdict).map_or(true, |x| x.trim().is_empty())
    {
        return Err(guard.bad(
            "report.verdict",
            "verdict",
            "expected passed | flapping | daemon_unhealthy | stopped:<reason>",
        ));
    }
    if passed && (r.rebase_outcome == RebaseOutcome::Conflict || stop_tb.is_some()) {
        return Err(guard.bad(
            "report.verdict",
            "consistent-evidence",
            "a rebase conflict or a stop tiebreaker contradicts `passed`",
        ));
    }
    if passed && r.remaining_findings.is_some() {
        return Err(guard.bad(
            "report.remaining_findings",
            "consistent-evidence",
            "remaining findings are reported only on flapping or stopped",
        ));
    }
    let broadening = matches!(guard.state.stage(), Some(Stage::Stopped { .. }));
    if broadening && !r.rebase_already_done {
        return Err(guard.bad(
            "report.rebase_already_done",
            "one-rebase",
            "a broadening run after `flapping` is a new refine run with rebase_already_done: true",
        ));
    }
    if r.rebase_already_done && !run.rebase_done {
        return Err(guard.bad(
            "report.rebase_already_done",
            "one-rebase",
            "no rebase is recorded for this ship",
        ));
    }
    if r.rebase_outcome == RebaseOutcome::Conflict || stop_tb.is_some() {
        let (number, context, proposed) = match stop_tb {
            Some(t) => (t.number, t.context.clone(), t.disposition.clone()),
            None => (
                3,
                "a rebase conflict rerere could not clear".into(),
                "ask the operator".into(),
            ),
        };
        return Ok(vec![Event::TiebreakerRaised {
            number,
            context,
            proposed,
            phase: 2,
        }]);
    }
    if !passed {
        let (failure, code) = match r.verdict.as_str() {
            "daemon_unhealthy" => (Failure::DaemonUnhealthy, "daemon_unhealthy".to_owned()),
            other => (Failure::Refine, other.to_owned()),
        };
        return Ok(vec![Event::RefineStopped {
            report: r,
            runs: runs.to_vec(),
            gates: vec![],
            failure,
            code,
        }]);
    }
    reverified(guard, run, r, runs)
}

/// Dismissals are `<finding> — <grounding>`; tiebreakers 1, 2 and 4 carry their
/// grounding, 5 only when the consumer declares it; every one has a disposition.
/// The (last) stop tiebreaker, 3 or 5, if any.
fn stop_tiebreaker<'r>(
    guard: Guard<'_>,
    p: &Params,
    r: &'r RefineReport,
) -> Result<Option<&'r Tiebreaker>, Rejection> {
    for (i, d) in r.dismissed_findings.iter().enumerate() {
        let grounded = d
            .split_once(" — ")
            .is_some_and(|(f, g)| !f.trim().is_empty() && !g.trim().is_empty());
        if !grounded {
            return Err(guard.bad(
                &format!("report.dismissed_findings[{i}]"),
                "dismissal-grounding",
                "every dismissal is `<finding> — <grounding>`",
            ));
        }
    }
    let mut stop_tb = None;
    for (i, t) in r.tiebreakers.iter().enumerate() {
        let field = format!("report.tiebreakers[{i}]");
        match t.number {
            1 | 2 | 4 => {
                if t.grounding.as_deref().map_or(true, |g| g.trim().is_empty()) {
                    return Err(guard.bad(
                        &format!("{field}.grounding"),
                        "dismissal-grounding",
                        "tiebreakers 1, 2 and 4 are auto-disposed with their grounding recorded",
                    ));
                }
            }
            3 => stop_tb = Some(t),
            5 if p.tiebreaker_5 => stop_tb = Some(t),
            5 => {
                return Err(guard.bad(
                    &format!("{field}.number"),
                    "tiebreaker-5-declared",
                    "this consumer does not declare TIEBREAKER_5",
                ))
            }
            _ => {
                return Err(guard.bad(
                    &format!("{field}.number"),
                    "tiebreaker-number",
                    "tiebreakers are 1–5",
                ))
            }
        }
        guard.nonempty(&format!("{field}.disposition"), &t.disposition)?;
    }
    Ok(stop_tb)
}

/// `passed`: the phase-2 re-verify ran, and every gate (and `lint_clean`) passed.
fn reverified(
    guard: Guard<'_>,
    run: &Run,
    r: RefineReport,
    runs: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let p = &run.params;
    guard.exact("runs", runs, &gates::refine_plan(p, &run.repo_root))?;
    let mut g = gates::refine_gates(p, &run.repo_root, runs, &r.tip_sha);
    g.push(Gate {
        name: "lint-clean".into(),
        outcome: if r.lint_clean {
            Outcome::Pass
        } else {
            Outcome::Fail
        },
        detail: "the report's lint_clean".into(),
    });
    if g.iter().all(|g| g.outcome == Outcome::Pass) {
        Ok(vec![Event::Refined {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            tiebreaker_4: p.tiebreaker_4.clone(),
        }])
    } else {
        let code = format!(
            "stopped:phase-2-reverify:{}",
            g.iter()
                .filter(|g| g.outcome != Outcome::Pass)
                .map(|g| g.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        Ok(vec![Event::RefineStopped {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            failure: Failure::Phase2Reverify,
            code,
        }])
    }
}
