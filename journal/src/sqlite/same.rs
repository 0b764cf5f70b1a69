//! Whether two connections of this process read one journal: the proof that lets
//! SQLite's structural check run on a second connection, on another core, beside
//! the walk (`verify`) or the re-decisions (`audit`).
//!
//! A second connection opens the file again by name, and a file renamed over the
//! journal in between would be checked instead (helper-47). A name proves
//! nothing; SQLite's own objects do:
//!
//! * **The database file.** SQLite keeps one shared-memory node per inode in a
//!   process, and every connection to that inode maps the same WAL-index regions.
//!   Region 0's address (`xShmMap`, through `SQLITE_FCNTL_FILE_POINTER`) is
//!   therefore one address exactly when both connections hold one inode: two live
//!   mappings of two files never share an address.
//! * **The WAL.** Each connection opens the `-wal` file by name too, and reads
//!   pages from it where the shared index says. So the two WAL files
//!   (`SQLITE_FCNTL_JOURNAL_POINTER`) must hold the same bytes: equal sizes, and
//!   equal contents, compared here (at most [`WAL_MAX`] bytes).
//!
//! Anything else — another VFS, no WAL, an error, a WAL that grew between the two
//! reads (a writer), a larger one — proves nothing, and the check runs on the
//! caller's own connection as before. Only the `sqlite3_file` and
//! `sqlite3_io_methods` structs of SQLite's public ABI are read.

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::{ffi, Connection};

/// The largest WAL compared (a larger one proves nothing). SQLite checkpoints
/// at 1,000 pages (4 MiB) by default; a long batch can grow it further.
const WAL_MAX: i64 = 64 << 20;

/// The WAL-index region size SQLite maps (`WALINDEX_PGSZ`): `xShmMap` asks it.
const SHM_REGION: c_int = 32 * 1024;

/// Whether `a` and `b` read the same database file and the same WAL bytes. Both
/// must have read the database since they opened (so their WAL is open), and
/// neither may be inside a call (the caller holds both).
pub(super) fn same_file(a: &Connection, b: &Connection) -> bool {
    // SAFETY: `handle()` is each connection's live `sqlite3*`, used on this
    // thread while no statement of either runs; the file pointers SQLite returns
    // live as long as the connections, which outlive this call.
    unsafe { same_database(a, b) && same_wal(a, b) }
}

/// The `sqlite3_file` SQLite opened for `main` (`op`: the database file or its
/// journal), with its methods.
unsafe fn file(conn: &Connection, op: c_int) -> Option<*mut ffi::sqlite3_file> {
    let mut file: *mut ffi::sqlite3_file = ptr::null_mut();
    let rc = ffi::sqlite3_file_control(
        conn.handle(),
        c"main".as_ptr(),
        op,
        ptr::addr_of_mut!(file).cast::<c_void>(),
    );
    (rc == ffi::SQLITE_OK && !file.is_null() && !(*file).pMethods.is_null()).then_some(file)
}

/// Region 0 of the WAL index `file` maps (never extended: a file whose index
/// is not mapped yet has none).
unsafe fn region_zero(file: *mut ffi::sqlite3_file) -> Option<*mut c_void> {
    let methods = &*(*file).pMethods;
    if methods.iVersion < 2 {
        return None;
    }
    let map = methods.xShmMap?;
    let mut region: *mut c_void = ptr::null_mut();
    (map(file, 0, SHM_REGION, 0, ptr::addr_of_mut!(region)) == ffi::SQLITE_OK && !region.is_null())
        .then_some(region)
}

unsafe fn same_database(a: &Connection, b: &Connection) -> bool {
    let (Some(fa), Some(fb)) = (
        file(a, ffi::SQLITE_FCNTL_FILE_POINTER),
        file(b, ffi::SQLITE_FCNTL_FILE_POINTER),
    ) else {
        return false;
    };
    if fa == fb || (*fa).pMethods != (*fb).pMethods {
        return false;
    }
    match (region_zero(fa), region_zero(fb)) {
        (Some(ra), Some(rb)) => ra == rb,
        _ => false,
    }
}

/// The size of `file`, through its methods.
unsafe fn size(file: *mut ffi::sqlite3_file) -> Option<i64> {
    let mut n: ffi::sqlite3_int64 = 0;
    let size = (*(*file).pMethods).xFileSize?;
    (size(file, ptr::addr_of_mut!(n)) == ffi::SQLITE_OK).then_some(n)
}

/// `buf.len()` bytes of `file` at `at`.
unsafe fn read(file: *mut ffi::sqlite3_file, buf: &mut [u8], at: i64) -> bool {
    let Some(read) = (*(*file).pMethods).xRead else {
        return false;
    };
    let Ok(n) = c_int::try_from(buf.len()) else {
        return false;
    };
    read(file, buf.as_mut_ptr().cast::<c_void>(), n, at) == ffi::SQLITE_OK
}

unsafe fn same_wal(a: &Connection, b: &Connection) -> bool {
    let (Some(wa), Some(wb)) = (
        file(a, ffi::SQLITE_FCNTL_JOURNAL_POINTER),
        file(b, ffi::SQLITE_FCNTL_JOURNAL_POINTER),
    ) else {
        return false;
    };
    let (Some(na), Some(nb)) = (size(wa), size(wb)) else {
        return false;
    };
    if na != nb || !(0..=WAL_MAX).contains(&na) {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut at = 0;
    while at < na {
        // A chunk fits the 1 MiB buffers: `na - at` is positive here.
        let n = usize::try_from((na - at).min(1 << 20)).unwrap_or(0);
        if n == 0
            || !read(wa, &mut ba[..n], at)
            || !read(wb, &mut bb[..n], at)
            || ba[..n] != bb[..n]
        {
            return false;
        }
        at += n as i64;
    }
    // Still the same size: no writer appended while the bytes were compared.
    size(wa) == Some(na) && size(wb) == Some(na)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::Connection;

    use super::same_file;
    use crate::sqlite::SqliteStore;
    use crate::Options;

    /// A WAL-mode file with rows still in its WAL.
    fn journal(path: &Path, rows: u32) -> Connection {
        let c = Connection::open(path).unwrap();
        c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
        c.execute_batch("PRAGMA wal_autocheckpoint=0; CREATE TABLE t (x TEXT);")
            .unwrap();
        for i in 0..rows {
            c.execute("INSERT INTO t VALUES (?1)", [format!("row {i}")])
                .unwrap();
        }
        c
    }

    /// A connection that has read the file (its WAL open).
    fn reader(path: &Path) -> Connection {
        let c = Connection::open(path).unwrap();
        c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .unwrap();
        c
    }

    #[test]
    fn two_connections_to_one_file_are_proven_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.db");
        let _w = journal(&p, 50);
        assert!(same_file(&reader(&p), &reader(&p)));
    }

    #[test]
    fn a_file_renamed_over_the_journal_between_the_opens_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.db");
        let _w = journal(&p, 50);
        let a = reader(&p);
        // A copy of the file and its WAL, renamed over both (helper-47's move).
        let q = dir.path().join("copy.db");
        std::fs::copy(&p, &q).unwrap();
        std::fs::copy(dir.path().join("j.db-wal"), dir.path().join("copy.db-wal")).unwrap();
        std::fs::rename(&q, &p).unwrap();
        std::fs::rename(dir.path().join("copy.db-wal"), dir.path().join("j.db-wal")).unwrap();
        assert!(!same_file(&a, &reader(&p)));
    }

    #[test]
    fn a_wal_renamed_over_the_journals_between_the_opens_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.db");
        let _w = journal(&p, 50);
        let a = reader(&p);
        // The same database file; its WAL replaced by a copy with one byte
        // changed near its end (a page's content, not a frame header).
        let wal = dir.path().join("j.db-wal");
        let mut bytes = std::fs::read(&wal).unwrap();
        let at = bytes.len() - 100;
        bytes[at] ^= 0x20;
        let q = dir.path().join("other-wal");
        std::fs::write(&q, &bytes).unwrap();
        std::fs::rename(&q, &wal).unwrap();
        assert!(!same_file(&a, &reader(&p)));
        // The unchanged bytes under a new inode prove the same reads.
        bytes[at] ^= 0x20;
        std::fs::write(&q, &bytes).unwrap();
        std::fs::rename(&q, &wal).unwrap();
        assert!(same_file(&a, &reader(&p)));
    }

    #[test]
    fn two_journals_are_not_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (p, q) = (dir.path().join("a.db"), dir.path().join("b.db"));
        let (_a, _b) = (journal(&p, 50), journal(&q, 50));
        assert!(!same_file(&reader(&p), &reader(&q)));
    }

    /// A journal's structural check runs beside the caller's work, and says
    /// what the caller's own connection says.
    #[test]
    fn a_journal_checks_its_structure_beside() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.db");
        let s = SqliteStore::open(&p, &Options::default()).unwrap();
        let check = s.integrity_beside(10).expect("proven and started");
        assert_eq!(
            check.join().unwrap().unwrap(),
            s.integrity_problems(10).unwrap()
        );
    }
}
