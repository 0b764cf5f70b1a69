//! Pure lifecycle machines for cairn: the decide/evolve contract, the evidence
//! vocabulary every machine shares, and transition graphs.
//!
//! # Architecture invariant
//!
//! This crate does no IO. It opens no files, touches no SQLite, spawns no
//! processes, reads no clock and mints no random ids: the current time and fresh
//! ids arrive in a [`Context`], observations arrive as typed evidence inside a
//! command. `machines/clippy.toml` turns a violation into a clippy error. That is
//! what makes replay deterministic and lets the audit re-decide any recorded
//! transition years later.

pub mod build_loop;
pub mod claim;
#[deny(missing_docs)]
pub mod erased;
#[deny(missing_docs)]
pub mod error;
#[deny(missing_docs)]
pub mod evidence;
mod fence;
#[deny(missing_docs)]
pub mod graph;
#[deny(missing_docs)]
pub mod id;
#[deny(missing_docs)]
pub mod machine;
pub mod park;
pub mod pr_loop;
#[deny(missing_docs)]
pub mod reads;
#[deny(missing_docs)]
pub mod rejection;
#[deny(missing_docs)]
pub mod render;
pub mod saga;
mod scan;
pub mod ship;
mod stream_names;
#[deny(missing_docs)]
pub mod testing;
#[deny(missing_docs)]
pub mod time;
pub mod work;

/// `#[derive(Names)]`: an enum's variant names read from its serde attributes
/// (see the `cairn-derive` crate), for `state_name`, `event_name` and `command_name`.
pub use cairn_derive::Names;
pub use erased::{DecideFailure, DynFold, DynMachine, Erased, RawEvent, Step};
pub use error::Error;
pub use evidence::{Check, Outcome};
pub use graph::{EdgeSpec, GraphDefect, GraphSpec, StateSpec};
pub use id::{Id, IdKind};
pub use machine::{Context, Machine, Verdict};
pub use reads::{Fact, Lease, Read};
pub use rejection::{Rejection, Violation};
pub use time::Timestamp;
