//! The one error type of `cairn-journal`.

use std::path::PathBuf;

/// Everything that can go wrong reading or writing a journal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The stream is not at the version the append expected.
    ///
    /// ### Handling
    /// Nothing was written. Re-read the stream, re-decide, and append again (or
    /// report the conflict: the CLI answers exit 3).
    #[error("stream `{stream}` is at version {actual}, the append expected {expected}")]
    Conflict {
        stream: String,
        expected: u64,
        actual: u64,
    },
    /// The idempotency key was used on this stream for a different request.
    ///
    /// ### Handling
    /// Nothing was written. A caller bug or a reused key: report it (exit 2).
    #[error(
        "idempotency key `{key}` on stream `{stream}` was already used for a different request"
    )]
    IdempotencyMismatch { stream: String, key: String },
    /// The stream belongs to another machine.
    ///
    /// ### Handling
    /// Nothing was written. Bad input (exit 2).
    #[error("stream `{stream}` belongs to machine `{owner}`, not `{requested}`")]
    MachineMismatch {
        stream: String,
        owner: String,
        requested: String,
    },
    /// The append itself is malformed (no events, an empty stream name, …).
    ///
    /// ### Handling
    /// Nothing was written. A caller bug (exit 2).
    #[error("invalid append: {0}")]
    InvalidAppend(String),
    /// Another writer held the journal's lock past the busy timeout.
    ///
    /// ### Handling
    /// Nothing was written. Try again later (exit 3).
    #[error("the journal is busy: another writer held it past the busy timeout ({timeout_ms} ms)")]
    Busy { timeout_ms: u64 },
    /// The file was written by a newer cairn; it is left untouched.
    ///
    /// ### Handling
    /// Use a newer cairn. Nothing was modified (exit 2).
    #[error("journal schema version {found} is newer than this build supports ({supported}); the file was not modified")]
    NewerSchema { found: i64, supported: i64 },
    /// The location is not a cairn journal (a directory, a symlink, another SQLite
    /// database, not SQLite at all; a PostgreSQL schema holding another
    /// application's tables, or a malformed URL).
    ///
    /// ### Handling
    /// Nothing was modified. Bad input (exit 2).
    #[error("`{path}` is not a cairn journal: {reason}")]
    NotAJournal { path: PathBuf, reason: String },
    /// No journal exists at the path and the caller asked not to create one.
    ///
    /// ### Handling
    /// Bad input (exit 2): point `--db` at an existing journal, or run a verb that writes.
    #[error("no journal at `{path}`")]
    Missing { path: PathBuf },
    /// A stored row cannot be read as the schema says (tampering or corruption).
    ///
    /// ### Handling
    /// Run `cairn journal verify` (exit 1).
    #[error("stored event {seq} is unreadable: {reason}")]
    Corrupt { seq: i64, reason: String },
    /// The disk (or the file system holding the journal) is full.
    ///
    /// ### Handling
    /// The transaction was rolled back: nothing was written. Free space and retry (exit 1).
    #[error("the disk holding the journal is full; nothing was written")]
    DiskFull,
    /// The journal (or its directory) cannot be written: a read-only file or file system.
    ///
    /// ### Handling
    /// Nothing was written. Make it writable and retry (exit 1).
    #[error("the journal is read-only; nothing was written")]
    ReadOnly,
    /// The operating system refused a read or write of the journal files (SQLite
    /// I/O error, e.g. no space left for the WAL index).
    ///
    /// ### Handling
    /// Nothing was committed. An environment problem (exit 1).
    #[error("the disk refused a journal read or write (sqlite i/o error {extended_code}); nothing was committed")]
    StorageIo { extended_code: i32 },
    /// SQLite found the file itself damaged (a truncated or overwritten page).
    ///
    /// ### Handling
    /// An integrity problem (exit 5): restore from a copy; verify names where the
    /// readable part ends.
    #[error("the journal file is damaged: {detail}")]
    Damaged { detail: String },
    /// An existing journal lets group or others read or write it; cairn keeps it
    /// owner-only (it holds evidence that may be sensitive) and does not adopt it.
    ///
    /// ### Handling
    /// `chmod 600` the file (an environment problem, exit 1); nothing was written.
    #[error("`{path}` has mode {mode:o}: group or others may read it; chmod 600 it (cairn keeps journals owner-only)")]
    LoosePermissions { path: PathBuf, mode: u32 },
    /// The signing key file is unusable (malformed, or readable by others).
    ///
    /// ### Handling
    /// Fix or replace the key file named; nothing was written.
    #[error("signing key `{path}`: {reason}")]
    SigningKey { path: PathBuf, reason: String },
    /// File-system failure around the journal file.
    ///
    /// ### Handling
    /// An environment problem (exit 1).
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The PostgreSQL server could not be reached, or refused the connection
    /// (unreachable host or socket, authentication, no such database).
    ///
    /// ### Handling
    /// Nothing was written. An environment problem (exit 1): check the URL and
    /// that the server runs.
    #[error("cannot connect to the journal database `{location}`: {reason}")]
    Connect { location: String, reason: String },
    /// The target of a copy already holds rows: a copy never merges histories.
    ///
    /// ### Handling
    /// Nothing was written. Bad input (exit 2): copy into a new journal.
    #[error("`{path}` is not empty: a journal is copied only into an empty one")]
    NotEmpty { path: PathBuf },
    /// Any other PostgreSQL failure.
    ///
    /// ### Handling
    /// An environment problem or a bug (exit 1).
    #[error("postgres: {}", pg_detail(.0))]
    Postgres(#[source] ::postgres::Error),
    /// Any other SQLite failure.
    ///
    /// ### Handling
    /// An environment problem or a bug (exit 1).
    #[error("sqlite: {0}")]
    Sqlite(#[source] rusqlite::Error),
}

/// A PostgreSQL error with the server's code and message (its `Display` alone
/// says only "db error").
fn pg_detail(e: &::postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// SQLite's failure is a unique or primary key already taken (not another
/// constraint: a trigger's `RAISE(ABORT)`, a CHECK, a NOT NULL).
pub(crate) fn taken_key(f: &rusqlite::ffi::Error) -> bool {
    matches!(
        f.extended_code,
        rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}

impl Error {
    /// A unique or primary key already taken: an insert met a row that holds
    /// its key (on either backend).
    pub(crate) fn is_taken_key(&self) -> bool {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => taken_key(f),
            Error::Postgres(e) => e.code() == Some(&::postgres::error::SqlState::UNIQUE_VIOLATION),
            _ => false,
        }
    }

    /// Maps a SQLite error, recognising busy/locked as [`Error::Busy`], and a
    /// stored value of the wrong type (a BLOB payload, a text version, NULL where
    /// the schema says NOT NULL) as [`Error::Damaged`]: the file holds what cairn
    /// never writes.
    pub(crate) fn sql(e: rusqlite::Error, timeout_ms: u64) -> Self {
        match &e {
            rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..) => {
                return Error::Damaged {
                    detail: format!("a stored value has the wrong type: {e}"),
                }
            }
            _ => {}
        }
        if let rusqlite::Error::SqliteFailure(f, _) = &e {
            match f.code {
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
                    return Error::Busy { timeout_ms }
                }
                rusqlite::ErrorCode::DiskFull => return Error::DiskFull,
                rusqlite::ErrorCode::DatabaseCorrupt => {
                    return Error::Damaged {
                        detail: e.to_string(),
                    }
                }
                rusqlite::ErrorCode::ReadOnly => return Error::ReadOnly,
                // A constraint other than a taken key (a trigger's
                // `RAISE(ABORT)`, a rebuilt table's CHECK or NOT NULL) kept a
                // row cairn wrote: not a version conflict (helper-83 F2).
                rusqlite::ErrorCode::ConstraintViolation if !taken_key(f) =>
                {
                    return Error::Damaged {
                        detail: format!(
                            "the journal did not store a row: a rule, trigger or policy on its tables kept it ({e})"
                        ),
                    }
                }
                rusqlite::ErrorCode::SystemIoFailure => {
                    return Error::StorageIo {
                        extended_code: f.extended_code,
                    }
                }
                _ => {}
            }
        }
        Error::Sqlite(e)
    }
}
