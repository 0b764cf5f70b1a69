//! [`admits`]: the pure guard every verb passes before anything happens, which
//! verbs each stage (and the git mutation in flight) lets through.

use super::super::command::Verb;
use super::super::recovery::Failure;
use super::super::state::{is_terminal, Mutation, Stage, State};
use super::guards::Guard;
use crate::Rejection;

/// The pure guard every verb passes before anything happens: the CLI asks it
/// before it touches git, and `decide` starts with it.
pub fn admits(state: &State, verb: Verb) -> Result<(), Rejection> {
    let g = Guard {
        state,
        verb: verb.name(),
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
        (State::Active { .. }, Verb::Open) => {
            return no(
                "not-opened",
                "this SHORT_ID already has a ship run; re-run `cairn ship preflight`",
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
    let verb_ok = match (run.begun, verb) {
        // The announced step's result.
        (Some(m), v) if v == m.verb() => return Ok(()),
        // A crashed `create` is observed by `resume` (the add may or may not have run).
        (Some(Mutation::Create), Verb::Resume) => return Ok(()),
        // Any other crashed step: `resume` where the stage admits it (a crashed
        // teardown is re-run instead: it is idempotent).
        (Some(_), Verb::Resume) => Verb::Resume,
        (Some(_), _) => {
            return no(
                "nothing-in-flight",
                "a git mutation is in flight: record its result, or `cairn ship resume`",
            )
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
        Verb::Preflight => matches!(stage, Stage::Preflighted { .. }),
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
        Verb::Resume => !matches!(
            stage,
            Stage::Preflighted { .. } | Stage::TeardownPending { .. }
        ),
        Verb::AnswerTiebreaker => matches!(stage, Stage::Tiebreaker { .. }),
        Verb::ExternalOp => true,
        Verb::Abandon => {
            matches!(stage, Stage::Preflighted { outcome } if !outcome.may_create_worktree())
                || matches!(stage, Stage::Stopped { .. })
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
        Verb::Resume => "resume needs a worktree this stream created and a stage that can resume",
        Verb::AnswerTiebreaker => "no stop tiebreaker is pending",
        Verb::Abandon => "abandon a blocked preflight or a stopped run",
        _ => "not in this stage",
    };
    no("stage-admits", why)
}
