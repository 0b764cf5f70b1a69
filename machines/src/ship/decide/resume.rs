//! `resume` (§resume-mechanics): the anchor re-captured, the primary's state and
//! the worktree's whereabouts, the re-attach, and the tip that picks the phase.

use super::super::event::{Event, Resumption};
use super::super::gates::{self, Runs};
use super::super::state::{Params, Run};
use super::guards::Guard;
use super::verify::phase1d_event;
use crate::evidence::CommandRun;
use crate::Rejection;

/// The phase `--resume` picks from the tip: merged or refine recorded passed → 3;
/// 0 commits ahead → 1; else 2.
pub fn resume_phase(run: &Run, commits_ahead: u64) -> u8 {
    if run.merged_sha.is_some() || run.refine_passed {
        3
    } else if commits_ahead == 0 {
        1
    } else {
        2
    }
}

/// `resume`: the anchor held (else nothing ran), the readings ran; the primary is
/// clean and on the target; the worktree is listed, or its branch is re-attached
/// (both gone refuses); a blocked resume runs nothing further; the commits ahead
/// pick the phase, and phase 2 re-runs phase-1d against the existing tip first.
pub(super) fn decide_resume(
    guard: Guard<'_>,
    anchor: &CommandRun,
    runs: &[CommandRun],
    reattach: &Option<CommandRun>,
    ahead: &Option<CommandRun>,
    phase1d: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    if let Some(drifted) = guard.anchor_drift(
        anchor,
        root,
        !runs.is_empty() || reattach.is_some() || ahead.is_some() || !phase1d.is_empty(),
        "runs",
    )? {
        return Ok(drifted);
    }
    guard.exact("runs", runs, &gates::resume_plan(p, root))?;
    let blocked = |reason: &str| Event::ResumeBlocked {
        anchor: anchor.clone(),
        runs: runs.to_vec(),
        reason: reason.into(),
    };
    match located(guard, p, root, runs, reattach)? {
        Located::Ready => {}
        Located::Blocked(reason) => {
            if reattach.is_some() || ahead.is_some() || !phase1d.is_empty() {
                return Err(guard.bad(
                    "reattach",
                    "evidence-bound",
                    "a blocked resume runs nothing further",
                ));
            }
            return Ok(vec![blocked(reason)]);
        }
        Located::ReattachFailed => {
            if ahead.is_some() || !phase1d.is_empty() {
                return Err(guard.bad(
                    "ahead",
                    "evidence-bound",
                    "a failed re-attach runs nothing further",
                ));
            }
            return Ok(vec![blocked("stopped:worktree-prep-failed")]);
        }
    }
    let ahead = ahead.as_ref().ok_or_else(|| {
        guard.bad(
            "ahead",
            "evidence-complete",
            "the tip decides the phase: count the commits ahead",
        )
    })?;
    guard.argv_is("ahead", ahead, &gates::ahead_argv(p))?;
    let Some(count) = Runs(std::slice::from_ref(ahead))
        .line(&ahead.argv)
        .and_then(|s| s.parse::<u64>().ok())
    else {
        if !phase1d.is_empty() {
            return Err(guard.bad(
                "phase1d",
                "evidence-bound",
                "an unreadable tip runs nothing further",
            ));
        }
        return Ok(vec![blocked("stopped:unreadable:tip")]);
    };
    let phase = resume_phase(run, count);
    let resumption = Resumption {
        session: run.session + 1,
        anchor: anchor.clone(),
        runs: runs.to_vec(),
        reattach: reattach.clone(),
        ahead: ahead.clone(),
        commits_ahead: count,
    };
    let mut events = vec![match phase {
        1 => Event::ResumedPhase1(resumption),
        2 => Event::ResumedPhase2(resumption),
        _ if run.merged_sha.is_some() => Event::ResumedTeardown(resumption),
        _ => Event::ResumedPhase3(resumption),
    }];
    if phase == 2 {
        // §resume-mechanics 6: a runaway commit from the prior session is not amnestied.
        guard.exact("phase1d", phase1d, &gates::phase1d_plan(p, root))?;
        events.push(phase1d_event(run, phase1d, None, vec![]));
    } else if !phase1d.is_empty() {
        return Err(guard.bad(
            "phase1d",
            "evidence-bound",
            "phase-1d re-runs only before phase 2",
        ));
    }
    Ok(events)
}

/// Where the readings (and the re-attach, if any) left the resume.
enum Located {
    /// The worktree is there (listed, or re-attached).
    Ready,
    /// `resume-blocked` with this reason.
    Blocked(&'static str),
    /// The re-attach ran and failed.
    ReattachFailed,
}

/// §resume-mechanics 2: the primary clean and on the target, then the worktree
/// listed, or its branch re-attached with the bound argv.
fn located(
    guard: Guard<'_>,
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    reattach: &Option<CommandRun>,
) -> Result<Located, Rejection> {
    let (clean, current, listed, branch) = gates::resume_facts(p, root, runs);
    match clean {
        Some(true) => {}
        Some(false) => return Ok(Located::Blocked("stopped:primary-dirty")),
        None => return Ok(Located::Blocked("stopped:unreadable:status")),
    }
    match current {
        Some(c) if c == p.target_branch => {}
        Some(_) => return Ok(Located::Blocked("stopped:primary-off-branch")),
        None => return Ok(Located::Blocked("stopped:unreadable:current-branch")),
    }
    match (listed, branch, reattach) {
        (Some(true), _, None) => Ok(Located::Ready),
        (Some(false), Some(true), Some(r)) => {
            guard.argv_is("reattach", r, &gates::reattach_argv(p, root))?;
            Ok(if r.exit_status == Some(0) {
                Located::Ready
            } else {
                Located::ReattachFailed
            })
        }
        (Some(false), Some(true), None) => Err(guard.bad(
            "reattach",
            "evidence-complete",
            "the branch has no worktree: re-attach it",
        )),
        (Some(false), Some(false), None) => {
            Ok(Located::Blocked("refused:worktree-and-branch-gone"))
        }
        (None, _, None) | (_, None, None) => Ok(Located::Blocked("stopped:unreadable:worktree")),
        (_, _, Some(_)) => Err(guard.bad(
            "reattach",
            "evidence-bound",
            "re-attach only a branch whose worktree is gone",
        )),
    }
}
