//! The file's structure as SQLite and cairn judge it: SQLite's own check, the
//! file's schema beside the one cairn's migrations make, and what its schema
//! version says beside what it holds.

use std::path::Path;

use rusqlite::Connection;

use super::MIGRATIONS;
use crate::Error;

/// SQLite's structural check on `conn`, then the file's tables and indexes
/// against cairn's: at most `limit` problems, none when sound.
pub(super) fn integrity_lines(conn: &Connection, limit: u32) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA integrity_check({limit})"))?;
    let lines: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())?;
    let mut out: Vec<String> = lines
        .into_iter()
        .filter(|l| l != "ok")
        .map(|l| format!("sqlite integrity_check: {l}"))
        .collect();
    out.extend(schema_lines(conn)?);
    out.truncate(limit as usize);
    Ok(out)
}

/// The file's tables, indexes and triggers beside those cairn's migrations make
/// at its schema version, a line per difference. `integrity_check` judges a file
/// by its own schema: a table rebuilt without its primary key or an index cairn
/// never made passes it (helper-47), and so does a trigger cairn never made
/// (helper-70: `RAISE(IGNORE)` on signatures dropped every later one). Every row
/// counts, views too, whatever its `type` says (SQLite loads a row by its `sql`:
/// one typed `TRIGGER` fired unseen, helper-72). A dropped guard is
/// `unguarded`'s to name; an altered one (`… WHERE 0`) is named here.
fn schema_lines(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    type Objects = std::collections::BTreeMap<(String, String), (String, Option<String>)>;
    let objects = |c: &Connection| -> rusqlite::Result<Objects> {
        c.prepare("SELECT lower(type), name, tbl_name, sql FROM sqlite_schema")?
            .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))))?
            .collect()
    };
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let cairns = Connection::open_in_memory()?;
    for sql in MIGRATIONS.iter().take(version.clamp(0, i64::MAX) as usize) {
        cairns.execute_batch(sql)?;
    }
    let (want, have) = (objects(&cairns)?, objects(conn)?);
    let mut out = vec![];
    for ((kind, name), declared) in &have {
        out.extend(match want.get(&(kind.clone(), name.clone())) {
            None => Some(format!("schema: {kind} `{name}` is not one cairn makes")),
            Some(w) if w != declared => Some(format!(
                "schema: {kind} `{name}` is declared otherwise than cairn declares it"
            )),
            Some(_) => None,
        });
    }
    for (kind, name) in want.keys().filter(|(kind, _)| kind != "trigger") {
        if !have.contains_key(&(kind.clone(), name.clone())) {
            out.push(format!("schema: {kind} `{name}` is missing"));
        }
    }
    out.extend(packed_below(conn, version)?.map(|p| format!("schema: {p}")));
    Ok(out)
}

/// Schema 3 adds no table, only packed records: a file that says it is older
/// must hold none, or a build of that version opens it and cannot read them
/// (helper-88 F6: a `user_version` lowered from 3 verified clean; helper-90: a
/// writer then migrated it back, and the trace was gone). What is wrong, when
/// it is; the scan runs only on such an old file.
pub(super) fn packed_below(conn: &Connection, version: i64) -> rusqlite::Result<Option<String>> {
    let has_records = |c: &Connection| -> rusqlite::Result<bool> {
        c.query_row(
            "SELECT count(*) > 0 FROM sqlite_schema
             WHERE lower(type) = 'table' AND name = 'transitions' COLLATE NOCASE",
            [],
            |r| r.get(0),
        )
    };
    if !(1..3).contains(&version) || !has_records(conn)? {
        return Ok(None);
    }
    let packed: i64 = conn.query_row(
        "SELECT count(*) FROM transitions WHERE typeof(command) = 'blob' OR typeof(context) = 'blob'",
        [],
        |r| r.get(0),
    )?;
    Ok((packed > 0).then(|| {
        format!(
            "the file says schema version {version}, older than packed transition records (3), yet holds {packed} packed"
        )
    }))
}

/// An application id another application set (a file cairn never wrote keeps
/// 0 until cairn's first migration stamps its own): helper-91, a file marked
/// with another id and no table yet was taken over.
pub(super) fn foreign_id(app_id: i64) -> bool {
    app_id != 0 && app_id != super::APPLICATION_ID
}

/// A negative `user_version` is no schema cairn ever wrote: refused before
/// anything is written (helper-90: -1 passed every check of the open, a foreign
/// file was switched to WAL and stamped cairn's, and a journal was written under
/// a version no migration or build reads right).
pub(super) fn known_version(path: &Path, version: i64) -> Result<(), Error> {
    if version < 0 {
        return Err(Error::NotAJournal {
            path: path.to_owned(),
            reason: format!(
                "its schema version (`PRAGMA user_version`) is {version}, which no cairn writes"
            ),
        });
    }
    Ok(())
}

/// Why a file that says schema `version` cannot be migrated from it, if it
/// cannot: it holds packed records ([`packed_below`]), or an object a later
/// migration makes (its `user_version` lowered below its tables). Read before
/// a writer changes anything, the journal mode included (helper-91: a refused
/// rollback-mode file had been switched to WAL first).
pub(super) fn unmigratable(conn: &Connection, version: i64) -> rusqlite::Result<Option<String>> {
    if !(1..super::SCHEMA_VERSION).contains(&version) {
        return Ok(None);
    }
    if let Some(packed) = packed_below(conn, version)? {
        return Ok(Some(packed));
    }
    let names = |upto: usize| -> rusqlite::Result<Vec<String>> {
        let c = Connection::open_in_memory()?;
        for sql in MIGRATIONS.iter().take(upto) {
            c.execute_batch(sql)?;
        }
        let mut stmt = c.prepare("SELECT lower(name) FROM sqlite_schema")?;
        let names = stmt.query_map([], |r| r.get(0))?.collect();
        names
    };
    let before = names(version as usize)?;
    for name in names(MIGRATIONS.len())?
        .into_iter()
        .filter(|n| !before.contains(n))
    {
        let there: bool = conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE lower(name) = ?1",
            [&name],
            |r| r.get(0),
        )?;
        if there {
            return Ok(Some(format!(
                "the file says schema version {version} but holds `{name}`, which a later migration makes"
            )));
        }
    }
    Ok(None)
}

/// The first of cairn's tables that schema `version` has and the file lacks
/// (a table, by that name): what a reader and a writer refuse as damage.
pub(super) fn missing_table(
    conn: &Connection,
    version: i64,
) -> rusqlite::Result<Option<&'static str>> {
    let mut wanted = vec!["events", "transitions"];
    if version >= 2 {
        wanted.extend(["signing_keys", "signatures"]);
    }
    if version < 1 {
        wanted.clear();
    }
    let present: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table' \
             AND name IN ('events', 'transitions', 'signing_keys', 'signatures')",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(wanted.into_iter().find(|t| !present.iter().any(|p| p == t)))
}

/// Why a writer must not write a file that says schema `version`, if it must
/// not: a table its version has is missing (helper-91: a schema-1 file without
/// them was migrated, stamped 3, then failed its first append), or it cannot
/// be migrated ([`unmigratable`]). Read at open and again under the lock.
pub(super) fn before_writing(conn: &Connection, version: i64) -> rusqlite::Result<Option<String>> {
    if let Some(table) = missing_table(conn, version)? {
        return Ok(Some(format!("the table `{table}` is missing")));
    }
    Ok(unmigratable(conn, version)?.map(|d| format!("{d}: its `user_version` was changed")))
}
