//! `review-request`: a sixth lifecycle, defined in its own crate with only cairn's
//! public API. A request is opened, approved on passing review evidence, and merged
//! on passing CI evidence — or withdrawn. `unknown` evidence never opens a gate.
//!
//! Nothing here is a name kept by hand: `#[derive(Names)]` reads the state, event
//! and command names from the serde attributes (so the journal's names are the
//! serialized tags), and a refusal takes the machine, command and state names from
//! the machine (`Rejection::of`, `Rejection::not_allowed`).

use cairn::machines::{EdgeSpec, GraphSpec, Names, StateSpec};
use cairn::{Check, Context, Machine, Outcome, Rejection, Timestamp, Violation};
use serde::{Deserialize, Serialize};

/// What a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Review,
    Ci,
}

/// The typed evidence behind a check: who or what said so, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The reviewer, or the CI system.
    pub source: String,
    /// The command run, for CI (empty for a human review).
    pub argv: Vec<String>,
    /// Its exit status, when a command ran.
    pub exit_status: Option<i32>,
}

/// A gate check.
pub type GateCheck = Check<Gate, Gate, Evidence>;

/// The lifecycle.
pub struct ReviewRequest;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    Draft,
    Open { title: String },
    Approved { title: String, reviewer: String },
    Merged { title: String, at: Timestamp },
    Withdrawn,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Open { title: String },
    Approve { review: GateCheck },
    Merge { ci: GateCheck },
    Withdraw,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    Opened { title: String },
    Approved { reviewer: String },
    Merged { at: Timestamp },
    Withdrawn,
}

/// Violations of a gate check: it must pass, be of the right gate, and its evidence
/// must agree with its outcome.
fn gate(check: &GateCheck, want: Gate, field: &str) -> Vec<Violation> {
    let mut v = Vec::new();
    if check.name != want || check.category != want {
        v.push(Violation::new(
            "right-gate",
            Some(field),
            "the check is for another gate",
        ));
    }
    if !check.outcome.opens_gate() {
        v.push(Violation::new(
            "gate-passes",
            Some(field),
            "only a passing check opens the gate",
        ));
    }
    if check.evidence.source.trim().is_empty() {
        v.push(Violation::new(
            "evidence-source",
            Some(field),
            "the evidence names no source",
        ));
    }
    if want == Gate::Ci
        && (check.evidence.argv.is_empty()
            || (check.outcome == Outcome::Pass) != (check.evidence.exit_status == Some(0)))
    {
        v.push(Violation::new(
            "evidence-agrees",
            Some(field),
            "CI evidence needs the command run and an exit status that agrees",
        ));
    }
    v
}

impl Machine for ReviewRequest {
    const NAME: &'static str = "review-request";
    const RULES_VERSION: u32 = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Draft
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        // Every violation of the gate, or none: the names come from the machine.
        let refuse = |v: Vec<Violation>| Rejection::of::<Self>(state, command, v);
        match (state, command) {
            (State::Draft, Command::Open { title }) if !title.trim().is_empty() => {
                Ok(vec![Event::Opened {
                    title: title.clone(),
                }])
            }
            (State::Draft, Command::Open { .. }) => Err(Rejection::refuse::<Self>(
                state,
                command,
                Violation::new("title", Some("title"), "a title is required"),
            )),
            (State::Open { .. }, Command::Approve { review }) => {
                match refuse(gate(review, Gate::Review, "review")) {
                    Some(r) => Err(r),
                    None => Ok(vec![Event::Approved {
                        reviewer: review.evidence.source.clone(),
                    }]),
                }
            }
            (State::Approved { .. }, Command::Merge { ci }) => {
                match refuse(gate(ci, Gate::Ci, "ci")) {
                    Some(r) => Err(r),
                    None => Ok(vec![Event::Merged {
                        at: ctx.now.clone(),
                    }]),
                }
            }
            (State::Open { .. } | State::Approved { .. }, Command::Withdraw) => {
                Ok(vec![Event::Withdrawn])
            }
            _ => Err(Rejection::not_allowed::<Self>(state, command)),
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        match (state, event) {
            (_, Event::Opened { title }) => State::Open {
                title: title.clone(),
            },
            (
                State::Open { title } | State::Approved { title, .. },
                Event::Approved { reviewer },
            ) => State::Approved {
                title,
                reviewer: reviewer.clone(),
            },
            (State::Approved { title, .. }, Event::Merged { at }) => State::Merged {
                title,
                at: at.clone(),
            },
            (_, Event::Withdrawn) => State::Withdrawn,
            (s, Event::Approved { .. } | Event::Merged { .. }) => s,
        }
    }

    fn state_name(state: &State) -> &'static str {
        state.variant_name()
    }

    fn event_name(event: &Event) -> &'static str {
        event.variant_name()
    }

    fn command_name(command: &Command) -> &'static str {
        command.variant_name()
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        GraphSpec {
            machine: Self::NAME,
            initial: "draft",
            states: ["draft", "open", "approved"]
                .map(|name| StateSpec {
                    name,
                    terminal: false,
                })
                .into_iter()
                .chain(["merged", "withdrawn"].map(|name| StateSpec {
                    name,
                    terminal: true,
                }))
                .collect(),
            edges: vec![
                e("draft", "opened", "open"),
                e("open", "approved", "approved"),
                e("approved", "merged", "merged"),
                e("open", "withdrawn", "withdrawn"),
                e("approved", "withdrawn", "withdrawn"),
            ],
        }
    }
}

/// A check of `gate` with `outcome`, as a reviewer or CI would send it.
pub fn check(gate: Gate, outcome: Outcome, source: &str, exit_status: Option<i32>) -> GateCheck {
    Check {
        name: gate,
        category: gate,
        outcome,
        evidence: Evidence {
            source: source.into(),
            argv: if gate == Gate::Ci {
                vec!["cargo".into(), "test".into()]
            } else {
                vec![]
            },
            exit_status,
        },
        observed_at: Timestamp::parse("2026-11-30T12:00:00Z").expect("a fixed, valid timestamp"),
    }
}

/// The registry a team's own `cairn` binary serves: the built-ins and this lifecycle.
pub fn registry() -> cairn::Registry {
    let mut r = cairn::Registry::builtin();
    r.register::<ReviewRequest>();
    r
}
