//! One event row's insert, held through a write transaction: a statement
//! looked up once, and the columns a transition's events share bound once.

use rusqlite::{CachedStatement, Transaction};

use super::sql;
use crate::hash::EventFields;
use crate::store::kept;
use crate::Error;

/// The event insert, and what its columns that events share hold.
pub(super) struct EventInsert<'a> {
    stmt: CachedStatement<'a>,
    /// What `?2`, `?4`, `?5`, `?6`, `?8` and `?9` (stream, machine, event
    /// type, schema version, time, transition id) are bound to: a transition's
    /// events share most of them, so each is bound again only when it differs
    /// (SQLite copies each text it binds). `None`: not known to be bound.
    shared: Option<Shared>,
}

#[derive(Default)]
struct Shared {
    stream: String,
    machine: String,
    event_type: String,
    schema_version: i64,
    recorded_at: String,
    transition_id: i64,
}

impl EventInsert<'_> {
    fn execute(&mut self, e: &EventFields<'_>, hash: &str) -> rusqlite::Result<usize> {
        // Forgotten until every binding below has taken: a failed one leaves
        // what is bound unknown.
        let mut was = self.shared.take();
        let fresh = was.is_none();
        let now = was.get_or_insert_with(Shared::default);
        let stmt = &mut self.stmt;
        let mut text = |i: usize, held: &mut String, v: &str| {
            if fresh || held != v {
                stmt.raw_bind_parameter(i, v)?;
                v.clone_into(held);
            }
            Ok::<_, rusqlite::Error>(())
        };
        text(2, &mut now.stream, e.stream)?;
        text(4, &mut now.machine, e.machine)?;
        text(5, &mut now.event_type, e.event_type)?;
        text(8, &mut now.recorded_at, e.recorded_at)?;
        let mut int = |i: usize, held: &mut i64, v: i64| {
            if fresh || *held != v {
                stmt.raw_bind_parameter(i, v)?;
                *held = v;
            }
            Ok::<_, rusqlite::Error>(())
        };
        int(6, &mut now.schema_version, e.schema_version)?;
        int(9, &mut now.transition_id, e.transition_id)?;
        self.stmt.raw_bind_parameter(1, e.seq)?;
        self.stmt.raw_bind_parameter(3, e.version)?;
        self.stmt.raw_bind_parameter(7, e.payload)?;
        self.stmt.raw_bind_parameter(10, hash)?;
        self.shared = was;
        self.stmt.raw_execute()
    }
}

/// One event row at the seq it was hashed as (an append's or an import's),
/// through the statement `held` for the rows after it; `Ok(false)` when its
/// `(stream, version)` or seq is taken (a unique or primary key). The seq is named, never left to SQLite
/// to number: in a table rebuilt so that `seq` is not the rowid, a row SQLite
/// numbered stored no seq, or its default (helper-82).
pub(super) fn row<'a>(
    held: &mut Option<EventInsert<'a>>,
    tx: &'a Transaction<'_>,
    busy: u64,
    e: &EventFields<'_>,
    hash: &str,
) -> Result<bool, Error> {
    let insert = match held {
        Some(held) => held,
        None => held.insert(EventInsert {
            stmt: tx
                .prepare_cached(sql::EVENT_INSERT)
                .map_err(|e| Error::sql(e, busy))?,
            shared: None,
        }),
    };
    match insert.execute(e, hash) {
        Ok(1) => Ok(true),
        Ok(_) => Err(kept("an event")),
        Err(rusqlite::Error::SqliteFailure(f, _)) if crate::error::taken_key(&f) => Ok(false),
        Err(other) => Err(Error::sql(other, busy)),
    }
}
