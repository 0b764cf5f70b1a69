//! `gate`: a test-only lifecycle whose one guard reads another stream. waiting →
//! passed, allowed only when the ticket stream the command names exists (is not
//! `new`) as the engine read it (a cross-stream read recorded in the context).

use cairn::machines::{EdgeSpec, GraphSpec, StateSpec};
use cairn::{Context, Machine, Rejection, Violation};
use serde::{Deserialize, Serialize};

pub struct Gate;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    Waiting,
    Passed { ticket: String, version: u64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Pass { ticket: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    Passed { ticket: String, version: u64 },
}

impl Machine for Gate {
    const NAME: &'static str = "gate";
    const RULES_VERSION: u32 = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Waiting
    }

    fn reads(_state: &State, command: &Command) -> Vec<String> {
        let Command::Pass { ticket } = command;
        vec![ticket.clone()]
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let Command::Pass { ticket } = command;
        let reject = |message: String| {
            Rejection::single(
                Self::NAME,
                "pass",
                Self::state_name(state),
                Violation::new("ticket-exists", Some("ticket"), message),
            )
        };
        if !matches!(state, State::Waiting) {
            return Err(reject("already passed".into()));
        }
        match ctx.read(ticket) {
            Some(r) if r.state != "new" => Ok(vec![Event::Passed {
                ticket: ticket.clone(),
                version: r.version,
            }]),
            Some(r) => Err(reject(format!(
                "`{ticket}` is `{}`: no ticket yet",
                r.state
            ))),
            None => Err(reject(format!("`{ticket}` was not read"))),
        }
    }

    fn evolve(_state: State, event: &Event) -> State {
        let Event::Passed { ticket, version } = event;
        State::Passed {
            ticket: ticket.clone(),
            version: *version,
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state {
            State::Waiting => "waiting",
            State::Passed { .. } => "passed",
        }
    }

    fn event_name(_event: &Event) -> &'static str {
        "passed"
    }

    fn command_name(_command: &Command) -> &'static str {
        "pass"
    }

    fn graph() -> GraphSpec {
        GraphSpec {
            machine: Self::NAME,
            initial: "waiting",
            states: vec![
                StateSpec {
                    name: "waiting",
                    terminal: false,
                },
                StateSpec {
                    name: "passed",
                    terminal: true,
                },
            ],
            edges: vec![EdgeSpec {
                from: "waiting",
                event: "passed",
                to: "passed",
            }],
        }
    }
}
