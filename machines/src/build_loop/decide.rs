//! `decide`: the build loop's guards, one function per command. An iteration's
//! greenness is re-derived from its recorded runs, never taken on trust.

use super::command::Command;
use super::criterion::{planned, ExitCriterion};
use super::event::Event;
use super::iteration::{iteration, CheckRun};
use super::state::{state_name, LoopState};
use super::tree::TreeHeld;
use super::NAME;
use crate::evidence::FullCommit;
use crate::{Rejection, Timestamp, Violation};

/// The events `command` produces in `state`, or why it is refused.
pub(super) fn decide(state: &LoopState, command: &Command) -> Result<Vec<Event>, Rejection> {
    match command {
        Command::Iterate {
            unit,
            revision,
            criterion,
            checks,
            started_at,
            finished_at,
            tree,
        } => decide_iterate(
            state,
            unit,
            revision,
            criterion,
            checks,
            (started_at, finished_at),
            tree.as_deref(),
        ),
    }
}

/// `iterate`: the full 40-hex revision, and every planned check of the written
/// criterion run once, in order; green or not is derived from the runs.
fn decide_iterate(
    state: &LoopState,
    unit: &str,
    revision: &FullCommit,
    criterion: &ExitCriterion,
    checks: &[CheckRun],
    (started_at, finished_at): (&Timestamp, &Timestamp),
    tree: Option<&TreeHeld>,
) -> Result<Vec<Event>, Rejection> {
    let no = |predicate: &str, field: &str, message: &str| {
        Rejection::single(
            NAME,
            "iterate",
            state_name(state),
            Violation::new(predicate, Some(field), message),
        )
    };
    // A full id by its type; the build loop hands on the 40-hex (SHA-1) form only.
    if revision.len() != 40 {
        return Err(no("full-revision", "revision", "the full 40-hex HEAD"));
    }
    let plan = planned(criterion);
    if plan.len() != checks.len()
        || plan
            .iter()
            .zip(checks)
            .any(|((p, n), c)| *p != c.part || n.command != c.command)
    {
        return Err(no(
            "criterion-complete",
            "checks",
            "every part of the written criterion runs, in order, once",
        ));
    }
    let Some(tree) = tree else {
        return Err(no(
            "tree-read",
            "tree",
            "the tree the checks ran in, read by cairn before and after them",
        ));
    };
    let (mut v, green) = iteration(
        state.iterations + 1,
        revision,
        started_at,
        finished_at,
        criterion,
        checks,
    );
    // Checks that passed on a tree other than the committed revision did not pass
    // at the revision: another iteration, not a refusal (the seed's loop never
    // refuses), and the record says why.
    let held = tree.problem(revision.as_str());
    let green = green && held.is_none();
    if let Some(detail) = held {
        v["green"] = false.into();
        v["tree"] = serde_json::json!({"held": false, "detail": detail});
    }
    Ok(vec![if green {
        Event::IterationGreen {
            unit: unit.to_owned(),
            iteration: v,
            handed_to_code_review: revision.clone(),
            repository: tree.repository(),
        }
    } else {
        Event::IterationNotGreen {
            unit: unit.to_owned(),
            iteration: v,
        }
    }])
}
