//! Whether two connections of this process read one journal: the proof that lets
//! SQLite's structural check run on a second connection, on another core, beside
//! the audit's re-decisions and `verify`'s walk (`beside.rs`: the walk's check
//! reads the walk's own snapshot, since a transaction of its own, after a
//! WAL-index header rewritten in between, was an older one: helper-59).
//!
//! A second connection opens the file again by name, and a file renamed over the
//! journal in between would be checked instead (helper-47). A name proves
//! nothing; the open files do:
//!
//! * **The database file.** SQLite keeps one shared-memory node per inode in a
//!   process, and every connection to that inode maps the same WAL-index regions:
//!   region 0's address (`xShmMap`, through `SQLITE_FCNTL_FILE_POINTER`) is one
//!   address exactly when both connections hold one inode. And both descriptors
//!   name one device and inode (`fstat`).
//! * **The WAL.** Each connection opens the `-wal` file by name too, and reads
//!   pages from its own descriptor where the shared index says: both descriptors
//!   (`SQLITE_FCNTL_JOURNAL_POINTER`) must name one device and inode. Equal bytes
//!   are not enough: a copy renamed over the WAL between the opens can be
//!   changed after any comparison (helper-58 did, and verify said intact).
//!
//! A descriptor is read from SQLite's unix file object (`struct unixFile`:
//! methods, VFS, inode record, descriptor), only on the `unix` VFS, only when its
//! file objects are at least that large, and only when the object's VFS field is
//! the connection's VFS (the layout checked on the object itself). Anything else —
//! another VFS, no WAL, an error — proves nothing, and the check runs on the
//! caller's own connection as before.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;

use rusqlite::{ffi, Connection};

/// The WAL-index region size SQLite maps (`WALINDEX_PGSZ`): `xShmMap` asks it.
const SHM_REGION: c_int = 32 * 1024;

/// The first fields of the unix VFS's file object (`struct unixFile` in
/// sqlite3.c, unchanged since 3.7).
#[repr(C)]
struct UnixFileHead {
    methods: *const c_void,
    vfs: *mut ffi::sqlite3_vfs,
    inode: *mut c_void,
    fd: c_int,
}

/// Whether `a` and `b` read the same database file and the same WAL file. Both
/// must have read the database since they opened (so their WAL is open), and
/// neither may be inside a call (the caller holds both).
#[cfg(unix)]
pub(super) fn same_file(a: &Connection, b: &Connection) -> bool {
    // SAFETY: `handle()` is each connection's live `sqlite3*`, used on this
    // thread while no statement of either runs; the file objects SQLite returns
    // live as long as the connections, which outlive this call; a descriptor is
    // read only from an object the unix VFS made, within its size.
    unsafe { same_database(a, b) && same_open_file(a, b, ffi::SQLITE_FCNTL_JOURNAL_POINTER) }
}

#[cfg(not(unix))]
pub(super) fn same_file(_: &Connection, _: &Connection) -> bool {
    false
}

/// Whether `conn`'s WAL file holds no frame: it is shorter than its header and
/// the smallest frame (512 bytes of page and 24 of frame header). What any
/// connection reads of the journal is then the database file alone.
#[cfg(all(unix, cairn_wal_snapshot))]
pub(super) fn wal_holds_no_frame(conn: &Connection) -> bool {
    // SAFETY: as in `same_file`; the WAL's file object lives as long as the
    // connection, and its size is asked through its own methods.
    unsafe {
        let Some(wal) = file(conn, ffi::SQLITE_FCNTL_JOURNAL_POINTER) else {
            return false;
        };
        let Some(size) = (*(*wal).pMethods).xFileSize else {
            return false;
        };
        let mut n: ffi::sqlite3_int64 = 0;
        size(wal, &mut n) == ffi::SQLITE_OK && n < 32 + 24 + 512
    }
}

#[cfg(all(not(unix), cairn_wal_snapshot))]
pub(super) fn wal_holds_no_frame(_: &Connection) -> bool {
    false
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
    let mapped = match (region_zero(fa), region_zero(fb)) {
        (Some(ra), Some(rb)) => ra == rb,
        _ => false,
    };
    mapped && same_open_file(a, b, ffi::SQLITE_FCNTL_FILE_POINTER)
}

/// The descriptor of `file`, a file object of `conn`'s VFS, when that is the
/// unix VFS and the object is laid out as [`UnixFileHead`] says.
unsafe fn descriptor(conn: &Connection, file: *mut ffi::sqlite3_file) -> Option<c_int> {
    let mut vfs: *mut ffi::sqlite3_vfs = ptr::null_mut();
    let rc = ffi::sqlite3_file_control(
        conn.handle(),
        c"main".as_ptr(),
        ffi::SQLITE_FCNTL_VFS_POINTER,
        ptr::addr_of_mut!(vfs).cast::<c_void>(),
    );
    if rc != ffi::SQLITE_OK || vfs.is_null() || (*vfs).zName.is_null() {
        return None;
    }
    let big_enough =
        usize::try_from((*vfs).szOsFile).is_ok_and(|n| n >= std::mem::size_of::<UnixFileHead>());
    if CStr::from_ptr((*vfs).zName) != c"unix" || !big_enough {
        return None;
    }
    let head = &*file.cast::<UnixFileHead>();
    (head.vfs == vfs && head.fd >= 0).then_some(head.fd)
}

/// The device and inode an open descriptor names.
#[cfg(unix)]
fn identity(fd: c_int) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::BorrowedFd;
    // SAFETY: `fd` is open for as long as its connection, which outlives this
    // call; it is only duplicated (the duplicate is closed here).
    let owned = unsafe { BorrowedFd::borrow_raw(fd) }
        .try_clone_to_owned()
        .ok()?;
    let meta = std::fs::File::from(owned).metadata().ok()?;
    Some((meta.dev(), meta.ino()))
}

/// Whether `a`'s and `b`'s files of kind `op` are one open file (one device and
/// inode).
#[cfg(unix)]
unsafe fn same_open_file(a: &Connection, b: &Connection, op: c_int) -> bool {
    let (Some(fa), Some(fb)) = (file(a, op), file(b, op)) else {
        return false;
    };
    match (descriptor(a, fa), descriptor(b, fb)) {
        (Some(da), Some(db)) => match (identity(da), identity(db)) {
            (Some(ia), Some(ib)) => ia == ib,
            _ => false,
        },
        _ => false,
    }
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

    /// Whether a connection opened after copies of `names` (the journal's files)
    /// were renamed over them is proven to read what one opened before reads.
    fn proven_after_renaming_over(names: &[&str]) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.db");
        let _w = journal(&p, 50);
        let a = reader(&p);
        for name in names {
            let copy = dir.path().join(format!("copy-{name}"));
            std::fs::copy(dir.path().join(name), &copy).unwrap();
            std::fs::rename(&copy, dir.path().join(name)).unwrap();
        }
        same_file(&a, &reader(&p))
    }

    #[test]
    fn a_file_renamed_over_the_journal_between_the_opens_is_not() {
        // A copy of the file and its WAL, renamed over both (helper-47's move).
        assert!(!proven_after_renaming_over(&["j.db", "j.db-wal"]));
    }

    #[test]
    fn a_file_renamed_over_the_journal_alone_is_not() {
        // The WAL left as it is, so the WAL's check alone cannot tell.
        assert!(!proven_after_renaming_over(&["j.db"]));
    }

    #[test]
    fn a_wal_renamed_over_the_journals_with_its_bytes_is_not() {
        // The same bytes under a new inode: they could be changed after any
        // comparison (helper-58 did, and verify said intact).
        assert!(!proven_after_renaming_over(&["j.db-wal"]));
    }

    #[test]
    fn a_wal_changed_and_renamed_over_the_journals_is_not() {
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
            check.handle.join().unwrap().unwrap(),
            s.integrity_problems(10).unwrap()
        );
    }
}
