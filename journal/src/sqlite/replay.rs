//! The replay path on SQLite: a stream's events in version order, read the
//! cheapest way that still gives exactly that order.
//!
//! Through the `(stream, version)` index, every row costs a seek of the table's
//! B-tree by its rowid, and the index's own pages are read beside the table's.
//! cairn appends a stream's events in version order, so the events of a long
//! stream written in runs lie close together in rowid order, where a range of
//! the table is read page by page with no seek (a replay of 100k events 5%
//! faster, docs/performance.md). So a replay reads the first
//! [`INDEX_FIRST`] rows through the index; a stream that goes on, and whose
//! remaining rows make up at least half of the rowid range they span, is read
//! on through that range. The range only ever supplies the next version in
//! line (the last one handed out plus one, up to the bound); at the first row
//! of the stream that is not, it stops and the index hands out the rest. So
//! the rows handed out are the index's rows in the index's order, whatever the
//! file's layout: each version the range supplies is the smallest one left.
//!
//! Outside a transaction each statement may read a later snapshot than the one
//! before (a writer between them): the journal being append-only, a later one
//! holds every row handed out already, unchanged, so the replay is the index's
//! order in the last snapshot it read, one state the stream was in.

use rusqlite::types::ValueRef;
use rusqlite::{params, Row};

use super::{sql, SqliteStore};
use crate::read::ReplayRow;
use crate::Error;

/// Rows read through the index before the replay looks at the rest's layout:
/// a short stream (every CLI call's) costs no statement more than before.
pub(super) const INDEX_FIRST: i64 = 512;

/// The last row handed out: its version and rowid (`None` before the first).
#[derive(Clone, Copy, Default)]
struct Handed {
    last: Option<(i64, i64)>,
}

impl Handed {
    /// The least version still to hand out; `None` once `i64::MAX` is out.
    fn next_version(self) -> Option<i64> {
        match self.last {
            None => Some(i64::MIN),
            Some((version, _)) => version.checked_add(1),
        }
    }

    fn hand(&mut self, r: &ReplayRow<'_>) {
        // `version` came out of an i64 column (`replay_row`): it fits.
        self.last = Some((r.version as i64, r.seq));
    }
}

impl SqliteStore {
    pub(super) fn replay(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.replay_switching_after(stream, up_to, INDEX_FIRST, f)
    }

    /// [`SqliteStore::replay`], looking at the layout after `index_first` rows.
    fn replay_switching_after(
        &self,
        stream: &str,
        up_to: i64,
        index_first: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut at = Handed::default();
        if self.by_index(stream, up_to, index_first, &mut at, f)? < index_first {
            return Ok(());
        }
        let last = self
            .conn
            .prepare_cached(sql::REPLAY_LAST)
            .and_then(|mut s| {
                let mut rows = s.query(params![stream, up_to])?;
                rows.next()?
                    .map(|r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
                    .transpose()
            })
            .map_err(self.sql_err())?;
        if let (Some((last_seq, last_version)), Some((version, seq))) = (last, at.last) {
            let left = i128::from(last_version) - i128::from(version);
            let span = i128::from(last_seq) - i128::from(seq);
            if left > 0 && span > 0 && span <= 2 * left {
                self.by_rowid(stream, up_to, last_seq, &mut at, f)?;
            }
        }
        self.by_index(stream, up_to, -1, &mut at, f)?;
        Ok(())
    }

    /// Hands out the stream's rows after `at` in version order through the
    /// index, at most `limit` (`-1`: all): how many it handed out.
    fn by_index(
        &self,
        stream: &str,
        up_to: i64,
        limit: i64,
        at: &mut Handed,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<i64, Error> {
        let Some(from) = at.next_version() else {
            return Ok(0);
        };
        let mut stmt = self
            .conn
            .prepare_cached(sql::REPLAY)
            .map_err(self.sql_err())?;
        let mut rows = stmt
            .query(params![stream, from, up_to, limit])
            .map_err(self.sql_err())?;
        let mut n = 0;
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            let r = replay_row(row)?;
            at.hand(&r);
            f(r)?;
            n += 1;
        }
        Ok(n)
    }

    /// Hands out the stream's rows in rowid order up to `last_seq` for as long
    /// as each is the next version in line.
    fn by_rowid(
        &self,
        stream: &str,
        up_to: i64,
        last_seq: i64,
        at: &mut Handed,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Some((_, after_seq)) = at.last else {
            return Ok(());
        };
        let mut stmt = self
            .conn
            .prepare_cached(sql::REPLAY_ROWIDS)
            .map_err(self.sql_err())?;
        let mut rows = stmt
            .query(params![after_seq, last_seq, stream])
            .map_err(self.sql_err())?;
        while let Some(row) = rows.next().map_err(self.sql_err())? {
            let r = replay_row(row)?;
            // `version` came out of an i64 column (`replay_row`): it fits.
            let version = r.version as i64;
            // Past the bound the range has already ended (it ends at the last
            // row within it; versions are unique per stream): kept so the
            // bound holds without that argument.
            if Some(version) != at.next_version() || version > up_to {
                break;
            }
            at.hand(&r);
            f(r)?;
        }
        Ok(())
    }
}

/// A replay row, read as SQLite holds its columns: an integer or a text where
/// the schema says so, anything else a corrupt row.
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
    use proptest::prelude::*;
    use proptest::test_runner::{Config, FileFailurePersistence};

    use super::*;
    use crate::pages::tests::big;
    use crate::{Journal, Options};

    /// A row as the replay hands it out.
    type Out = (i64, u64, String, u32, String);

    fn replayed(s: &SqliteStore, stream: &str, up_to: i64, index_first: i64) -> Vec<Out> {
        let mut out = Vec::new();
        s.replay_switching_after(stream, up_to, index_first, &mut |r| {
            out.push((
                r.seq,
                r.version,
                r.event_type.to_owned(),
                r.schema_version,
                r.payload.to_owned(),
            ));
            Ok(())
        })
        .expect("replay");
        out
    }

    /// What the index alone hands out: the order the replay must keep.
    fn by_the_index(s: &SqliteStore, stream: &str, up_to: i64) -> Vec<Out> {
        let mut stmt = s
            .conn
            .prepare("SELECT seq, version, event_type, schema_version, payload FROM events WHERE stream = ?1 AND version <= ?2 ORDER BY version")
            .expect("prepare");
        let rows = stmt
            .query_map(params![stream, up_to], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, i64>(1)? as u64,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                ))
            })
            .expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    }

    /// How many times the rowid range statement has stepped on `s`.
    fn rowid_steps(s: &SqliteStore) -> i32 {
        s.conn
            .prepare_cached(sql::REPLAY_ROWIDS)
            .expect("cached")
            .get_status(rusqlite::StatementStatus::VmStep)
    }

    /// Appends `runs` (stream number, events) in order; stream `k` is `ticket/k`.
    fn journal(path: &std::path::Path, runs: &[(u8, u8)]) {
        let mut j = Journal::open(path, &Options::default()).expect("open");
        let mut tips = [0u64; 4];
        for &(k, n) in runs {
            let k = usize::from(k % 4);
            let mut a = big(tips[k], 1);
            a.stream = format!("ticket/{k}");
            a.events = (0..n.max(1))
                .map(|i| crate::NewEvent {
                    event_type: format!("e{}", i % 3),
                    schema_version: 1 + u32::from(i % 2),
                    payload: format!("{{\"k\":{k},\"i\":{i}}}"),
                })
                .collect();
            tips[k] += a.events.len() as u64;
            j.append(&a).expect("append");
        }
    }

    /// Changes the file as no cairn append would: the append-only triggers
    /// dropped, rows moved between versions and streams, or removed.
    fn forge(s: &SqliteStore, forgeries: &[(u8, u16, u16)]) {
        s.conn
            .execute_batch(
                "DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete;",
            )
            .expect("drop the guards");
        let seqs: i64 = s
            .conn
            .query_row("SELECT max(seq) FROM events", [], |r| r.get(0))
            .expect("max");
        let row = |seq: i64| -> (String, i64) {
            s.conn
                .query_row(
                    "SELECT stream, version FROM events WHERE seq = ?1",
                    [seq],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .expect("row")
        };
        let set = |seq: i64, stream: &str, version: i64| {
            // A move onto a taken (stream, version) is refused: no forgery then.
            s.conn
                .execute(
                    "UPDATE events SET stream = ?2, version = ?3 WHERE seq = ?1",
                    params![seq, stream, version],
                )
                .is_ok()
        };
        for &(how, a, b) in forgeries {
            let a = 1 + i64::from(a) % seqs;
            let b = 1 + i64::from(b) % seqs;
            let present = |seq: i64| {
                s.conn
                    .query_row("SELECT count(*) FROM events WHERE seq = ?1", [seq], |r| {
                        r.get::<_, i64>(0)
                    })
                    .expect("count")
                    == 1
            };
            if !present(a) || !present(b) {
                continue;
            }
            let (sa, va) = row(a);
            let (sb, vb) = row(b);
            match how % 3 {
                // Two rows trade their stream and version (a parking version
                // first: the pair is unique).
                0 if a != b => {
                    assert!(set(a, &sa, -a - 1_000_000));
                    assert!(set(b, &sa, va));
                    assert!(set(a, &sb, vb));
                }
                1 => {
                    s.conn
                        .execute("DELETE FROM events WHERE seq = ?1", [a])
                        .expect("delete");
                }
                _ => {
                    set(a, &sa, va + 1000);
                }
            }
        }
    }

    fn config() -> Config {
        Config {
            cases: 48,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/replay.txt"
            )))),
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Whatever the file's layout (streams interleaved or in runs, rows
        /// moved, removed or renumbered behind cairn's back) and wherever the
        /// replay stops, it hands out exactly the index's rows in the index's
        /// order.
        #[test]
        fn a_replay_hands_out_the_index_order_whatever_the_layout(
            runs in proptest::collection::vec((0u8..4, 1u8..24), 1..40),
            forgeries in proptest::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 0..4),
            index_first in 1i64..12,
            up_to in prop_oneof![Just(i64::MAX), 0i64..400],
        ) {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("j.db");
            journal(&path, &runs);
            let s = SqliteStore::open(&path, &Options::default()).expect("store");
            if !forgeries.is_empty() {
                forge(&s, &forgeries);
            }
            for k in 0..4 {
                let stream = format!("ticket/{k}");
                prop_assert_eq!(
                    replayed(&s, &stream, up_to, index_first),
                    by_the_index(&s, &stream, up_to)
                );
            }
        }
    }

    /// A writer on another connection appending all the while: outside a
    /// transaction the replay's statements may each read a later snapshot, and
    /// every replay still hands out versions 1 to n once each, in order, each
    /// row its own (its payload names its version).
    #[test]
    fn a_replay_beside_a_racing_writer_hands_out_each_version_once_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("j.db");
        let write = |j: &mut Journal, stream: &str, from: u64, n: u64| {
            let mut a = big(from, 1);
            a.stream = stream.into();
            a.events = (from + 1..=from + n)
                .map(|v| crate::NewEvent {
                    event_type: "e".into(),
                    schema_version: 1,
                    payload: format!("{{\"v\":{v}}}"),
                })
                .collect();
            j.append(&a).expect("append");
        };
        let mut j = Journal::open(&path, &Options::default()).expect("open");
        write(&mut j, "ticket/0", 0, 40);
        let writer = std::thread::spawn(move || {
            for round in 0..150u64 {
                write(&mut j, "ticket/0", 40 + round * 20, 20);
                if round % 3 == 0 {
                    write(&mut j, "ticket/1", round / 3 * 5, 5);
                }
            }
        });
        let s = SqliteStore::open(&path, &Options::default()).expect("store");
        let mut replays = 0;
        while !writer.is_finished() || replays < 5 {
            let rows = replayed(&s, "ticket/0", i64::MAX, 8);
            for (i, (_, version, _, _, payload)) in rows.iter().enumerate() {
                assert_eq!(*version, i as u64 + 1, "replay {replays}");
                assert_eq!(payload, &format!("{{\"v\":{version}}}"));
            }
            replays += 1;
        }
        writer.join().expect("writer");
        assert!(rowid_steps(&s) > 0, "the rowid range was read");
        assert_eq!(replayed(&s, "ticket/0", i64::MAX, 8).len(), 3040);
    }

    /// A long stream written in runs is read through its rowid range after the
    /// first rows; streams interleaved one event at a time never are.
    #[test]
    fn only_a_stream_in_runs_is_read_by_rowid() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("j.db");
        // Stream 0: 3,000 events in runs of 200; stream 1 in between, 3 at a time.
        let runs: Vec<(u8, u8)> = (0..15).flat_map(|_| [(0, 200), (1, 3)]).collect();
        journal(&path, &runs);
        let s = SqliteStore::open(&path, &Options::default()).expect("store");
        let whole = replayed(&s, "ticket/0", i64::MAX, INDEX_FIRST);
        assert_eq!(whole.len(), 3000);
        assert_eq!(whole, by_the_index(&s, "ticket/0", i64::MAX));
        let through_rowids = rowid_steps(&s);
        assert!(through_rowids > 2000, "{through_rowids} steps by rowid");
        let part = replayed(&s, "ticket/0", 2222, INDEX_FIRST);
        assert_eq!(part, by_the_index(&s, "ticket/0", 2222));
        // Stream 1 is 45 events, under the switch: the index alone.
        let before = rowid_steps(&s);
        assert_eq!(
            replayed(&s, "ticket/1", i64::MAX, INDEX_FIRST),
            by_the_index(&s, "ticket/1", i64::MAX)
        );
        // Interleaved one event at a time, a stream spans thrice its rows.
        let runs: Vec<(u8, u8)> = (0..900).map(|i| ((i % 3) as u8, 1)).collect();
        let sparse = dir.path().join("sparse.db");
        journal(&sparse, &runs);
        let t = SqliteStore::open(&sparse, &Options::default()).expect("store");
        assert_eq!(
            replayed(&t, "ticket/2", i64::MAX, 8),
            by_the_index(&t, "ticket/2", i64::MAX)
        );
        assert_eq!(rowid_steps(&t), 0);
        assert_eq!(rowid_steps(&s), before);
    }
}
