//! The PostgreSQL backend's verify snapshot: the walk's reads inside one
//! repeatable-read, read-only transaction.

use super::sql;
use super::store::{
    cut_counts, event_from_row, signature_row, transition, transition_from_row, PgTx,
};
use crate::read::StoredTransition;
use crate::store::{KeyRow, Page, SignatureRow, Snapshot, Store, WalkRow};
use crate::Error;

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
        let rows = match self.tx.query(walk, &[&after, &scan, &bytes]) {
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
                        // `seq` is a bigint primary key: always readable.
                        seq: row.get(0),
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
        Ok(self
            .tx
            .first(sql::SIGNATURE_OF, &[&transition_id])?
            .map(|r| {
                (
                    SignatureRow {
                        transition_id,
                        key_id: r.get(0),
                        head_seq: r.get(1),
                        head_hash: r.get(2),
                        signature: r.get(3),
                    },
                    r.get(4),
                )
            }))
    }

    fn signatures_after(&mut self, after: i64, limit: i64) -> Result<Vec<SignatureRow>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        Ok(self
            .tx
            .query(sql::SIGNATURES_AFTER, &[&after, &limit])?
            .iter()
            .map(signature_row)
            .collect())
    }

    fn keys(&mut self) -> Result<Vec<KeyRow>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        Ok(self
            .tx
            .query(sql::KEYS, &[])?
            .iter()
            .map(|r| KeyRow {
                id: r.get(0),
                public_key: r.get(1),
                added_at: r.get(2),
            })
            .collect())
    }

    fn orphan_signatures(&mut self) -> Result<Vec<i64>, Error> {
        if !self.signed {
            return Ok(Vec::new());
        }
        Ok(self
            .tx
            .query(sql::ORPHAN_SIGNATURES, &[])?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn orphan_transitions(&mut self) -> Result<Vec<(i64, String)>, Error> {
        Ok(self
            .tx
            .query(sql::ORPHAN_TRANSITIONS, &[])?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    fn transition_total(&mut self) -> Result<i64, Error> {
        Ok(self.tx.query(sql::TRANSITION_TOTAL, &[])?[0].get(0))
    }

    fn hash_at(&mut self, seq: i64) -> Result<Option<String>, Error> {
        Ok(self.tx.first(sql::HASH_AT, &[&seq])?.map(|r| r.get(0)))
    }

    fn integrity_problems(&mut self, limit: u32) -> Result<Vec<String>, Error> {
        self.tx.store.integrity_problems(limit)
    }
}
