//! `evolve`: applies one event to the state. Total; validates nothing (every
//! guard is in `decide`).

use super::{Event, Holder, NodeRun, ReviewVerdict, State, DEFAULT_BUDGET};

/// Applies one event.
pub(super) fn evolve(state: State, event: &Event) -> State {
    let mut run = match (&state, event) {
        (State::Unplanned, Event::Planned { address, receipt }) => {
            return State::Planned {
                run: Box::new(NodeRun {
                    address: address.clone(),
                    plan: Some(receipt.clone()),
                    worktree: None,
                    repository: None,
                    identity: None,
                    remediation_rounds: 0,
                    budget: DEFAULT_BUDGET,
                    verifications: vec![],
                    reviews: vec![],
                    merged: None,
                    merge_mark: 0,
                    merged_branch: None,
                    done_session: None,
                    scope: None,
                    approved_touches: None,
                    amended_after_merge: vec![],
                    amended_since: vec![],
                }),
            }
        }
        (State::Unplanned, _) => return state,
        _ => match state.run() {
            Some(r) => Box::new(r.clone()),
            None => return state,
        },
    };
    match event {
        Event::Planned { receipt, .. } => {
            run.plan = Some(receipt.clone());
            run.approved_touches = None;
            State::Planned { run }
        }
        Event::CriterionAmended { request, .. } => {
            let id = &request.criterion_id;
            if run.merged.is_some() && !run.amended_after_merge.contains(id) {
                run.amended_after_merge.push(id.clone());
            }
            if !run.amended_since.contains(id) {
                run.amended_since.push(id.clone());
            }
            state_with(state, run)
        }
        Event::ScopeRaised { request } => {
            run.scope = Some(request.clone());
            state_with(state, run)
        }
        Event::ScopePassedUp { .. } => {
            if let Some(r) = run.scope.as_mut() {
                r.holder = Holder::User;
            }
            state_with(state, run)
        }
        Event::ScopeApproved { add_touches, .. } => {
            run.scope = None;
            run.approved_touches = Some(add_touches.clone());
            State::AmendmentApproved { run }
        }
        Event::ScopeNotApproved { .. } => {
            run.scope = None;
            state_with(state, run)
        }
        Event::Dispatched {
            worktree_path,
            budget,
            repository,
            identity,
            ..
        } => {
            run.worktree = Some(worktree_path.clone());
            run.repository = repository.clone();
            run.identity = identity.clone();
            run.budget = *budget;
            State::Dispatched { run }
        }
        Event::NotDispatched { .. } => State::Planned { run },
        Event::Verified { verification } | Event::VerificationFailed { verification } => {
            run.verifications.push(verification.clone());
            run.amended_since.clear();
            match state {
                State::Merged { .. } => State::Merged { run },
                State::Done { .. } => State::Done { run },
                _ if verification.passed => State::Verified { run },
                _ => State::Rejected { run },
            }
        }
        Event::ReviewRecorded {
            verdict,
            failed_criteria,
            ..
        } => {
            run.reviews.push((*verdict, failed_criteria.clone()));
            match verdict {
                ReviewVerdict::Reject => State::Rejected { run },
                ReviewVerdict::Approve => match state {
                    State::Dispatched { .. } => State::Dispatched { run },
                    _ => State::Verified { run },
                },
            }
        }
        Event::RemediationDispatched { round, .. } => {
            run.remediation_rounds = *round;
            State::Dispatched { run }
        }
        Event::Escalated { .. } => State::Escalated { run },
        Event::Merged {
            merged_tree,
            commit,
            branch,
        } => {
            run.merged = Some((merged_tree.clone(), commit.clone()));
            run.merged_branch = branch.clone();
            run.merge_mark = run.verifications.len();
            State::Merged { run }
        }
        Event::Done { session } => {
            run.done_session = Some(session.clone());
            State::Done { run }
        }
    }
}

/// The same stage as `state`, carrying `run`.
fn state_with(state: State, run: Box<NodeRun>) -> State {
    match state {
        State::Unplanned => State::Unplanned,
        State::Planned { .. } => State::Planned { run },
        State::Dispatched { .. } => State::Dispatched { run },
        State::Verified { .. } => State::Verified { run },
        State::Rejected { .. } => State::Rejected { run },
        State::Escalated { .. } => State::Escalated { run },
        State::Merged { .. } => State::Merged { run },
        State::AmendmentApproved { .. } => State::AmendmentApproved { run },
        State::Done { .. } => State::Done { run },
    }
}
