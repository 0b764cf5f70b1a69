//! The two journal backends as test fixtures, so one conformance test runs on
//! both: a fresh journal location of each kind, raw SQL against it (tampering, as
//! an attacker with write access would), and a way to hold the writers' lock.

use std::path::PathBuf;

use cairn::journal::{Journal, Options};
use cairn::{Engine, Registry};

use crate::support::TempJournal;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Every backend: each conformance test loops over these.
pub fn backends() -> [Backend; 2] {
    [Backend::Sqlite, Backend::Postgres]
}

/// A conformance case that cannot exist on PostgreSQL (a file mode, read-only
/// media, SQLite's own structural check): `true` on PostgreSQL, after saying on
/// stderr which case is skipped and why, so no skip is silent. The reason is the
/// argument, in the test's code.
pub fn sqlite_only(b: Backend, case: &str, why_not_postgres: &str) -> bool {
    if b == Backend::Postgres {
        eprintln!("conformance: `{case}` skipped on PostgreSQL: {why_not_postgres}");
        return true;
    }
    false
}

/// A fresh, empty journal location of one backend.
pub struct Store {
    pub backend: Backend,
    /// The SQLite temp dir, or a PostgreSQL URL as a `TempJournal` pointing at it.
    pub temp: TempJournal,
}

impl Backend {
    pub fn fresh(self) -> Store {
        Store {
            backend: self,
            temp: match self {
                Backend::Sqlite => TempJournal::new(),
                Backend::Postgres => {
                    TempJournal::at(PathBuf::from(crate::support::pg::server().fresh_url()))
                }
            },
        }
    }
}

impl Store {
    /// A PostgreSQL journal in a fresh database of its own in `encoding`.
    pub fn postgres_in(encoding: &str) -> Store {
        Store {
            backend: Backend::Postgres,
            temp: TempJournal::at(PathBuf::from(
                crate::support::pg::server().fresh_database(encoding),
            )),
        }
    }

    /// What `--db` takes: the file's path, or the URL.
    pub fn db(&self) -> PathBuf {
        self.temp.path()
    }

    pub fn journal(&self) -> Journal {
        Journal::open(&self.db(), &Options::default()).expect("journal opens")
    }

    pub fn reader(&self) -> Journal {
        Journal::open_read_only(&self.db(), &Options::default()).expect("journal opens read-only")
    }

    pub fn engine(&self, registry: Registry) -> Engine {
        Engine::new(self.journal(), registry)
    }

    /// Runs `sql` as is (SQLite: a plain connection; PostgreSQL: the journal's schema).
    pub fn exec(&self, sql: &str) -> Result<(), String> {
        match self.backend {
            Backend::Sqlite => rusqlite::Connection::open(self.db())
                .and_then(|c| c.execute_batch(sql))
                .map_err(|e| e.to_string()),
            Backend::Postgres => self.pg().batch_execute(sql).map_err(|e| {
                e.as_db_error()
                    .map_or(e.to_string(), |d| d.message().to_owned())
            }),
        }
    }

    /// Drops every append-only guard, then runs `sql`.
    pub fn tamper(&self, sql: &str) {
        let drop = match self.backend {
            Backend::Sqlite => {
                let c = rusqlite::Connection::open(self.db()).unwrap();
                let names: Vec<String> = c
                    .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
                    .unwrap()
                    .query_map([], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                names
                    .iter()
                    .map(|n| format!("DROP TRIGGER {n};"))
                    .collect::<String>()
            }
            Backend::Postgres => "DROP FUNCTION cairn_append_only() CASCADE;".to_owned(),
        };
        self.exec(&drop).expect("drop the guards");
        self.exec(sql)
            .unwrap_or_else(|e| panic!("tamper `{sql}`: {e}"));
    }

    /// A PostgreSQL connection to the journal's schema.
    pub fn pg(&self) -> postgres::Client {
        postgres::Client::connect(&self.db().to_string_lossy(), postgres::NoTls).expect("connect")
    }

    /// Holds the lock every writer of this journal needs, until the guard drops.
    pub fn hold_writers(&self) -> Hold {
        match self.backend {
            Backend::Sqlite => {
                let c = rusqlite::Connection::open(self.db()).unwrap();
                c.execute_batch("BEGIN IMMEDIATE").unwrap();
                Hold::Sqlite(c)
            }
            Backend::Postgres => {
                let mut c = self.pg();
                // The documented key: cairn's application id ("crn1") in the high
                // 32 bits, the journal schema's oid in the low 32.
                let oid: i64 = c
                    .query_one(
                        "SELECT oid::bigint FROM pg_namespace WHERE nspname = current_schema()",
                        &[],
                    )
                    .unwrap()
                    .get(0);
                let key = (0x6372_6e31_i64 << 32) | oid;
                c.execute("SELECT pg_advisory_lock($1)", &[&key]).unwrap();
                Hold::Postgres(c)
            }
        }
    }
}

/// A held writers' lock, released on drop.
pub enum Hold {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

impl Drop for Hold {
    fn drop(&mut self) {
        match self {
            Hold::Sqlite(c) => {
                let _ = c.execute_batch("ROLLBACK");
            }
            Hold::Postgres(c) => {
                let _ = c.batch_execute("SELECT pg_advisory_unlock_all()");
            }
        }
    }
}
