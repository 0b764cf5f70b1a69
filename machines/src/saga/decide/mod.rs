//! `decide`: every guard of the saga, one function per command. A save needs no
//! thread (it mints one); every other command needs the thread a save left.

mod board;
mod boundary;
mod qa;
mod release;
mod review;
mod save;
mod ship_link;
mod turn;
mod typed;

pub use qa::qa_outcome;
pub use review::{doc_review_blocks, doc_review_passed};

use super::command::{command_name, Command};
use super::event::Event;
use super::state::{state_name, State, Thread};
use super::NAME;
use crate::{Context, Rejection, Violation};

/// The events `command` produces in `state`, or every reason it is refused.
pub(super) fn decide(
    state: &State,
    command: &Command,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let r = Refuse {
        state,
        command: command_name(command),
    };
    if let Err((field, rule, m)) = typed::typed(command) {
        return r.no(rule, Some(&field), &m);
    }
    match command {
        Command::Save { saga_id, save } => save::decide_save(&r, saga_id, save, ctx),
        Command::Qa {
            scenarios,
            extension,
            limits,
        } => qa::decide_qa(&r, r.thread()?, scenarios, *extension, *limits),
        Command::DocReview { review } => {
            r.thread()?;
            review::decide_doc_review(&r, review)
        }
        Command::Review { review, from } => {
            review::decide_review(&r, r.thread()?, review, from.as_deref(), ctx)
        }
        Command::Override {
            gate,
            rationale,
            operator,
        } => review::decide_override(&r, r.thread()?, *gate, rationale, operator),
        Command::PrReady {
            repo,
            handed,
            runs,
            repository,
        } => review::decide_pr_ready(&r, r.thread()?, repo, handed, (runs, repository)),
        Command::Adjust { directive } => boundary::decide_adjust(&r, r.thread()?, directive),
        Command::Boundary { boundary } => boundary::decide_boundary(&r, r.thread()?, boundary),
        Command::TakeTurn {
            unit,
            branch,
            merge_worktree,
            holder,
        } => turn::decide_take_turn(&r, r.thread()?, unit, branch, merge_worktree, holder),
        Command::ReleaseTurn {
            unit,
            repo,
            target,
            ancestor,
            merge_head,
            repository,
        } => turn::decide_release_turn(
            &r,
            r.thread()?,
            turn::Readings {
                unit,
                repo,
                target,
                ancestor,
                merge_head: merge_head.as_deref(),
                repository,
            },
            ctx,
        ),
        Command::MarkMerged {
            unit,
            holder,
            merged_tip,
            repo,
            target,
            runs,
            from,
            repository,
        } => turn::decide_mark_merged(
            &r,
            r.thread()?,
            turn::Merge {
                unit,
                holder,
                merged_tip,
                repo,
                target,
                runs,
                from: from.as_deref(),
                repository,
            },
            ctx,
        ),
        Command::Release {
            release,
            landed,
            from,
        } => release::decide_release(
            &r,
            r.thread()?,
            release,
            release::Landed {
                reading: landed.as_deref(),
                from: from.as_deref(),
            },
            ctx,
        ),
        Command::Board {
            boundary,
            written_field,
            deployment,
            retro_trigger_fired,
            pair,
        } => board::decide_board(
            &r,
            r.thread()?,
            boundary,
            written_field,
            deployment.as_ref(),
            *retro_trigger_fired,
            pair.as_ref(),
        ),
    }
}

/// The rejections of one command in one state: every refusal names the saga, the
/// command and the state it was in.
struct Refuse<'a> {
    state: &'a State,
    command: &'static str,
}

impl<'a> Refuse<'a> {
    /// A rejection with one violation.
    fn rejection(&self, predicate: &str, field: Option<&str>, message: &str) -> Rejection {
        Rejection::single(
            NAME,
            self.command,
            state_name(self.state),
            Violation::new(predicate, field, message),
        )
    }

    /// Refuses with one violation.
    fn no<T>(&self, predicate: &str, field: Option<&str>, message: &str) -> Result<T, Rejection> {
        Err(self.rejection(predicate, field, message))
    }

    /// Refuses with every violation collected, if there is any.
    fn all(&self, violations: Vec<Violation>) -> Result<(), Rejection> {
        match Rejection::from_violations(NAME, self.command, state_name(self.state), violations) {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// `field` holds more than whitespace.
    fn nonempty(&self, field: &str, v: &str) -> Result<(), Rejection> {
        if v.trim().is_empty() {
            self.no(
                "nonempty-string",
                Some(field),
                &format!("`{field}` is empty"),
            )
        } else {
            Ok(())
        }
    }

    /// The thread a save left: every command but `save` needs one.
    fn thread(&self) -> Result<&'a Thread, Rejection> {
        match self.state.thread() {
            Some(t) => Ok(t),
            None => self.no("thread", None, "no thread is saved under this id"),
        }
    }
}
