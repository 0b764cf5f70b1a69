//! A read transaction judges its snapshot through the schema that snapshot
//! holds: the walk's, and a standalone structural check's (helper-84,
//! helper-85), whichever path the check takes.

use std::ffi::{c_char, c_uint, c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rusqlite::ffi;

use super::SqliteStore;
use crate::pages::tests::big;
use crate::{Journal, Location, Options};

/// Swaps the root pages of the events' `(stream, version)` index and the
/// (empty) idempotency index in one commit: page 1 alone changes, and the
/// schema cookie does not (SQLite reloads a cached schema only when it moves).
pub(super) fn swap_roots(c: &rusqlite::Connection) {
    let root = |n: &str| -> i64 {
        c.query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
            [n],
            |r| r.get(0),
        )
        .expect("root")
    };
    let cookie = |c: &rusqlite::Connection| -> i64 {
        c.query_row("PRAGMA schema_version", [], |r| r.get(0))
            .expect("cookie")
    };
    let before = cookie(c);
    let (a, b) = (
        root("sqlite_autoindex_events_1"),
        root("transitions_idempotency"),
    );
    c.execute_batch(&format!(
        "PRAGMA writable_schema=ON; BEGIN IMMEDIATE;
         UPDATE sqlite_schema SET rootpage = {b} WHERE name = 'sqlite_autoindex_events_1';
         UPDATE sqlite_schema SET rootpage = {a} WHERE name = 'transitions_idempotency';
         COMMIT; PRAGMA writable_schema=OFF;"
    ))
    .expect("swap");
    assert_eq!(cookie(c), before, "the cookie did not move");
}

/// `n` one-event transitions, and a connection keeping the WAL.
fn journal(p: &Path, n: u64) -> rusqlite::Connection {
    let batch: Vec<_> = (0..n).map(|v| big(v, 1)).collect();
    Journal::open(p, &Options::default())
        .expect("journal")
        .append_batch(&batch)
        .expect("fill");
    let hold = rusqlite::Connection::open(p).expect("hold");
    hold.execute_batch("PRAGMA wal_autocheckpoint=0")
        .expect("no checkpoint");
    hold
}

/// What runs as the walk's first statement after its `BEGIN` starts: the
/// attacker's commits, in the walk's own thread (so exactly there).
static AT_HAS_TABLE: Mutex<Option<Box<dyn FnMut() + Send>>> = Mutex::new(None);
static ARMED: AtomicBool = AtomicBool::new(false);

/// `SQLITE_TRACE_STMT`: a statement begins running (its `OP_Init`), after it
/// was prepared and before it opens a read transaction; `x` is its text.
unsafe extern "C" fn on_statement(
    _: c_uint,
    _: *mut c_void,
    _: *mut c_void,
    x: *mut c_void,
) -> i32 {
    // SAFETY: SQLite hands the statement's text, NUL-terminated, for the call.
    let sql = unsafe { CStr::from_ptr(x.cast::<c_char>()) }.to_string_lossy();
    if sql.contains("FROM sqlite_schema WHERE type = 'table' AND name")
        && ARMED.swap(false, Ordering::SeqCst)
    {
        if let Some(commit) = AT_HAS_TABLE.lock().expect("hook").as_mut() {
            commit();
        }
    }
    0
}

/// The walk's first statement after `BEGIN` is `has_table`. Two commits land
/// as it starts: a next event, then the index roots swapped (damage, the
/// cookie unchanged). Whichever state the walk read, verify must judge it:
/// the one before (intact, `n` events) or the one after (damaged, `n + 1`).
/// helper-85: the walk reloaded its schema in a read transaction of its own
/// before its snapshot began, read the state after with the schema before, and
/// said intact (in line, `n` = 100; the check beside, `n` = 3,000, read the
/// walk's schema and named it).
#[test]
fn a_walk_judges_the_state_it_read_by_that_states_schema() {
    for (n, read_write) in [(100, false), (100, true), (3000, false)] {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("j.db");
        let hold = journal(&p, n);
        let store = if read_write {
            SqliteStore::open(&p, &Options::default())
        } else {
            SqliteStore::open_read_only(&p, &Options::default())
        }
        .expect("store");
        // SAFETY: the connection's live handle; the callback lives for the
        // program and touches only the statics above.
        let rc = unsafe {
            ffi::sqlite3_trace_v2(
                store.conn.handle(),
                ffi::SQLITE_TRACE_STMT as c_uint,
                Some(on_statement),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, ffi::SQLITE_OK);
        let j = Journal::new(Location::Sqlite(p.clone()), Box::new(store), None);
        assert!(j.verify().expect("verify").ok, "{n}: intact before");
        let target = p.clone();
        let mut writer = Journal::open(&p, &Options::default()).expect("writer");
        *AT_HAS_TABLE.lock().expect("hook") = Some(Box::new(move || {
            writer.append(&big(n, 1)).expect("next event");
            swap_roots(&rusqlite::Connection::open(&target).expect("attacker"));
        }));
        ARMED.store(true, Ordering::SeqCst);
        let r = j.verify().expect("verify");
        assert!(!ARMED.load(Ordering::SeqCst), "{n}: the commits ran");
        *AT_HAS_TABLE.lock().expect("hook") = None;
        let now = Journal::open_read_only(&p, &Options::default())
            .expect("fresh")
            .verify()
            .expect("verify");
        assert!(
            !now.ok && now.events == n + 1,
            "{n}: the state after is damaged"
        );
        match r.events {
            e if e == n => assert!(r.ok, "{n} {read_write}: the state before is intact: {r:?}"),
            e if e == n + 1 => assert!(!r.ok, "{n} {read_write}: the state after is damaged"),
            e => panic!("{n}: walked {e} events"),
        }
        drop(hold);
    }
}

/// A standalone structural check on a long-lived handle reads the schema as it
/// is now (helper-85 F3: `Journal::integrity_problems` kept the handle's
/// schema from before a swap by hand, and named nothing).
#[test]
fn a_long_lived_handles_structural_check_reads_the_schema_as_it_is() {
    let dir = tempfile::tempdir().expect("dir");
    let p = dir.path().join("j.db");
    let hold = journal(&p, 20);
    for j in [
        Journal::open(&p, &Options::default()).expect("read-write"),
        Journal::open_read_only(&p, &Options::default()).expect("read-only"),
    ] {
        assert!(j.integrity_problems(10).expect("check").is_empty());
        swap_roots(&hold);
        let found = j.integrity_problems(10).expect("check");
        assert!(
            found
                .iter()
                .any(|l| l.contains("sqlite_autoindex_events_1")),
            "{found:?}"
        );
        swap_roots(&hold);
    }
}
