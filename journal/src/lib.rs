//! cairn's event journal: one SQLite file of hash-chained, versioned event streams.
//!
//! # Architecture invariant
//!
//! This is the only crate that knows SQL. It knows nothing of machines: an event
//! is a type name, a schema version and a JSON payload; a transition record is
//! the JSON of the command and context that produced its events. The facade's
//! engine joins this crate with `cairn-machines`.
//!
//! # Guarantees
//!
//! * An append is one `BEGIN IMMEDIATE` transaction: all of its events or none.
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
//! * Triggers refuse `UPDATE` and `DELETE` on both tables; tampering has to drop
//!   them first, and the hash chain still tells.

mod append;
mod error;
mod hash;
mod read;
mod schema;
mod sign;
mod signed;
mod sql;
mod verify;

pub use append::{Append, AppendOutcome, Idempotency, NewEvent, Receipt, TransitionRecord};
pub use error::Error;
pub use hash::{chain_hash, sha256_hex};
pub use read::{ReplayRow, StoredEvent, StoredTransition, StreamInfo};
pub use schema::{Access, Durability, Journal, Options, SCHEMA_VERSION};
pub use sign::{default_key_path, verify_head, Anchor, SigningKey};
pub use verify::{ChainHead, Problem, ProblemKind, SigningReport, VerifyOptions, VerifyReport};

/// The current UTC time as RFC3339 with microseconds and `Z`.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}
