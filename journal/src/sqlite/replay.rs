//! The replay path on SQLite: one statement through the `(stream, version)`
//! index, each row's columns borrowed as SQLite holds them.
//!
//! Reading a long stream on through its rowid range once its first rows were
//! read through the index (no seek per row, no index pages) was tried: 2–4%
//! faster interleaved against this, for a second read path whose order had to
//! be argued equal to the index's (ties in a table rebuilt without the unique
//! pair, damaged rows out of line: helper-64). Withdrawn; docs/performance.md.

use rusqlite::types::ValueRef;
use rusqlite::{params, Row};

use super::{sql, SqliteStore};
use crate::read::ReplayRow;
use crate::Error;

impl SqliteStore {
    pub(super) fn replay(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let whole = up_to == i64::MAX;
        let mut stmt = self
            .conn
            .prepare_cached(if whole { sql::REPLAY_ALL } else { sql::REPLAY })
            .map_err(self.sql_err())?;
        let mut rows = if whole {
            stmt.query(params![stream])
        } else {
            stmt.query(params![stream, up_to])
        }
        .map_err(self.sql_err())?;
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            f(replay_row(row)?)?;
        }
        Ok(())
    }
}

/// A replay row, read as SQLite holds its columns: an integer or a text where
/// the schema says so, anything else a corrupt row naming the column.
fn replay_row<'r>(row: &'r Row<'_>) -> Result<ReplayRow<'r>, Error> {
    let col = |i: usize| {
        row.get_ref(i).map_err(|e| Error::Corrupt {
            seq: -1,
            reason: e.to_string(),
        })
    };
    let ValueRef::Integer(seq) = col(0)? else {
        return Err(Error::Corrupt {
            seq: -1,
            reason: "its seq is not an integer".into(),
        });
    };
    let bad = |reason: String| Error::Corrupt { seq, reason };
    let int = |i: usize, name: &str| match col(i)? {
        ValueRef::Integer(v) => Ok(v),
        _ => Err(bad(format!("its {name} is not an integer"))),
    };
    let text = |i: usize, name: &str| match col(i)? {
        ValueRef::Text(b) => {
            std::str::from_utf8(b).map_err(|e| bad(format!("its {name} is not UTF-8: {e}")))
        }
        _ => Err(bad(format!("its {name} is not text"))),
    };
    Ok(ReplayRow {
        seq,
        version: u64::try_from(int(1, "version")?).map_err(|_| bad("negative version".into()))?,
        event_type: text(2, "event_type")?,
        schema_version: u32::try_from(int(3, "schema_version")?)
            .map_err(|_| bad("schema version out of range".into()))?,
        payload: text(4, "payload")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::tests::big;
    use crate::{Journal, Options};

    /// A journal file whose stream `ticket/big` holds ten events (its dir
    /// beside it: the file goes when the dir is dropped).
    fn ten_events() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("j.db");
        let mut j = Journal::open(&path, &Options::default()).expect("open");
        let mut a = big(0, 1);
        a.events = (0..10).map(|_| a.events[0].clone()).collect();
        j.append(&a).expect("append");
        (dir, path)
    }

    /// A damaged row within the bound is a corrupt row naming its seq and the
    /// column (a real where the version belongs, a blob payload), not an SQL
    /// error; the rows before it were handed out, and a bound below it reads on.
    #[test]
    fn a_wrong_typed_column_is_a_corrupt_row_naming_it() {
        let (_dir, path) = ten_events();
        let s = SqliteStore::open(&path, &Options::default()).expect("store");
        s.conn
            .execute_batch(
                "DROP TRIGGER events_append_only_update;
                 UPDATE events SET version = 6.5 WHERE version = 7;
                 UPDATE events SET payload = CAST(payload AS BLOB) WHERE version = 9;",
            )
            .expect("damage");
        let read = |up_to: i64| {
            let mut n = 0;
            let r = s.replay("ticket/big", up_to, &mut |_| {
                n += 1;
                Ok(())
            });
            (r, n)
        };
        let (whole, n) = read(i64::MAX);
        assert!(
            matches!(&whole, Err(Error::Corrupt { seq: 7, reason }) if reason == "its version is not an integer"),
            "{whole:?}"
        );
        assert_eq!(n, 6, "versions 1 to 6 before it");
        let (below, n) = read(6);
        assert!(below.is_ok(), "{below:?}");
        assert_eq!(n, 6);
        s.conn
            .execute_batch("UPDATE events SET version = 7 WHERE seq = 7;")
            .expect("mend");
        let (whole, n) = read(i64::MAX);
        assert!(
            matches!(&whole, Err(Error::Corrupt { seq: 9, reason }) if reason == "its payload is not text"),
            "{whole:?}"
        );
        assert_eq!(n, 8);
    }

    /// What [`Journal::replay_stream`] hands out of a stream of ten events
    /// after `forge` ran on its file: the versions, or the error.
    fn replayed_after(forge: &str, up_to: i64) -> Result<Vec<u64>, Error> {
        let (_dir, path) = ten_events();
        let c = rusqlite::Connection::open(&path).expect("forger");
        c.execute_batch(&format!(
            "DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete; {forge}"
        ))
        .expect("forge");
        drop(c);
        let j = Journal::open_read_only(&path, &Options::default()).expect("open");
        let mut versions = Vec::new();
        j.replay_stream("ticket/big", up_to, &mut |r| {
            versions.push(r.version);
            Ok(())
        })
        .map(|()| versions)
    }

    /// A replay hands out versions 1, 2, 3, … or stops at the row out of line:
    /// a gap, a renumbered row, a lone event at the last version; a version of
    /// another type is refused even where it sorts past every number. A bound
    /// below the damage reads as before.
    #[test]
    fn a_replay_stops_at_a_version_out_of_line() {
        let gap = |e: Result<Vec<u64>, Error>, seq: i64| {
            assert!(
                matches!(&e, Err(Error::Corrupt { seq: s, reason }) if *s == seq && reason.contains("have a gap")),
                "{e:?}"
            );
        };
        assert_eq!(replayed_after("", i64::MAX).expect("intact").len(), 10);
        gap(
            replayed_after("DELETE FROM events WHERE version = 5;", i64::MAX),
            6,
        );
        assert_eq!(
            replayed_after("DELETE FROM events WHERE version = 5;", 4).expect("below"),
            [1, 2, 3, 4]
        );
        gap(
            replayed_after(
                "UPDATE events SET version = 12 WHERE version = 10;",
                i64::MAX,
            ),
            10,
        );
        gap(
            replayed_after(
                "DELETE FROM events WHERE version > 1; UPDATE events SET version = 9223372036854775807;",
                i64::MAX,
            ),
            1,
        );
        // The last row: it sorts after every number, where a bound would leave it out.
        for forged in ["'abc'", "x'01'", "1e300"] {
            let e = replayed_after(
                &format!("UPDATE events SET version = {forged} WHERE version = 10;"),
                i64::MAX,
            );
            assert!(
                matches!(&e, Err(Error::Corrupt { seq: 10, reason }) if reason == "its version is not an integer"),
                "{forged}: {e:?}"
            );
        }
    }
}
