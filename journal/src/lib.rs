//! cairn's event journal: hash-chained, versioned event streams in one SQLite file
//! or one PostgreSQL database, behind one [`Journal`].
//!
//! # Architecture invariant
//!
//! This is the only crate that knows SQL. It knows nothing of machines: an event
//! is a type name, a schema version and a JSON payload; a transition record is
//! the JSON of the command and context that produced its events. The facade's
//! engine joins this crate with `cairn-machines`, and does not know which
//! backend it talks to: a [`Location`] selects it (`postgres://…` is PostgreSQL,
//! anything else a SQLite path). The append algorithm, the verify walk and the
//! copy are written once over the store abstraction (`store.rs`); each backend's
//! SQL lives in its own module (`sqlite/`, `postgres/`).
//!
//! # Guarantees (both backends)
//!
//! * An append is one transaction, serialised for the one global chain order
//!   (SQLite `BEGIN IMMEDIATE`; PostgreSQL a transaction-scoped advisory lock,
//!   `seq` assigned under it): all of its events or none.
//! * Each append names the stream version it expects; any other version is a
//!   [`Error::Conflict`] and nothing is written (optimistic concurrency: a stale
//!   writer never forks a stream).
//! * An idempotency key is unique per stream: the same key with the same
//!   fingerprint returns the original receipt and writes nothing; with another
//!   fingerprint it is [`Error::IdempotencyMismatch`].
//! * Every event row carries a SHA-256 hash over its predecessor's hash, its own
//!   columns and the digest of the transition record that produced it, so
//!   [`Journal::verify`] detects a changed byte in any stored event or transition,
//!   a deleted or swapped row, and a broken version sequence.
//! * Triggers refuse `UPDATE` and `DELETE` on every table (and `TRUNCATE` on
//!   PostgreSQL); tampering has to drop them first — [`Journal::verify`] reports
//!   a missing one — and the hash chain still tells.

mod append;
mod copy;
mod error;
mod hash;
mod location;
mod open;
mod pages;
mod postgres;
mod problem;
mod read;
mod sign;
mod signed;
mod sqlite;
mod store;
mod verify;

pub use append::{Append, AppendOutcome, Idempotency, NewEvent, Receipt, TransitionRecord};
pub use copy::CopyReport;
pub use error::Error;
pub use hash::{chain_hash, sha256_hex};
pub use location::{redact_url, Location, PostgresUrl};
pub use open::{Access, Durability, Journal, Options, PendingIntegrity, SCHEMA_VERSION};
pub use read::{next_page, ReplayRow, StoredEvent, StoredTransition, StreamInfo};
pub use sign::{default_key_path, verify_head, Anchor, SigningKey};
pub use store::{KeyRow, SignatureRow};
pub use verify::{ChainHead, Problem, ProblemKind, SigningReport, VerifyOptions, VerifyReport};

/// The PostgreSQL store's planner settings and hot reads, for the plan test
/// (`tests/conformance_plans.rs`): not an API.
#[doc(hidden)]
pub mod pg_plans {
    pub use crate::postgres::plans::{HOT, PLANNER};
}

/// The current UTC time as RFC3339 with microseconds and `Z`: cairn's one
/// spelling (`cairn_machines::time::Spelling::Cairn`; this crate depends on
/// nothing of cairn's, and a test in the CLI pins the two together).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}
