//! `pre-merge` (§phase-3-ship-agent steps 1–4): the ship leaf's report, the squash
//! evidence, and the pre-merge checks on the worktree.

use serde_json::Value;

use super::super::event::Event;
use super::super::gates::{self, Gate, Squash};
use super::super::recovery::Failure;
use super::super::report::{PreMergeReport, ReRebase};
use super::guards::Guard;
use crate::evidence::{CommandRun, FullCommit};
use crate::{Outcome, Rejection};

/// `pre-merge`: a squash (or its fall-back) names the full pre-squash commit and a
/// squash lists its roll-ups; a re-rebase conflict asks the operator (nothing
/// verified); else the plan ran, and tests, lint, the gates (the changed paths
/// inside the accepted scope among them) and the review jobs decide; a pass binds
/// the tip it read, the one commit `merge` may merge.
pub(super) fn decide_pre_merge(
    guard: Guard<'_>,
    report: &Value,
    runs: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let p = &run.params;
    let r: PreMergeReport = guard.parse(report)?;
    let pre = r.pre_squash_sha.as_deref();
    match (r.squash, pre) {
        (Squash::NotApplicable, None) => {}
        (Squash::NotApplicable, Some(_)) => {
            return Err(guard.bad(
                "report.pre_squash_sha",
                "consistent-evidence",
                "no squash: no pre-squash commit",
            ))
        }
        // The report is the caller's document: its field stays text, checked here.
        (_, Some(s)) if FullCommit::parse(s).is_ok() => {}
        _ => {
            return Err(guard.bad(
                "report.pre_squash_sha",
                "full-head",
                "a squash (or its fall-back) names the full pre-squash commit",
            ))
        }
    }
    if r.squash == Squash::Squashed && r.rollups.is_empty() {
        return Err(guard.bad("report.rollups", "required", "a squash lists its roll-ups"));
    }
    if r.rebase_outcome_3_2 == ReRebase::Conflict {
        if !runs.is_empty() {
            return Err(guard.bad(
                "runs",
                "not-verified",
                "a conflicted rebase is not verified",
            ));
        }
        return Ok(vec![Event::TiebreakerRaised {
            number: 3,
            context: "the phase-3 re-rebase hit a conflict rerere could not clear".into(),
            proposed: "ask the operator".into(),
            phase: 3,
        }]);
    }
    guard.exact(
        "runs",
        runs,
        &gates::premerge_plan(
            p,
            &run.repo_root,
            if r.squash == Squash::NotApplicable {
                None
            } else {
                pre
            },
        ),
    )?;
    let in_scope = run.in_scope_paths.clone().unwrap_or_default();
    let mut g = gates::premerge_gates(p, &run.repo_root, runs, (r.squash, pre), &in_scope);
    g.push(Gate {
        name: "review-jobs-closed".into(),
        outcome: if r.open_review_jobs == 0 {
            Outcome::Pass
        } else {
            Outcome::Fail
        },
        detail: format!("{} open review jobs", r.open_review_jobs),
    });
    let (failure, code) = if !r.tests_pass || !r.lint_clean {
        (Some(Failure::TestLint), "stopped:test_lint_fail".to_owned())
    } else if let Some(f) = g.iter().find(|g| g.outcome != Outcome::Pass) {
        (
            Some(Failure::PreMerge),
            format!("stopped:pre-merge:{}", f.name),
        )
    } else {
        (None, String::new())
    };
    let tip = gates::premerge_tip(p, runs);
    Ok(vec![match (failure, tip) {
        (None, Some(tip)) => Event::PreMergeChecked {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            tip: Some(tip),
        },
        // Not reached: a passing `tip-read` gate read a full commit id.
        (None, None) => Event::PreMergeStopped {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            failure: Failure::PreMerge,
            code: "stopped:pre-merge:tip-read".into(),
        },
        (Some(failure), _) => Event::PreMergeStopped {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            failure,
            code,
        },
    }])
}
