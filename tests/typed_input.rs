//! What a caller types is read as the people who read the journal take it
//! (helper-75's sweep of the input boundary): a value holding a character no one
//! can see, a round past the last number, a typed HEAD that is no commit, a
//! file that never ends — each refused with exit 2, naming the field and the
//! rule, the journal's bytes as they were; and a refusal leaves a pending
//! write-ahead log where another writer left it.

use std::path::Path;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::pr::{doc, PR};
use crate::support::saga::Thread;
use crate::support::TempJournal;

/// The rule and field a refusal names (a decision's `predicate`, an input's `rule`).
fn refusal(out: &Value) -> (String, String) {
    let v = &out["error"]["violations"][0];
    let rule = v["predicate"].as_str().or(v["rule"].as_str()).unwrap_or("");
    (
        rule.to_owned(),
        v["field"].as_str().unwrap_or("").to_owned(),
    )
}

/// Every byte of the journal's file and its log, as they lie (no checkpoint).
fn files(db: &Path) -> (Vec<u8>, Vec<u8>) {
    let wal = db.with_extension("db-wal");
    (
        std::fs::read(db).unwrap_or_default(),
        std::fs::read(wal).unwrap_or_default(),
    )
}

/// Runs `probe` on the journal at `db` and holds it to a refusal: exit 2 naming
/// `rule` and `field`, every byte of the journal's files as they were.
fn refused(db: &Path, what: &str, rule: &str, field: &str, probe: impl FnOnce() -> (i32, Value)) {
    let before = files(db);
    let (code, out) = probe();
    assert_eq!(code, 2, "{what}: {out}");
    assert_eq!(refusal(&out), (rule.into(), field.into()), "{what}: {out}");
    assert_eq!(files(db), before, "{what} wrote");
}

#[test]
fn a_saga_refuses_what_a_person_could_not_read_as_typed() {
    let t = Thread::new();
    t.save_at_work();
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["adjust", "--directive", "pause_after:phase\u{200B}-2"],
            "invisible-character",
            "directive",
        ),
        (
            &["adjust", "--directive", "pause_after:-x"],
            "option-like",
            "directive",
        ),
        (
            &["boundary", "--boundary", "phase-2 "],
            "surrounding-space",
            "boundary",
        ),
        (
            &["boundary", "--boundary", "phase\u{200B}-2"],
            "invisible-character",
            "boundary",
        ),
    ];
    for (args, rule, field) in cases {
        refused(&t.journal.path(), &format!("{args:?}"), rule, field, || {
            t.s(args[0], &args[1..])
        });
    }
    let saves: &[(&[&str], &str, &str)] = &[
        (
            &["--branch", "fe\u{200B}at"],
            "invisible-character",
            "branch",
        ),
        (&["--branch", "feat\nx"], "invisible-character", "branch"),
        (&["--branch=--foo"], "option-like", "branch"),
        (&["--head-sha", "abc"], "full-head", "head_sha"),
        (
            &["--head-sha", "83C10A6E2A169B34085F62360C37DF59C7CE99C6"],
            "full-head",
            "head_sha",
        ),
        (
            &["--next-step", "x\u{202E}y"],
            "invisible-character",
            "next_step",
        ),
        (
            &["--checks-run", "a|a\u{200B}"],
            "invisible-character",
            "checks_run[1]",
        ),
        (&["--rounds-seen", "1|1"], "round-number", "rounds_seen[1]"),
        (
            &["--rounds-seen", "4294967295"],
            "round-number",
            "rounds_seen[0]",
        ),
        (&["--rounds-seen", " 1"], "round-number", "rounds_seen"),
        (
            &["--gate-verdict", "x:done:y", "--gate-verdict", "x:failed:y"],
            "gate-verdict",
            "gate_verdict[1]",
        ),
    ];
    for (extra, rule, field) in saves {
        let mut args = vec!["saga", "save", "--id", "issue-42"];
        args.extend_from_slice(extra);
        refused(
            &t.journal.path(),
            &format!("{extra:?}"),
            rule,
            field,
            || t.cairn(&args),
        );
    }
    // The highest round leaves room for the next: recorded, the next one counted.
    let (code, out) = t.cairn(&[
        "saga",
        "save",
        "--id",
        "issue-42",
        "--rounds-seen",
        "4294967294",
    ]);
    assert_eq!(
        (code, &out["next_round"]),
        (0, &json!(4294967295u32)),
        "{out}"
    );
}

#[test]
fn a_pr_loop_takes_an_operator_a_person_reads_and_no_round_past_the_last() {
    let t = TempJournal::new();
    let db = t.path();
    let (code, out, _) = cairn(
        &["pr", "observe"],
        &doc("draft", "pr").to_string(),
        Some(&db),
    );
    assert_eq!((code, &out["state"]), (0, &json!("ready-offered")), "{out}");
    let confirm = |operator: &str| {
        let args = [
            "pr",
            "confirm",
            "--what",
            "ready",
            &format!("--operator={operator}"),
            "--pr",
            PR,
        ];
        let (code, out, _) = cairn(&args, "", Some(&db));
        (code, out)
    };
    for (operator, rule) in [
        ("\u{202E}bob", "invisible-character"),
        ("ali\u{200B}ce", "invisible-character"),
        ("bob\n", "invisible-character"),
        ("-x", "option-like"),
        (" bob", "surrounding-space"),
    ] {
        refused(&db, operator, rule, "operator", || confirm(operator));
    }
    let before = files(&db);
    let args = [
        "pr",
        "dispose",
        "--as",
        "paused",
        "--reason",
        "r\u{202E}",
        "--operator",
        "carol",
        "--pr",
        PR,
    ];
    let (code, out, _) = cairn(&args, "", Some(&db));
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        refusal(&out),
        ("invisible-character".into(), "reason".into()),
        "{out}"
    );
    assert_eq!(files(&db), before);
    // A round past the last number: refused at its place, nothing written.
    let mut d = doc("changes-requested", "merge");
    d["saga_rounds_seen"] = json!([4294967295u32]);
    let (code, out, _) = cairn(&["pr", "observe"], &d.to_string(), Some(&db));
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        refusal(&out),
        ("rounds-seen".into(), "saga_rounds_seen[0]".into()),
        "{out}"
    );
    assert_eq!(files(&db), before);
    assert_eq!(confirm("bob").0, 0, "a plain name confirms");
}

#[test]
fn file_inputs_are_regular_files_of_bounded_size() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, vec![b'#'; 16 * 1024 * 1024 + 1]).expect("a large file");
    for (spec, rule) in [
        (Path::new("/dev/zero"), "regular-file"),
        (fifo.as_path(), "regular-file"),
        (big.as_path(), "input-size"),
    ] {
        // A fifo with no writer: the read must not wait for one (a hang fails
        // the test by its harness's timeout, never passes it).
        let (code, out, _) = cairn(
            &["work", "validate", "--spec", spec.to_str().expect("UTF-8")],
            "",
            None,
        );
        assert_eq!(code, 2, "{spec:?}: {out}");
        assert_eq!(
            refusal(&out),
            (rule.into(), "spec".into()),
            "{spec:?}: {out}"
        );
    }
    let t = Thread::new();
    t.save_at_work();
    refused(&t.journal.path(), "qa", "regular-file", "record", || {
        t.s("qa", &["--scenario", "a=passed", "--record", "/dev/zero"])
    });
}

/// A refused command leaves the journal's files as it found them, a log another
/// writer left pending included: it opened the file to decide, and SQLite
/// checkpoints the log into the file when the last connection closes (helper-75:
/// the refusal rewrote the main file and removed the log).
#[test]
fn a_refusal_leaves_a_pending_log_where_it_was() {
    let t = Thread::new();
    t.save_at_work();
    let db = t.journal.path();
    // With no log pending, a refusal leaves the one file it found (helper-76: it
    // left an empty `-wal` and a `-shm` beside it).
    let sidecars = || {
        ["-wal", "-shm"].map(|s| std::path::PathBuf::from(format!("{}{s}", db.display())).exists())
    };
    assert_eq!(sidecars(), [false, false], "the writer closed last");
    let alone = std::fs::read(&db).unwrap();
    let (code, out) = t.s("adjust", &["--directive", "bogus"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(sidecars(), [false, false], "no file beside it");
    assert_eq!(std::fs::read(&db).unwrap(), alone);
    // A reader that never checkpoints stays open while cairn writes, so the
    // write stays in the log when both have closed.
    let reader = rusqlite::Connection::open(&db).expect("a reader opens");
    reader
        .set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .expect("no checkpoint on close");
    let n: i64 = reader
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .expect("it reads");
    assert!(n > 0);
    let (code, out) = t.s("adjust", &["--directive", "drain"]);
    assert_eq!(code, 0, "{out}");
    drop(reader);
    let before = files(&db);
    assert!(!before.1.is_empty(), "the write is pending in the log");
    let (code, out) = t.s("adjust", &["--directive", "bogus"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        files(&db),
        before,
        "the refusal left both files as they were"
    );
    // The next accepted write still checkpoints as it closes.
    let (code, out) = t.s("adjust", &["--directive", "halt"]);
    assert_eq!(code, 0, "{out}");
    assert_ne!(files(&db), before);
}

/// A work session, and a ship run's review detail, are read as a person reads
/// them (helper-75: `s\u{200B}1` was a session that reads as `s1`; a detail
/// with U+202E was recorded).
#[test]
fn a_session_and_a_review_detail_are_visible_text() {
    let t = TempJournal::new();
    let db = t.path();
    for verb in ["ready", "status"] {
        let args = [
            "work",
            verb,
            "--spec",
            "/nonexistent/spec.yaml",
            "--session",
            "s\u{200B}1",
        ];
        let (code, out, _) = cairn(&args, "", Some(&db));
        assert_eq!(code, 2, "{verb}: {out}");
        assert_eq!(
            refusal(&out),
            ("invisible-character".into(), "session".into()),
            "{verb}: {out}"
        );
    }
    let repo = crate::support::ship_repo::Repo::new();
    let (code, out) = repo.open_with(&[]);
    assert_eq!(code, 0, "the plain open: {out}");
    let other = crate::support::ship_repo::Repo::new();
    let path = other.journal.path();
    refused(
        &path,
        "open",
        "invisible-character",
        "review_detail",
        || other.open_with(&["--review-detail", "ok\u{202E}"]),
    );
}

/// The rest of a thread's typed values (helper-76): an override's operator and
/// rationale (a 3 MB one through `exec` too), a doc review's source, a release's
/// reason; a boundary a pause waits for and a gate a verdict names have one
/// spelling (printable ASCII: NFD and fullwidth spellings were crossed as other
/// boundaries and counted as other gates).
#[test]
fn every_saga_command_reads_its_typed_values_and_compared_names_have_one_spelling() {
    let t = Thread::new();
    t.save_at_work();
    let big = json!({"command": "override", "gate": "doc-review", "rationale": "a".repeat(3_000_000), "operator": "ana"});
    let big = big.to_string();
    let cases: Vec<(Vec<&str>, &str, &str, &str)> = vec![
        (
            vec![
                "override",
                "--gate",
                "doc-review",
                "--rationale",
                "ok",
                "--operator=-ana",
            ],
            "",
            "option-like",
            "operator",
        ),
        (
            vec![
                "override",
                "--gate",
                "doc-review",
                "--rationale",
                "ok\u{202E}",
                "--operator",
                "ana",
            ],
            "",
            "invisible-character",
            "rationale",
        ),
        (
            vec![
                "doc-review",
                "--unresolved-p0-p1",
                "0",
                "--source",
                "src\u{202E}",
            ],
            "",
            "invisible-character",
            "source",
        ),
        (
            vec![
                "release",
                "--destination",
                "none",
                "--absence-reason",
                "plan\u{7}",
            ],
            "",
            "invisible-character",
            "absence_reason",
        ),
        (
            vec!["adjust", "--directive", "pause_after:caf\u{e9}"],
            "",
            "ascii-name",
            "directive",
        ),
        (
            vec!["boundary", "--boundary", "cafe\u{301}"],
            "",
            "normal-form",
            "boundary",
        ),
        (
            vec!["boundary", "--boundary", "\u{ff50}hase-2"],
            "",
            "ascii-name",
            "boundary",
        ),
        (
            vec!["boundary", "--boundary", "\u{301}"],
            "",
            "combining-start",
            "boundary",
        ),
        (vec![], &big, "length", "rationale"),
    ];
    for (args, stdin, rule, field) in &cases {
        refused(&t.journal.path(), &format!("{args:?}"), rule, field, || {
            if args.is_empty() {
                let (code, out, _) = cairn(
                    &[
                        "exec",
                        "saga",
                        "saga/issue-42",
                        "--db",
                        t.journal.path().to_str().unwrap(),
                    ],
                    stdin,
                    None,
                );
                (code, out)
            } else {
                t.s(args[0], &args[1..])
            }
        });
    }
    for (verdicts, rule, field) in [
        (
            ["review:done:x", "review :blocked:y"],
            "surrounding-space",
            "gate_verdict[1]",
        ),
        (
            ["review:done:x", "revie\u{301}w:blocked:y"],
            "normal-form",
            "gate_verdict[1]",
        ),
        (
            ["Review:done:x", "review:blocked:y"],
            "gate-verdict",
            "gate_verdict[1]",
        ),
    ] {
        let [a, b] = verdicts;
        let save = [
            "saga",
            "save",
            "--id",
            "issue-42",
            "--gate-verdict",
            a,
            "--gate-verdict",
            b,
        ];
        refused(
            &t.journal.path(),
            &format!("{verdicts:?}"),
            rule,
            field,
            || t.cairn(&save),
        );
    }
    // The plain spellings are taken.
    let (code, out) = t.s("adjust", &["--directive", "pause_after:phase-2"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = t.s("boundary", &["--boundary", "phase-2"]);
    assert_eq!(
        (code, out["events"][0].as_str()),
        (4, Some("paused-at-boundary")),
        "{out}"
    );
}

/// A PR loop's tier rungs are found by name, and a claim's new grant names its
/// owner and claim id in one spelling (helper-76: `-a` + U+200B as the current
/// tier; a lone U+0301 as owner and claim id; an NFD owner beside its NFC twin).
#[test]
fn tier_rungs_and_claim_names_have_one_spelling() {
    let t = TempJournal::new();
    let db = t.path();
    let mut d = doc("draft", "merge");
    d["tiers"] = json!({"ladder": ["-a\u{200B}", "b"], "current": "-a\u{200B}", "ceiling": "b"});
    let (code, out, _) = cairn(&["pr", "observe"], &d.to_string(), Some(&db));
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        refusal(&out),
        ("invisible-character".into(), "tiers.ladder[0]".into()),
        "{out}"
    );
    for (owner, rule) in [
        ("\u{301}", "combining-start"),
        ("jose\u{301}", "normal-form"),
    ] {
        let args = [
            "claim",
            "acquire",
            "--resource",
            "saga/task-x",
            "--owner",
            owner,
            "--claim-id",
            "c1",
            "--ttl",
            "600",
        ];
        refused(&db, owner, rule, "owner", || {
            let (code, out, _) = cairn(&args, "", Some(&db));
            (code, out)
        });
    }
    let args = [
        "claim",
        "acquire",
        "--resource",
        "saga/task-x",
        "--owner",
        "jos\u{e9}",
        "--claim-id",
        "c1",
        "--ttl",
        "600",
    ];
    let (code, out, _) = cairn(&args, "", Some(&db));
    assert_eq!(code, 0, "the composed spelling: {out}");
}
