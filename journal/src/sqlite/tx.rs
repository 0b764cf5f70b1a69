//! The SQLite backend's transactions: the append primitives and the import sink
//! (inside `BEGIN IMMEDIATE`), and the verify walk's reads (inside one read
//! transaction).

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};

use super::insert::EventInsert;

use super::ahead::{Ahead, Seen, PAGE_BYTES};
use super::store::{event_from_row, transition_from_row, EVENT_COLUMNS, TRANSITION_COLUMNS};
use super::{sql, SqliteStore};
use crate::hash::EventFields;
use crate::read::{StoredEvent, StoredTransition};
use crate::store::{
    kept, stored, AppendTx, KeyRow, KeyedTransition, NewTransitionRow, Page, SignatureRow, Sink,
    Snapshot, WalkRow,
};
use crate::Error;

/// One write transaction: the append primitives and the import sink.
pub(super) struct Tx<'a, 'c> {
    tx: &'a Transaction<'c>,
    busy: u64,
    /// The event insert, held from the first event to the last (looking it up
    /// in the statement cache per row was ~3% of a 1,000-event transition).
    insert: Option<EventInsert<'a>>,
}

impl<'a, 'c> Tx<'a, 'c> {
    pub(super) fn new(tx: &'a Transaction<'c>, busy: u64) -> Self {
        Self {
            tx,
            busy,
            insert: None,
        }
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> Error {
        let busy = self.busy;
        move |e| Error::sql(e, busy)
    }
}

impl AppendTx for Tx<'_, '_> {
    fn head(&mut self) -> Result<Option<(i64, String)>, Error> {
        self.tx
            .prepare_cached(sql::HEAD)
            .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(self.err())
    }

    fn idempotency(&mut self, stream: &str, key: &str) -> Result<Option<KeyedTransition>, Error> {
        self.tx
            .prepare_cached(sql::IDEMPOTENCY)
            .and_then(|mut s| {
                s.query_row(params![stream, key], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional()
            })
            .map_err(self.err())
    }

    fn transition_seqs(
        &mut self,
        stream: &str,
        first: i64,
        last: i64,
    ) -> Result<(i64, i64), Error> {
        self.tx
            .prepare_cached(sql::TRANSITION_SEQS)
            .and_then(|mut s| {
                s.query_row(params![stream, first, last], |r| Ok((r.get(0)?, r.get(1)?)))
            })
            .map_err(self.err())
    }

    fn machine_tip(&mut self, machine: &str) -> Result<i64, Error> {
        let (from, to) = crate::store::machine_range(machine);
        let v: Option<i64> = self
            .tx
            .prepare_cached(sql::FAMILY_TIP)
            .and_then(|mut s| s.query_row([from, to], |r| r.get(0)))
            .map_err(self.err())?;
        Ok(v.unwrap_or(0))
    }

    fn stream_tip(&mut self, stream: &str) -> Result<Option<(i64, String)>, Error> {
        self.tx
            .prepare_cached(sql::STREAM_TIP)
            .and_then(|mut s| {
                s.query_row([stream], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(self.err())
    }

    fn insert_transition(&mut self, t: &NewTransitionRow<'_>) -> Result<i64, Error> {
        let n = self
            .tx
            .prepare_cached(
                "INSERT INTO transitions (stream, machine, rules_version, command_name, command, context,
                     idempotency_key, fingerprint, first_version, last_version, recorded_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    t.stream,
                    t.machine,
                    t.rules_version,
                    t.command_name,
                    super::packed::pack(t.command),
                    super::packed::pack(t.context),
                    t.idempotency_key,
                    t.fingerprint,
                    t.first_version,
                    t.last_version,
                    t.recorded_at
                ])
            })
            .map_err(self.err())?;
        stored(n, "a transition record")?;
        Ok(self.tx.last_insert_rowid())
    }

    fn insert_event(&mut self, e: &EventFields<'_>, hash: &str) -> Result<bool, Error> {
        super::insert::row(&mut self.insert, self.tx, self.busy, e, hash)
    }

    fn key_id(&mut self, public_key: &str, added_at: &str) -> Result<i64, Error> {
        self.tx
            .prepare_cached(sql::KEY_INSERT)
            .and_then(|mut s| s.execute(params![public_key, added_at]))
            .map_err(self.err())?;
        self.tx
            .prepare_cached(sql::KEY_ID)
            .and_then(|mut s| s.query_row([public_key], |r| r.get(0)))
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => kept("the signing key"),
                e => Error::sql(e, self.busy),
            })
    }

    fn insert_signature(&mut self, s: &SignatureRow) -> Result<(), Error> {
        let n = self
            .tx
            .prepare_cached(sql::SIGNATURE_INSERT)
            .and_then(|mut st| {
                st.execute(params![
                    s.transition_id,
                    s.key_id,
                    s.head_seq,
                    s.head_hash,
                    s.signature
                ])
            })
            .map_err(self.err())?;
        stored(n, "a signature")
    }
}

impl Sink for Tx<'_, '_> {
    fn key(&mut self, k: &KeyRow) -> Result<(), Error> {
        let n = self
            .tx
            .prepare_cached(
                "INSERT INTO signing_keys (id, public_key, added_at) VALUES (?1, ?2, ?3)",
            )
            .and_then(|mut s| s.execute(params![k.id, k.public_key, k.added_at]))
            .map_err(self.err())?;
        stored(n, "a signing key")
    }

    fn transition(&mut self, t: &StoredTransition) -> Result<(), Error> {
        let n = self
            .tx
            .prepare_cached(&format!(
                "INSERT INTO transitions ({TRANSITION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
            ))
            .and_then(|mut s| {
                s.execute(params![
                    t.id,
                    t.stream,
                    t.machine,
                    t.rules_version,
                    t.command_name,
                    super::packed::pack(&t.command),
                    super::packed::pack(&t.context),
                    t.idempotency_key,
                    t.fingerprint,
                    t.first_version as i64,
                    t.last_version as i64,
                    t.recorded_at
                ])
            })
            .map_err(self.err())?;
        stored(n, "a transition record")
    }

    fn event(&mut self, e: &StoredEvent) -> Result<(), Error> {
        let fields = crate::hash::stored_event_fields(e);
        if super::insert::row(&mut self.insert, self.tx, self.busy, &fields, &e.hash)? {
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

/// The verify walk's reads, inside the snapshot's read transaction.
pub(super) struct Snap<'a> {
    pub(super) store: &'a SqliteStore,
    /// Whether the file has a `signatures` table (by the tables present, never
    /// by `user_version`).
    pub(super) signed: bool,
    /// Transition records and signatures read ahead, by id.
    pub(super) transitions: Ahead<StoredTransition>,
    pub(super) signatures: Ahead<SignatureRow>,
    /// The signing keys' public halves by id, as signatures name them.
    pub(super) keys: HashMap<i64, Option<String>>,
    /// The structural check started beside the walk, in its snapshot, and its
    /// line limit (`sqlite/beside.rs`: stopped and waited for when dropped).
    pub(super) beside: Option<(u32, crate::store::IntegrityThread)>,
}

impl<'a> Snap<'a> {
    pub(super) fn new(store: &'a SqliteStore, signed: bool) -> Self {
        Self {
            store,
            signed,
            transitions: Ahead::new(),
            signatures: Ahead::new(),
            keys: HashMap::new(),
            beside: None,
        }
    }
}

/// Up to `limit` records after `after`, ending early at `budget` bytes of
/// decompressed commands and contexts; and whether more may follow.
fn transitions_page(
    s: &SqliteStore,
    after: i64,
    limit: i64,
    budget: usize,
) -> Result<(Vec<StoredTransition>, bool), Error> {
    super::store::records_page(
        s,
        sql::TRANSITIONS_AFTER,
        params![after, limit],
        limit,
        budget,
    )
}

fn signatures_page(
    s: &SqliteStore,
    after: i64,
    limit: i64,
) -> Result<(Vec<SignatureRow>, bool), Error> {
    s.conn
        .prepare_cached(sql::SIGNATURES_AFTER)
        .and_then(|mut st| {
            st.query_map(params![after, limit], |r| {
                Ok(SignatureRow {
                    transition_id: r.get(0)?,
                    key_id: r.get(1)?,
                    head_seq: r.get(2)?,
                    head_hash: r.get(3)?,
                    signature: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()
        })
        .map(|page| {
            let more = page.len() as i64 == limit;
            (page, more)
        })
        .map_err(s.sql_err())
}

impl Snapshot for Snap<'_> {
    fn events_after(&mut self, after: Option<i64>, limit: i64) -> Result<Page, Error> {
        let s = self.store;
        let mut stmt = match after {
            Some(_) => s.conn.prepare_cached(sql::LOG_AFTER),
            None => s.conn.prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events ORDER BY seq LIMIT ?1"
            )),
        }
        .map_err(s.sql_err())?;
        let mut rows = match after {
            Some(a) => stmt.query(params![a, limit]),
            None => stmt.query(params![limit]),
        }
        .map_err(s.sql_err())?;
        let mut page = Page {
            rows: Vec::new(),
            damaged: None,
            more: false,
        };
        // The page also ends at its payloads' bytes: 2,048 rows of 1 MB events
        // were 2 GB in one fetch (helper-49's second finding).
        let mut bytes = 0usize;
        loop {
            if page.rows.len() as i64 >= limit || bytes >= PAGE_BYTES {
                page.more = true;
                break;
            }
            let row = match rows.next() {
                Ok(Some(row)) => row,
                Ok(None) => break,
                Err(e) => match Error::sql(e, s.busy_ms) {
                    // The file itself is damaged (a truncated or overwritten page).
                    Error::Damaged { detail } => {
                        page.damaged = Some(detail);
                        break;
                    }
                    other => return Err(other),
                },
            };
            page.rows.push(match event_from_row(row) {
                Ok(e) => {
                    bytes += e.payload.len();
                    WalkRow::Event(e)
                }
                Err(err) => WalkRow::Unreadable {
                    // The rowid is always an integer.
                    seq: row.get(0).map_err(s.sql_err())?,
                    hash: row.get::<_, String>(9).ok(),
                    reason: err.to_string(),
                },
            });
        }
        Ok(page)
    }

    fn transition(&mut self, id: i64) -> Result<Option<StoredTransition>, String> {
        let store = self.store;
        match self.transitions.take(
            id,
            |t| t.id,
            |after, n| transitions_page(store, after, n, PAGE_BYTES),
        ) {
            Seen::Found(t) => return Ok(Some(t)),
            Seen::Absent => return Ok(None),
            Seen::Ask => {}
        }
        self.store
            .conn
            .prepare_cached(&format!(
                "SELECT {TRANSITION_COLUMNS} FROM transitions WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row([id], transition_from_row).optional())
            .map_err(|e| e.to_string())
    }

    fn transitions_after(
        &mut self,
        after: i64,
        limit: i64,
    ) -> Result<(Vec<StoredTransition>, bool), Error> {
        // `copy` reads on while more may follow: a page of 4,096 records that
        // each unpack to 1 MB held 4 GB (helper-52).
        transitions_page(self.store, after, limit, PAGE_BYTES)
    }

    fn signature(
        &mut self,
        transition_id: i64,
    ) -> Result<Option<(SignatureRow, Option<String>)>, Error> {
        let s = self.store;
        if !self.signed {
            return Ok(None);
        }
        match self.signatures.take(
            transition_id,
            |r| r.transition_id,
            |after, n| signatures_page(s, after, n),
        ) {
            Seen::Found(row) => {
                // The key each signature names, read when first named (as the
                // point query's join reads it: a key row no signature names is
                // never read).
                let key = match self.keys.get(&row.key_id) {
                    Some(key) => key.clone(),
                    None => {
                        let key: Option<String> = s
                            .conn
                            .prepare_cached("SELECT public_key FROM signing_keys WHERE id = ?1")
                            .and_then(|mut st| st.query_row([row.key_id], |r| r.get(0)).optional())
                            .map_err(s.sql_err())?;
                        self.keys.insert(row.key_id, key.clone());
                        key
                    }
                };
                return Ok(Some((row, key)));
            }
            Seen::Absent => return Ok(None),
            Seen::Ask => {}
        }
        s.conn
            .prepare_cached(sql::SIGNATURE_OF)
            .and_then(|mut st| {
                st.query_row([transition_id], |r| {
                    Ok((
                        SignatureRow {
                            transition_id,
                            key_id: r.get(0)?,
                            head_seq: r.get(1)?,
                            head_hash: r.get(2)?,
                            signature: r.get(3)?,
                        },
                        r.get(4)?,
                    ))
                })
                .optional()
            })
            .map_err(s.sql_err())
    }

    fn signatures_after(&mut self, after: i64, limit: i64) -> Result<Vec<SignatureRow>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        Ok(signatures_page(self.store, after, limit)?.0)
    }

    fn keys(&mut self) -> Result<Vec<KeyRow>, Error> {
        let s = self.store;
        if !self.signed {
            return Ok(Vec::new());
        }
        s.conn
            .prepare("SELECT id, public_key, added_at FROM signing_keys ORDER BY id")
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok(KeyRow {
                        id: r.get(0)?,
                        public_key: r.get(1)?,
                        added_at: r.get(2)?,
                    })
                })?
                .collect()
            })
            .map_err(s.sql_err())
    }

    fn orphan_signatures(&mut self) -> Result<Vec<i64>, Error> {
        let s = self.store;
        if !self.signed {
            return Ok(Vec::new());
        }
        s.conn
            .prepare("SELECT transition_id FROM signatures WHERE transition_id NOT IN (SELECT id FROM transitions) ORDER BY transition_id")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .map_err(s.sql_err())
    }

    fn orphan_transitions(&mut self) -> Result<Vec<(i64, String)>, Error> {
        let s = self.store;
        s.conn
            .prepare("SELECT id, stream FROM transitions WHERE id NOT IN (SELECT transition_id FROM events) ORDER BY id")
            .and_then(|mut st| st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(s.sql_err())
    }

    fn transition_total(&mut self) -> Result<i64, Error> {
        let s = self.store;
        s.conn
            .query_row("SELECT count(*) FROM transitions", [], |r| r.get(0))
            .map_err(s.sql_err())
    }

    fn hash_at(&mut self, seq: i64) -> Result<Option<String>, Error> {
        let s = self.store;
        s.conn
            .query_row("SELECT hash FROM events WHERE seq = ?1", [seq], |r| {
                r.get(0)
            })
            .optional()
            .map_err(s.sql_err())
    }

    #[cfg(cairn_wal_snapshot)]
    fn start_integrity(&mut self, limit: u32) {
        if self.beside.is_none() {
            self.beside = self.store.integrity_at_snapshot(limit).map(|c| (limit, c));
        }
    }

    fn integrity_problems(&mut self, limit: u32) -> Result<Vec<String>, Error> {
        // The check started beside the walk read the walk's snapshot; where
        // none started or it failed, on the walk's own connection and in its
        // read transaction: the same file and the same rows the walk read (a
        // second connection in a transaction of its own read an older
        // snapshot after a WAL-index header was rewritten: helper-59).
        if let Some((lines, check)) = self.beside.take() {
            if let (true, Ok(Ok(found))) = (lines == limit, check.handle.join()) {
                return Ok(found);
            }
        }
        self.store.integrity_problems(limit)
    }

    fn unguarded(&mut self) -> Result<Vec<String>, Error> {
        crate::store::Store::unguarded(self.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Journal, Options};

    /// The read-ahead's page of records ends at its bytes, decompressed (130
    /// records that each unpack to 32 MB held 4 GB: helper-49), still saying
    /// that more follow; unbounded, a page holds all it is asked for.
    /// A store on a fresh journal holding `batch` (and the directory it is in).
    fn store_of(batch: &[crate::Append]) -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("j.db");
        let mut j = Journal::open(&path, &Options::default()).expect("open");
        j.append_batch(batch).expect("append");
        drop(j);
        let s = SqliteStore::open(&path, &Options::default()).expect("store");
        (dir, s)
    }

    #[test]
    fn a_page_of_large_records_ends_at_its_bytes() {
        let batch: Vec<_> = (0..10)
            .map(|v| crate::pages::tests::big(v, 1 << 20))
            .collect();
        let (_dir, s) = store_of(&batch);
        let (page, more) = transitions_page(&s, 0, 128, PAGE_BYTES).expect("page");
        assert_eq!(
            (page.len(), more),
            (2, true),
            "2 MiB: the second 1 MB record ends it"
        );
        let (rest, more) = transitions_page(&s, page[1].id, 128, PAGE_BYTES).expect("page");
        assert_eq!((rest[0].id, rest.len(), more), (3, 2, true));
        let (all, more) = transitions_page(&s, 0, 128, usize::MAX).expect("page");
        assert_eq!((all.len(), more), (10, false));
    }

    /// The walk's fetch of events ends at its payloads' bytes (2,048 rows of
    /// 1 MB events were 2 GB in one fetch: helper-49), says that more follow,
    /// and the fetches together hand out every row once, in order; the last
    /// says none follow.
    #[test]
    fn a_fetch_of_large_events_ends_at_its_bytes() {
        let batch: Vec<_> = (0..7)
            .map(|v| {
                let mut a = crate::pages::tests::big(v, 10);
                a.events[0].payload = format!("{{\"pad\":\"{}\"}}", "y".repeat(900 << 10));
                a
            })
            .collect();
        let (_dir, s) = store_of(&batch);
        let mut snap = Snap::new(&s, true);
        let mut after = None;
        let mut seqs = Vec::new();
        let mut sizes = Vec::new();
        loop {
            let page = snap.events_after(after, 2048).expect("page");
            assert!(page.damaged.is_none());
            sizes.push((page.rows.len(), page.more));
            for row in &page.rows {
                let WalkRow::Event(e) = row else {
                    panic!("readable")
                };
                seqs.push(e.seq);
                after = Some(e.seq);
            }
            if !page.more {
                break;
            }
        }
        assert_eq!(seqs, (1..=7).collect::<Vec<i64>>());
        // 900 KB each: the third row passes 2 MiB and ends the fetch.
        assert_eq!(sizes, [(3, true), (3, true), (1, false)]);
        // A fetch of small rows still ends at its limit and says more may follow.
        let page = snap.events_after(None, 2).expect("page");
        assert_eq!((page.rows.len(), page.more), (2, true));
    }
}
