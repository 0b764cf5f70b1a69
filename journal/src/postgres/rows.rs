//! Reading cairn's rows out of PostgreSQL rows: events, transition records and
//! signatures, each column read as the type cairn's schema gives it (a value of
//! another type is an unreadable row or [`Error::Damaged`], never a panic), and
//! the counts a cut page ends with.

use postgres::Row;

use super::{sql, Col};
use crate::read::{StoredEvent, StoredTransition};
use crate::store::SignatureRow;
use crate::Error;

/// Every table any schema version makes (the shape check's candidates).
pub(super) fn all_tables() -> Vec<&'static str> {
    sql::TABLES.iter().map(|(_, t)| *t).collect()
}

/// Every name of the schema's namespace that [`sql::MIGRATIONS`] make, with the
/// migration that makes it: each table and each index of it (a key's index
/// too: PostgreSQL names it, and quietly names it otherwise when the name is
/// taken), and the guard function.
pub(super) fn made_names() -> Vec<(i64, &'static str)> {
    let mut out: Vec<(i64, &'static str)> = sql::TABLES.to_vec();
    for line in sql::SHAPE_DECLARED {
        let Some(rest) = line.strip_prefix("index ") else {
            continue;
        };
        let qualified = rest.split(' ').next().unwrap_or_default();
        if let Some((table, index)) = qualified.split_once('.') {
            if let Some((since, _)) = sql::TABLES.iter().find(|(_, t)| *t == table) {
                out.push((*since, index));
            }
        }
    }
    out.push((1, "cairn_append_only"));
    out
}

/// Every name [`made_names`] lists (for [`sql::SHAPE`]'s `$3`).
pub(super) fn all_made_names() -> Vec<&'static str> {
    made_names().into_iter().map(|(_, n)| n).collect()
}

pub(super) fn unsigned<T: TryFrom<i64>>(row: &Row, i: usize, id: i64) -> Result<T, String> {
    let v: i64 = row.try_get(i).map_err(|e| e.to_string())?;
    T::try_from(v).map_err(|_| format!("column {i} of row {id} is out of range: {v}"))
}

/// What a page cut in the query ([`sql`]'s `cut_page`) says of what follows,
/// from the counts its rows end with (at column `at`): whether rows may follow
/// (the size scan read all `asked` or left rows out), and how many rows to ask
/// next ([`crate::next_page`] of what the scan kept). Counts that cannot be
/// read lean to one more page. No rows: the scan saw none, nothing follows.
pub(super) fn cut_counts(rows: &[Row], at: usize, asked: i64, max: i64) -> (bool, i64) {
    match rows.first() {
        None => (false, asked),
        Some(r) => {
            let scanned = r.try_get::<_, i64>(at).unwrap_or(asked);
            let kept = r.try_get::<_, i64>(at + 1).unwrap_or(0);
            (
                scanned >= asked || kept < scanned,
                crate::next_page(kept, asked, max),
            )
        }
    }
}

pub(super) fn event_from_row(row: &Row) -> Result<StoredEvent, String> {
    let text = |i: usize| row.try_get::<_, String>(i).map_err(|e| e.to_string());
    let seq: i64 = row.try_get(0).map_err(|e| e.to_string())?;
    Ok(StoredEvent {
        seq,
        stream: text(1)?,
        version: unsigned(row, 2, seq)?,
        machine: text(3)?,
        event_type: text(4)?,
        schema_version: unsigned(row, 5, seq)?,
        payload: text(6)?,
        recorded_at: text(7)?,
        transition_id: row.try_get(8).map_err(|e| e.to_string())?,
        hash: text(9)?,
    })
}

pub(super) fn transition_from_row(row: &Row) -> Result<StoredTransition, String> {
    let text = |i: usize| row.try_get::<_, String>(i).map_err(|e| e.to_string());
    let id: i64 = row.try_get(0).map_err(|e| e.to_string())?;
    Ok(StoredTransition {
        id,
        stream: text(1)?,
        machine: text(2)?,
        rules_version: unsigned(row, 3, id)?,
        command_name: text(4)?,
        command: text(5)?,
        context: text(6)?,
        idempotency_key: row.try_get(7).map_err(|e| e.to_string())?,
        fingerprint: row.try_get(8).map_err(|e| e.to_string())?,
        first_version: unsigned(row, 9, id)?,
        last_version: unsigned(row, 10, id)?,
        recorded_at: text(11)?,
    })
}

pub(super) fn event(row: &Row) -> Result<StoredEvent, Error> {
    event_from_row(row).map_err(|reason| Error::Corrupt {
        seq: row.try_get(0).unwrap_or(-1),
        reason,
    })
}

pub(super) fn transition(row: &Row) -> Result<StoredTransition, Error> {
    transition_from_row(row).map_err(|reason| Error::Corrupt {
        seq: -1,
        reason: format!("transition record: {reason}"),
    })
}

pub(super) fn signature_row(r: &Row) -> Result<SignatureRow, Error> {
    Ok(SignatureRow {
        transition_id: r.col(0)?,
        key_id: r.col(1)?,
        head_seq: r.col(2)?,
        head_hash: r.col(3)?,
        signature: r.col(4)?,
    })
}
