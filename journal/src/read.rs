//! Reading the journal: streams, events after a sequence number, transitions.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use crate::append::int;
use crate::{Error, Journal};

/// An event as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredEvent {
    pub seq: i64,
    pub stream: String,
    pub version: u64,
    pub machine: String,
    pub event_type: String,
    pub schema_version: u32,
    /// The payload JSON text, exactly as appended.
    pub payload: String,
    pub recorded_at: String,
    pub transition_id: i64,
    pub hash: String,
}

/// A transition record as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredTransition {
    pub id: i64,
    pub stream: String,
    pub machine: String,
    pub rules_version: u32,
    pub command_name: String,
    pub command: String,
    pub context: String,
    pub idempotency_key: Option<String>,
    pub fingerprint: Option<String>,
    pub first_version: u64,
    pub last_version: u64,
    pub recorded_at: String,
}

/// One event on the replay path, borrowed from its row.
#[derive(Debug, Clone, Copy)]
pub struct ReplayRow<'a> {
    pub seq: i64,
    pub version: u64,
    pub event_type: &'a str,
    pub schema_version: u32,
    /// The payload JSON text.
    pub payload: &'a str,
}

/// One stream's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamInfo {
    pub stream: String,
    pub machine: String,
    pub version: u64,
    pub last_recorded_at: String,
}

pub(crate) const EVENT_COLUMNS: &str =
    "seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash";
pub(crate) const TRANSITION_COLUMNS: &str =
    "id, stream, machine, rules_version, command_name, command, context,
     idempotency_key, fingerprint, first_version, last_version, recorded_at";

fn non_negative<T: TryFrom<i64>>(row: &Row<'_>, i: usize, seq: i64) -> rusqlite::Result<T> {
    let v: i64 = row.get(i)?;
    T::try_from(v).map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Integer,
            format!("column {i} of row {seq} is out of range: {v}").into(),
        )
    })
}

pub(crate) fn event_from_row(row: &Row<'_>) -> rusqlite::Result<StoredEvent> {
    let seq: i64 = row.get(0)?;
    Ok(StoredEvent {
        seq,
        stream: row.get(1)?,
        version: non_negative(row, 2, seq)?,
        machine: row.get(3)?,
        event_type: row.get(4)?,
        schema_version: non_negative(row, 5, seq)?,
        payload: row.get(6)?,
        recorded_at: row.get(7)?,
        transition_id: row.get(8)?,
        hash: row.get(9)?,
    })
}

pub(crate) fn transition_from_row(row: &Row<'_>) -> rusqlite::Result<StoredTransition> {
    let id: i64 = row.get(0)?;
    Ok(StoredTransition {
        id,
        stream: row.get(1)?,
        machine: row.get(2)?,
        rules_version: non_negative(row, 3, id)?,
        command_name: row.get(4)?,
        command: row.get(5)?,
        context: row.get(6)?,
        idempotency_key: row.get(7)?,
        fingerprint: row.get(8)?,
        first_version: non_negative(row, 9, id)?,
        last_version: non_negative(row, 10, id)?,
        recorded_at: row.get(11)?,
    })
}

impl Journal {
    fn sql_err(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |e| Error::sql(e, self.busy_ms)
    }

    /// The stream's current version (0 when it has no events).
    pub fn stream_version(&self, stream: &str) -> Result<u64, Error> {
        let v: Option<i64> = self
            .conn
            .prepare_cached(crate::sql::STREAM_VERSION)
            .and_then(|mut s| s.query_row([stream], |r| r.get(0)))
            .map_err(self.sql_err())?;
        Ok(v.unwrap_or(0).max(0) as u64)
    }

    /// The machine that owns a stream, if the stream exists.
    pub fn stream_machine(&self, stream: &str) -> Result<Option<String>, Error> {
        self.conn
            .prepare_cached(crate::sql::STREAM_MACHINE)
            .and_then(|mut s| s.query_row([stream], |r| r.get(0)).optional())
            .map_err(self.sql_err())
    }

    /// A stream's events in version order, up to and including `up_to` when given.
    pub fn read_stream(&self, stream: &str, up_to: Option<u64>) -> Result<Vec<StoredEvent>, Error> {
        let limit = int(up_to.unwrap_or(i64::MAX as u64), "version")?;
        let mut out = Vec::new();
        self.scan_stream(stream, limit, &mut |e| {
            out.push(e);
            Ok(())
        })?;
        Ok(out)
    }

    /// Streams a stream's events in version order to `f`, up to version `up_to`.
    pub fn scan_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(StoredEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE stream = ?1 AND version <= ?2 ORDER BY version"
            ))
            .map_err(self.sql_err())?;
        let mut rows = stmt.query(params![stream, up_to]).map_err(self.sql_err())?;
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            f(event_from_row(row).map_err(|e| corrupt(row, e))?)?;
        }
        Ok(())
    }

    /// The replay path: a stream's events in version order, up to version `up_to`,
    /// borrowed from their rows (no per-row allocation).
    pub fn replay_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut stmt = self
            .conn
            .prepare_cached(crate::sql::REPLAY)
            .map_err(self.sql_err())?;
        let mut rows = stmt.query(params![stream, up_to]).map_err(self.sql_err())?;
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            let seq: i64 = row.get(0).map_err(self.sql_err())?;
            let bad = |reason: &str| Error::Corrupt {
                seq,
                reason: reason.to_owned(),
            };
            let version: i64 = row.get(1).map_err(self.sql_err())?;
            let schema_version: i64 = row.get(3).map_err(self.sql_err())?;
            let text = |i: usize| -> Result<&str, Error> {
                row.get_ref(i)
                    .map_err(|e| bad(&e.to_string()))?
                    .as_str()
                    .map_err(|e| bad(&e.to_string()))
            };
            f(ReplayRow {
                seq,
                version: u64::try_from(version).map_err(|_| bad("negative version"))?,
                event_type: text(2)?,
                schema_version: u32::try_from(schema_version)
                    .map_err(|_| bad("schema version out of range"))?,
                payload: text(4)?,
            })?;
        }
        Ok(())
    }

    /// Events with `seq > after`, optionally of one stream, at most `limit`.
    pub fn read_after(
        &self,
        after: i64,
        stream: Option<&str>,
        limit: u64,
    ) -> Result<Vec<StoredEvent>, Error> {
        let limit = int(limit, "limit")?;
        let mut stmt = self
            .conn
            .prepare_cached(if stream.is_some() {
                crate::sql::LOG_STREAM_AFTER
            } else {
                crate::sql::LOG_AFTER
            })
            .map_err(self.sql_err())?;
        let mut rows = match stream {
            Some(s) => stmt.query(params![after, s, limit]),
            None => stmt.query(params![after, limit]),
        }
        .map_err(self.sql_err())?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            out.push(event_from_row(row).map_err(|e| corrupt(row, e))?);
        }
        Ok(out)
    }

    /// The transition that covers `version` of `stream`: `(id, first_version,
    /// last_version)`, `None` when no record covers it.
    pub fn transition_at(
        &self,
        stream: &str,
        version: u64,
    ) -> Result<Option<(i64, u64, u64)>, Error> {
        let v = int(version, "version")?;
        let row: Option<(i64, i64, i64)> = self
            .conn
            .prepare_cached(crate::sql::TRANSITION_AT)
            .and_then(|mut s| {
                s.query_row(params![stream, v], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()
            })
            .map_err(|e| Error::sql(e, self.busy_ms))?;
        Ok(row
            .filter(|(_, _, last)| *last >= v)
            .map(|(id, first, last)| (id, first.max(0) as u64, last.max(0) as u64)))
    }

    /// One transition record by id, with the events it produced (in version
    /// order); `None` when no such record exists.
    pub fn transition_by_id(
        &self,
        id: i64,
    ) -> Result<Option<(StoredTransition, Vec<StoredEvent>)>, Error> {
        let sql = |e| Error::sql(e, self.busy_ms);
        let record = self
            .conn
            .prepare_cached(&format!(
                "SELECT {TRANSITION_COLUMNS} FROM transitions WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row([id], transition_from_row).optional())
            .map_err(sql)?;
        let Some(record) = record else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE stream = ?1 AND version BETWEEN ?2 AND ?3 ORDER BY version"
            ))
            .map_err(sql)?;
        let first = int(record.first_version, "version")?;
        let last = int(record.last_version, "version")?;
        let events = stmt
            .query_map(params![record.stream, first, last], event_from_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(sql)?;
        Ok(Some((record, events)))
    }

    /// A stream's transition records in order.
    pub fn transitions(&self, stream: &str) -> Result<Vec<StoredTransition>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {TRANSITION_COLUMNS} FROM transitions WHERE stream = ?1 ORDER BY first_version"
            ))
            .map_err(self.sql_err())?;
        let rows = stmt
            .query_map([stream], transition_from_row)
            .map_err(self.sql_err())?;
        rows.collect::<Result<_, _>>().map_err(self.sql_err())
    }

    /// One transition record by id.
    pub fn transition(&self, id: i64) -> Result<Option<StoredTransition>, Error> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TRANSITION_COLUMNS} FROM transitions WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row([id], transition_from_row).optional())
            .map_err(self.sql_err())
    }

    /// How many transition records a stream has.
    pub fn transition_count(&self, stream: &str) -> Result<u64, Error> {
        let n: i64 = self
            .conn
            .prepare_cached(crate::sql::TRANSITION_COUNT)
            .and_then(|mut s| s.query_row([stream], |r| r.get(0)))
            .map_err(self.sql_err())?;
        Ok(n.max(0) as u64)
    }

    /// The transition recorded under an idempotency key on a stream.
    pub fn transition_by_key(
        &self,
        stream: &str,
        key: &str,
    ) -> Result<Option<StoredTransition>, Error> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TRANSITION_COLUMNS} FROM transitions WHERE stream = ?1 AND idempotency_key = ?2"
            ))
            .and_then(|mut s| s.query_row([stream, key], transition_from_row).optional())
            .map_err(self.sql_err())
    }

    /// Every stream with its machine and version, by name.
    pub fn streams(&self) -> Result<Vec<StreamInfo>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT stream, machine, max(version), max(recorded_at) FROM events
                 GROUP BY stream ORDER BY stream",
            )
            .map_err(self.sql_err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok(StreamInfo {
                    stream: r.get(0)?,
                    machine: r.get(1)?,
                    version: r.get::<_, i64>(2)?.max(0) as u64,
                    last_recorded_at: r.get(3)?,
                })
            })
            .map_err(self.sql_err())?;
        rows.collect::<Result<_, _>>().map_err(self.sql_err())
    }

    /// The last event's sequence number and hash: the chain head an auditor can
    /// keep outside the journal to detect truncation later.
    pub fn head(&self) -> Result<Option<(i64, String)>, Error> {
        self.conn
            .prepare_cached(crate::sql::HEAD)
            .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(self.sql_err())
    }
}

fn corrupt(row: &Row<'_>, e: rusqlite::Error) -> Error {
    Error::Corrupt {
        seq: row.get(0).unwrap_or(-1),
        reason: e.to_string(),
    }
}
