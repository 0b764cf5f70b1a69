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
//!   Either way the second reloads its schema in that snapshot (one loaded at
//!   its open was a later one, and SQLite does not reload a schema edited by
//!   hand: helper-84), and is used only when the schema rows it reads are the
//!   walk's: the walk's transaction holds the page 1 it read, while a writer of
//!   the WAL index can point the second's read of it elsewhere. Such a writer
//!   can still make the second read what the walk did not: with damage in an
//!   index's WAL frames only, the header forged to give no snapshot, and the WAL
//!   emptied between the two begins, the second reads the file alone
//!   (helper-85 F2). It steers an in-line check as easily: the WAL index's page
//!   lookups carry no checksum, and an index page the walk never read is looked
//!   up when the check reads it. Against a writer of the `-shm` and `-wal`, the
//!   chain, signatures and a kept head stand, not the structural check.
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
    /// transaction that reads this one's snapshot, through the schema this one's
    /// transaction reads.
    #[cfg(cairn_wal_snapshot)]
    fn second_at_snapshot(&self) -> Option<SqliteStore> {
        let second = self.second()?;
        second.conn.execute_batch("BEGIN DEFERRED").ok()?;
        let taken = at::Taken::of(&self.conn);
        if let Some(taken) = &taken {
            taken.open_on(&second.conn).then_some(())?;
        }
        // The second loaded the schema as it opened, at the latest state, and
        // SQLite reloads a schema only when its cookie moved, which an edit of
        // `sqlite_schema` by hand does not: the check then judged the walk's
        // pages by a later schema, and two plain commits hid damage the walk
        // read, or invented some (helper-84). Reloaded here, in the snapshot.
        super::schema_in_snapshot(&second.conn).ok()?;
        let schema = schema_rows(&second.conn)?;
        // Asked after the second began: a commit before then wrote a frame,
        // and a frame either reads is still in the file.
        if taken.is_none() && !same::wal_holds_no_frame(&self.conn) {
            return None;
        }
        // And the schema the second reads is the one the walk reads: its
        // transaction holds the page it read, where the second reads the page
        // again, and a writer of the WAL index can point that read elsewhere (an
        // older frame of it, or the file alone behind an emptied WAL: helper-84).
        (schema_rows(&self.conn)? == schema).then_some(second)
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

/// Every row of `sqlite_schema` as the connection's transaction reads it (the
/// first read of a transaction loads the schema from these rows).
#[cfg(cairn_wal_snapshot)]
fn schema_rows(conn: &rusqlite::Connection) -> Option<Vec<rusqlite::types::Value>> {
    let mut stmt = conn
        .prepare(
            "SELECT rowid, type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid",
        )
        .ok()?;
    let mut rows = stmt.query([]).ok()?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().ok()? {
        for i in 0..6 {
            out.push(row.get::<_, rusqlite::types::Value>(i).ok()?);
        }
    }
    Some(out)
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
    use crate::sqlite::snapshot_tests::swap_roots;
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

    /// A journal of 20 events and a connection holding its WAL (no checkpoint).
    fn held(dir: &tempfile::TempDir) -> (std::path::PathBuf, rusqlite::Connection) {
        let p = dir.path().join("j.db");
        append(&p, 20);
        let hold = rusqlite::Connection::open(&p).expect("hold");
        hold.execute_batch("PRAGMA wal_autocheckpoint=0")
            .expect("no checkpoint");
        let _ = events(&hold);
        (p, hold)
    }

    /// The second connection judges the walk's pages by the walk's schema, not
    /// one it loaded later (helper-84, HIGH): the roots swapped (damage), the
    /// walk begun, the swap undone by a second commit, and the check beside
    /// still names the damage the walk read; and the other way round, damage
    /// committed after the walk began is not named.
    #[test]
    fn a_schema_edited_by_hand_is_read_as_the_walks_snapshot_holds_it() {
        for damaged_first in [true, false] {
            let dir = tempfile::tempdir().expect("dir");
            let (p, hold) = held(&dir);
            if damaged_first {
                swap_roots(&hold);
            } else {
                append(&p, 1);
            }
            let s = SqliteStore::open_read_only(&p, &Options::default()).expect("reader");
            s.conn.execute_batch("BEGIN DEFERRED").expect("begin");
            super::super::schema_in_snapshot(&s.conn).expect("its schema");
            let _ = events(&s.conn);
            let walks = s.integrity_problems(10).expect("in line");
            assert_eq!(walks.is_empty(), !damaged_first, "{walks:?}");
            swap_roots(&hold);
            let second = s.second_at_snapshot().expect("the walk's snapshot");
            assert_eq!(
                second.integrity_problems(10).expect("beside"),
                walks,
                "damaged first: {damaged_first}"
            );
        }
    }

    /// The WAL index's header of the file alone, with its checksum, at `at`.
    fn write_header(shm: &std::fs::File, mut h: [u8; 48]) {
        use std::os::unix::fs::FileExt;
        let (mut s1, mut s2) = (0u32, 0u32);
        for c in h[..40].chunks(8) {
            let word = |b: &[u8]| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            s1 = s1.wrapping_add(word(&c[0..4])).wrapping_add(s2);
            s2 = s2.wrapping_add(word(&c[4..8])).wrapping_add(s1);
        }
        h[40..44].copy_from_slice(&s1.to_ne_bytes());
        h[44..48].copy_from_slice(&s2.to_ne_bytes());
        shm.write_all_at(&h, 0).expect("header");
        shm.write_all_at(&h, 48).expect("its copy");
    }

    fn read_header(shm: &std::fs::File) -> [u8; 48] {
        use std::os::unix::fs::FileExt;
        let mut h = [0u8; 48];
        shm.read_exact_at(&mut h, 0).expect("header");
        h
    }

    /// A writer of the WAL index cannot make the second read what the walk did
    /// not (helper-84, MEDIUM): with the damage in WAL frames only, the header's
    /// frame checksums zeroed (so SQLite has no snapshot to give), and, between
    /// the walk's begin and the second's, the file-alone header put back and the
    /// WAL emptied, the second would read the intact file alone; the schema it
    /// reads is not the walk's, so no check runs beside.
    #[test]
    fn a_frameless_wal_faked_through_the_wal_index_is_not_read_beside() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().expect("dir");
        let (p, hold) = held(&dir);
        let shm_path = dir.path().join("j.db-shm");
        let shm = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&shm_path)
            .expect("shm");
        let alone = read_header(&shm);
        swap_roots(&hold);
        let mut forged = read_header(&shm);
        forged[24..40].fill(0);
        write_header(&shm, forged);
        let s = SqliteStore::open_read_only(&p, &Options::default()).expect("reader");
        begin(&s);
        assert!(!s.integrity_problems(3).expect("in line").is_empty());
        assert!(at::Taken::of(&s.conn).is_none(), "no snapshot to give");
        let wal_path = dir.path().join("j.db-wal");
        let bytes = std::fs::read(&wal_path).expect("wal");
        let wal = std::fs::OpenOptions::new()
            .write(true)
            .open(&wal_path)
            .expect("wal");
        write_header(&shm, alone);
        wal.set_len(0).expect("emptied");
        let second = s.second_at_snapshot();
        wal.write_all_at(&bytes, 0).expect("put back");
        write_header(&shm, forged);
        assert!(second.is_none(), "the intact file alone was read beside");
    }

    /// Nor point the second's read of page 1 at an older frame of it (helper-84,
    /// MEDIUM): a snapshot fixes the WAL index's header, not its page lookups;
    /// the schema the second reads is then not the walk's.
    #[test]
    fn a_page_one_the_wal_index_points_elsewhere_is_not_read_beside() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().expect("dir");
        let (p, hold) = held(&dir);
        // An intact page 1 in a frame, the damaged one in a later frame.
        hold.execute_batch("PRAGMA user_version = 3")
            .expect("page 1");
        swap_roots(&hold);
        let wal = std::fs::read(dir.path().join("j.db-wal")).expect("wal");
        let page = u32::from_be_bytes([wal[8], wal[9], wal[10], wal[11]]) as usize;
        let last_of_page_one = (0..)
            .map(|i: usize| (i, 32 + i * (24 + page)))
            .take_while(|(_, at)| at + 24 + page <= wal.len())
            .filter(|(_, at)| wal[*at..at + 4] == 1u32.to_be_bytes())
            .last()
            .map(|(i, _)| i)
            .expect("page 1 in the WAL");
        let s = SqliteStore::open_read_only(&p, &Options::default()).expect("reader");
        begin(&s);
        assert!(!s.integrity_problems(3).expect("in line").is_empty());
        // The lookup of that frame (the first hash block's page numbers start
        // at byte 136 of the index) renamed to a page no one reads.
        let shm = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dir.path().join("j.db-shm"))
            .expect("shm");
        let at = 136 + 4 * last_of_page_one as u64;
        let mut was = [0u8; 4];
        shm.read_exact_at(&mut was, at).expect("slot");
        assert_eq!(u32::from_ne_bytes(was), 1, "the slot of page 1's frame");
        shm.write_all_at(&0x7fff_fff0u32.to_ne_bytes(), at)
            .expect("forged");
        let second = s.second_at_snapshot();
        shm.write_all_at(&was, at).expect("put back");
        assert!(second.is_none(), "an older page 1 was read beside");
    }
}
