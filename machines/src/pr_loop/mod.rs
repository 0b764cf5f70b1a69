//! `pr-loop`: the PR continuation loop (seed `002_5521956d0644431d`, Phase 0.4 and
//! the round-N loop after PR-ready) as a total, ordered transition table.
//!
//! One stream per PR (`pr-loop/<host>/<owner>/<repo>/pull/<n>`, from the PR's one
//! canonical identity). Each observation records its classification; a
//! round-starting row on a new head or verdict starts a round (rounds are
//! `rounds_seen`, continuing the saga thread's; `next_round` is derived, never
//! set); rows that merge or pause set status and stop. Merging, marking ready and
//! requesting review are offered and confirmed, never automatic: `merged-by-loop`
//! is reachable only through `merge-confirmed`, which is reachable only through
//! `merge-offered`, and is recorded only on cairn's own observation of the merge.
//! The review is fresh, and a merge offered, only on cairn's own git runs; the tier
//! is the journal's.
//!
//! Layout: `reading` (the strict gh reading), `classify` (the nine-row table),
//! `escalation` (one rung, clamped), `identity` (the canonical PR URL) and `plan`
//! (the argv cairn runs and their readers) are the pure rules; `input` the observe
//! document, cairn's observations and their classification; `state`, `command`,
//! `event`, `decide` (one function per command), `evolve` and `graph` the machine.

pub mod classify;
pub mod escalation;
// A PR's identity is shared vocabulary (park reads a PR loop by it).
pub use crate::evidence::pr as identity;
pub mod plan;
pub mod reading;

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod input;
mod state;

pub use command::{Command, Decision, Disposition, MergeEvidence, Mode, Offer};
pub use event::{Event, MergeVia};
pub use identity::{canonical_pr, stream_instance};
pub use input::{
    classify_input, parse_document, FailureShape, FreshnessRecord, FreshnessRuns, ObserveInput,
    Observed, Placed, ReadingSource,
};
pub use state::{Loop, RoundBasis, State};

pub use crate::evidence::next_round;

use crate::reads::Fact;
use crate::{Context, GraphSpec, Machine, Rejection};

/// The machine's name.
pub const NAME: &str = crate::evidence::pr::LOOP_MACHINE;

/// The pr-loop machine.
pub struct PrLoop;

impl Machine for PrLoop {
    const NAME: &'static str = NAME;
    // 3 (#21): an observation may name its saga thread (`from`): the engine reads
    // it, and a reviewed SHA or rounds it contradicts are refused.
    // 4 (#21): a loop that follows its thread counts the rounds; the thread's
    // list, which takes them at its next save, may lag without contradiction; a
    // merge is confirmed only while the thread's PR-ready stands for the head
    // the merge was offered at; a merge read from git is read on the branch the
    // PR merges into, which a reading named (`baseRefName`).
    // 5 (#21): the loop's fact states the base a reading named, so a ship run
    // merging into that base waits for the operator's confirmation; only a base
    // cairn's gh reading named bears a merge read from git; the loops that follow
    // one thread count its rounds in one sequence (`Sieve::ThreadLoops`).
    // 6: an array where a reading or input reads an object is refused at its
    // place, not read by position (`wire::typed`; helper-54).
    // 7: an operator is a name a person reads, a reason one line of visible
    // text; rounds are below u32::MAX (helper-75).
    // 8: a tier rung is a printable-ASCII name; operators in NFC, never a lone
    // combining mark (helper-76).
    const RULES_VERSION: u32 = 8;
    const RETIRED_RULES: &'static [u32] = &[1, 2, 3, 4, 5, 6, 7];
    /// The approval token of an escalation proposal.
    const FRESH_IDS: usize = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Idle
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command, ctx)
    }

    fn evolve(state: State, event: &Event) -> State {
        evolve::evolve(state, event)
    }

    fn state_name(state: &State) -> &'static str {
        state::state_name(state)
    }

    fn event_name(event: &Event) -> &'static str {
        event::event_name(event)
    }

    fn command_name(command: &Command) -> &'static str {
        command::command_name(command)
    }

    fn fact(state: &State) -> Option<Fact> {
        // What other lifecycles rely on: whether the loop saw its PR merged
        // (`complete` is reached only on cairn's reading of the merge), whether
        // it still speaks for the PR, and the thread it follows with the rounds it
        // counted (the thread's rounds are these, `saga save`).
        let l = state.looped();
        Some(Fact::PrLoop {
            merged: matches!(state, State::Complete { .. }),
            live: !matches!(state, State::Abandoned { .. }),
            thread: l.and_then(|l| l.thread.clone()),
            rounds_seen: l.map(|l| l.rounds_seen.clone()).unwrap_or_default(),
            // Only a base cairn's own reading named: a reading on stdin is the
            // caller's word, and a ship run's hold must not rest on it.
            base: l.filter(|l| l.base_observed).and_then(|l| l.base.clone()),
        })
    }

    fn scans(_state: &State, command: &Command) -> Vec<crate::reads::Sieve> {
        // An observation that names its thread counts the thread's rounds with
        // every other loop that follows it (`decide::observe`).
        match command {
            Command::Observe { from: Some(_), .. } => vec![crate::reads::Sieve::ThreadLoops],
            _ => Vec::new(),
        }
    }

    fn reads(state: &State, command: &Command) -> Vec<String> {
        // The saga thread an observation names: its review and rounds outrank
        // the document's (`decide::observe`); a merge confirmed for a loop that
        // follows a thread needs its PR-ready standing (`decide::confirm`).
        match command {
            Command::Observe {
                from: Some(thread), ..
            } if crate::reads::is_saga_stream(thread) => vec![thread.clone()],
            Command::Confirm {
                what: command::Offer::Merge,
                ..
            } => state
                .looped()
                .and_then(|l| l.thread.clone())
                .filter(|t| crate::reads::is_saga_stream(t))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    fn recorded_by(command: &Command) -> Option<&'static str> {
        match command {
            // cairn's own gh reading and freshness runs.
            Command::Observe { observed, .. } if !observed.is_empty() => Some("pr observe"),
            // cairn's own reading of the merge.
            Command::RecordMerge { .. } => Some("pr record-merge"),
            Command::Observe { .. }
            | Command::OfferReviewRequest
            | Command::Confirm { .. }
            | Command::ResolveEscalation { .. }
            | Command::Dispose { .. } => None,
        }
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pr_loop_graph_is_sound() {
        assert_eq!(PrLoop::graph().defects(), vec![]);
    }
}
