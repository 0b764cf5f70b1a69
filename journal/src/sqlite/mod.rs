//! The SQLite backend: one file in WAL mode. Opening it (file creation with
//! owner-only permissions, pragmas, migrations keyed on `user_version`); its SQL
//! lives here and in `sql.rs`, its `Store` in `store.rs`.

mod sql;
mod store;
mod tx;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::{Access, Durability, Error, Options, SCHEMA_VERSION};

/// `PRAGMA application_id` of a cairn journal ("cairn" would not fit: "crn1").
const APPLICATION_ID: i64 = 0x6372_6e31;

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
}

impl SqliteStore {
    /// Opens (and with `options.create`, creates) the journal at `path`.
    pub(crate) fn open(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(not_journal("it is a symbolic link; name the file itself"))
            }
            Ok(meta) if meta.is_dir() => return Err(not_journal("it is a directory")),
            Ok(meta) if !meta.is_file() => return Err(not_journal("it is not a regular file")),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !options.create {
                    return Err(Error::Missing {
                        path: path.to_owned(),
                    });
                }
                create_owner_only(path)?;
            }
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source: e,
                })
            }
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::sql(e, busy_ms))?;
        conn.busy_timeout(options.busy_timeout)
            .map_err(|e| Error::sql(e, busy_ms))?;
        let mut journal = Self {
            conn,
            path: path.to_owned(),
            busy_ms,
            schema: SCHEMA_VERSION,
            access: Access::ReadWrite,
        };
        // Read before writing anything: a foreign or newer file must stay byte-identical.
        let (version, app_id, tables) = journal.identify()?;
        if version > SCHEMA_VERSION {
            return Err(Error::NewerSchema {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == 0 && tables > 0 {
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
        journal.set_pragmas(options.durability)?;
        journal.migrate()?;
        Ok(journal)
    }

    /// Opens an existing journal for reading only (see `Journal::open_read_only`).
    pub(crate) fn open_read_only(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(not_journal("it is a symbolic link; name the file itself"))
            }
            Ok(meta) if meta.is_dir() => return Err(not_journal("it is a directory")),
            Ok(meta) if !meta.is_file() => return Err(not_journal("it is not a regular file")),
            Ok(meta) if meta.len() == 0 => {
                return Err(not_journal(
                    "it is empty (no journal was ever written to it)",
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Missing {
                    path: path.to_owned(),
                })
            }
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source: e,
                })
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let attempt = |access: Access| -> Result<Self, Error> {
            let uri = file_uri(path, access);
            let conn =
                Connection::open_with_flags(&uri, flags).map_err(|e| Error::sql(e, busy_ms))?;
            conn.busy_timeout(options.busy_timeout)
                .map_err(|e| Error::sql(e, busy_ms))?;
            let mut journal = Self {
                conn,
                path: path.to_owned(),
                busy_ms,
                schema: 0,
                access,
            };
            let (version, app_id, tables) = journal.identify()?;
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
            Ok(journal)
        };
        match attempt(Access::ReadOnly) {
            Err(Error::ReadOnly | Error::StorageIo { .. } | Error::Sqlite(_)) => {
                attempt(Access::Immutable)
            }
            other => other,
        }
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

    fn identify(&self) -> Result<(i64, i64, i64), Error> {
        let read = |sql: &str| -> Result<i64, Error> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
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
        };
        // One read transaction: a consistent snapshot, so a concurrent first-time
        // migration is seen either wholly (version and tables) or not at all.
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        let identity = (|| {
            Ok((
                read("PRAGMA user_version")?,
                read("PRAGMA application_id")?,
                read("SELECT count(*) FROM sqlite_schema")?,
            ))
        })();
        let _ = self.conn.execute_batch("COMMIT");
        identity
    }

    fn set_pragmas(&self, durability: Durability) -> Result<(), Error> {
        let sync = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| Error::sql(e, self.busy_ms))?;
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

    fn migrate(&mut self) -> Result<(), Error> {
        let busy = self.busy_ms;
        let current: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| Error::sql(e, busy))?;
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
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            tx.execute_batch(sql).map_err(|e| Error::sql(e, busy))?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(|e| Error::sql(e, busy))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| Error::sql(e, busy))?;
        tx.commit().map_err(|e| Error::sql(e, busy))
    }
}

/// `file:` URI of `path` for SQLite, percent-encoding what a URI reserves.
fn file_uri(path: &Path, access: Access) -> String {
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri.push_str(match access {
        Access::Immutable => "?mode=ro&immutable=1",
        Access::ReadOnly | Access::ReadWrite => "?mode=ro",
    });
    uri
}

#[cfg(unix)]
fn create_owner_only(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io = |p: &Path| {
        let p = p.to_owned();
        move |source| Error::Io { path: p, source }
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(io(parent))?;
        }
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        // Another process created it first: fine, it is opened below like any existing file.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(path)(e)),
    }
}

#[cfg(not(unix))]
fn create_owner_only(path: &Path) -> Result<(), Error> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .open(path)
        .map(|_| ())
        .map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })
}
