//! SQLite's structural check on a second, read-only connection and a thread of
//! its own, beside the caller's work: `integrity_check` reads every page and
//! looks every row up in its indexes (1.3–1.5 s of a 1M-event journal) and needs
//! nothing from the caller.
//!
//! * **In a transaction of its own** ([`SqliteStore::integrity_beside`]): for the
//!   audit, which reads no one snapshot. The check may see rows committed after
//!   the caller's; it judges the file's structure, which appended rows do not
//!   change.
//! * **In the caller's own snapshot** ([`SqliteStore::integrity_at_snapshot`]):
//!   for `verify`, whose check must judge the rows its walk read. Beginning a
//!   transaction of its own is not enough there: a WAL-index header rewritten in
//!   between made the second connection read an older snapshot, without the
//!   walk's damaged frames (helper-59). So the second connection begins at the
//!   walk's snapshot (`sqlite3_snapshot_open`: the walk's own copy of the header,
//!   which SQLite refuses once the log it names was checkpointed away), or, when
//!   SQLite has no snapshot to give (no transaction was written to this WAL since
//!   it was made), only while the WAL holds no frame at all: both then read the
//!   database file alone, and no checkpoint writes it while the walk reads (a
//!   reader of the file alone holds off every backfill: `WAL_READ_LOCK(0)`).
//!   Only in a build whose SQLite has the snapshot functions (`build.rs`).
//!
//! Either is `None`, and the caller checks on its own connection, unless
//! [`same::same_file`] proves the second connection reads this one's file and
//! WAL (a file renamed over the journal between the opens was checked instead:
//! helper-47), or when anything fails: the open, the snapshot, the thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{same, wal_mode, SqliteStore};
use crate::store::IntegrityThread;
use crate::{Access, Options};

impl SqliteStore {
    /// The check in a transaction of its own (the module's first form).
    pub(crate) fn integrity_beside(&self, limit: u32) -> Option<IntegrityThread> {
        self.second()?.check_on_thread(limit)
    }

    /// The check in this connection's read transaction's snapshot (the module's
    /// second form). The caller is inside a read transaction that has read.
    #[cfg(cairn_wal_snapshot)]
    pub(crate) fn integrity_at_snapshot(&self, limit: u32) -> Option<IntegrityThread> {
        self.second_at_snapshot()?.check_on_thread(limit)
    }

    /// A second connection (as [`SqliteStore::second`]) inside a read
    /// transaction that reads this one's snapshot.
    #[cfg(cairn_wal_snapshot)]
    fn second_at_snapshot(&self) -> Option<SqliteStore> {
        let second = self.second()?;
        second.conn.execute_batch("BEGIN DEFERRED").ok()?;
        match at::Taken::of(&self.conn) {
            Some(taken) => taken.open_on(&second.conn).then_some(())?,
            None => {
                second
                    .conn
                    .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                    .ok()?;
                // Asked after the second began: a commit before then wrote a
                // frame, and a frame either reads is still in the file.
                same::wal_holds_no_frame(&self.conn).then_some(())?;
            }
        }
        Some(second)
    }

    /// A second, read-only connection proven to read this one's file and WAL.
    fn second(&self) -> Option<SqliteStore> {
        // Only a file SQLite reads in place in WAL mode has a WAL index to
        // prove by (asking another file for one creates its `-shm`: a reader
        // must create nothing).
        if !matches!(self.access, Access::ReadWrite | Access::ReadOnly) || !wal_mode(&self.conn) {
            return None;
        }
        let options = Options {
            busy_timeout: std::time::Duration::from_millis(self.busy_ms),
            ..Options::default()
        };
        let second = Self::open_read_only(&self.path, &options).ok()?;
        (second.access == Access::ReadOnly
            && wal_mode(&second.conn)
            && same::same_file(&self.conn, &second.conn))
        .then_some(second)
    }

    /// Runs the check on a thread of its own, on this connection (in the
    /// transaction it is in, if any).
    fn check_on_thread(mut self, limit: u32) -> Option<IntegrityThread> {
        // Stopped through SQLite's progress handler, which the check consults
        // as it goes: `sqlite3_interrupt` before the check's statement starts is
        // cleared by its start (helper-61: the audit then waited for the whole
        // check), a flag is not.
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        self.conn
            .progress_handler(1000, Some(move || stopped.load(Ordering::Relaxed)))
            .ok()?;
        let handle = std::thread::Builder::new()
            .name("cairn-integrity".into())
            .spawn(move || self.integrity_problems(limit).map_err(|e| e.to_string()))
            .ok()?;
        Some(IntegrityThread {
            handle,
            stop: Box::new(move || stop.store(true, Ordering::Relaxed)),
        })
    }
}

/// A walk's snapshot dropped with its check still running (the walk stopped on
/// an error) stops the check and waits for its thread: none outlives the walk.
impl Drop for super::tx::Snap<'_> {
    fn drop(&mut self) {
        if let Some((_, check)) = self.beside.take() {
            (check.stop)();
            let _ = check.handle.join();
        }
    }
}

/// `sqlite3_snapshot_get` and `_open`, in a build whose SQLite has them.
#[cfg(cairn_wal_snapshot)]
mod at {
    use rusqlite::{ffi, Connection};

    /// A snapshot SQLite took of a connection's read transaction (freed on drop).
    pub(super) struct Taken(*mut ffi::sqlite3_snapshot);

    impl Taken {
        /// The snapshot `conn`'s open read transaction reads; `None` when SQLite
        /// has none to give (among others: no transaction was written to the
        /// WAL since it was made).
        pub(super) fn of(conn: &Connection) -> Option<Self> {
            let mut p: *mut ffi::sqlite3_snapshot = std::ptr::null_mut();
            // SAFETY: `handle()` is the connection's live `sqlite3*`, used on
            // this thread while none of its statements runs; SQLite allocates the
            // snapshot, which `drop` frees.
            let rc = unsafe { ffi::sqlite3_snapshot_get(conn.handle(), c"main".as_ptr(), &mut p) };
            (rc == ffi::SQLITE_OK && !p.is_null()).then_some(Self(p))
        }

        /// Whether `conn`, after `BEGIN` and before its first read, now reads
        /// this snapshot (when not, its transaction is not to be used).
        pub(super) fn open_on(&self, conn: &Connection) -> bool {
            // SAFETY: as in `of`; the snapshot is live until `drop`.
            let rc = unsafe { ffi::sqlite3_snapshot_open(conn.handle(), c"main".as_ptr(), self.0) };
            rc == ffi::SQLITE_OK
        }
    }

    impl Drop for Taken {
        fn drop(&mut self) {
            // SAFETY: `self.0` came from `sqlite3_snapshot_get` and is freed once.
            unsafe { ffi::sqlite3_snapshot_free(self.0) }
        }
    }
}

#[cfg(all(test, cairn_wal_snapshot))]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::pages::tests::big;
    use crate::Journal;

    fn events(c: &rusqlite::Connection) -> i64 {
        c.query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .expect("count")
    }

    /// `n` more events on `path`, committed by a journal of its own.
    fn append(path: &Path, n: usize) {
        let mut j = Journal::open(path, &Options::default()).expect("writer");
        let version = j.stream_version("ticket/big").expect("version");
        let mut a = big(version, 1);
        a.events = (0..n).map(|_| a.events[0].clone()).collect();
        j.append(&a).expect("append");
    }

    /// The caller's snapshot, begun: its event count.
    fn begin(s: &SqliteStore) -> i64 {
        s.conn.execute_batch("BEGIN DEFERRED").expect("begin");
        events(&s.conn)
    }

    /// With frames in the WAL (a connection holds it open), the second
    /// connection reads the caller's snapshot, not the events committed since.
    #[test]
    fn the_second_reads_the_callers_snapshot_not_a_later_one() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("j.db");
        append(&p, 10);
        let hold = rusqlite::Connection::open(&p).expect("hold");
        let _ = events(&hold);
        append(&p, 10);
        let s = SqliteStore::open_read_only(&p, &Options::default()).expect("reader");
        assert_eq!(begin(&s), 20);
        append(&p, 5);
        let second = s.second_at_snapshot().expect("a snapshot to open");
        assert_eq!(events(&second.conn), 20, "the caller's snapshot");
        assert_eq!(events(&hold), 25, "the five were committed");
    }

    /// With no frame in the WAL (every connection closed, so it was removed),
    /// SQLite has no snapshot to give: the second connection reads the
    /// database file alone exactly while the WAL still holds no frame, and is
    /// refused once a commit since the caller began wrote one.
    #[test]
    fn a_frameless_wal_is_read_beside_only_while_no_commit_came_between() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("j.db");
        append(&p, 10);
        let s = SqliteStore::open_read_only(&p, &Options::default()).expect("reader");
        assert_eq!(begin(&s), 10);
        assert!(at::Taken::of(&s.conn).is_none(), "no snapshot to give");
        let second = s.second_at_snapshot().expect("the file alone, on both");
        assert_eq!(events(&second.conn), 10);
        drop(second);
        append(&p, 5);
        assert!(
            s.second_at_snapshot().is_none(),
            "a commit between: not the caller's snapshot"
        );
        s.conn.execute_batch("COMMIT").expect("end");
        assert_eq!(begin(&s), 15, "the five were committed");
    }
}
