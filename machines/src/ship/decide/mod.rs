//! `decide`: [`admits`] first, then one function per command, each listing its
//! predicates in the order the seed states them. Every gate outcome is derived
//! from the recorded runs, never stated by the caller.

mod admits;
mod begin;
mod create;
mod guards;
mod merge;
mod open;
mod operator;
mod pre_merge;
mod refine;
mod resume;
mod teardown;
mod verify;

pub use admits::admits;
pub(crate) use admits::check;
pub use resume::resume_phase;

use super::command::{Command, Verb};
use super::event::Event;
use super::state::State;
use crate::{Context, Rejection};
use guards::Guard;

/// The events `command` produces in `state`, or every reason it is refused.
pub(super) fn decide(
    state: &State,
    command: &Command,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let verb = Verb::of(command);
    admits(state, verb)?;
    let guard = Guard {
        state,
        verb: match verb {
            Verb::Begin(m) => m.verb().name(),
            v => v.name(),
        },
    };
    match command {
        Command::Begin { step, claim } => begin::decide_begin(guard, *step, claim, ctx),
        Command::Open {
            params,
            anchor,
            runs,
            review_status,
            advisory,
            acts_for,
        } => open::decide_open(
            guard,
            params,
            anchor,
            runs,
            review_status,
            advisory,
            acts_for.as_deref(),
        ),
        Command::Preflight {
            runs,
            review_status,
            advisory,
        } => open::decide_preflight(guard, runs, review_status, advisory),
        Command::Create {
            anchor,
            before,
            add,
            verify,
            cleanup,
        } => create::decide_create(
            guard,
            create::CreateRuns {
                anchor,
                before,
                add,
                verify,
                cleanup,
            },
        ),
        Command::Verify { report, runs } => verify::decide_verify(guard, report, runs),
        Command::AnswerScope { answer, operator } => {
            operator::decide_answer_scope(guard, *answer, operator)
        }
        Command::Refine { report, runs } => refine::decide_refine(guard, report, runs),
        Command::PreMerge {
            report,
            runs,
            work_nodes,
        } => pre_merge::decide_pre_merge(guard, report, runs, work_nodes, ctx),
        Command::Merge {
            anchor,
            before,
            merge,
            after,
        } => merge::decide_merge(guard, anchor, before, merge, after),
        Command::Teardown {
            anchor,
            before,
            remove,
            delete,
        } => teardown::decide_teardown(guard, anchor, before, remove, delete),
        Command::Resume {
            anchor,
            runs,
            reattach,
            ahead,
            phase1d,
        } => resume::decide_resume(guard, anchor, runs, reattach, ahead, phase1d),
        Command::AnswerTiebreaker {
            number,
            disposition,
            operator,
        } => operator::decide_answer_tiebreaker(guard, *number, disposition, operator),
        Command::ExternalOp { class, op, denied } => {
            operator::decide_external_op(guard, *class, op, *denied)
        }
        Command::Abandon { reason, operator } => operator::decide_abandon(guard, reason, operator),
    }
}
