//! The SQLite backend: one file in WAL mode. Opening it (file creation with
//! owner-only permissions, pragmas, migrations keyed on `user_version`); its SQL
//! lives here and in `sql.rs`, its `Store` in `store.rs`, the file-system checks
//! and the private read copy in `file.rs`.

mod ahead;
mod beside;
mod file;
mod insert;
mod packed;
mod replay;
mod same;
#[cfg(test)]
mod snapshot_tests;
mod sql;
mod store;
mod structure;
mod tx;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use file::{create_owner_only, file_uri, regular_file, sidecar, PrivateCopy};
use structure::{foreign_id, integrity_lines, known_version};

use crate::{Access, Durability, Error, Options, SCHEMA_VERSION};

/// `PRAGMA application_id` of a cairn journal ("cairn" would not fit: "crn1").
const APPLICATION_ID: i64 = 0x6372_6e31;

/// Whether `conn` reads its file in WAL mode (asked, never set).
fn wal_mode(conn: &Connection) -> bool {
    conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .is_ok_and(|m| m.eq_ignore_ascii_case("wal"))
}

/// One connection to the file, set up as every cairn connection is.
fn connect(
    target: impl AsRef<Path>,
    flags: OpenFlags,
    options: &Options,
) -> Result<Connection, Error> {
    let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
    let err = |e| Error::sql(e, busy_ms);
    let conn = Connection::open_with_flags(target, flags).map_err(err)?;
    // SQLite takes the wait as a C int of milliseconds: a longer one is the
    // longest it can wait (rusqlite panics past it).
    conn.busy_timeout(
        options
            .busy_timeout
            .min(std::time::Duration::from_millis(i32::MAX as u64)),
    )
    .map_err(err)?;
    // The query planner's stability guarantee: a plan never depends on a bound
    // value. Without it this build (STAT4) marks every `stream = ?1` query to be
    // re-planned when its parameter changes, and the statement cache clearing the
    // bindings made each cached statement re-compile at its next step: measured,
    // a third of a 1,000-transition batch's time went to re-parsing the stream
    // tip query. cairn's queries are planned by their indexes alone (no ANALYZE),
    // and `sql.rs`'s plan test holds them to those plans.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .map_err(err)?;
    Ok(conn)
}

/// Makes a transaction the caller began (`BEGIN`) read its snapshot through the
/// schema that snapshot holds: the read transaction is opened first, and the
/// schema then reloaded in it. SQLite reloads a cached schema only when its
/// cookie moved, which an edit of `sqlite_schema` by hand does not (helper-84);
/// and a reload with no transaction open reads in one of its own, before the
/// caller's begins (helper-85: a commit between made a walk judge its pages by
/// the schema before it).
pub(super) fn schema_in_snapshot(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA schema_version; PRAGMA writable_schema=RESET")
}

/// The migrations, in order; entry `i` takes the schema from version `i` to `i + 1`.
/// Append only: never edit or remove an entry.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE transitions (
    id              INTEGER PRIMARY KEY,
    stream          TEXT    NOT NULL,
    machine         TEXT    NOT NULL,
    rules_version   INTEGER NOT NULL,
    command_name    TEXT    NOT NULL,
    command         TEXT    NOT NULL,
    context         TEXT    NOT NULL,
    idempotency_key TEXT,
    fingerprint     TEXT,
    first_version   INTEGER NOT NULL,
    last_version    INTEGER NOT NULL,
    recorded_at     TEXT    NOT NULL
);
CREATE UNIQUE INDEX transitions_idempotency
    ON transitions (stream, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX transitions_stream ON transitions (stream, first_version);

CREATE TABLE events (
    seq            INTEGER PRIMARY KEY,
    stream         TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    machine        TEXT    NOT NULL,
    event_type     TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    payload        TEXT    NOT NULL,
    recorded_at    TEXT    NOT NULL,
    transition_id  INTEGER NOT NULL,
    hash           TEXT    NOT NULL,
    UNIQUE (stream, version)
);

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'cairn journal events are append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'cairn journal events are append-only'); END;
CREATE TRIGGER transitions_append_only_update BEFORE UPDATE ON transitions
    BEGIN SELECT RAISE(ABORT, 'cairn journal transitions are append-only'); END;
CREATE TRIGGER transitions_append_only_delete BEFORE DELETE ON transitions
    BEGIN SELECT RAISE(ABORT, 'cairn journal transitions are append-only'); END;
"#,
    r#"
CREATE TABLE signing_keys (
    id          INTEGER PRIMARY KEY,
    public_key  TEXT    NOT NULL UNIQUE,
    added_at    TEXT    NOT NULL
);
CREATE TABLE signatures (
    transition_id INTEGER PRIMARY KEY,
    key_id        INTEGER NOT NULL,
    head_seq      INTEGER NOT NULL,
    head_hash     TEXT    NOT NULL,
    signature     TEXT    NOT NULL
);
CREATE TRIGGER signing_keys_append_only_update BEFORE UPDATE ON signing_keys
    BEGIN SELECT RAISE(ABORT, 'cairn journal signing keys are append-only'); END;
CREATE TRIGGER signing_keys_append_only_delete BEFORE DELETE ON signing_keys
    BEGIN SELECT RAISE(ABORT, 'cairn journal signing keys are append-only'); END;
CREATE TRIGGER signatures_append_only_update BEFORE UPDATE ON signatures
    BEGIN SELECT RAISE(ABORT, 'cairn journal signatures are append-only'); END;
CREATE TRIGGER signatures_append_only_delete BEFORE DELETE ON signatures
    BEGIN SELECT RAISE(ABORT, 'cairn journal signatures are append-only'); END;
"#,
    // 3: a transition record's command and context may be stored packed (a
    // BLOB: `packed`); the columns take either, so no row changes, but a build
    // that reads only text must not open the file.
    "-- packed command and context",
];

const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

/// The SQLite backend's connection to one journal file.
pub(crate) struct SqliteStore {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) busy_ms: u64,
    /// The schema version of the file (older than [`SCHEMA_VERSION`] only when
    /// opened read-only: a reader never migrates).
    pub(crate) schema: i64,
    pub(crate) access: Access,
    /// The private copy a [`Access::Copy`] journal reads (dropped after the connection).
    pub(crate) copy: Option<PrivateCopy>,
}

/// Refuses a path SQLite would read as something other than that file: a `file:`
/// URI (its query could name another file, a mode or a VFS, while cairn's checks
/// of the file — regular, not a symlink, owner-only — would look at a relative
/// path of that name) or `:memory:` (a journal that vanishes with the process).
/// Refused before anything is created, so nothing is left behind.
fn refuse_special_name(path: &Path) -> Result<(), Error> {
    let text = path.as_os_str().as_encoded_bytes();
    let reason = if text.starts_with(b"file:") {
        "it is a SQLite URI (`file:…`), not a path: name the journal's file itself"
    } else if text == b":memory:" || text.is_empty() {
        "it names no file (`:memory:` or empty): name the journal's file"
    } else {
        return Ok(());
    };
    Err(Error::NotAJournal {
        path: path.to_owned(),
        reason: reason.to_owned(),
    })
}

/// What [`SqliteStore::identify`] reads of a file before anything is written.
struct Identity {
    version: i64,
    app_id: i64,
    tables: i64,
    journal_mode: String,
}

impl SqliteStore {
    /// Opens (and with `options.create`, creates) the journal at `path`.
    pub(crate) fn open(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        refuse_special_name(path)?;
        match regular_file(path) {
            Ok(_) => {}
            Err(Error::Missing { .. }) => {
                if !options.create {
                    return Err(Error::Missing {
                        path: path.to_owned(),
                    });
                }
                create_owner_only(path)?;
            }
            Err(e) => return Err(e),
        }
        let conn = connect(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            options,
        )?;
        // A connection that writes nothing leaves the file as it found it: SQLite
        // checkpoints the write-ahead log into the file when the last connection
        // closes, and a refused command (exit 2) closing last had rewritten the
        // file with another writer's pending log (helper-75). Checkpointing on
        // close comes back once this connection commits a write (`wrote`).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(|e| Error::sql(e, busy_ms))?;
        let mut journal = Self {
            conn,
            path: path.to_owned(),
            busy_ms,
            schema: SCHEMA_VERSION,
            access: Access::ReadWrite,
            copy: None,
        };
        // Read before writing anything: a foreign or newer file must stay byte-identical.
        let Identity {
            version,
            app_id,
            tables,
            journal_mode,
        } = journal.identify()?;
        if version > SCHEMA_VERSION {
            return Err(Error::NewerSchema {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == 0 && (tables > 0 || foreign_id(app_id)) {
            return Err(not_journal(
                "it is an SQLite database of another application",
            ));
        }
        if version > 0 && app_id != APPLICATION_ID {
            return Err(not_journal("its application id is not cairn's"));
        }
        if let Some(mode) = journal.loose_permissions() {
            return Err(Error::LoosePermissions {
                path: path.to_owned(),
                mode,
            });
        }
        // What a writer refuses before it changes anything (helper-91).
        if let Some(detail) =
            structure::before_writing(&journal.conn, version).map_err(|e| Error::sql(e, busy_ms))?
        {
            return Err(Error::Damaged { detail });
        }
        // A file no journal yet is made one under the migration's lock, which
        // judges it again, before anything else changes it: switched to WAL
        // first, a file another process claimed meanwhile was changed though
        // refused (helper-92).
        if version == 0 {
            journal.migrate(version)?;
            journal.set_pragmas(options.durability, &journal_mode)?;
            // A read in WAL mode opens the WAL index, which a second connection
            // is proven to share by (`beside.rs`), as the write there did.
            journal.identify()?;
        } else {
            journal.set_pragmas(options.durability, &journal_mode)?;
            journal.migrate(version)?;
        }
        Ok(journal)
    }

    /// Opens an existing journal for reading only (see `Journal::open_read_only`).
    pub(crate) fn open_read_only(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        refuse_special_name(path)?;
        match regular_file(path) {
            Ok(meta) if meta.len() == 0 => {
                return Err(not_journal(
                    "it is empty (no journal was ever written to it)",
                ))
            }
            Ok(_) => {}
            Err(e) => return Err(e),
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let attempt = |access: Access| -> Result<Self, Error> {
            let uri = file_uri(path, access);
            let conn = connect(&uri, flags, options)?;
            let mut journal = Self {
                conn,
                path: path.to_owned(),
                busy_ms,
                schema: 0,
                access,
                copy: None,
            };
            let Identity {
                version,
                app_id,
                tables,
                ..
            } = journal.identify()?;
            if version > SCHEMA_VERSION {
                return Err(Error::NewerSchema {
                    found: version,
                    supported: SCHEMA_VERSION,
                });
            }
            if version == 0 || app_id != APPLICATION_ID {
                return Err(Error::NotAJournal {
                    path: path.to_owned(),
                    reason: if version == 0 && tables == 0 {
                        "it holds no journal".into()
                    } else {
                        "it is an SQLite database of another application".into()
                    },
                });
            }
            journal.schema = version;
            journal.require_tables()?;
            Ok(journal)
        };
        match attempt(Access::ReadOnly) {
            Err(Error::ReadOnly | Error::StorageIo { .. } | Error::Sqlite(_)) => {
                // SQLite cannot keep its index next to the file (read-only media, a
                // directory the user may not write). Immutable mode would ignore a
                // write-ahead log, silently dropping committed transitions: when
                // one is there, read a private copy of the file and its log instead.
                let wal = sidecar(path, "-wal");
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                    let copy = PrivateCopy::make(path, &wal)?;
                    let mut journal = Self::open_read_only(&copy.db, options)?;
                    journal.path = path.to_owned();
                    journal.access = Access::Copy;
                    journal.copy = Some(copy);
                    return Ok(journal);
                }
                attempt(Access::Immutable)
            }
            other => other,
        }
    }

    /// Whether the file has a table of this name.
    pub(crate) fn has_table(&self, name: &str) -> Result<bool, Error> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [name],
                |r| r.get(0),
            )
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        Ok(n == 1)
    }

    /// A cairn journal has its tables; one without them was damaged (or emptied).
    /// One statement for all of them (the read-only open of every read verb).
    fn require_tables(&self) -> Result<(), Error> {
        match structure::missing_table(&self.conn, self.schema)
            .map_err(|e| Error::sql(e, self.busy_ms))?
        {
            Some(table) => Err(Error::Damaged {
                detail: format!("the table `{table}` is missing"),
            }),
            None => Ok(()),
        }
    }

    /// SQLite's own structural check (`PRAGMA integrity_check`): every index agrees
    /// with its table, every page is where the file says. The problems it names,
    /// at most `limit`; empty when the file is sound.
    /// Inside a transaction the caller began, the check judges its snapshot;
    /// otherwise it reads one of its own, its schema reloaded there.
    pub(crate) fn integrity_problems(&self, limit: u32) -> Result<Vec<String>, Error> {
        let err = |e| Error::sql(e, self.busy_ms);
        if !self.conn.is_autocommit() {
            return integrity_lines(&self.conn, limit).map_err(err);
        }
        self.conn.execute_batch("BEGIN DEFERRED").map_err(err)?;
        let lines =
            schema_in_snapshot(&self.conn).and_then(|()| integrity_lines(&self.conn, limit));
        let _ = self.conn.execute_batch("COMMIT");
        lines.map_err(err)
    }

    /// The file's permission bits when they let group or others in.
    pub(crate) fn loose_permissions(&self) -> Option<u32> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&self.path).ok()?.permissions().mode() & 0o777;
            (mode & 0o077 != 0).then_some(mode)
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// The file's schema version, application id, table count and journal mode,
    /// read by one statement: one consistent snapshot (a concurrent first-time
    /// migration is seen wholly or not at all) and one statement to compile where
    /// there were five (a short verb opens the journal once per process).
    fn identify(&self) -> Result<Identity, Error> {
        self.conn
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version), \
                        (SELECT application_id FROM pragma_application_id), \
                        (SELECT count(*) FROM sqlite_schema), \
                        (SELECT journal_mode FROM pragma_journal_mode)",
                [],
                |r| {
                    Ok(Identity {
                        version: r.get(0)?,
                        app_id: r.get(1)?,
                        tables: r.get(2)?,
                        journal_mode: r.get(3)?,
                    })
                },
            )
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    Error::NotAJournal {
                        path: self.path.clone(),
                        reason: "it is not an SQLite database".into(),
                    }
                }
                other => Error::sql(other, self.busy_ms),
            })
            .and_then(|identity| {
                known_version(&self.path, identity.version)?;
                Ok(identity)
            })
    }

    /// WAL mode (kept in the file: switched once, when it is not WAL yet) and this
    /// connection's durability.
    fn set_pragmas(&self, durability: Durability, journal_mode: &str) -> Result<(), Error> {
        let sync = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        let mode: String = if journal_mode.eq_ignore_ascii_case("wal") {
            journal_mode.to_owned()
        } else {
            self.switch_to_wal()?
        };
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::NotAJournal {
                path: self.path.clone(),
                reason: format!("cannot switch it to WAL mode (got `{mode}`)"),
            });
        }
        self.conn
            .pragma_update(None, "synchronous", sync)
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        Ok(())
    }

    /// `PRAGMA journal_mode=WAL`, tried again until the busy timeout: SQLite
    /// answers a switch that meets another connection's lock with `SQLITE_BUSY`
    /// at once, without its busy handler (found: eight processes creating one
    /// journal at once, one of them failed as busy in a fraction of a second).
    fn switch_to_wal(&self) -> Result<String, Error> {
        // As long as SQLite's own busy handler would wait (a C int of ms).
        let deadline = std::time::Instant::now()
            + std::time::Duration::from_millis(self.busy_ms.min(i32::MAX as u64));
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .map_err(|e| Error::sql(e, self.busy_ms))
            {
                Err(Error::Busy { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                other => return other,
            }
        }
    }

    /// Brings the schema from `current` (as [`SqliteStore::identify`] read it) to
    /// [`SCHEMA_VERSION`], re-reading it under the exclusive lock.
    fn migrate(&mut self, current: i64) -> Result<(), Error> {
        let busy = self.busy_ms;
        if current == SCHEMA_VERSION {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .map_err(|e| Error::sql(e, busy))?;
        // Another process may have migrated between our read and our lock.
        let current: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| Error::sql(e, busy))?;
        if current > SCHEMA_VERSION {
            return Err(Error::NewerSchema {
                found: current,
                supported: SCHEMA_VERSION,
            });
        }
        known_version(&self.path, current)?;
        // The file may have changed hands since it was read (helper-91, 92:
        // another process created its tables, set its own version and id,
        // while this one waited for the lock): what it holds is judged again
        // under the lock, as at open.
        let (tables, app_id): (i64, i64) = tx
            .query_row(
                "SELECT (SELECT count(*) FROM sqlite_schema), \
                        (SELECT application_id FROM pragma_application_id)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| Error::sql(e, busy))?;
        let foreign = if current == 0 {
            tables > 0 || foreign_id(app_id)
        } else {
            app_id != APPLICATION_ID
        };
        if foreign {
            return Err(Error::NotAJournal {
                path: self.path.clone(),
                reason: "it is an SQLite database of another application".into(),
            });
        }
        if let Some(detail) =
            structure::before_writing(&tx, current).map_err(|e| Error::sql(e, busy))?
        {
            return Err(Error::Damaged { detail });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            // What it makes cannot be there already: `before_writing` read
            // the file under this lock.
            tx.execute_batch(sql).map_err(|e| Error::sql(e, busy))?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(|e| Error::sql(e, busy))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| Error::sql(e, busy))?;
        tx.commit().map_err(|e| Error::sql(e, busy))?;
        self.wrote()
    }
}
