//! The store abstraction: what a backend must provide so that one `Journal`, one
//! append algorithm, one `verify` walk and one copy serve every backend. Each
//! backend's SQL lives in its own module (`sqlite/`, `postgres/`); the logic that
//! must not differ between them (the chain, the version check, idempotency, the
//! verify walk) lives once, in `append.rs`, `verify.rs` and `copy.rs`.

use crate::append::{Append, AppendOutcome};
use crate::read::{ReplayRow, StoredEvent, StoredTransition, StreamInfo};
use crate::{Access, Error, SigningKey};

/// An insert that wrote no row: something on the journal's tables (a rule, a
/// trigger, a row security policy) kept it, and the transaction is refused
/// (both backends: on SQLite a `BEFORE INSERT … RAISE(IGNORE)` trigger kept
/// every signature while the writer said recorded, helper-70).
pub(crate) fn kept(what: &str) -> Error {
    Error::Damaged {
        detail: format!(
            "the journal did not store {what}: a rule, trigger or policy on its tables kept the row"
        ),
    }
}

/// One row stored by an insert, else the row was [`kept`].
pub(crate) fn stored(rows: usize, what: &str) -> Result<(), Error> {
    if rows == 1 {
        Ok(())
    } else {
        Err(kept(what))
    }
}

/// Every stream's name, in name order: a skip scan of the events'
/// `(stream, version)` index, one seek per stream (standard SQL without
/// parameters: the same text on both backends).
pub(crate) const ALL_STREAMS: &str = "WITH RECURSIVE s(stream) AS (
    SELECT min(stream) FROM events
    UNION ALL
    SELECT (SELECT min(e.stream) FROM events AS e WHERE e.stream > s.stream)
    FROM s WHERE s.stream IS NOT NULL
) SELECT stream FROM s WHERE stream IS NOT NULL";

/// A backend: one open connection to one journal.
pub(crate) trait Store: Send {
    fn access(&self) -> Access;
    /// The file's mode when group or others may read it (SQLite files only).
    fn loose_permissions(&self) -> Option<u32>;

    /// Runs [`crate::append::append_all`] in one serialised write transaction.
    fn append_batch(
        &mut self,
        appends: &[Append],
        signer: Option<&SigningKey>,
    ) -> Result<Vec<AppendOutcome>, Error>;

    /// The journal's clock now (RFC 3339, UTC, microseconds): the host's for a
    /// file, the server's for a database server.
    fn now(&self) -> Result<String, Error>;
    fn stream_version(&self, stream: &str) -> Result<u64, Error>;
    /// The last transition id of any stream of `machine` (0: none).
    fn machine_tip(&self, machine: &str) -> Result<i64, Error>;
    /// Every stream of `machine` (named `machine/…`), in name order.
    fn machine_streams(&self, machine: &str) -> Result<Vec<String>, Error>;
    fn stream_machine(&self, stream: &str) -> Result<Option<String>, Error>;
    /// Every stream's name, in name order (a skip scan of the stream index).
    fn stream_names(&self) -> Result<Vec<String>, Error>;
    /// A stream's events in version order up to `up_to`. `f` may call back into
    /// the journal (the audit fetches transition records from inside it).
    fn scan_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(StoredEvent) -> Result<(), Error>,
    ) -> Result<(), Error>;
    fn replay_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error>;
    fn read_after(
        &self,
        after: i64,
        stream: Option<&str>,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, Error>;
    fn transitions(&self, stream: &str) -> Result<Vec<StoredTransition>, Error>;
    /// Up to `limit` of a stream's transition records with `first_version >
    /// after`, by first version.
    fn transitions_from(
        &self,
        stream: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredTransition>, Error>;
    fn transition(&self, id: i64) -> Result<Option<StoredTransition>, Error>;
    fn transition_count(&self, stream: &str) -> Result<u64, Error>;
    /// `(id, first_version, last_version)` of the last transition record of
    /// `stream` starting at or before `version`.
    fn transition_at(&self, stream: &str, version: i64) -> Result<Option<(i64, i64, i64)>, Error>;
    /// A stream's events with versions `first..=last`, in version order.
    fn stream_range(&self, stream: &str, first: i64, last: i64) -> Result<Vec<StoredEvent>, Error>;
    fn transition_by_key(&self, stream: &str, key: &str)
        -> Result<Option<StoredTransition>, Error>;
    fn streams(&self) -> Result<Vec<StreamInfo>, Error>;
    fn head(&self) -> Result<Option<(i64, String)>, Error>;

    /// Runs `f` over one consistent read snapshot of the whole journal.
    fn snapshot(
        &self,
        f: &mut dyn FnMut(&mut dyn Snapshot) -> Result<(), Error>,
    ) -> Result<(), Error>;
    /// The append-only guards (`UPDATE`/`DELETE` refusals, and on PostgreSQL
    /// `TRUNCATE`) that are missing or disabled, as `"UPDATE on events"`.
    fn unguarded(&self) -> Result<Vec<String>, Error>;
    /// Forgets the schema this connection read, so its next statement reads the
    /// schema as it is then (SQLite keeps one edited by hand: its cookie does
    /// not move). Nothing to forget elsewhere.
    fn refresh_schema(&self) -> Result<(), Error> {
        Ok(())
    }
    /// The database's own structural check, at most `limit` problems; empty when
    /// sound or when the backend has none (see `Journal::integrity_problems`).
    fn integrity_problems(&self, limit: u32) -> Result<Vec<String>, Error>;
    /// That check started on a connection and a thread of its own, when the
    /// backend can prove the connection reads this journal's file.
    fn integrity_beside(&self, _limit: u32) -> Option<IntegrityThread> {
        None
    }
    /// Writes rows verbatim into this (empty) journal in one transaction: `feed`
    /// pushes them into the sink. Refused with [`Error::NotEmpty`] when the
    /// journal holds any row.
    fn import(
        &mut self,
        feed: &mut dyn FnMut(&mut dyn Sink) -> Result<(), Error>,
    ) -> Result<(), Error>;
}

/// The primitives of one append transaction, already serialised (SQLite's
/// `BEGIN IMMEDIATE`, PostgreSQL's transaction-scoped advisory lock).
pub(crate) trait AppendTx {
    /// The last event's `(seq, hash)`.
    fn head(&mut self) -> Result<Option<(i64, String)>, Error>;
    /// `(id, fingerprint, first_version, last_version)` of the transition
    /// recorded under `key` on `stream`.
    fn idempotency(&mut self, stream: &str, key: &str) -> Result<Option<KeyedTransition>, Error>;
    /// The `(min, max)` sequence numbers of a stream's versions `first..=last`.
    fn transition_seqs(&mut self, stream: &str, first: i64, last: i64)
        -> Result<(i64, i64), Error>;
    /// A stream's last version and its machine.
    fn stream_tip(&mut self, stream: &str) -> Result<Option<(i64, String)>, Error>;
    /// The last transition id of any stream of `machine` (0: none).
    fn machine_tip(&mut self, machine: &str) -> Result<i64, Error>;
    /// Inserts a transition row (its id is the next one); returns the id.
    fn insert_transition(&mut self, t: &NewTransitionRow<'_>) -> Result<i64, Error>;
    /// Inserts an event row; `Ok(false)` when `(stream, version)` is taken.
    fn insert_event(&mut self, e: &crate::hash::EventFields<'_>, hash: &str)
        -> Result<bool, Error>;
    /// The id of a signing key, recording its public half on first use.
    fn key_id(&mut self, public_key: &str, added_at: &str) -> Result<i64, Error>;
    fn insert_signature(&mut self, s: &SignatureRow) -> Result<(), Error>;
}

/// `(id, fingerprint, first_version, last_version)` of a transition recorded
/// under an idempotency key.
pub(crate) type KeyedTransition = (i64, Option<String>, i64, i64);

/// A transition row before its id is known.
pub(crate) struct NewTransitionRow<'a> {
    pub stream: &'a str,
    pub machine: &'a str,
    pub rules_version: i64,
    pub command_name: &'a str,
    pub command: &'a str,
    pub context: &'a str,
    pub idempotency_key: Option<&'a str>,
    pub fingerprint: Option<&'a str>,
    pub first_version: i64,
    pub last_version: i64,
    pub recorded_at: &'a str,
}

/// A `signatures` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureRow {
    pub transition_id: i64,
    pub key_id: i64,
    pub head_seq: i64,
    pub head_hash: String,
    pub signature: String,
}

/// A `signing_keys` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRow {
    pub id: i64,
    pub public_key: String,
    pub added_at: String,
}

/// One row of the verify walk.
pub(crate) enum WalkRow {
    Event(StoredEvent),
    /// A row that cannot be read as the schema says.
    Unreadable {
        seq: i64,
        hash: Option<String>,
        reason: String,
    },
}

/// Where a store's fetch of rows ends early, counting what the rows unpack to
/// (event payloads; a transition record's command and context): a fetch holds
/// this many bytes and at most one row more. 2,048 rows of 1 MB events were 2 GB
/// in one fetch, and 128 records that each unpack to 32 MB 4 GB (helper-49).
/// Both backends cut here: SQLite as it steps its rows, PostgreSQL in the query
/// (a running sum of the rows' `octet_length`, which reads a stored value's size
/// without unpacking it), since its client reads a query's rows whole.
pub(crate) const FETCH_BYTES: usize = 2 << 20;

/// A page of the verify walk; `damaged` when the storage itself failed after `rows`.
pub(crate) struct Page {
    pub rows: Vec<WalkRow>,
    pub damaged: Option<String>,
    /// Whether rows may follow the last one: the fetch stopped at its limit or
    /// at its bytes, not at the end of the journal.
    pub more: bool,
}

/// One consistent read of the whole journal, for `verify` and `copy`.
pub(crate) trait Snapshot {
    /// Up to `limit` rows with `seq > after` (from the very first row when
    /// `None`, whatever its `seq`), in `seq` order; a store may end the page
    /// sooner at its bytes, and says so in [`Page::more`].
    fn events_after(&mut self, after: Option<i64>, limit: i64) -> Result<Page, Error>;
    /// A transition record by id; `Err(text)` when it cannot be read.
    fn transition(&mut self, id: i64) -> Result<Option<StoredTransition>, String>;
    /// Up to `limit` transition records with `id > after`, by id, ending sooner
    /// at [`FETCH_BYTES`] of commands and contexts; `true` when more may follow.
    fn transitions_after(
        &mut self,
        after: i64,
        limit: i64,
    ) -> Result<(Vec<StoredTransition>, bool), Error>;
    /// A transition's signature with its key's public half (`None` when the key
    /// row is gone). Always `None` when the journal has no `signatures` table
    /// (decided by the tables present, never by the recorded schema version, so a
    /// lowered version cannot switch the signature checks off).
    fn signature(
        &mut self,
        transition_id: i64,
    ) -> Result<Option<(SignatureRow, Option<String>)>, Error>;
    /// Up to `limit` signature rows with `transition_id > after`.
    fn signatures_after(&mut self, after: i64, limit: i64) -> Result<Vec<SignatureRow>, Error>;
    fn keys(&mut self) -> Result<Vec<KeyRow>, Error>;
    /// Signature rows naming no transition.
    fn orphan_signatures(&mut self) -> Result<Vec<i64>, Error>;
    /// Transition rows with no event.
    fn orphan_transitions(&mut self) -> Result<Vec<(i64, String)>, Error>;
    fn transition_total(&mut self) -> Result<i64, Error>;
    fn hash_at(&mut self, seq: i64) -> Result<Option<String>, Error>;
    /// Starts [`Snapshot::integrity_problems`] beside the caller, reading this
    /// snapshot, where the store can; that call then answers with its lines.
    fn start_integrity(&mut self, _limit: u32) {}
    /// The database's own structural check (as [`Store::integrity_problems`]).
    fn integrity_problems(&mut self, limit: u32) -> Result<Vec<String>, Error>;
    /// The missing append-only guards (as [`Store::unguarded`]), as this
    /// snapshot holds them.
    fn unguarded(&mut self) -> Result<Vec<String>, Error>;
}

/// A structural check on a thread of its own: its lines, or why it could not run.
pub(crate) struct IntegrityThread {
    pub(crate) handle: std::thread::JoinHandle<Result<Vec<String>, String>>,
    /// Stops the check where it is (its answer is no longer wanted).
    pub(crate) stop: Box<dyn Fn() + Send>,
}

/// Where `import` writes rows verbatim.
pub(crate) trait Sink {
    fn key(&mut self, k: &KeyRow) -> Result<(), Error>;
    fn transition(&mut self, t: &StoredTransition) -> Result<(), Error>;
    fn event(&mut self, e: &StoredEvent) -> Result<(), Error>;
    fn signature(&mut self, s: &SignatureRow) -> Result<(), Error>;
}

/// The stream-name range `[machine/, machine0)` that holds exactly the streams of
/// `machine` (`/` and `0` are adjacent bytes; names compare bytewise).
pub(crate) fn machine_range(machine: &str) -> (String, String) {
    (format!("{machine}/"), format!("{machine}0"))
}
