//! `open` (capture the anchor, record the parameters and the first preflight) and
//! `preflight` (re-run it): §repo-anchor, §preflight-shared, §preflight-classifier.

use super::super::event::Event;
use super::super::gates::{self, Runs};
use super::super::preflight;
use super::super::state::{Params, ReviewStatus};
use super::guards::Guard;
use crate::evidence::{is_normal_abs_path, CommandRun};
use crate::Rejection;

/// `open`: the parameters hold, the anchor is the bound `rev-parse --show-toplevel`
/// naming an absolute repository, `WORKTREE_PATH` lies under it, then the preflight.
pub(super) fn decide_open(
    guard: Guard<'_>,
    params: &Params,
    anchor: &CommandRun,
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    params.check().map_err(|(f, r, m)| guard.bad(f, r, &m))?;
    let bound = matches!(anchor.argv.as_slice(), [g, c, dir, a, b] if g == "git" && c == "-C" && a == "rev-parse" && b == "--show-toplevel" && is_normal_abs_path(dir));
    if !bound {
        return Err(guard.bad(
            "anchor",
            "evidence-bound",
            "expected a run of `git -C <absolute repo> rev-parse --show-toplevel`",
        ));
    }
    let root = match Runs(std::slice::from_ref(anchor)).line(&anchor.argv) {
        Some(r) if is_normal_abs_path(&r) => r,
        _ => {
            return Err(guard.bad(
                "repo",
                "git-toplevel",
                "`git rev-parse --show-toplevel` did not name a repository",
            ))
        }
    };
    if !params.worktree_path.starts_with(&format!("{root}/")) {
        return Err(guard.bad(
            "worktree_path",
            "anchored-path",
            &format!("WORKTREE_PATH must be under REPO_ROOT `{root}`"),
        ));
    }
    let preflight = preflighted(guard, (params, &root), runs, review_status, advisory)?;
    Ok(vec![
        Event::Opened {
            params: params.clone(),
            repo_root: root,
            anchor: anchor.clone(),
        },
        preflight,
    ])
}

/// `preflight`: the classification again, on the recorded parameters and anchor.
pub(super) fn decide_preflight(
    guard: Guard<'_>,
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    Ok(vec![preflighted(
        guard,
        (&run.params, &run.repo_root),
        runs,
        review_status,
        advisory,
    )?])
}

/// The preflight event: the classification, gate 3, and the divergence advisory.
fn preflighted(
    guard: Guard<'_>,
    (p, root): (&Params, &str),
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Event, Rejection> {
    guard.exact("runs", runs, &gates::preflight_plan(p, root))?;
    guard.exact(
        "advisory",
        advisory,
        &gates::advisory_plan(p, root, advisory),
    )?;
    let outcome = preflight::classify(&gates::preflight_facts(p, root, runs))
        .with_review_status(review_status.outcome);
    let note = gates::divergence_note(p, root, advisory);
    let (review_status, runs, advisory) = (review_status.clone(), runs.to_vec(), advisory.to_vec());
    Ok(if outcome.may_create_worktree() {
        Event::PreflightPassed {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    } else {
        Event::PreflightBlocked {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    })
}
