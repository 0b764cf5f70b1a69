//! `ticket`: a test-only lifecycle. new → open (minting a ticket id) → closed,
//! where closing needs a passing check whose typed evidence agrees with its outcome.

use cairn::machines::{EdgeSpec, GraphSpec, StateSpec};
use cairn::{Check, Context, Id, IdKind, Machine, Outcome, Rejection, Timestamp, Violation};
use serde::{Deserialize, Serialize};

pub struct Ticket;

pub struct TicketKind;
impl IdKind for TicketKind {
    const PREFIX: &'static str = "tk-";
}
pub type TicketId = Id<TicketKind>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    New,
    Open {
        id: TicketId,
        title: String,
        comments: u32,
    },
    Closed {
        id: TicketId,
        closed_at: Timestamp,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckName {
    TestsPass,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Verification,
}

/// A command's run: argv and exit status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEvidence {
    pub argv: Vec<String>,
    pub exit_status: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Open {
        title: String,
    },
    Comment {
        text: String,
    },
    Close {
        check: Check<CheckName, Category, RunEvidence>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    Opened {
        id: TicketId,
        title: String,
        at: Timestamp,
    },
    Commented {
        text: String,
    },
    Closed {
        check: CheckName,
        at: Timestamp,
    },
}

impl Machine for Ticket {
    const NAME: &'static str = "ticket";
    const RULES_VERSION: u32 = 2;
    const RETIRED_RULES: &'static [u32] = &[1];
    const FRESH_IDS: usize = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::New
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let reject = |predicate: &str, field: Option<&str>, message: &str| {
            Rejection::single(
                Self::NAME,
                Self::command_name(command),
                Self::state_name(state),
                Violation::new(predicate, field, message),
            )
        };
        match (state, command) {
            (State::New, Command::Open { title }) => {
                if title.trim().is_empty() {
                    return Err(reject(
                        "non-empty-title",
                        Some("title"),
                        "a ticket needs a title",
                    ));
                }
                let id = ctx
                    .fresh_id(0)
                    .ok_or_else(|| reject("fresh-id", None, "the context minted no id"))?;
                Ok(vec![Event::Opened {
                    id: TicketId::from_uuid(id),
                    title: title.clone(),
                    at: ctx.now.clone(),
                }])
            }
            (State::Open { .. }, Command::Comment { text }) => {
                Ok(vec![Event::Commented { text: text.clone() }])
            }
            (State::Open { .. }, Command::Close { check }) => {
                let mut v = Vec::new();
                if !check.outcome.opens_gate() {
                    v.push(Violation::new(
                        "check-passes",
                        Some("check.outcome"),
                        "only a passing check closes a ticket",
                    ));
                }
                if check.evidence.argv.is_empty() {
                    v.push(Violation::new(
                        "evidence-argv",
                        Some("check.evidence.argv"),
                        "the evidence names no command",
                    ));
                }
                let consistent = match check.outcome {
                    Outcome::Pass => check.evidence.exit_status == Some(0),
                    Outcome::Fail => matches!(check.evidence.exit_status, Some(s) if s != 0),
                    Outcome::Unknown => check.evidence.exit_status.is_none(),
                };
                if !consistent {
                    v.push(Violation::new(
                        "evidence-agrees",
                        Some("check.evidence.exit_status"),
                        "the exit status contradicts the outcome",
                    ));
                }
                if let Some(r) =
                    Rejection::from_violations(Self::NAME, "close", Self::state_name(state), v)
                {
                    return Err(r);
                }
                Ok(vec![Event::Closed {
                    check: check.name,
                    at: ctx.now.clone(),
                }])
            }
            (_, c) => Err(reject(
                "command-allowed",
                Some("command"),
                &format!(
                    "`{}` is not allowed in state `{}`",
                    Self::command_name(c),
                    Self::state_name(state)
                ),
            )),
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        match (state, event) {
            (_, Event::Opened { id, title, .. }) => State::Open {
                id: *id,
                title: title.clone(),
                comments: 0,
            },
            (
                State::Open {
                    id,
                    title,
                    comments,
                },
                Event::Commented { .. },
            ) => State::Open {
                id,
                title,
                comments: comments + 1,
            },
            (State::Open { id, .. }, Event::Closed { at, .. }) => State::Closed {
                id,
                closed_at: at.clone(),
            },
            // evolve is total: an event that does not fit leaves the state as it is;
            // the audit's edge check reports it.
            (s, Event::Commented { .. }) | (s, Event::Closed { .. }) => s,
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state {
            State::New => "new",
            State::Open { .. } => "open",
            State::Closed { .. } => "closed",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::Opened { .. } => "opened",
            Event::Commented { .. } => "commented",
            Event::Closed { .. } => "closed",
        }
    }

    fn command_name(command: &Command) -> &'static str {
        match command {
            Command::Open { .. } => "open",
            Command::Comment { .. } => "comment",
            Command::Close { .. } => "close",
        }
    }

    fn graph() -> GraphSpec {
        GraphSpec {
            machine: Self::NAME,
            initial: "new",
            states: vec![
                StateSpec {
                    name: "new",
                    terminal: false,
                },
                StateSpec {
                    name: "open",
                    terminal: false,
                },
                StateSpec {
                    name: "closed",
                    terminal: true,
                },
            ],
            edges: vec![
                EdgeSpec {
                    from: "new",
                    event: "opened",
                    to: "open",
                },
                EdgeSpec {
                    from: "open",
                    event: "commented",
                    to: "open",
                },
                EdgeSpec {
                    from: "open",
                    event: "closed",
                    to: "closed",
                },
            ],
        }
    }
}

/// A close command with a check of the given outcome and exit status.
pub fn close(outcome: Outcome, exit_status: Option<i32>) -> Command {
    Command::Close {
        check: Check {
            name: CheckName::TestsPass,
            category: Category::Verification,
            outcome,
            evidence: RunEvidence {
                argv: vec!["cargo".into(), "test".into()],
                exit_status,
            },
            observed_at: Timestamp::parse("2026-11-30T04:00:00Z").unwrap(),
        },
    }
}
