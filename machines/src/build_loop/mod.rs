//! `build-loop`: the build loop (`build_loop.py`'s contract) as a machine, one
//! stream per unit. The written exit criterion is read from the run record, its
//! commands split into argv without a shell, each result gets a status (`pass |
//! fail | could-not-execute`), and each iteration is journalled green or not green;
//! `journal audit` re-derives the greenness from the recorded runs.
//!
//! Layout: `criterion` (reading, word splitting, the plan), `catalogue` (the lens
//! catalogue and the named scanners, as data) and
//! `iteration` (statuses and the iteration record) are the pure half the CLI also
//! uses; `state`, `command`, `event`, `decide`, `evolve` and `graph` are the machine.

pub mod catalogue;
pub mod criterion;
pub mod iteration;

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod state;
pub mod tree;
mod verdict;

pub use catalogue::{catalogue_check, check_map, CheckMap, Uncovered};
pub use command::Command;
pub use criterion::{criterion, planned, split_words, ExitCriterion, Named, Part, Preview};
pub use event::Event;
pub use iteration::{iteration, status, CheckRun, CheckStatus, RECORD_SCHEMA};
pub use state::LoopState;
pub use tree::TreeHeld;

use crate::{Context, GraphSpec, Machine, Rejection};

/// The `build-loop` machine's name.
pub const NAME: &str = "build-loop";

/// The machine.
pub struct BuildLoop;

impl Machine for BuildLoop {
    const NAME: &'static str = NAME;
    // 2: a criterion with no check is never green; a check killed by a signal (not
    // cairn's timeout) is a `fail`; a bare-list baseline and `{command}`-only checks
    // are read as the reference reads them.
    // 3: an iteration carries the tree its checks ran in, read before and after
    // them; checks that ran on uncommitted edits or while HEAD moved are not
    // green (helper-79: both had a commit whose own check fails handed to code
    // review).
    // 4: a green iteration names the repository its checks ran in (its common
    // dir and identity on disk), which PR-ready holds the review's freshness to
    // (saga rules 10; helper-80).
    // 5: the run record shows in the tree's status only as untracked (helper-80:
    // `--record` naming a tracked file the check read hid its edit).
    // 6: the tree is watched while the checks run (the work node's inotify
    // watch): a change put back between the readings is not green (helper-80).
    // 7: a status that could not be read says why (its reading's first line).
    const RULES_VERSION: u32 = 7;
    const RETIRED_RULES: &'static [u32] = &[1, 2, 3, 4, 5, 6];

    fn verdict(_state: &LoopState, events: &[Event]) -> crate::Verdict {
        verdict::verdict(events)
    }

    fn fact(state: &LoopState) -> Option<crate::reads::Fact> {
        // The revision a saga's review may name by reference.
        Some(crate::reads::Fact::BuildLoop {
            handed: state.handed_to_code_review.clone(),
        })
    }
    type State = LoopState;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> LoopState {
        LoopState::default()
    }

    fn decide(
        state: &LoopState,
        command: &Command,
        _ctx: &Context,
    ) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command)
    }

    fn evolve(state: LoopState, event: &Event) -> LoopState {
        evolve::evolve(state, event)
    }

    fn state_name(state: &LoopState) -> &'static str {
        state::state_name(state)
    }

    fn event_name(event: &Event) -> &'static str {
        event::event_name(event)
    }

    fn command_name(command: &Command) -> &'static str {
        command::command_name(command)
    }

    fn recorded_by(command: &Command) -> Option<&'static str> {
        match command {
            // cairn runs the criterion's checks itself and reads the run record.
            Command::Iterate { .. } => Some("build-loop"),
        }
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}
