//! cairn: agent-work lifecycles as explicit, typed state machines whose accepted
//! commands are appended to an SQLite journal and whose state is rebuilt by replay.
//!
//! This crate is the facade: it re-exports the machine contract
//! ([`cairn_machines`]) and the journal ([`cairn_journal`]) and holds the one
//! piece of logic that needs both, the [`Engine`]: load a stream, replay it,
//! decide, append with the loaded version as the expected version; and the
//! [`audit`] that re-decides every recorded transition.
//!
//! # Define a lifecycle in 60 lines
//!
//! A lifecycle is a [`Machine`]: a state, commands that carry their evidence,
//! past-tense events, guards in `decide`, a total `evolve`, and the graph. This one
//! ships a change only on a passing check; `unknown` evidence never opens the gate.
//!
//! ```
//! use cairn::machines::{EdgeSpec, GraphSpec, Names, StateSpec};
//! use cairn::{Context, Engine, Machine, Outcome, Registry, Rejection, Request, StreamId, Violation};
//! use serde::{Deserialize, Serialize};
//!
//! struct Ship;
//!
//! // `Names`: each variant's name is its serde tag, read from the serde attributes.
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
//! #[serde(tag = "state", rename_all = "kebab-case")]
//! enum State { Building, Shipped { by: String } }
//!
//! #[derive(Debug, Serialize, Deserialize, Names)]
//! #[serde(tag = "command", rename_all = "kebab-case")]
//! enum Command { Ship { tests: Outcome, by: String } }
//!
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
//! #[serde(tag = "type", rename_all = "kebab-case")]
//! enum Event { Shipped { by: String } }
//!
//! impl Machine for Ship {
//!     const NAME: &'static str = "ship-it";
//!     const RULES_VERSION: u32 = 1;
//!     type State = State;
//!     type Command = Command;
//!     type Event = Event;
//!     fn initial_state() -> State { State::Building }
//!     fn decide(state: &State, command: &Command, _: &Context) -> Result<Vec<Event>, Rejection> {
//!         let Command::Ship { tests, by } = command;
//!         match state {
//!             State::Shipped { .. } => Err(Rejection::not_allowed::<Self>(state, command)),
//!             State::Building if !tests.opens_gate() => Err(Rejection::refuse::<Self>(
//!                 state, command, Violation::new("tests-pass", Some("tests"), "only passing tests ship"),
//!             )),
//!             State::Building => Ok(vec![Event::Shipped { by: by.clone() }]),
//!         }
//!     }
//!     fn evolve(_: State, event: &Event) -> State {
//!         let Event::Shipped { by } = event;
//!         State::Shipped { by: by.clone() }
//!     }
//!     fn state_name(s: &State) -> &'static str { s.variant_name() }
//!     fn event_name(e: &Event) -> &'static str { e.variant_name() }
//!     fn command_name(c: &Command) -> &'static str { c.variant_name() }
//!     fn graph() -> GraphSpec {
//!         GraphSpec {
//!             machine: "ship-it",
//!             initial: "building",
//!             states: vec![StateSpec { name: "building", terminal: false }, StateSpec { name: "shipped", terminal: true }],
//!             edges: vec![EdgeSpec { from: "building", event: "shipped", to: "shipped" }],
//!         }
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("cairn-guide-{}", std::process::id()));
//! let mut registry = Registry::builtin();
//! registry.register::<Ship>();
//! let mut engine = Engine::open(&dir.join("journal.db"), &Default::default(), registry)?;
//! let stream = StreamId::new("ship-it", "release-1")?;
//! let unknown = Command::Ship { tests: Outcome::Unknown, by: "ci".into() };
//! assert!(engine.execute::<Ship>(&stream, &unknown, &Request::default()).is_err()); // nothing written
//! let pass = Command::Ship { tests: Outcome::Pass, by: "ci".into() };
//! engine.execute::<Ship>(&stream, &pass, &Request::default())?;
//! assert_eq!(engine.load::<Ship>(&stream)?, (State::Shipped { by: "ci".into() }, 1)); // replayed
//! assert!(engine.audit(None)?.ok);                                                   // re-decided
//! assert_eq!(Ship::graph().defects(), vec![]);                                      // a sound graph
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! Test it with [`testing::Harness`] (feature `testing`): it aims command sequences
//! at every state and edge of the graph, runs them through the real journal, checks
//! your domain properties, and fails on a state or edge never reached unless the
//! test names it unreachable. Serve it from your own `cairn` binary with
//! `cairn_cli::main_with(registry)` — `cairn exec ship-it ship-it/release-1` then
//! records its commands from JSON on stdin — and see `examples/review-request` for
//! a complete crate that does all three.

#![deny(missing_docs)]

pub mod any;
pub mod audit;
mod clock;
mod command_path;
pub mod engine;
pub mod error;
pub mod observe;
mod reads;
mod registry;
pub mod stream;
#[cfg(feature = "testing")]
pub mod testing;
mod view;
pub mod work;

pub use any::{AnyDecision, AnyExecuted, AnyPending};
pub use audit::{AuditReport, FieldDiff, Finding, FindingKind, StreamAudit};
pub use engine::{Decision, Engine, Executed, Key, MidTransition, Pending, Request, StateView};
pub use error::Error;
pub use registry::Registry;
pub use stream::StreamId;

pub use cairn_journal as journal;
pub use cairn_machines as machines;
pub use cairn_machines::testing as scenario;
pub use cairn_machines::{
    Check, Context, Fact, GraphSpec, Id, IdKind, Lease, Machine, Names, Outcome, Read, Rejection,
    Timestamp, Verdict, Violation,
};
