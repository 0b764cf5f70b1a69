//! The PostgreSQL backend: one schema (the first of the connection's
//! `search_path`) of one database, reached with the synchronous `postgres` crate.
//! Opening it: the connection and its session settings, the marker table that
//! says "cairn journal, schema N", refusal of foreign or newer schemas before
//! anything is written, and migrations under the journal's lock. Its SQL lives in
//! `sql.rs`, its `Store` in `store.rs`, the verify snapshot in `snap.rs`.

mod rows;
mod snap;
mod sql;
/// [`sql::PLANNER`] and [`sql::HOT`], for the plan test.
pub(crate) mod plans {
    pub use super::sql::{HOT, PLANNER};
}
mod store;

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use postgres::types::FromSql;
use postgres::{Client, GenericClient, NoTls, Row, Statement};

use crate::{Access, Durability, Error, Options, PostgresUrl, SCHEMA_VERSION};

const _: () = assert!(sql::MIGRATIONS.len() as i64 == SCHEMA_VERSION);

/// The PostgreSQL backend's connection to one journal.
pub(crate) struct PgStore {
    client: RefCell<Client>,
    /// Prepared statements, by their SQL (prepared statements live as long as the session).
    cache: RefCell<HashMap<&'static str, Statement>>,
    session: Session,
    schema: i64,
    access: Access,
    /// `pg_advisory_xact_lock` key: the application id and the schema's oid, so
    /// each journal (schema) has its own lock.
    lock_key: i64,
    /// The schema's oid (for the guard check).
    namespace: i64,
}

/// What the database holds before anything is written.
enum Found {
    /// cairn's marker, at this schema version.
    Journal(i64),
    /// No marker and no other relation: a journal can be created here.
    Empty,
}

/// What error mapping needs to know: where, and the lock timeout.
pub(crate) struct Session {
    location: String,
    busy_ms: u64,
}

impl PgStore {
    /// Connects and identifies the journal; a writer creates (with
    /// `options.create`) or migrates it, a reader never writes.
    pub(crate) fn open(
        url: &PostgresUrl,
        options: &Options,
        read_only: bool,
    ) -> Result<Self, Error> {
        let (mut client, s) = connect(url, options, read_only)?;
        let (namespace, found) = s.identify(&mut client)?;
        let schema = match found {
            Found::Journal(version) if read_only || version == SCHEMA_VERSION => version,
            Found::Empty if read_only || !options.create => {
                return Err(Error::Missing {
                    path: s.location.clone().into(),
                })
            }
            Found::Journal(_) | Found::Empty => {
                s.migrate(&mut client)?;
                SCHEMA_VERSION
            }
        };
        let store = Self {
            client: RefCell::new(client),
            cache: RefCell::new(HashMap::new()),
            session: s,
            schema,
            access: if read_only {
                Access::ReadOnly
            } else {
                Access::ReadWrite
            },
            lock_key: (sql::APPLICATION_ID << 32) | namespace,
            namespace,
        };
        if read_only {
            store.require_tables()?;
        }
        Ok(store)
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

    pub(crate) fn pg(&self, e: postgres::Error) -> Error {
        self.session.pg(e)
    }

    /// The server's clock now.
    pub(crate) fn now(&self) -> Result<String, Error> {
        now_on(&mut *self.client.borrow_mut(), &self.session)
    }

    /// A prepared statement for `sql`, prepared once per session.
    fn stmt(&self, c: &mut impl GenericClient, sql: &'static str) -> Result<Statement, Error> {
        if let Some(s) = self.cache.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql).map_err(|e| self.pg(e))?;
        self.cache.borrow_mut().insert(sql, s.clone());
        Ok(s)
    }
}

/// A session with the server at `url`, its settings made (read-only sessions
/// refuse every write); nothing about the schema is read yet.
fn connect(
    url: &PostgresUrl,
    options: &Options,
    read_only: bool,
) -> Result<(Client, Session), Error> {
    let location = url.to_string();
    let mut config: postgres::Config = url.secret().parse().map_err(|e| Error::NotAJournal {
        path: location.clone().into(),
        reason: format!("it is not a valid PostgreSQL URL: {e}"),
    })?;
    // A URL naming no server or no user is the caller's to mend, not a server
    // that could not be reached (helper-75: `postgres://` was exit 1, connect).
    if config.get_hosts().is_empty() || config.get_user().map_or(true, str::is_empty) {
        return Err(Error::NotAJournal {
            path: location.into(),
            reason: "it is not a valid PostgreSQL URL: it names no host or no user".into(),
        });
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("cairn");
    }
    let mut client = config.connect(NoTls).map_err(|e| Error::Connect {
        location: location.clone(),
        reason: reason(&e),
    })?;
    let busy_ms = u64::try_from(options.busy_timeout.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    // One batch, one round trip. `PIN_SEARCH_PATH` comes last: the journal's
    // schema alone, so `pg_catalog` is searched first and no operator or
    // function of another schema the database's `search_path` lists before it
    // (`SET search_path = public, pg_catalog` and a `public.=` on text:
    // helper-55 hid a live lease) stands in for the built-in one in cairn's
    // statements. Every name here is qualified.
    let session = format!(
        "SET synchronous_commit = {}; SET lock_timeout = '{busy_ms}ms'; \
         SET client_min_messages = warning; {}{} {};",
        match options.durability {
            Durability::Full => "on",
            Durability::Normal => "off",
        },
        sql::PLANNER,
        if read_only {
            " SET default_transaction_read_only = on;"
        } else {
            ""
        },
        sql::PIN_SEARCH_PATH,
    );
    let s = Session { location, busy_ms };
    client.batch_execute(&session).map_err(|e| match e.as_db_error() {
        // The session's own settings refused (a search_path with `pg_temp`
        // first for a role without TEMP: the pin's `current_schema()` would
        // create the temporary schema; or `set_config` revoked): the session
        // cannot be set up, which is neither the journal's damage nor the
        // driver's. Where to look, named; the URL's own options may be none.
        Some(db) if db.code() == &postgres::error::SqlState::INSUFFICIENT_PRIVILEGE => Error::Connect {
            location: s.location.clone(),
            reason: format!(
                "the server refused the session's settings: {} (the role's grants and settings, or the URL's options such as search_path)",
                db.message()
            ),
        },
        _ => s.pg(e),
    })?;
    Ok((client, s))
}

/// A column of a row as the type cairn's schema gives it. A table altered by
/// hand (a column retyped, `ALTER TABLE … TYPE`) holds values of another type:
/// that is [`Error::Damaged`] (exit 5, as SQLite's wrong-typed values are),
/// never a panic.
pub(crate) trait Col {
    fn col<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, Error>;
}

impl Col for Row {
    fn col<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, Error> {
        self.try_get(i).map_err(|e| Error::Damaged {
            detail: format!(
                "a stored value has the wrong type: column `{}`: {e}",
                self.columns().get(i).map_or("?", |c| c.name())
            ),
        })
    }
}

/// The server's clock now (`clock_timestamp()`, in UTC, RFC 3339 with
/// microseconds): the journal's one clock, whether or not a journal exists yet.
pub(crate) fn clock(url: &PostgresUrl, options: &Options) -> Result<String, Error> {
    let (mut client, s) = connect(url, options, true)?;
    now_on(&mut client, &s)
}

/// The server's clock, read on `client`.
fn now_on(client: &mut impl GenericClient, s: &Session) -> Result<String, Error> {
    client
        .query_one(sql::CLOCK, &[])
        .map(|row| row.get(0))
        .map_err(|e| s.pg(e))
}

impl Session {
    /// Maps a PostgreSQL error: a held lock past `lock_timeout` is busy, a write
    /// in a read-only session is read-only, a lost connection is `Connect`.
    pub(crate) fn pg(&self, e: postgres::Error) -> Error {
        map_error(e, self.busy_ms, &self.location)
    }

    fn not_journal(&self, reason: &str) -> Error {
        Error::NotAJournal {
            path: self.location.clone().into(),
            reason: reason.to_owned(),
        }
    }

    /// Reads (never writes) what the schema holds. A journal's tables are
    /// created in one transaction with its marker, so tables seen without a
    /// marker are looked at twice: another process may have just created both.
    fn identify(&self, c: &mut impl GenericClient) -> Result<(i64, Found), Error> {
        match self.identify_once(c, false)? {
            Some(found) => Ok(found),
            None => self
                .identify_once(c, true)?
                .ok_or_else(|| self.not_journal("internal: identify")),
        }
    }

    /// `None` when tables were seen without a marker and `last` is false.
    fn identify_once(
        &self,
        c: &mut impl GenericClient,
        last: bool,
    ) -> Result<Option<(i64, Found)>, Error> {
        let row = c
            .query_one(sql::CURRENT_SCHEMA, &[])
            .map_err(|e| self.pg(e))?;
        let schema: Option<String> = row.get(0);
        let namespace: Option<i64> = row.get(1);
        let has_marker: bool = row.get(2);
        let (Some(schema), Some(namespace)) = (schema, namespace) else {
            return Err(self.not_journal(
                "no schema of the connection's search_path exists (create one, or set search_path)",
            ));
        };
        // `pg_` names PostgreSQL's own schemas (users cannot create one). First
        // on the path, `pg_temp` made cairn create the journal in the session's
        // temporary schema, gone with the session (helper-56: "damaged" at the
        // first append, "no journal" at the next call); `pg_catalog` is the
        // system's tables.
        if schema.starts_with("pg_") {
            return Err(self.not_journal(&format!(
                "the connection's search_path puts `{schema}` first, a `pg_` schema (PostgreSQL keeps the prefix for its own){}: name the journal's schema first (`options=-csearch_path%3Dmyschema` in the URL)",
                if schema.starts_with("pg_temp") || schema.starts_with("pg_toast_temp") {
                    " (the session's temporary schema: a journal there is gone with the session)"
                } else {
                    ""
                }
            )));
        }
        if has_marker {
            let marker = c
                .query_one(sql::MARKER, &[&sql::APPLICATION_ID])
                .map_err(|e| match e.code() {
                    Some(code) if code.code().starts_with("42") => self.not_journal(&format!(
                        "schema `{schema}` has a table `cairn_journal` that is not cairn's marker"
                    )),
                    _ => self.pg(e),
                })?;
            let version: Option<i64> = marker.col(0)?;
            let all_cairn: Option<bool> = marker.col(1)?;
            let Some(version) = version else {
                return Err(self.not_journal(&format!(
                    "schema `{schema}` has an empty `cairn_journal` marker"
                )));
            };
            if all_cairn != Some(true) {
                return Err(self.not_journal("its application id is not cairn's"));
            }
            // Migrations mark 1, 2, …: a marker below that is no schema cairn
            // wrote, and would skip every migration (helper-90, on SQLite).
            if version < 1 {
                return Err(self.not_journal(&format!(
                    "its `cairn_journal` marker names schema version {version}, which no cairn writes"
                )));
            }
            if version > SCHEMA_VERSION {
                return Err(Error::NewerSchema {
                    found: version,
                    supported: SCHEMA_VERSION,
                });
            }
            return Ok(Some((namespace, Found::Journal(version))));
        }
        let relations: i64 = c
            .query_one(sql::RELATIONS, &[&namespace])
            .map_err(|e| self.pg(e))?
            .get(0);
        if relations > 0 && !last {
            return Ok(None);
        }
        if relations > 0 {
            return Err(self.not_journal(&format!(
                "schema `{schema}` holds another application's tables, views or sequences and no cairn marker (give cairn an empty schema or database)"
            )));
        }
        Ok(Some((namespace, Found::Empty)))
    }

    /// Creates or migrates the journal in one transaction holding the journal's
    /// lock; what the schema holds is read again under the lock (another process
    /// may have created it meanwhile), and refused as at open.
    fn migrate(&self, client: &mut Client) -> Result<(), Error> {
        let mut tx = store::writer(client).map_err(|e| self.pg(e))?;
        let lock_key = (sql::APPLICATION_ID << 32) | self.namespace_of(&mut tx)?;
        tx.execute(sql::LOCK, &[&lock_key])
            .map_err(|e| self.pg(e))?;
        let (namespace, found) = self.identify(&mut tx)?;
        let current = match found {
            Found::Journal(v) => v,
            Found::Empty => 0,
        };
        // Every name the migrations still to run make must be free: a taken
        // one fails the migration, or (a key's index) is quietly made under
        // another name, a journal verify then finds damaged (helper-93).
        let pending: Vec<(i64, &str)> = rows::made_names()
            .into_iter()
            .filter(|(since, _)| *since > current)
            .collect();
        if !pending.is_empty() {
            let names: Vec<&str> = pending.iter().map(|(_, n)| *n).collect();
            if let Some(row) = tx
                .query_opt(sql::TAKEN_NAME, &[&namespace, &names])
                .map_err(|e| self.pg(e))?
            {
                let (name, kind): (String, String) = (row.col(0)?, row.col(1)?);
                let since = pending.iter().find(|(_, n)| *n == name).map_or(1, |p| p.0);
                return Err(self.name_taken(current, since, &format!("`{name}` ({kind})")));
            }
        }
        for (i, migration) in sql::MIGRATIONS.iter().enumerate().skip(current as usize) {
            // The same, where the check above cannot see it (a name another
            // session takes meanwhile): refused in the server's words.
            tx.batch_execute(migration).map_err(|e| {
                use postgres::error::SqlState;
                let taken = [
                    SqlState::DUPLICATE_TABLE,
                    SqlState::DUPLICATE_OBJECT,
                    SqlState::DUPLICATE_FUNCTION,
                ];
                if taken.iter().any(|c| e.code() == Some(c)) {
                    self.name_taken(current, i as i64 + 1, &reason(&e))
                } else {
                    self.pg(e)
                }
            })?;
            tx.execute(
                sql::MARK,
                &[&(i as i64 + 1), &sql::APPLICATION_ID, &crate::now_rfc3339()],
            )
            .map_err(|e| self.pg(e))?;
        }
        tx.commit().map_err(|e| self.pg(e))
    }

    /// A migration meets `what`, a name it makes: in a schema with no journal
    /// yet, another application's (refused as no journal); under a marker, a
    /// marker lowered below what the schema holds (helper-91) or another
    /// object under cairn's name, damage either way: the migration cannot run
    /// as written.
    fn name_taken(&self, current: i64, migration: i64, what: &str) -> Error {
        if current == 0 {
            return self.not_journal(&format!(
                "the schema holds {what}, a name cairn's journal makes (give cairn an empty schema or database)"
            ));
        }
        Error::Damaged {
            detail: format!(
                "the marker says schema version {current} but the schema holds {what}, a name migration {migration} makes: the marker was changed, or another application took cairn's name"
            ),
        }
    }

    fn namespace_of(&self, c: &mut impl GenericClient) -> Result<i64, Error> {
        let row = c
            .query_one(sql::CURRENT_SCHEMA, &[])
            .map_err(|e| self.pg(e))?;
        row.get::<_, Option<i64>>(1)
            .ok_or_else(|| self.not_journal("no schema of the connection's search_path exists"))
    }
}

/// The server's message for a connection failure, without the URL.
fn reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

pub(crate) fn map_error(e: postgres::Error, busy_ms: u64, location: &str) -> Error {
    use postgres::error::SqlState;
    if let Some(code) = e.code() {
        if *code == SqlState::LOCK_NOT_AVAILABLE
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::T_R_DEADLOCK_DETECTED
        {
            return Error::Busy {
                timeout_ms: busy_ms,
            };
        }
        if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            return Error::ReadOnly;
        }
        if *code == SqlState::DISK_FULL {
            return Error::DiskFull;
        }
        if *code == SqlState::DATA_CORRUPTED || *code == SqlState::INDEX_CORRUPTED {
            return Error::Damaged { detail: reason(&e) };
        }
        // cairn's statements are typed by cairn's schema: one the server cannot
        // type or run on the tables (no `min(bytea)`, `bytea = text`) meets a
        // table altered by hand.
        if [
            SqlState::UNDEFINED_FUNCTION,
            SqlState::DATATYPE_MISMATCH,
            SqlState::CANNOT_COERCE,
            SqlState::UNDEFINED_COLUMN,
        ]
        .contains(code)
        {
            return Error::Damaged {
                detail: format!(
                    "the journal's tables are not as cairn made them: {}",
                    reason(&e)
                ),
            };
        }
        // A constraint other than a taken key, or a trigger raising (none of
        // cairn's fires on an insert), kept a row cairn wrote: not a version
        // conflict (helper-83 F2).
        if (code.code().starts_with("23") && *code != SqlState::UNIQUE_VIOLATION)
            || *code == SqlState::RAISE_EXCEPTION
        {
            return Error::Damaged {
                detail: format!(
                    "the journal did not store a row: a rule, trigger or policy on its tables kept it ({})",
                    reason(&e)
                ),
            };
        }
        // A stored byte that is not text in the connection's encoding (written
        // into an `SQL_ASCII` database by hand): damage, as SQLite's is.
        if *code == SqlState::CHARACTER_NOT_IN_REPERTOIRE
            || *code == SqlState::UNTRANSLATABLE_CHARACTER
        {
            return Error::Damaged {
                detail: format!("a stored value is not text: {}", reason(&e)),
            };
        }
        // The only statement cairn runs after a failed one is verify's: a
        // transition record it could not read is reported and the walk reads on,
        // but the server has ended the snapshot's transaction.
        if *code == SqlState::IN_FAILED_SQL_TRANSACTION {
            return Error::Damaged {
                detail: "a stored row could not be read, and the server ended the read there"
                    .to_owned(),
            };
        }
        if code.code().starts_with("08") || code.code().starts_with("57P") {
            return Error::Connect {
                location: location.to_owned(),
                reason: reason(&e),
            };
        }
        return Error::Postgres(e);
    }
    if e.is_closed() {
        return Error::Connect {
            location: location.to_owned(),
            reason: "the connection was closed".into(),
        };
    }
    // A parameter the server typed otherwise than cairn binds it: the column it
    // is compared with was retyped by hand.
    if std::error::Error::source(&e).is_some_and(|s| s.is::<postgres::types::WrongType>()) {
        return Error::Damaged {
            detail: format!("the journal's tables are not as cairn made them: {e}"),
        };
    }
    let io = std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
    if io {
        return Error::Connect {
            location: location.to_owned(),
            reason: e.to_string(),
        };
    }
    Error::Postgres(e)
}
