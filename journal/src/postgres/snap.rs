//! The PostgreSQL backend's verify snapshot: the walk's reads inside one
//! repeatable-read, read-only transaction.

use super::rows::{
    all_made_names, all_tables, cut_counts, event_from_row, signature_row, transition,
    transition_from_row,
};
use super::store::PgTx;
use super::Col;
use super::{sql, PgStore};
use crate::read::StoredTransition;
use crate::store::{KeyRow, Page, SignatureRow, Snapshot, WalkRow};
use crate::Error;
use postgres::types::ToSql;
use postgres::Row;

/// The walk's reads, inside the snapshot's transaction.
pub(super) struct PgSnap<'a, 't> {
    pub(super) tx: PgTx<'a, 't>,
    /// Whether the schema has a `signatures` table (by the tables present, never
    /// by the marker's version).
    pub(super) signed: bool,
    /// How many rows the next fetch's size scan reads at most: twice what the
    /// last cut fetch kept, doubling back while fetches are not cut. Without it
    /// each fetch of large rows sized 2,048 rows to keep two, and where a
    /// tamperer made the column another type (its size then costs a rendering)
    /// verify turned quadratic: 440 rows took 112 s (helper-52).
    pub(super) window: i64,
}

/// One query's rows, on the session or in a transaction.
pub(super) type Query<'q> =
    dyn FnMut(&'static str, &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> + 'q;

/// The append-only guards missing, asked through `query`: outside any
/// transaction ([`crate::store::Store::unguarded`]) or in a verify's snapshot, so
/// the report names the guards as the walked rows were guarded (helper-86). The
/// tables checked are those of the schema version and every one present (a
/// lowered marker must not hide a dropped guard).
pub(super) fn unguarded(store: &PgStore, query: &mut Query<'_>) -> Result<Vec<String>, Error> {
    let mut tables = Vec::new();
    for (since, table) in sql::TABLES {
        if *since <= store.schema || query(sql::HAS_TABLE, &[&store.namespace, table])?[0].get(0) {
            tables.push((*table).to_owned());
        }
    }
    query(
        sql::UNGUARDED,
        &[&tables, &store.namespace, &sql::GUARD_BODY],
    )?
    .iter()
    .map(|r| {
        Ok(format!(
            "{} on {}",
            r.col::<String>(1)?,
            r.col::<String>(0)?
        ))
    })
    .collect()
}

impl Snapshot for PgSnap<'_, '_> {
    fn events_after(&mut self, after: Option<i64>, limit: i64) -> Result<Page, Error> {
        // The fetch ends at its payloads' bytes, cut in the query (the client
        // reads a query's rows whole).
        let bytes = crate::store::FETCH_BYTES as i64;
        let scan = limit.min(self.window).max(1);
        let walk = if after.is_some() {
            sql::WALK_AFTER
        } else {
            sql::WALK_FIRST
        };
        // A `seq` that is not a bigint (the column retyped by hand) leaves the
        // walk nowhere to go on from: the table is damaged there.
        let fetched = self
            .tx
            .query(walk, &[&after, &scan, &bytes])
            .and_then(|rows| {
                for row in &rows {
                    row.col::<i64>(0)?;
                }
                Ok(rows)
            });
        let rows = match fetched {
            Ok(rows) => rows,
            Err(Error::Damaged { detail }) => {
                return Ok(Page {
                    rows: Vec::new(),
                    damaged: Some(detail),
                    more: false,
                })
            }
            Err(other) => return Err(other),
        };
        // Whether rows follow is the server's word; the next fetch sizes
        // twice what this one kept.
        let (more, next) = cut_counts(&rows, 10, scan, limit);
        if !rows.is_empty() {
            self.window = next;
        }
        Ok(Page {
            more,
            rows: rows
                .iter()
                .map(|row| match event_from_row(row) {
                    Ok(e) => WalkRow::Event(e),
                    Err(reason) => WalkRow::Unreadable {
                        // Read above: every row's `seq` is a bigint.
                        seq: row.try_get(0).unwrap_or_default(),
                        hash: row.try_get(9).ok(),
                        reason,
                    },
                })
                .collect(),
            damaged: None,
        })
    }

    fn transition(&mut self, id: i64) -> Result<Option<StoredTransition>, String> {
        match self.tx.first(sql::TRANSITION, &[&id]) {
            Ok(row) => row.as_ref().map(transition_from_row).transpose(),
            Err(e) => Err(e.to_string()),
        }
    }

    fn transitions_after(
        &mut self,
        after: i64,
        limit: i64,
    ) -> Result<(Vec<StoredTransition>, bool), Error> {
        // Cut in the query, as the events' fetch is; the server says whether
        // rows follow.
        let bytes = crate::store::FETCH_BYTES as i64;
        let rows = self
            .tx
            .query(sql::TRANSITIONS_AFTER, &[&after, &limit, &bytes])?;
        let (more, _) = cut_counts(&rows, 12, limit, limit);
        let page = rows.iter().map(transition).collect::<Result<_, _>>()?;
        Ok((page, more))
    }

    fn signature(
        &mut self,
        transition_id: i64,
    ) -> Result<Option<(SignatureRow, Option<String>)>, Error> {
        if !self.signed {
            return Ok(None);
        }
        self.tx
            .first(sql::SIGNATURE_OF, &[&transition_id])?
            .map(|r| {
                Ok((
                    SignatureRow {
                        transition_id,
                        key_id: r.col(0)?,
                        head_seq: r.col(1)?,
                        head_hash: r.col(2)?,
                        signature: r.col(3)?,
                    },
                    r.col(4)?,
                ))
            })
            .transpose()
    }

    fn signatures_after(&mut self, after: i64, limit: i64) -> Result<Vec<SignatureRow>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        self.tx
            .query(sql::SIGNATURES_AFTER, &[&after, &limit])?
            .iter()
            .map(signature_row)
            .collect::<Result<_, _>>()
    }

    fn keys(&mut self) -> Result<Vec<KeyRow>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        self.tx
            .query(sql::KEYS, &[])?
            .iter()
            .map(|r| {
                Ok(KeyRow {
                    id: r.col(0)?,
                    public_key: r.col(1)?,
                    added_at: r.col(2)?,
                })
            })
            .collect::<Result<_, Error>>()
    }

    fn orphan_signatures(&mut self) -> Result<Vec<i64>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        self.tx
            .query(sql::ORPHAN_SIGNATURES, &[])?
            .iter()
            .map(|r| r.col(0))
            .collect::<Result<_, _>>()
    }

    fn orphan_transitions(&mut self) -> Result<Vec<(i64, String)>, Error> {
        self.tx
            .query(sql::ORPHAN_TRANSITIONS, &[])?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect::<Result<_, Error>>()
    }

    fn transition_total(&mut self) -> Result<i64, Error> {
        self.tx.query(sql::TRANSITION_TOTAL, &[])?[0].col(0)
    }

    fn hash_at(&mut self, seq: i64) -> Result<Option<String>, Error> {
        self.tx
            .first(sql::HASH_AT, &[&seq])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn integrity_problems(&mut self, limit: u32) -> Result<Vec<String>, Error> {
        // In the snapshot's transaction: the store's client is the one it holds.
        let rows = self.tx.query(
            sql::SHAPE,
            &[&self.tx.store.namespace, &all_tables(), &all_made_names()],
        )?;
        self.tx.store.shape(&rows, limit)
    }

    fn unguarded(&mut self) -> Result<Vec<String>, Error> {
        let store = self.tx.store;
        unguarded(store, &mut |sql, params| self.tx.query(sql, params))
    }
}
