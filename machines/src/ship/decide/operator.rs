//! What the operator (or the caller on its behalf) records: the scope-gate answer,
//! the stop-tiebreaker answer, an external operation's attempt, and abandoning.

use super::super::command::ScopeAnswer;
use super::super::event::Event;
use super::super::recovery::{self, OpClass};
use super::super::state::Stage;
use super::guards::Guard;
use crate::Rejection;

/// `answer-scope` (§phase-1d scope gate): the operator is named; `proceed` goes on
/// to phase 2, `abort` tears down.
pub(super) fn decide_answer_scope(
    guard: Guard<'_>,
    answer: ScopeAnswer,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    guard.nonempty("operator", operator)?;
    let operator = operator.to_owned();
    Ok(vec![match answer {
        ScopeAnswer::Proceed => Event::ScopeProceeded { operator },
        ScopeAnswer::Abort => Event::ScopeAborted { operator },
    }])
}

/// `answer-tiebreaker` (§tiebreakers-shared 3 and 5): the pending tiebreaker is
/// answered, with a disposition and an operator; the leaf of its phase is respawned.
pub(super) fn decide_answer_tiebreaker(
    guard: Guard<'_>,
    number: u8,
    disposition: &str,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    let Some(Stage::Tiebreaker {
        number: pending, ..
    }) = guard.state.stage()
    else {
        return Err(guard.reject("stage-admits", None, "no stop tiebreaker is pending"));
    };
    if number != *pending {
        return Err(guard.bad(
            "number",
            "pending-tiebreaker",
            &format!("tiebreaker {pending} is pending"),
        ));
    }
    guard.nonempty("disposition", disposition)?;
    guard.nonempty("operator", operator)?;
    let (disposition, operator) = (disposition.to_owned(), operator.to_owned());
    Ok(vec![match guard.state.stage() {
        Some(Stage::Tiebreaker { phase: 3, .. }) => Event::RespawnedPhase3 {
            number,
            disposition,
            operator,
        },
        _ => Event::RespawnedPhase2 {
            number,
            disposition,
            operator,
        },
    }])
}

/// `external-op` (§external-op-classification): the operation is named; daemon
/// management only after a normal command failed; at most one retry after a
/// denial, and the second denial of a class is the permission boundary.
pub(super) fn decide_external_op(
    guard: Guard<'_>,
    class: OpClass,
    op: &str,
    denied: bool,
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    guard.nonempty("op", op)?;
    // Daemon management is reactive only: after a normal command failed this session.
    let failed = run
        .denials
        .iter()
        .any(|(c, n)| *c != OpClass::DaemonManagement && *n > 0);
    if class == OpClass::DaemonManagement && !failed {
        return Err(guard.reject(
            "reactive-only",
            Some("class"),
            "daemon management runs only after a normal command failed (record that denial first)",
        ));
    }
    let before = run.denials.get(&class).copied().unwrap_or(0);
    let attempt = before + 1;
    let mut events = vec![Event::ExternalOpRecorded {
        class,
        op: op.to_owned(),
        denied,
        attempt,
    }];
    if denied && before >= 1 {
        events.push(Event::PermissionBoundaryReached {
            class,
            op: op.to_owned(),
            code: recovery::denial_code(class).into(),
        });
    }
    Ok(events)
}

/// `abandon`: a reason and an operator; a run whose worktree and branch exist is
/// abandoned into their teardown, never left behind.
pub(super) fn decide_abandon(
    guard: Guard<'_>,
    reason: &str,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    guard.nonempty("reason", reason)?;
    guard.nonempty("operator", operator)?;
    let (reason, operator) = (reason.to_owned(), operator.to_owned());
    Ok(vec![
        if guard.state.stage().is_some_and(Stage::has_worktree) {
            Event::AbandonedForTeardown { reason, operator }
        } else {
            Event::Abandoned { reason, operator }
        },
    ])
}
