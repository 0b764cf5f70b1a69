//! The PostgreSQL backend's `Store`: reads (paged, so a caller's callback may
//! read the journal again), the append transaction serialised by the journal's
//! advisory lock, the verify snapshot (one repeatable-read, read-only
//! transaction), the import and the guard check.

use postgres::types::ToSql;
use postgres::{IsolationLevel, Row};

use super::rows::{all_made_names, all_tables, cut_counts, event, transition, unsigned};
use super::snap::PgSnap;
use super::{sql, Col, PgStore};
use crate::append::{append_all, Append, AppendOutcome};
use crate::hash::EventFields;
use crate::read::{ReplayRow, StoredEvent, StoredTransition, StreamInfo};
use crate::store::{
    kept, AppendTx, KeyRow, KeyedTransition, NewTransitionRow, SignatureRow, Sink, Snapshot, Store,
};
use crate::{Access, Error, SigningKey};

/// Rows per page of a stream read.
const PAGE: i64 = 1024;
/// Rows per page of a replay: its rows are narrow (five columns).
const REPLAY_PAGE: i64 = 4096;

impl PgStore {
    /// Runs one query outside any explicit transaction.
    fn query(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        let mut client = self.client.borrow_mut();
        let stmt = self.stmt(&mut *client, sql)?;
        client.query(&stmt, params).map_err(|e| self.pg(e))
    }

    fn query_opt(
        &self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Whether the journal's schema has a table of this name.
    pub(super) fn has_table(&self, name: &str) -> Result<bool, Error> {
        Ok(self.query(sql::HAS_TABLE, &[&self.namespace, &name])?[0].get(0))
    }

    /// The schema's problems from [`sql::SHAPE`]'s rows: cairn's tables of the
    /// schema version and every one present, held to their declaration (no
    /// structural check every role can run exists: `amcheck` is an extension).
    pub(super) fn shape(&self, rows: &[Row], limit: u32) -> Result<Vec<String>, Error> {
        let mut live: Vec<String> = rows.iter().map(|r| r.col(0)).collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        let migrations: Vec<String> = (1..=self.schema).map(|v| v.to_string()).collect();
        let want = format!("marker {}", migrations.join(","));
        if let Some(i) = live.iter().position(|l| l.starts_with("marker ")) {
            let marker = live.remove(i);
            if marker != want {
                out.push(format!(
                    "schema: the marker records migrations `{}`, not `{}` (each once, in order)",
                    &marker["marker ".len()..],
                    &want["marker ".len()..]
                ));
            }
        }
        let present = |t: &str| {
            live.iter()
                .any(|l| l.split(' ').nth(1).and_then(|n| n.split('.').next()) == Some(t))
        };
        // A table a later migration makes, under a marker that stops before
        // it: the marker was lowered (helper-91: rows deleted with triggers
        // off verified clean, and the next writer failed on the table).
        for (since, t) in sql::TABLES.iter().filter(|(since, _)| *since > self.schema) {
            if present(t) {
                out.push(format!(
                    "schema: the marker says schema version {}, yet holds `{t}`, which migration {since} makes",
                    self.schema
                ));
            }
        }
        let tables: Vec<&str> = sql::TABLES
            .iter()
            .filter(|(since, t)| *since <= self.schema || present(t))
            .map(|(_, t)| *t)
            .collect();
        out.extend(sql::shape_problems(&live, &tables));
        out.truncate(limit as usize);
        Ok(out)
    }
}

impl Store for PgStore {
    fn access(&self) -> Access {
        self.access
    }

    fn loose_permissions(&self) -> Option<u32> {
        None
    }

    fn append_batch(
        &mut self,
        appends: &[Append],
        signer: Option<&SigningKey>,
    ) -> Result<Vec<AppendOutcome>, Error> {
        let store: &PgStore = self;
        let mut client = store.client.borrow_mut();
        let mut tx = writer(&mut client).map_err(|e| store.pg(e))?;
        // The chain has one global order: appends to this journal are serialised
        // here, inside the transaction, until commit; `seq` is read and assigned
        // under the lock, so no reader ever sees a gap that fills later.
        tx.execute(sql::LOCK, &[&store.lock_key])
            .map_err(|e| store.pg(e))?;
        let out = append_all(&mut PgTx { tx: &mut tx, store }, appends, signer)?;
        tx.commit().map_err(|e| store.pg(e))?;
        Ok(out)
    }

    fn now(&self) -> Result<String, Error> {
        PgStore::now(self)
    }

    fn stream_version(&self, stream: &str) -> Result<u64, Error> {
        let v: Option<i64> = self.query(sql::STREAM_VERSION, &[&stream])?[0].col(0)?;
        Ok(v.unwrap_or(0).max(0) as u64)
    }

    fn machine_tip(&self, machine: &str) -> Result<i64, Error> {
        let (from, to) = crate::store::machine_range(machine);
        let v: Option<i64> = self.query(sql::FAMILY_TIP, &[&from, &to])?[0].col(0)?;
        Ok(v.unwrap_or(0))
    }

    fn machine_streams(&self, machine: &str) -> Result<Vec<String>, Error> {
        let (from, to) = crate::store::machine_range(machine);
        self.query(sql::FAMILY_STREAMS, &[&from, &to])?
            .iter()
            .map(|r| r.col(0))
            .collect::<Result<_, _>>()
    }

    fn stream_names(&self) -> Result<Vec<String>, Error> {
        self.query(sql::ALL_STREAMS, &[])?
            .iter()
            .map(|r| r.col(0))
            .collect::<Result<_, _>>()
    }

    fn stream_machine(&self, stream: &str) -> Result<Option<String>, Error> {
        self.query_opt(sql::STREAM_MACHINE, &[&stream])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn scan_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(StoredEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (mut after, mut ask) = (i64::MIN, PAGE);
        let bytes = crate::store::FETCH_BYTES as i64;
        loop {
            // The page is read and the connection released before `f` runs; it
            // ends at its payloads' bytes (helper-53: an audit of one stream of
            // 1 MB events held 1,024 of them, 473 MB).
            let rows = self.query(sql::STREAM_PAGE, &[&stream, &after, &up_to, &ask, &bytes])?;
            let (more, next) = cut_counts(&rows, 10, ask, PAGE);
            for row in &rows {
                let e = event(row)?;
                after = e.version as i64;
                f(e)?;
            }
            if !more || rows.is_empty() {
                return Ok(());
            }
            ask = next;
        }
    }

    fn replay_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // The five columns a fold reads, borrowed from the page's rows (no
        // per-row allocation), pages of [`REPLAY_PAGE`] rows or `FETCH_BYTES`.
        let (mut after, mut ask) = (i64::MIN, REPLAY_PAGE);
        let bytes = crate::store::FETCH_BYTES as i64;
        loop {
            let rows = self.query(sql::REPLAY_PAGE, &[&stream, &after, &up_to, &ask, &bytes])?;
            let (more, next) = cut_counts(&rows, 5, ask, REPLAY_PAGE);
            for row in &rows {
                let seq: i64 = row.try_get(0).map_err(|e| Error::Corrupt {
                    seq: -1,
                    reason: e.to_string(),
                })?;
                let bad = |e: String| Error::Corrupt { seq, reason: e };
                let text = |i: usize| row.try_get::<_, &str>(i).map_err(|e| bad(e.to_string()));
                let version = unsigned(row, 1, seq).map_err(bad)?;
                after = version as i64;
                f(ReplayRow {
                    seq,
                    version,
                    event_type: text(2)?,
                    schema_version: unsigned(row, 3, seq).map_err(bad)?,
                    payload: text(4)?,
                })?;
            }
            if !more || rows.is_empty() {
                return Ok(());
            }
            ask = next;
        }
    }

    fn read_after(
        &self,
        after: i64,
        stream: Option<&str>,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, Error> {
        let rows = match stream {
            Some(s) => self.query(sql::LOG_STREAM_AFTER, &[&after, &s, &limit])?,
            None => self.query(sql::LOG_AFTER, &[&after, &limit])?,
        };
        rows.iter().map(event).collect()
    }

    fn transitions(&self, stream: &str) -> Result<Vec<StoredTransition>, Error> {
        self.query(sql::TRANSITIONS_OF, &[&stream])?
            .iter()
            .map(transition)
            .collect()
    }

    fn transitions_from(
        &self,
        stream: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredTransition>, Error> {
        let bytes = crate::store::FETCH_BYTES as i64;
        self.query(sql::TRANSITIONS_FROM, &[&stream, &after, &limit, &bytes])?
            .iter()
            .map(transition)
            .collect()
    }

    fn transition(&self, id: i64) -> Result<Option<StoredTransition>, Error> {
        self.query_opt(sql::TRANSITION, &[&id])?
            .as_ref()
            .map(transition)
            .transpose()
    }

    fn transition_count(&self, stream: &str) -> Result<u64, Error> {
        let n: i64 = self.query(sql::TRANSITION_COUNT, &[&stream])?[0].col(0)?;
        Ok(n.max(0) as u64)
    }

    fn transition_at(&self, stream: &str, version: i64) -> Result<Option<(i64, i64, i64)>, Error> {
        self.query_opt(sql::TRANSITION_AT, &[&stream, &version])?
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .transpose()
    }

    fn stream_range(&self, stream: &str, first: i64, last: i64) -> Result<Vec<StoredEvent>, Error> {
        self.query(sql::STREAM_RANGE, &[&stream, &first, &last])?
            .iter()
            .map(event)
            .collect()
    }

    fn transition_by_key(
        &self,
        stream: &str,
        key: &str,
    ) -> Result<Option<StoredTransition>, Error> {
        self.query_opt(sql::TRANSITION_BY_KEY, &[&stream, &key])?
            .as_ref()
            .map(transition)
            .transpose()
    }

    fn streams(&self) -> Result<Vec<StreamInfo>, Error> {
        self.query(sql::STREAMS, &[])?
            .iter()
            .map(|r| {
                Ok(StreamInfo {
                    stream: r.col(0)?,
                    machine: r.col(1)?,
                    version: r.col::<i64>(2)?.max(0) as u64,
                    last_recorded_at: r.col(3)?,
                    last_event_type: r.col(4)?,
                    last_event_at: r.col(5)?,
                })
            })
            .collect::<Result<_, Error>>()
    }

    fn head(&self) -> Result<Option<(i64, String)>, Error> {
        self.query_opt(sql::HEAD, &[])?
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .transpose()
    }

    fn snapshot(
        &self,
        f: &mut dyn FnMut(&mut dyn Snapshot) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut client = self.client.borrow_mut();
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| self.pg(e))?;
        // By the tables present, never the marker's version: a lowered version
        // must not switch the signature checks off.
        let signed = tx
            .query_one(sql::HAS_TABLE, &[&self.namespace, &"signatures"])
            .map_err(|e| self.pg(e))?
            .get(0);
        f(&mut PgSnap {
            tx: PgTx {
                tx: &mut tx,
                store: self,
            },
            signed,
            window: i64::MAX,
        })?;
        tx.commit().map_err(|e| self.pg(e))
    }

    fn unguarded(&self) -> Result<Vec<String>, Error> {
        super::snap::unguarded(self, &mut |sql, params| self.query(sql, params))
    }

    fn integrity_problems(&self, limit: u32) -> Result<Vec<String>, Error> {
        let rows = self.query(
            sql::SHAPE,
            &[&self.namespace, &all_tables(), &all_made_names()],
        )?;
        self.shape(&rows, limit)
    }

    fn import(
        &mut self,
        feed: &mut dyn FnMut(&mut dyn Sink) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let store: &PgStore = self;
        let mut client = store.client.borrow_mut();
        let mut tx = writer(&mut client).map_err(|e| store.pg(e))?;
        tx.execute(sql::LOCK, &[&store.lock_key])
            .map_err(|e| store.pg(e))?;
        let rows: i64 = tx
            .query_one(sql::ROW_COUNT, &[])
            .map_err(|e| store.pg(e))?
            .get(0);
        if rows > 0 {
            return Err(Error::NotEmpty {
                path: store.session.location.clone().into(),
            });
        }
        feed(&mut PgTx { tx: &mut tx, store })?;
        tx.commit().map_err(|e| store.pg(e))
    }
}

/// A writer's transaction: READ COMMITTED whatever the server's or the
/// role's default, so each statement after the journal's lock reads what the
/// writer before it committed. Under a default of `repeatable read` the
/// snapshot was taken by the lock's own statement, before it waited, and the
/// next writer read a stale head (helper-89: 36 of 40 racing writers failed
/// on a taken key).
pub(super) fn writer(
    client: &mut postgres::Client,
) -> Result<postgres::Transaction<'_>, postgres::Error> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::ReadCommitted)
        .start()
}

/// One transaction: the append primitives, the import sink, the verify reads.
pub(super) struct PgTx<'a, 't> {
    pub(super) tx: &'a mut postgres::Transaction<'t>,
    pub(super) store: &'a PgStore,
}

impl PgTx<'_, '_> {
    pub(super) fn query(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        let stmt = self.store.stmt(self.tx, sql)?;
        self.tx.query(&stmt, params).map_err(|e| self.store.pg(e))
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        let stmt = self.store.stmt(self.tx, sql)?;
        self.tx.execute(&stmt, params).map_err(|e| self.store.pg(e))
    }

    /// An insert that must write its one row (`what` names it when it did not).
    fn insert_one(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
        what: &str,
    ) -> Result<(), Error> {
        match self.execute(sql, params)? {
            1 => Ok(()),
            _ => Err(kept(what)),
        }
    }

    pub(super) fn first(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

impl AppendTx for PgTx<'_, '_> {
    fn head(&mut self) -> Result<Option<(i64, String)>, Error> {
        self.first(sql::HEAD, &[])?
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .transpose()
    }

    fn idempotency(&mut self, stream: &str, key: &str) -> Result<Option<KeyedTransition>, Error> {
        self.first(sql::IDEMPOTENCY, &[&stream, &key])?
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?, r.col(3)?)))
            .transpose()
    }

    fn transition_seqs(
        &mut self,
        stream: &str,
        first: i64,
        last: i64,
    ) -> Result<(i64, i64), Error> {
        let rows = self.query(sql::TRANSITION_SEQS, &[&stream, &first, &last])?;
        let (min, max): (Option<i64>, Option<i64>) = (rows[0].col(0)?, rows[0].col(1)?);
        Ok((min.unwrap_or(0), max.unwrap_or(0)))
    }

    fn machine_tip(&mut self, machine: &str) -> Result<i64, Error> {
        let (from, to) = crate::store::machine_range(machine);
        let v: Option<i64> = self.query(sql::FAMILY_TIP, &[&from, &to])?[0].col(0)?;
        Ok(v.unwrap_or(0))
    }

    fn stream_tip(&mut self, stream: &str) -> Result<Option<(i64, String)>, Error> {
        self.first(sql::STREAM_TIP, &[&stream])?
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .transpose()
    }

    fn insert_transition(&mut self, t: &NewTransitionRow<'_>) -> Result<i64, Error> {
        let rows = self.query(
            sql::INSERT_TRANSITION,
            &[
                &t.stream,
                &t.machine,
                &t.rules_version,
                &t.command_name,
                &t.command,
                &t.context,
                &t.idempotency_key,
                &t.fingerprint,
                &t.first_version,
                &t.last_version,
                &t.recorded_at,
            ],
        )?;
        rows.first()
            .ok_or_else(|| kept("a transition record"))?
            .col(0)
    }

    fn insert_event(&mut self, e: &EventFields<'_>, hash: &str) -> Result<bool, Error> {
        let stmt = self.store.stmt(self.tx, sql::INSERT_EVENT)?;
        // A savepoint would be needed to go on after a unique violation; the
        // caller stops at the first `false`, and the transaction is rolled back.
        match self.tx.execute(
            &stmt,
            &[
                &e.seq,
                &e.stream,
                &e.version,
                &e.machine,
                &e.event_type,
                &e.schema_version,
                &e.payload,
                &e.recorded_at,
                &e.transition_id,
                &hash,
            ],
        ) {
            Ok(1) => Ok(true),
            Ok(_) => Err(kept("an event")),
            Err(err) if err.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => {
                Ok(false)
            }
            Err(err) => Err(self.store.pg(err)),
        }
    }

    fn key_id(&mut self, public_key: &str, added_at: &str) -> Result<i64, Error> {
        self.execute(sql::KEY_INSERT, &[&public_key, &added_at])?;
        self.query(sql::KEY_ID, &[&public_key])?
            .first()
            .ok_or_else(|| kept("the signing key"))?
            .col(0)
    }

    fn insert_signature(&mut self, s: &SignatureRow) -> Result<(), Error> {
        self.insert_one(
            sql::SIGNATURE_INSERT,
            &[
                &s.transition_id,
                &s.key_id,
                &s.head_seq,
                &s.head_hash,
                &s.signature,
            ],
            "a signature",
        )
    }
}

impl Sink for PgTx<'_, '_> {
    fn key(&mut self, k: &KeyRow) -> Result<(), Error> {
        self.insert_one(
            sql::COPY_KEY,
            &[&k.id, &k.public_key, &k.added_at],
            "a signing key",
        )
    }

    fn transition(&mut self, t: &StoredTransition) -> Result<(), Error> {
        self.insert_one(
            sql::COPY_TRANSITION,
            &[
                &t.id,
                &t.stream,
                &t.machine,
                &i64::from(t.rules_version),
                &t.command_name,
                &t.command,
                &t.context,
                &t.idempotency_key,
                &t.fingerprint,
                &(t.first_version as i64),
                &(t.last_version as i64),
                &t.recorded_at,
            ],
            "a transition record",
        )
    }

    fn event(&mut self, e: &StoredEvent) -> Result<(), Error> {
        if self.insert_event(&crate::hash::stored_event_fields(e), &e.hash)? {
            Ok(())
        } else {
            Err(Error::InvalidAppend(format!(
                "event {}@{} is in the source twice",
                e.stream, e.version
            )))
        }
    }

    fn signature(&mut self, s: &SignatureRow) -> Result<(), Error> {
        self.insert_signature(s)
    }
}
