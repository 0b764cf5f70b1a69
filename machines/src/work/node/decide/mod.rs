//! `decide`: every guard of the work-node machine. An escalated node refuses
//! everything, a done node all but a re-verification and an amendment, a
//! rejected node with its budget spent all but its escalation; otherwise each
//! command goes to its own function, which lists its predicates in the seed's
//! order and returns at the first that fails.

mod amend;
mod dispatch;
mod done;
mod guards;
mod plan;
mod remediation;
mod scope;
mod typed;
mod verify;

pub use dispatch::{dispatch_plan, identity_plan};
pub use done::{done_plan, merge_admits, verified_worker_commit};
pub use verify::{reverify_plan, verify_admits};

use self::amend::decide_amend_criterion;
use self::dispatch::decide_dispatch;
use self::done::{decide_done, decide_merge};
use self::guards::Guard;
use self::plan::decide_plan;
use self::remediation::{decide_escalate, decide_remediate, decide_review};
use self::scope::{decide_pass_up, decide_raise_scope, decide_resolve_scope};
use self::verify::decide_verify;
use super::{Command, Event, Observed, State};
use crate::{Context, Rejection};

/// The events `command` produces in `state`, or every reason why not.
pub(super) fn decide(
    state: &State,
    command: &Command,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let g = Guard {
        state,
        command: command.name(),
    };
    g.node_open()?;
    if let Err((field, rule, m)) = typed::typed(command, ctx) {
        return g.no(rule, Some(&field), &m);
    }
    match command {
        Command::AmendCriterion {
            spec,
            draft,
            request,
        } => decide_amend_criterion(g, spec, draft.as_deref(), request, ctx),
        Command::RaiseScope {
            target,
            add_touches,
            change,
            rationale,
        } => decide_raise_scope(g, target, add_touches, change, rationale, ctx),
        Command::PassUp {
            request_id,
            context,
            recommendation,
        } => decide_pass_up(g, request_id, context, recommendation),
        Command::ResolveScope {
            request_id,
            selected,
            note,
            custom_instruction,
            on_behalf_of_user,
            operator,
        } => decide_resolve_scope(
            g,
            request_id,
            selected,
            note,
            custom_instruction.as_deref(),
            *on_behalf_of_user,
            operator,
        ),
        Command::Plan {
            spec,
            address,
            receipt,
            draft,
        } => decide_plan(g, spec, draft.as_deref(), address, receipt),
        Command::Dispatch {
            run_id,
            worktree_path,
            expected_commit,
            budget,
            finding,
            repository,
            identity,
        } => decide_dispatch(
            g,
            dispatch::Receipt {
                run_id: run_id.as_deref(),
                worktree_path,
                expected_commit,
                budget: *budget,
                finding: finding.as_deref(),
                repository: repository.as_ref(),
                identity: identity.as_ref(),
            },
            ctx,
        ),
        Command::Verify {
            spec,
            tree,
            runs,
            checklist,
            draft,
            after,
            contains,
        } => decide_verify(
            g,
            (spec, draft.as_deref()),
            Observed {
                tree,
                after: after.as_deref(),
                runs,
                checklist,
                used_challenges: &[],
            },
            contains.as_ref(),
            ctx,
        ),
        Command::Review {
            verdict,
            failed_criteria,
            concerns,
        } => decide_review(g, *verdict, failed_criteria, concerns),
        Command::Remediate {
            run_id,
            worktree_path,
        } => decide_remediate(g, run_id, worktree_path),
        Command::Escalate { reason } => decide_escalate(g, reason),
        Command::Merge {
            merged_tree,
            commit,
            spec,
            draft,
            reading,
            identity,
        } => decide_merge(
            g,
            (spec, draft.as_deref()),
            merged_tree,
            commit,
            (reading.as_deref(), identity.as_ref()),
        ),
        Command::Done {
            spec,
            deps_done,
            draft,
            holds,
            tree,
        } => decide_done(
            g,
            (spec, draft.as_deref()),
            (deps_done, holds.as_ref(), tree.as_deref()),
            ctx,
        ),
    }
}
