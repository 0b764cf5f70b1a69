//! Opening a journal: file creation with owner-only permissions, pragmas, and
//! migrations keyed on `user_version`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::Error;

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

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How durable an append is when it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: the append survives power loss once it returns. The default.
    Full,
    /// `synchronous=NORMAL`: survives a process crash; the last appends may be lost on power loss.
    Normal,
}

/// How to open a journal.
#[derive(Debug, Clone)]
pub struct Options {
    pub durability: Durability,
    /// How long a writer waits for another writer's lock before [`Error::Busy`].
    pub busy_timeout: Duration,
    /// Create the file (and its parent directory) when missing.
    pub create: bool,
    /// Sign each appended transition's chain head with this key (its public half
    /// is recorded in the journal). `None` appends unsigned transitions.
    pub signing_key: Option<crate::SigningKey>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            durability: Durability::Full,
            busy_timeout: Duration::from_millis(5_000),
            create: true,
            signing_key: None,
        }
    }
}

/// An open journal.
pub struct Journal {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) busy_ms: u64,
    /// The schema version of the file (older than [`SCHEMA_VERSION`] only when
    /// opened read-only: a reader never migrates).
    pub(crate) schema: i64,
    pub(crate) signing_key: Option<crate::SigningKey>,
    pub(crate) access: Access,
    /// The private copy a [`Access::Copy`] journal reads (dropped after the connection).
    pub(crate) copy: Option<PrivateCopy>,
}

/// How a journal was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read and write (migrated, WAL, the durability pragmas set).
    ReadWrite,
    /// SQLite's read-only mode: nothing is created, converted or checkpointed.
    ReadOnly,
    /// Read-only media where SQLite cannot even keep its shared-memory index, and
    /// no write-ahead log: the file is read as immutable (a snapshot or a copy).
    Immutable,
    /// Read-only media holding a write-ahead log SQLite cannot read in place: a
    /// private copy of the file and its log (in the temp directory, removed after)
    /// is read, so no committed transition is dropped.
    Copy,
}

/// `path` with `suffix` appended (`journal.db-wal`).
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A private copy of a journal and its write-ahead log, removed on drop.
pub(crate) struct PrivateCopy {
    dir: PathBuf,
    pub(crate) db: PathBuf,
}

impl PrivateCopy {
    fn make(path: &Path, wal: &Path) -> Result<Self, Error> {
        let mut nonce = [0u8; 8];
        let _ = getrandom::fill(&mut nonce);
        let dir = std::env::temp_dir().join(format!(
            "cairn-read-{}-{}",
            std::process::id(),
            crate::hash::to_hex(&nonce)
        ));
        let io = |p: &Path| {
            let p = p.to_owned();
            move |source| Error::Io { path: p, source }
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .map_err(io(&dir))?;
        }
        #[cfg(not(unix))]
        std::fs::create_dir(&dir).map_err(io(&dir))?;
        let copy = Self {
            db: dir.join("journal.db"),
            dir,
        };
        std::fs::copy(path, &copy.db).map_err(io(path))?;
        std::fs::copy(wal, sidecar(&copy.db, "-wal")).map_err(io(wal))?;
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Journal {
    /// Opens (and with `options.create`, creates) the journal at `path`.
    ///
    /// A new file is created mode 0600 and a missing parent directory mode 0700.
    /// A directory, a symlink, a non-SQLite file, a foreign SQLite database and
    /// a journal of a newer schema are refused without being modified.
    pub fn open(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
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
            signing_key: options.signing_key.clone(),
            access: Access::ReadWrite,
            copy: None,
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

    /// Opens an existing journal for reading only: never creates, migrates,
    /// converts to WAL or checkpoints, so it works on read-only media, on files the
    /// user may not write, and on snapshots. A WAL journal whose shared-memory file
    /// cannot be made is read as immutable ([`Access::Immutable`]).
    pub fn open_read_only(path: &Path, options: &Options) -> Result<Self, Error> {
        let busy_ms = u64::try_from(options.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let not_journal = |reason: &str| Error::NotAJournal {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
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
            let conn =
                Connection::open_with_flags(&uri, flags).map_err(|e| Error::sql(e, busy_ms))?;
            conn.busy_timeout(options.busy_timeout)
                .map_err(|e| Error::sql(e, busy_ms))?;
            let mut journal = Self {
                conn,
                path: path.to_owned(),
                busy_ms,
                schema: 0,
                signing_key: None,
                access,
                copy: None,
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
    fn require_tables(&self) -> Result<(), Error> {
        let mut wanted = vec!["events", "transitions"];
        if self.schema >= 2 {
            wanted.extend(["signing_keys", "signatures"]);
        }
        for table in wanted {
            if !self.has_table(table)? {
                return Err(Error::Damaged {
                    detail: format!("the table `{table}` is missing"),
                });
            }
        }
        Ok(())
    }

    /// SQLite's own structural check (`PRAGMA integrity_check`): every index agrees
    /// with its table, every page is where the file says. The problems it names,
    /// at most `limit`; empty when the file is sound. Verify runs it, so an index
    /// rewritten to show a different history than the rows cannot pass.
    pub fn integrity_problems(&self, limit: u32) -> Result<Vec<String>, Error> {
        let mut stmt = self
            .conn
            .prepare(&format!("PRAGMA integrity_check({limit})"))
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        let lines: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        Ok(lines.into_iter().filter(|l| l != "ok").collect())
    }

    /// How this journal was opened.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The file's permission bits when they let group or others in (a journal
    /// keeps evidence that may be sensitive; cairn creates it 0600).
    pub fn loose_permissions(&self) -> Option<u32> {
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

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
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

/// The metadata of the journal file at `path`, refusing what a journal cannot be: a
/// symbolic link, a directory, anything but a regular file. A missing file is
/// [`Error::Missing`]; every reader and writer opens through this one check.
fn regular_file(path: &Path) -> Result<std::fs::Metadata, Error> {
    let not_journal = |reason: &str| Error::NotAJournal {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(not_journal("it is a symbolic link; name the file itself"))
        }
        Ok(meta) if meta.is_dir() => Err(not_journal("it is a directory")),
        Ok(meta) if !meta.is_file() => Err(not_journal("it is not a regular file")),
        Ok(meta) => Ok(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Missing {
            path: path.to_owned(),
        }),
        Err(source) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
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
        Access::ReadOnly | Access::ReadWrite | Access::Copy => "?mode=ro",
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
