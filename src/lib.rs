//! cairn: agent-work lifecycles as explicit, typed state machines whose accepted
//! commands are appended to an SQLite journal and whose state is rebuilt by replay.
//!
//! This crate is the facade: it re-exports the machine contract
//! ([`cairn_machines`]) and the journal ([`cairn_journal`]) and holds the one
//! piece of logic that needs both, the [`Engine`]: load a stream, replay it,
//! decide, append with the loaded version as the expected version; and the
//! [`audit`] that re-decides every recorded transition.

pub mod audit;
pub mod engine;
pub mod error;
pub mod observe;
pub mod registry;
pub mod stream;

pub use audit::{AuditReport, Finding, FindingKind};
pub use engine::{Engine, Executed, Request, StateView};
pub use error::Error;
pub use registry::Registry;
pub use stream::StreamId;

pub use cairn_journal as journal;
pub use cairn_machines as machines;
pub use cairn_machines::{
    Check, Context, GraphSpec, Id, IdKind, Machine, Outcome, Rejection, Timestamp, Violation,
};
