//! A transition record's command and context stored packed (journal schema 3):
//! a journal written under schema 2 — the fixture is one park walk recorded by
//! the build before packing — opens, migrates, reads, verifies and audits as
//! before; what is written after is packed, and reads back byte for byte.

use std::process::Command;

use serde_json::Value;

/// `cairn ARGS` on `db`: exit code and stdout as JSON (the last line).
fn cairn(db: &std::path::Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_SIGNING_KEY")
        .output()
        .expect("cairn runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("null");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(last).unwrap_or(Value::Null),
    )
}

/// How each row's command is stored, in order: `text` or `blob`.
fn storage(db: &std::path::Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).expect("raw open");
    let mut s = c
        .prepare("SELECT typeof(command) FROM transitions ORDER BY id")
        .expect("prepare");
    s.query_map([], |r| r.get(0))
        .expect("query")
        .map(Result::unwrap)
        .collect()
}

/// One park walk (`examples/park-episode.sh`, the README's main job) on `db`.
fn walk(db: &std::path::Path) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/park-episode.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_DB", db)
        .env_remove("CAIRN_SIGNING_KEY")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn user_version(db: &std::path::Path) -> i64 {
    rusqlite::Connection::open(db)
        .expect("raw open")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version")
}

#[test]
fn a_schema_2_journal_migrates_and_what_follows_is_packed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/schema-2-park-walk.db"
        ),
        &db,
    )
    .unwrap();
    // A checkout writes the fixture with the umask's mode (git keeps no
    // mode bits but the executable one); cairn writes only owner-only files.
    std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    assert_eq!(user_version(&db), 2);
    // A reader never migrates: it reads the old rows as they are.
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!((code, out["ok"].as_bool()), (0, Some(true)), "{out}");
    let (code, out) = cairn(
        &db,
        &["state", "park/ep-a8d24925-429e-4c77-80cf-ef49fc098f9d"],
    );
    assert_eq!(
        (code, out["state_name"].as_str()),
        (0, Some("safe-to-close")),
        "{out}"
    );
    assert_eq!(user_version(&db), 2);
    // A writer migrates; then another park walk on the same journal.
    walk(&db);
    assert_eq!(user_version(&db), 3);
    // The old rows stay text; of the walk's, the commands that carry
    // kilobytes of observation are packed, the short `prepare-attempt` is not.
    let stored = storage(&db);
    assert_eq!(stored.len(), 10, "{stored:?}");
    assert!(stored[..5].iter().all(|s| s == "text"), "{stored:?}");
    assert_eq!(
        stored[5..],
        ["text", "blob", "blob", "blob", "blob"],
        "{stored:?}"
    );
    // Both read back as recorded: the chain verifies and every transition, old
    // and new, is re-decided from its command and context.
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!((code, out["ok"].as_bool()), (0, Some(true)), "{out}");
    let (code, out) = cairn(&db, &["journal", "audit"]);
    assert_eq!((code, out["ok"].as_bool()), (0, Some(true)), "{out}");
    // The fixture's walk was decided under park rules 5: re-decided while they
    // were the build's, a `rules-changed` notice each since (the chain above
    // read their text back byte for byte); the new walk is re-decided.
    let findings = out["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["kind"] == "rules-changed"),
        "{out}"
    );
    assert_eq!(
        out["redecided"].as_u64().unwrap() + findings.len() as u64,
        10,
        "{out}"
    );
    assert!(out["redecided"].as_u64().unwrap() >= 5, "{out}");
    // What the log shows of a packed transition is its text.
    let (code, out) = cairn(&db, &["journal", "show", "10", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.to_string().contains("receipt_bytes"), "{out}");
}

/// A packed row damaged on disk (its trigger dropped, one byte flipped) is
/// reported by `verify` as unreadable and breaks the chain: exit 5, no panic;
/// the frame's checksum never lets it read as other text.
#[test]
fn a_damaged_packed_row_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    walk(&db);
    {
        let c = rusqlite::Connection::open(&db).expect("raw open");
        c.execute_batch("DROP TRIGGER transitions_append_only_update")
            .expect("drop the guard");
        let mut blob: Vec<u8> = c
            .query_row("SELECT command FROM transitions WHERE id = 3", [], |r| {
                r.get(0)
            })
            .expect("a packed command");
        blob[20] ^= 0xff;
        c.execute("UPDATE transitions SET command = ?1 WHERE id = 3", [blob])
            .expect("tamper");
    }
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!(code, 5, "{out}");
    let kinds: Vec<&str> = out["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"unreadable"), "{out}");
}

/// A file that says it is older than packed records but holds them fails
/// verification: a build of that version would open it and not read them
/// (helper-88 F6: `user_version` lowered from 3 to 2 verified clean). The
/// same file at its own version verifies.
#[test]
fn a_lowered_schema_version_over_packed_records_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    walk(&db);
    assert!(storage(&db).iter().any(|s| s == "blob"));
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!((code, out["ok"].as_bool()), (0, Some(true)), "{out}");
    let set = |v: i64| {
        rusqlite::Connection::open(&db)
            .expect("raw open")
            .execute_batch(&format!("PRAGMA user_version = {v}"))
            .expect("set");
    };
    set(2);
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!(code, 5, "{out}");
    assert!(
        out.to_string()
            .contains("the file says schema version 2, older than packed transition records (3), yet holds 4 packed"),
        "{out}"
    );
    // A writer does not migrate it back to 3 (which would erase the trace):
    // it refuses, and the file stays as it is.
    let before = std::fs::read(&db).unwrap();
    let (code, out) = cairn(&db, crate::support::ACQUIRE);
    assert_eq!(code, 5, "{out}");
    assert!(
        out.to_string().contains("its `user_version` was changed"),
        "{out}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(user_version(&db), 2);
    set(3);
    let (code, out) = cairn(&db, &["journal", "verify"]);
    assert_eq!((code, out["ok"].as_bool()), (0, Some(true)), "{out}");
}
