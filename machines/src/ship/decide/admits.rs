//! [`admits`]: the pure guard every verb passes before anything happens, which
//! verbs each stage (and the git mutation in flight) lets through.

use super::super::command::Verb;
use super::super::recovery::Failure;
use super::super::state::{is_terminal, Mutation, Stage, State};
use super::guards::Guard;
use crate::Rejection;

/// The pure guard every verb passes before anything happens: the CLI asks it
/// before it touches git, and `decide` starts with it. A refusal names the verb the
/// user typed (an announcement is refused as its step) and the verbs that would
/// be admitted instead.
pub fn admits(state: &State, verb: Verb) -> Result<(), Rejection> {
    check(state, verb).map_err(|mut r| {
        let next = super::super::next::verbs(state);
        if let Some(v) = r.violations.first_mut() {
            v.message = if next.is_empty() {
                format!("{} (next: nothing, the run has ended)", v.message)
            } else {
                format!("{} (next: {})", v.message, next.join(", "))
            };
        }
        r
    })
}

/// [`admits`] without the list of next verbs (which [`super::super::next`] builds
/// from this).
pub(crate) fn check(state: &State, verb: Verb) -> Result<(), Rejection> {
    let g = Guard {
        state,
        verb: match verb {
            Verb::Begin(m) => m.verb().name(),
            v => v.name(),
        },
    };
    let no = |predicate: &str, message: &str| Err(g.reject(predicate, None, message));
    let (run, stage) = match (state, verb) {
        (State::Idle, Verb::Open) => return Ok(()),
        (State::Idle, _) => {
            return no(
                "opened",
                "no ship run is open on this SHORT_ID: `cairn ship open` first",
            )
        }
        (State::Active { stage, .. }, Verb::Open) => {
            return no(
                "not-opened",
                if is_terminal(stage) {
                    "this SHORT_ID's ship run has ended: a new run needs a new SHORT_ID"
                } else {
                    "this SHORT_ID already has a ship run: `cairn ship status` names its next verbs"
                },
            )
        }
        (State::Active { run, stage }, _) => (run, stage),
    };
    if is_terminal(stage) {
        return no("run-open", "this ship run has ended");
    }
    let mutating = matches!(
        verb,
        Verb::Create | Verb::Merge | Verb::Teardown | Verb::Resume
    );
    let verb_ok = match (&run.begun, verb) {
        // The announced step's result.
        (Some(f), v) if v == f.step.verb() => return Ok(()),
        // Taking over a step whose owner is gone (`decide` requires the reading that
        // shows it): the same step again, or `resume` (which observes what a crashed
        // `create` left, and re-reads git for any step where the stage resumes).
        (Some(f), Verb::Begin(m)) if m == f.step && m != Mutation::Create => return Ok(()),
        (Some(f), Verb::Begin(Mutation::Resume)) if f.step == Mutation::Create => return Ok(()),
        (Some(_), Verb::Begin(Mutation::Resume)) => Verb::Resume,
        (Some(f), _) => {
            let way = match f.step {
                Mutation::Create => "`cairn ship resume` observes what it left".to_owned(),
                m => format!(
                    "`cairn ship {}` or `cairn ship resume` takes it over",
                    m.verb().name()
                ),
            };
            return no(
                "nothing-in-flight",
                &format!(
                    "a `{}` is in flight: its owner records its result; once the owner is gone, {way}",
                    f.step.verb().name()
                ),
            );
        }
        (None, v) if mutating => {
            return no(
                "begun-first",
                &format!("announce the step first: `begin` `{}`", v.name()),
            )
        }
        (None, Verb::Begin(m)) => m.verb(),
        (None, v) => v,
    };
    let ok = match verb_ok {
        Verb::Open | Verb::Begin(_) => false,
        Verb::Preflight => matches!(
            stage,
            Stage::Preflighted { .. }
                | Stage::CreationFailed { .. }
                | Stage::PermissionBoundary {
                    worktree: false,
                    ..
                }
        ),
        Verb::Create => {
            matches!(stage, Stage::Preflighted { outcome } if outcome.may_create_worktree())
        }
        Verb::Verify => matches!(stage, Stage::Phase1),
        Verb::AnswerScope => matches!(stage, Stage::ScopeTripped { .. }),
        Verb::Refine => {
            matches!(stage, Stage::Phase2)
                || matches!(stage, Stage::Stopped { failure: Failure::Refine, code, .. } if code == "flapping")
        }
        Verb::PreMerge => matches!(
            stage,
            Stage::Phase3 | Stage::MergeReady { .. } | Stage::MergeRejected { .. }
        ),
        Verb::Merge => matches!(
            stage,
            Stage::MergeReady { tip: Some(_) } | Stage::MergeRejected { tip: Some(_) }
        ),
        Verb::Teardown => matches!(stage, Stage::Merged | Stage::TeardownPending { .. }),
        Verb::Resume => stage.has_worktree() && !matches!(stage, Stage::TeardownPending { .. }),
        Verb::AnswerTiebreaker => matches!(stage, Stage::Tiebreaker { .. }),
        // At the boundary nothing is retried (never loop).
        Verb::ExternalOp => !matches!(stage, Stage::PermissionBoundary { .. }),
        Verb::Abandon => {
            matches!(stage, Stage::Preflighted { outcome } if !outcome.may_create_worktree())
                || matches!(
                    stage,
                    Stage::Stopped { .. }
                        | Stage::Tiebreaker { .. }
                        | Stage::CreationFailed { .. }
                        | Stage::PermissionBoundary { .. }
                )
        }
    };
    if ok {
        return Ok(());
    }
    let why = match verb_ok {
        Verb::Create => "only a `clean` preflight may lead to `git worktree add`",
        Verb::Verify => "phase-1 verification needs a created worktree awaiting its report",
        Verb::AnswerScope => "no scope trip is pending",
        Verb::Refine => "refine runs in phase 2 (or as a broadening run after `flapping`)",
        Verb::PreMerge => "pre-merge checks run in phase 3, after refine passed",
        Verb::Merge => {
            "merge only the tip the pre-merge checks passed (once more after one rejection)"
        }
        Verb::Teardown => {
            "teardown only after the merge, or when the recovery table says tear down"
        }
        Verb::Preflight => {
            "the preflight runs again before the worktree is made (or after a failed creation)"
        }
        Verb::Resume => "resume needs a worktree this stream created and a stage that can resume",
        Verb::AnswerTiebreaker => "no stop tiebreaker is pending",
        Verb::ExternalOp => "at the permission boundary nothing is retried: resume or abandon",
        Verb::Abandon => "abandon a blocked preflight, a failed creation or a stopped run",
        _ => "not in this stage",
    };
    no("stage-admits", why)
}
