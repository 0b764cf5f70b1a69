//! Journal trust through the `cairn` binary: every recorded transition is signed
//! with the user's key, `journal key` prints it, `journal anchor` signs the head,
//! and `journal verify` takes both back.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

pub(crate) fn cairn(args: &[&str], db: &Path, key: &Path, stdin: &str) -> (i32, Value, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(db)
        .arg("--signing-key")
        .arg(key)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A verb that reads no stdin may exit before the write: a broken pipe then
    // is the verb's business, not the runner's.
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) fn prepare(db: &Path, key: &Path, n: u32) {
    let ep = crate::reliability::episode(n);
    let input = serde_json::json!({"mode": "park", "anchor_bead": "bd-1", "episode_id": ep, "intent_id": "park-00000000-0000-4000-8000-000000000001", "prior_receipts": []});
    let (code, out, err) = cairn(&["park", "prepare-attempt"], db, key, &input.to_string());
    assert_eq!(code, 0, "{out} {err}");
}

#[test]
fn what_the_cli_records_is_signed_by_the_users_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("config/cairn/signing.key");
    for n in [1, 2, 1] {
        prepare(&db, &key, n);
    }
    // The key was created on first use, owner-only, and prints its public half.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let (code, k, _) = cairn(&["journal", "key"], &db, &key, "");
    assert_eq!(code, 0);
    let public = k["public_key"].as_str().unwrap().to_owned();
    assert_eq!(public.len(), 64);

    let (code, r, _) = cairn(
        &["journal", "verify", "--trusted-key", &public],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["signing"]["status"], "signed");
    assert_eq!(r["signing"]["signed"], 3);

    // Another user's key is not trusted for this journal.
    let other = dir.path().join("other.key");
    let (_, o, _) = cairn(&["journal", "key"], &db, &other, "");
    let (code, r, _) = cairn(
        &[
            "journal",
            "verify",
            "--trusted-key",
            o["public_key"].as_str().unwrap(),
        ],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 5, "{r}");
    assert_eq!(r["problems"][0]["kind"], "untrusted-key");

    // A malformed trusted key is bad input, naming the field.
    let (code, e, _) = cairn(
        &["journal", "verify", "--trusted-key", "abc"],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 2);
    assert_eq!(e["error"]["field"], "trusted_key");
}

#[test]
fn a_signed_anchor_detects_a_truncated_tail() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("k/signing.key");
    prepare(&db, &key, 1);
    prepare(&db, &key, 2);
    let (code, a, _) = cairn(&["journal", "anchor"], &db, &key, "");
    assert_eq!(code, 0, "{a}");
    let anchor = a["anchor"].as_str().unwrap().to_owned();
    assert!(anchor.starts_with("cairn-anchor-v1:2:"), "{anchor}");
    // Later appends keep the anchor valid.
    prepare(&db, &key, 3);
    let (code, r, _) = cairn(
        &["journal", "verify", "--expect-head", &anchor],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["tail"], "anchored");
    // A forged anchor (another head under the same key) is exit 5, named.
    let mut parts: Vec<&str> = anchor.split(':').collect();
    parts[1] = "1";
    let forged = parts.join(":");
    let (code, r, _) = cairn(
        &["journal", "verify", "--expect-head", &forged],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 5, "{r}");
    assert!(r["problems"].to_string().contains("anchor-forged"), "{r}");
    // Truncate the journal back to its first transition: only the anchor tells.
    let c = rusqlite::Connection::open(&db).unwrap();
    crate::support::tamper(
        &c,
        "DROP TRIGGER IF EXISTS signatures_append_only_delete; DELETE FROM signatures WHERE transition_id > 1; DELETE FROM events WHERE seq > 1; DELETE FROM transitions WHERE id > 1;",
    );
    drop(c);
    let (code, r, _) = cairn(&["journal", "verify"], &db, &key, "");
    assert_eq!(code, 0, "without an anchor a truncated tail verifies: {r}");
    let (code, r, _) = cairn(
        &["journal", "verify", "--expect-head", &anchor],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 5, "{r}");
    assert_eq!(r["problems"][0]["kind"], "head-missing");
    // An empty journal has nothing to anchor; a bad anchor is bad input.
    let (code, e, _) = cairn(
        &["journal", "verify", "--expect-head", "cairn-anchor-v1:x"],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 2);
    assert_eq!(e["error"]["rule"], "anchor-format");
}

#[test]
fn journal_log_refuses_an_invalid_stream_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("signing.key");
    prepare(&db, &key, 1);
    let (code, e, _) = cairn(
        &["journal", "log", "--stream", "not a stream"],
        &db,
        &key,
        "",
    );
    assert_eq!(code, 2, "{e}");
    assert_eq!(e["error"]["field"], "stream");
}

#[test]
fn a_writer_refuses_a_journal_others_may_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("signing.key");
    prepare(&db, &key, 1);
    crate::support::checkpoint(&db);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let before = std::fs::read(&db).unwrap();
        let ep = crate::reliability::episode(2);
        let input = serde_json::json!({"mode": "park", "anchor_bead": "bd-1", "episode_id": ep, "intent_id": "park-00000000-0000-4000-8000-000000000001", "prior_receipts": []});
        let (code, e, _) = cairn(&["park", "prepare-attempt"], &db, &key, &input.to_string());
        assert_eq!(code, 1, "{e}");
        assert_eq!(e["error"]["kind"], "loose-permissions");
        assert_eq!(e["error"]["mode"], "644");
        assert_eq!(std::fs::read(&db).unwrap(), before);
        // A reader still verifies it, and says so.
        let (code, r, _) = cairn(&["journal", "verify"], &db, &key, "");
        assert_eq!(code, 0, "{r}");
        assert_eq!(r["loose_permissions"], "644");
    }
}

#[test]
fn journal_show_prints_a_transition_with_its_evidence_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("signing.key");
    prepare(&db, &key, 1);
    let (code, v, _) = cairn(&["journal", "show", "1", "--format", "json"], &db, &key, "");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["transition"]["id"], 1);
    assert_eq!(v["transition"]["command_name"], "prepare-attempt");
    assert!(v["transition"]["command"].is_object(), "{v}");
    assert!(v["transition"]["context"]["now"].is_string(), "{v}");
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["event_type"], "attempt-prepared");
    assert!(events[0]["payload"].is_object());
    let (code, e, _) = cairn(&["journal", "show", "99"], &db, &key, "");
    assert_eq!(code, 2, "{e}");
    assert_eq!(e["error"]["field"], "transition");
}

#[test]
fn the_key_cannot_be_the_journal_or_its_sidecars_and_anchors_need_a_sound_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("signing.key");
    prepare(&db, &key, 1);
    std::fs::create_dir(dir.path().join("k")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("k/up")).unwrap();
    for side in [
        "journal.db",
        "journal.db-wal",
        "journal.db-shm",
        "journal.db-journal",
        // Spelled otherwise (helper-75: a comparison of the text let these by).
        "k/../journal.db-wal",
        "k/up/journal.db",
        "./k/up/journal.db-shm",
    ] {
        let ep = crate::reliability::episode(2);
        let input = serde_json::json!({"mode": "park", "anchor_bead": "bd-1", "episode_id": ep, "intent_id": "park-00000000-0000-4000-8000-000000000001", "prior_receipts": []});
        let (code, e, _) = cairn(
            &["park", "prepare-attempt"],
            &db,
            &dir.path().join(side),
            &input.to_string(),
        );
        assert_eq!(code, 2, "{side}: {e}");
        assert_eq!(e["error"]["rule"], "key-not-journal");
    }
    // A journal that does not verify gets no anchor.
    let c = rusqlite::Connection::open(&db).unwrap();
    crate::support::tamper(
        &c,
        "UPDATE events SET payload = replace(payload, 'bd-1', 'bd-2')",
    );
    drop(c);
    let (code, r, _) = cairn(&["journal", "anchor"], &db, &key, "");
    assert_eq!(code, 5, "{r}");
}

/// A verb that records nothing never reads or creates the signing key — not on
/// refused input, not on a verdict it only prints; the first append creates it.
#[test]
fn only_an_append_touches_the_signing_key() {
    let t = crate::support::TempJournal::new();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("keys/signing.key");
    let (code, out, _) = cairn(&["park", "check"], &t.path(), &key, "{}");
    assert_eq!(
        (code, out["error"]["field"].as_str()),
        (2, Some("schema_version")),
        "{out}"
    );
    let (code, out, _) = cairn(&["park", "prepare-attempt"], &t.path(), &key, "");
    assert_eq!(code, 2, "{out}");
    let (code, out, _) = cairn(&["saga", "scan"], &t.path(), &key, "");
    assert_eq!(code, 0, "{out}");
    assert!(
        !key.parent().unwrap().exists(),
        "a verb that recorded nothing made {}",
        key.display()
    );
    assert!(
        !t.path().exists(),
        "nothing was recorded, so no journal either"
    );
    // The first append creates it, and signs with it.
    prepare(&t.path(), &key, 1);
    assert!(key.exists(), "the first append creates the key");
    let (_, k, _) = cairn(&["journal", "key"], &t.path(), &key, "");
    let public = k["public_key"].as_str().unwrap_or_default().to_owned();
    let (code, r, _) = cairn(
        &["journal", "verify", "--trusted-key", &public],
        &t.path(),
        &key,
        "",
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["signing"]["status"], "signed");
    assert_eq!(r["signing"]["signed"], 1);
}

/// A copy from a journal that fails verify is refused (exit 5, `copied: false`)
/// before the target is opened: no target journal is left behind.
#[test]
fn a_copy_of_a_journal_that_fails_verify_creates_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let key = dir.path().join("signing.key");
    prepare(&db, &key, 1);
    prepare(&db, &key, 2);
    let conn = rusqlite::Connection::open(&db).unwrap();
    crate::support::tamper(&conn, "UPDATE events SET payload = '{}' WHERE seq = 1");
    drop(conn);
    let to = dir.path().join("copy.db");
    let (from, target) = (db.to_str().unwrap(), to.to_str().unwrap());
    let (code, out, _) = cairn(
        &["journal", "copy", "--from", from, "--to", target],
        &db,
        &key,
        "",
    );
    assert_eq!(
        (code, &out["copy"]["copied"]),
        (5, &serde_json::json!(false)),
        "{out}"
    );
    assert!(!to.exists(), "a refused copy created its target");
}

/// `journal verify` where the system starts no thread (a process limit): every
/// page is checked on the walk's own thread, with the same findings
/// (helper-48: it panicked, exit 101). Run as `nobody` when the tests run as
/// root (root is not held to the limit).
#[test]
fn verify_where_no_thread_can_start_finds_the_same() {
    use cairn::journal::{Journal, Options, SigningKey};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let options = Options {
        signing_key: Some(SigningKey::from_seed([9; 32])),
        ..Options::default()
    };
    let mut j = Journal::open(&db, &options).unwrap();
    let batch: Vec<_> = (0..4200u64)
        .map(|t| crate::journal::append("ticket/many", t, &["{\"n\":1}"], None))
        .collect();
    j.append_batch(&batch).unwrap();
    drop(j);
    crate::support::tamper(
        &rusqlite::Connection::open(&db).unwrap(),
        "DROP TRIGGER signatures_append_only_update;
         UPDATE signatures SET signature = (SELECT signature FROM signatures WHERE transition_id = 4099)
         WHERE transition_id = 4100;",
    );
    let problems = |limited: bool| -> (i32, Value) {
        let bin = dir.path().join("cairn");
        if !bin.exists() {
            std::fs::copy(env!("CARGO_BIN_EXE_cairn"), &bin).unwrap();
        }
        let mut cmd = Command::new(if limited {
            "prlimit"
        } else {
            bin.to_str().unwrap()
        });
        if limited {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                use std::os::unix::fs::PermissionsExt;
                for p in [dir.path(), &bin] {
                    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
                }
                // SAFETY: a NUL-terminated name; the entry is read at once.
                let nobody = unsafe { libc::getpwnam(c"nobody".as_ptr()).as_ref() }
                    .map(|pw| (pw.pw_uid, pw.pw_gid))
                    .expect("a `nobody` user");
                std::os::unix::fs::chown(&db, Some(nobody.0), Some(nobody.1)).unwrap();
                cmd = Command::new("setpriv");
                cmd.args([
                    "--reuid=nobody",
                    "--regid=nogroup",
                    "--clear-groups",
                    "prlimit",
                ]);
            }
            cmd.arg("--nproc=1").arg(&bin);
        }
        let out = cmd
            .args(["journal", "verify", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap_or(-1), report["problems"].clone())
    };
    let free = problems(false);
    assert_eq!(free.0, 5, "{:?}", free.1);
    assert_eq!(free.1.as_array().map(Vec::len), Some(1), "{:?}", free.1);
    assert_eq!(free.1[0]["transition_id"], 4100);
    assert_eq!(problems(true), free);
}
