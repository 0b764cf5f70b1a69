//! Opening a journal at a [`Location`]: the options, the access modes, and the
//! `Journal` handle over whichever backend the location selects.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::store::Store;
use crate::{Error, Location};

/// The schema version this build writes (each backend's migration list has
/// exactly this many entries; a test checks it).
pub const SCHEMA_VERSION: i64 = 3;

/// How durable an append is when it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// SQLite `synchronous=FULL`, PostgreSQL `synchronous_commit=on`: the append
    /// survives power loss once it returns. The default.
    Full,
    /// SQLite `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`: survives
    /// a process crash; the last appends may be lost on power loss (or, on
    /// PostgreSQL, a server crash).
    Normal,
}

/// How to open a journal.
#[derive(Debug, Clone)]
pub struct Options {
    pub durability: Durability,
    /// How long a writer waits for another writer's lock before [`Error::Busy`]
    /// (SQLite's busy timeout; PostgreSQL's `lock_timeout`).
    pub busy_timeout: Duration,
    /// Create the journal when missing: the SQLite file (and its parent
    /// directory), or cairn's tables in an empty PostgreSQL schema.
    pub create: bool,
    /// Sign each appended transition's chain head with this key (its public half
    /// is recorded in the journal). `None` appends unsigned transitions.
    pub signing_key: Option<crate::SigningKey>,
    /// Sign with the key at this path, loaded (or created, as
    /// [`crate::SigningKey::load_or_create`]) at the first append and not before:
    /// a writer that ends up appending nothing never touches the key. Ignored when
    /// `signing_key` is given.
    pub signing_key_at: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            durability: Durability::Full,
            busy_timeout: Duration::from_millis(5_000),
            create: true,
            signing_key: None,
            signing_key_at: None,
        }
    }
}

/// How a journal was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read and write (migrated; on SQLite, WAL and the durability pragmas set).
    ReadWrite,
    /// Read-only: SQLite's read-only mode (nothing is created, converted or
    /// checkpointed), or a PostgreSQL session whose transactions are read-only.
    ReadOnly,
    /// Read-only media where SQLite cannot even keep its shared-memory index, and
    /// no write-ahead log: the file is read as immutable (a snapshot or a copy).
    Immutable,
    /// Read-only media holding a write-ahead log SQLite cannot read in place: a
    /// private copy of the file and its log (in the temp directory, removed after)
    /// is read, so no committed transition is dropped. SQLite only.
    Copy,
}

/// A structural check running beside the caller's work ([`Journal::start_integrity`]).
/// Dropped unfinished (the caller stopped on an error), it stops the check and
/// waits for its thread: no check outlives the work it was started beside, nor
/// holds the journal's files open after it.
pub struct PendingIntegrity {
    limit: u32,
    check: Option<crate::store::IntegrityThread>,
}

impl Drop for PendingIntegrity {
    fn drop(&mut self) {
        if let Some(check) = self.check.take() {
            (check.stop)();
            // A stopped check answers within a few pages; its answer, or its
            // panic, is not wanted.
            let _ = check.handle.join();
        }
    }
}

/// An open journal: one connection to one backend.
pub struct Journal {
    pub(crate) store: Box<dyn Store>,
    location: Location,
    shown: PathBuf,
    pub(crate) signing_key: Option<crate::SigningKey>,
    /// Where to load the key from at the first append (see `Options::signing_key_at`).
    pub(crate) signing_key_at: Option<std::path::PathBuf>,
}

impl Journal {
    /// Opens (and with `options.create`, creates) the journal at `location` (a
    /// path, or a `postgres://` URL: see [`Location`]).
    ///
    /// SQLite: a new file is created mode 0600 and a missing parent directory
    /// mode 0700; a directory, a symlink, a non-SQLite file, a foreign SQLite
    /// database and a journal of a newer schema are refused without being
    /// modified. PostgreSQL: a schema holding another application's tables, a
    /// foreign marker and a newer schema are refused before anything is written;
    /// an unreachable server is [`Error::Connect`].
    pub fn open(location: impl Into<Location>, options: &Options) -> Result<Self, Error> {
        let location = location.into();
        // A journal about to be made: its key is read first, so a key cairn
        // cannot sign with leaves no new file behind (helper-70's LOW).
        let mut early_key = None;
        if let (Location::Sqlite(path), None, Some(at)) =
            (&location, &options.signing_key, &options.signing_key_at)
        {
            // Missing (and to be made), or an empty file (`touch`, `mktemp`) any
            // writer's open makes a journal of.
            let fresh = match std::fs::symlink_metadata(path) {
                Err(_) => options.create,
                Ok(m) => m.is_file() && m.len() == 0,
            };
            if fresh {
                early_key = Some(crate::SigningKey::load_or_create(at)?);
            }
        }
        let store: Box<dyn Store> = match &location {
            Location::Sqlite(path) => Box::new(crate::sqlite::SqliteStore::open(path, options)?),
            Location::Postgres(url) => {
                Box::new(crate::postgres::PgStore::open(url, options, false)?)
            }
        };
        let mut journal = Self::new(location, store, options.signing_key.clone().or(early_key));
        if journal.signing_key.is_none() {
            journal.signing_key_at = options.signing_key_at.clone();
        }
        Ok(journal)
    }

    /// Opens an existing journal for reading only: never creates or migrates.
    /// SQLite: never converts to WAL or checkpoints either, so it works on
    /// read-only media, on files the user may not write, and on snapshots; a WAL
    /// journal whose shared-memory file cannot be made is read as immutable
    /// ([`Access::Immutable`]), or, when a write-ahead log is there, from a
    /// private copy ([`Access::Copy`]). PostgreSQL: the session's transactions are
    /// read-only, so the server itself refuses any write.
    pub fn open_read_only(location: impl Into<Location>, options: &Options) -> Result<Self, Error> {
        let location = location.into();
        let store: Box<dyn Store> = match &location {
            Location::Sqlite(path) => {
                Box::new(crate::sqlite::SqliteStore::open_read_only(path, options)?)
            }
            Location::Postgres(url) => {
                Box::new(crate::postgres::PgStore::open(url, options, true)?)
            }
        };
        Ok(Self::new(location, store, None))
    }

    pub(crate) fn new(
        location: Location,
        store: Box<dyn Store>,
        key: Option<crate::SigningKey>,
    ) -> Self {
        Self {
            shown: location.display_path(),
            location,
            store,
            signing_key: key,
            signing_key_at: None,
        }
    }

    /// The journal's clock now, RFC 3339 in UTC with microseconds: the one clock
    /// a journal's transitions are judged by (a lease's expiry included). SQLite:
    /// this host's clock (the file is on its own disk, so every writer runs here).
    /// PostgreSQL: the server's (`clock_timestamp()`), so a client whose clock runs
    /// fast or slow judges nothing by it.
    pub fn now(&self) -> Result<String, Error> {
        self.store.now()
    }

    /// [`Journal::now`] of the journal at `location`, whether or not one exists
    /// there yet (nothing is created or read but the clock).
    pub fn clock(location: impl Into<Location>, options: &Options) -> Result<String, Error> {
        match location.into() {
            Location::Sqlite(_) => Ok(crate::now_rfc3339()),
            Location::Postgres(url) => crate::postgres::clock(&url, options),
        }
    }

    /// How this journal was opened.
    pub fn access(&self) -> Access {
        self.store.access()
    }

    /// The file's permission bits when they let group or others in (a journal
    /// keeps evidence that may be sensitive; cairn creates it 0600). Always
    /// `None` on PostgreSQL, whose roles and grants are the server's.
    pub fn loose_permissions(&self) -> Option<u32> {
        self.store.loose_permissions()
    }

    /// The file's path; for PostgreSQL, the URL without its password.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Where the journal lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The database's own structural check, at most `limit` problems; empty when
    /// the journal is sound. SQLite: `PRAGMA integrity_check` (every index agrees
    /// with its table, every page is where the file says), so an index rewritten
    /// to show a different history than the rows cannot pass `verify` or `audit`.
    /// PostgreSQL: always empty — its structural checks (`amcheck`) are an
    /// extension a journal's role may not have; the server's own page checksums,
    /// and the hash chain `verify` walks, are what catch damage there.
    pub fn integrity_problems(&self, limit: u32) -> Result<Vec<String>, Error> {
        self.store.integrity_problems(limit)
    }

    /// [`Journal::integrity_problems`], started now beside the caller's work: on
    /// SQLite on a read-only connection and a thread of its own, once SQLite's
    /// own objects prove that connection holds this journal's files (see
    /// `sqlite/same.rs`); its answer is [`Journal::finish_integrity`]'s. It reads
    /// a snapshot of its own, as [`Journal::integrity_problems`] does: for a
    /// caller that reads no one snapshot (the audit), not for a check that must
    /// judge the rows a transaction read (`verify` starts its own check, in its
    /// walk's snapshot).
    pub fn start_integrity(&self, limit: u32) -> PendingIntegrity {
        PendingIntegrity {
            limit,
            check: self.store.integrity_beside(limit),
        }
    }

    /// The answer of a check [`Journal::start_integrity`] started; run here, on
    /// this journal's connection, when it could not run there.
    pub fn finish_integrity(&self, mut pending: PendingIntegrity) -> Result<Vec<String>, Error> {
        if let Some(Ok(Ok(lines))) = pending.check.take().map(|c| c.handle.join()) {
            return Ok(lines);
        }
        self.store.integrity_problems(pending.limit)
    }

    /// Forgets the schema this handle read, so its next read reads the journal's
    /// schema as it is then. SQLite reloads a schema only when its cookie moves,
    /// and an edit of `sqlite_schema` by hand moves none: a handle opened before
    /// such an edit reads through the schema from before (what an audit of the
    /// file as it is must not do: helper-86).
    pub fn refresh_schema(&self) -> Result<(), Error> {
        self.store.refresh_schema()
    }

    /// The append-only guards missing from the journal: each names an operation
    /// and a table (`"UPDATE on events"`) the database would no longer refuse.
    /// Empty for an intact journal; `verify` reports it as `unguarded`.
    pub fn unguarded(&self) -> Result<Vec<String>, Error> {
        self.store.unguarded()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Journal, Options};

    /// The paths the process holds open (`/proc/self/fd`).
    fn open_paths() -> Vec<std::path::PathBuf> {
        std::fs::read_dir("/proc/self/fd")
            .map(|fds| {
                fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A journal of 60,000 events in `dir`: a structural check of tens of
    /// milliseconds, far longer than the few steps between a test's start of
    /// one and its stop.
    fn filled(dir: &std::path::Path) -> (std::path::PathBuf, Journal) {
        let path = dir.join("j.db");
        let mut j = Journal::open(&path, &Options::default()).expect("open");
        let batch: Vec<_> = (0..60)
            .map(|t| {
                let mut a = crate::pages::tests::big(t * 1000, 10);
                a.events = (0..1000).map(|_| a.events[0].clone()).collect();
                a
            })
            .collect();
        j.append_batch(&batch).expect("append");
        (path, j)
    }

    /// A check stopped before its statement has started stops all the same.
    /// `sqlite3_interrupt` (the first form) is cleared when a statement starts,
    /// so a check stopped that early read the whole file (helper-61: an audit
    /// that failed at once waited 1.9 s for it).
    #[test]
    fn a_check_stopped_at_once_stops() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (path, j) = filled(dir.path());
        drop(j);
        let s = crate::sqlite::SqliteStore::open(&path, &Options::default()).expect("store");
        let check = s.integrity_beside(10).expect("proven and started");
        (check.stop)();
        let answer = check.handle.join().expect("no panic");
        assert!(
            answer.as_ref().is_err_and(|e| e.contains("interrupt")),
            "{answer:?}"
        );
    }

    /// A caller that stops before asking for the check's answer (the audit, on
    /// an error) leaves no check running: dropping it stops the check and waits
    /// for its thread, which lets go of the journal's files. Before, the thread
    /// read on to the end of the file after the audit had returned.
    #[test]
    fn a_check_dropped_unfinished_lets_go_of_the_journal() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_, j) = filled(dir.path());
        let ours = |paths: Vec<std::path::PathBuf>| {
            paths
                .into_iter()
                .filter(|p| p.starts_with(dir.path()))
                .collect::<Vec<_>>()
        };
        let pending = j.start_integrity(10);
        assert!(pending.check.is_some(), "started beside");
        drop(j);
        assert!(!ours(open_paths()).is_empty(), "the check holds the files");
        drop(pending);
        assert_eq!(ours(open_paths()), Vec::<std::path::PathBuf>::new());
    }
}
