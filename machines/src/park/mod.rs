//! `park`: the park-work lifecycle (seed `000_a138a20f5c719cdf`). Decide whether a
//! work episode is mechanically safe to close; park incomplete work behind a
//! verified durable checkpoint and receipt; refuse active resume.
//!
//! One stream per episode (`park/ep-<uuid>`):
//!
//! ```text
//! fresh ─attempt-prepared→ prepared ─checkpoint-authorized→ checkpoint-authorized
//!   prepared | checkpoint-authorized ─receipt-authorized→ receipt-authorized
//!   receipt-authorized ─receipt-validated→ receipt-validated ─receipt-confirmed→ safe-to-close
//! ```
//!
//! An unsafe evaluation or an unproven read-back appends nothing. Only
//! `receipt-confirmed` carries `safe_to_close`, and it is reachable only through a
//! receipt validated for the same attempt and read back byte for byte.
//!
//! Layout: `state` (the episode and its ids), `command`, `event`, `decide` (one
//! function per command), `evolve`, `graph` are the machine; `observation`,
//! `fold`, `receipt`, `prepare`, `bind` and `gate` are the helper verbs it runs.

pub mod bind;
pub mod document;
pub mod fold;
pub mod gate;
pub mod observation;
pub mod prepare;
pub mod receipt;
pub mod vcs;
pub use crate::evidence::wire; // shared by every machine; kept under its old path

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod state;

pub use command::{Command, Observed};
pub use event::Event;
pub use state::{
    AttemptId, AttemptKind, Episode, EpisodeId, EpisodeKind, IntentId, IntentKind, State,
};

pub use crate::evidence::sha256_hex;

use crate::{Context, GraphSpec, Machine, Rejection};

/// The machine's name.
pub const NAME: &str = "park";

/// The park machine.
pub struct Park;

impl Machine for Park {
    const NAME: &'static str = NAME;
    /// 2: the helper's wire (issue #19): the binding's five commands, a detected
    /// anchor refused until confirmed, a drifted resume target a `fail`, the
    /// helper's reasons and read-back, preservation evidence of its phase, heads
    /// that agree, a malformed prior refused, an empty branch or short head unbound.
    // 3: evaluate reads the bead's PR loop (journal-agrees, pr-identity).
    // 4: evaluate reads every live work-node dispatch: one in the bound repository
    //    (or one cairn cannot place) contradicts `no_active_dispatch: pass`.
    // 5 (#21): confirm-readback reads them again: a dispatch in the bound
    // repository since the receipt was authorized keeps it from safe-to-close
    // (the authorization records the nodes placed there, `Sieve::PlacedNodes`,
    // and a node that moved since refuses the read-back).
    // 6: an array where a document reads an object is refused at its place, not
    // read by position (`wire::typed`; helper-54).
    const RULES_VERSION: u32 = 6;
    const RETIRED_RULES: &'static [u32] = &[1, 2, 3, 4, 5];
    const FRESH_IDS: usize = 3;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Fresh
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

    fn recorded_by(command: &Command) -> Option<&'static str> {
        // Every park command is the caller's document, exactly as the helper
        // verbs take it on stdin (`park observe-vcs` observes, but records nothing).
        match command {
            Command::PrepareAttempt { .. }
            | Command::Evaluate { .. }
            | Command::ValidateReceipt { .. }
            | Command::ConfirmReadback { .. } => None,
        }
    }

    fn reads(_state: &State, command: &Command) -> Vec<String> {
        // A PR-backed bead's PR loop, when the journal has one: its word on the
        // merge outranks the observation's (`decide::evaluate`).
        match command {
            Command::Evaluate { observation, .. } => observation
                .document()
                .get("bead")
                .and_then(|b| b.get("pr_url"))
                .and_then(serde_json::Value::as_str)
                .and_then(crate::evidence::pr::loop_stream)
                .into_iter()
                .collect(),
            Command::PrepareAttempt { .. }
            | Command::ValidateReceipt { .. }
            | Command::ConfirmReadback { .. } => Vec::new(),
        }
    }

    fn scans(_state: &State, command: &Command) -> Vec<crate::reads::Sieve> {
        // Every live work-node dispatch: the journal's word on active dispatch
        // outranks the observation's (`decide::evaluate`), and a dispatch since
        // the evaluation keeps the episode from safe-to-close
        // (`decide::confirm_readback`).
        match command {
            Command::Evaluate { .. } | Command::ConfirmReadback { .. } => vec![
                crate::reads::Sieve::LiveDispatch,
                crate::reads::Sieve::PlacedNodes,
            ],
            Command::PrepareAttempt { .. } | Command::ValidateReceipt { .. } => Vec::new(),
        }
    }

    fn stream_of(command: &Command) -> Option<String> {
        // An episode's stream is `park/<episode id>` (the verbs' stream).
        let episode = match command {
            Command::PrepareAttempt { input } => input.get("episode_id")?.as_str()?.to_owned(),
            Command::Evaluate { episode_id, .. }
            | Command::ValidateReceipt { episode_id, .. }
            | Command::ConfirmReadback { episode_id, .. } => episode_id.to_string(),
        };
        Some(format!("{NAME}/{episode}"))
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_park_graph_is_sound() {
        assert_eq!(Park::graph().defects(), vec![]);
    }
}
