//! What a hostile caller tried against claims and fencing (issue #24), each a way
//! past a guard found by trying it, now refused on real parts: a retried acquire
//! that read back a lease someone else had taken since; a retry of an act that
//! skipped the fence; git run before a fence refusal; leases on spellings no verb
//! acts on (an upper-case episode, a PR URL with its default port, an issue number
//! with a leading zero, an unknown machine, an empty segment); other spellings of a
//! PR URL or an issue number reaching an unfenced stream; a claim recorded through
//! `cairn exec` around the claim verbs' checks; `claim show` reading a mistyped
//! `--db` as "free"; a `file:` URI or `:memory:` as `--db`; and a closed stderr
//! turning a recorded grant into a panic (exit 101).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::fixtures::BuildRecord;
use crate::support::git::git;
use crate::support::TempJournal;

fn acquire(db: &Path, resource: &str, owner: &str, id: &str, key: Option<&str>) -> (i32, Value) {
    let mut args = vec![
        "claim",
        "acquire",
        "--resource",
        resource,
        "--owner",
        owner,
        "--claim-id",
        id,
        "--ttl",
        "600",
    ];
    if let Some(k) = key {
        args.extend(["--idempotency-key", k]);
    }
    let (code, out, _) = cairn(&args, "", Some(db));
    (code, out)
}

fn release(db: &Path, resource: &str, id: &str, token: &str) -> (i32, Value) {
    let args = [
        "claim",
        "release",
        "--resource",
        resource,
        "--claim-id",
        id,
        "--token",
        token,
    ];
    let (code, out, _) = cairn(&args, "", Some(db));
    (code, out)
}

const THREAD: &str = "saga/issue-7";

#[test]
fn a_retried_acquire_answers_with_what_holds_now() {
    let t = TempJournal::new();
    let db = t.path();
    let (code, first) = acquire(&db, THREAD, "agent-a", "ca", Some("KA"));
    assert_eq!((code, first["token"].as_u64()), (0, Some(1)), "{first}");
    // Nothing moved: the retry is the first result.
    let (code, again) = acquire(&db, THREAD, "agent-a", "ca", Some("KA"));
    assert_eq!((code, again["token"].as_u64()), (0, Some(1)), "{again}");
    assert_eq!(release(&db, THREAD, "ca", "1").0, 0);
    let (code, b) = acquire(&db, THREAD, "agent-b", "cb", None);
    assert_eq!((code, b["token"].as_u64()), (0, Some(2)), "{b}");
    let before = t.bytes();
    // a's retry after b took the lease: refused, naming b, nothing written.
    let (code, stale) = acquire(&db, THREAD, "agent-a", "ca", Some("KA"));
    assert_eq!(code, 3, "{stale}");
    assert_eq!(stale["error"]["kind"], "claim-held", "{stale}");
    assert_eq!(stale["error"]["claim"]["holder"], "agent-b", "{stale}");
    assert_eq!(stale["error"]["claim"]["token"], 2, "{stale}");
    assert_eq!(t.bytes(), before);
}

#[test]
fn a_retry_of_an_act_is_fenced_like_the_act() {
    let t = TempJournal::new();
    let db = t.path();
    let save = |extra: &[&str]| {
        let mut args = vec![
            "saga",
            "save",
            "--saga-id",
            "issue-7",
            "--repo",
            "/nonexistent",
        ];
        args.extend_from_slice(extra);
        cairn(&args, "", Some(&db))
    };
    let (code, out, _) = save(&["--idempotency-key", "K1"]);
    assert_eq!(code, 0, "{out}");
    let (code, b) = acquire(&db, THREAD, "agent-b", "cb", None);
    assert_eq!(code, 0, "{b}");
    let before = t.bytes();
    for extra in [
        &["--idempotency-key", "K1"][..],
        &["--idempotency-key", "K1", "--fencing-token", "7"],
    ] {
        let (code, out, _) = save(extra);
        assert_eq!(code, 3, "{extra:?}: {out}");
        assert_eq!(out["error"]["claim"]["holder"], "agent-b", "{out}");
    }
    assert_eq!(t.bytes(), before);
    // The holder's retry is the first result.
    let (code, out, stderr) = save(&["--idempotency-key", "K1", "--fencing-token", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(stderr.contains("idempotency key matched"), "{stderr}");
    assert_eq!(t.bytes(), before);
}

#[test]
fn a_refused_act_runs_no_git_first() {
    let t = TempJournal::new();
    let db = t.path();
    let dir = tempfile::tempdir().expect("a temp dir");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    // A `git` first on PATH that logs every call, then runs the real one.
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .expect("sh runs")
            .stdout,
    )
    .expect("a path");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let log = dir.path().join("git.log");
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .expect("the wrapper");
    Command::new("chmod")
        .arg("755")
        .arg(&wrapper)
        .status()
        .expect("chmod");
    assert_eq!(acquire(&db, THREAD, "agent-b", "cb", None).0, 0);
    let before = t.bytes();
    let path = crate::support::observer_path_with(&bin);
    let repo_arg = repo.to_str().expect("utf-8");
    for args in [
        &["saga", "save", "--saga-id", "issue-7", "--repo", repo_arg][..],
        &[
            "saga",
            "pr-ready",
            "--saga-id",
            "issue-7",
            "--repo",
            repo_arg,
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .arg("--db")
            .arg(&db)
            .env(crate::support::OBSERVER_PATH_VAR, &path)
            .current_dir(&repo)
            .stdin(Stdio::null())
            .output()
            .expect("cairn runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stdout}");
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(calls, "", "{args:?} ran git before its refusal");
    }
    assert_eq!(t.bytes(), before);
    // The holder's save runs git through the same wrapper: the log is live.
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["saga", "save", "--saga-id", "issue-7", "--repo", repo_arg])
        .args(["--fencing-token", "1", "--db"])
        .arg(&db)
        .env(crate::support::OBSERVER_PATH_VAR, &path)
        .current_dir(&repo)
        .stdin(Stdio::null())
        .output()
        .expect("cairn runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        calls.contains("rev-parse"),
        "the holder's save read git: {calls:?}"
    );
}

#[test]
fn a_lease_names_only_a_stream_some_verb_acts_on() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(acquire(&db, THREAD, "agent-a", "c0", None).0, 0);
    let before = t.bytes();
    for (resource, rule) in [
        (
            "park/EP-0B1E6F5E-3C1A-4B7E-9D2A-5F1C2E3D4A5B",
            "canonical-resource",
        ),
        ("park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b/", "claimable"),
        ("park//ep-x", "claimable"),
        ("park/./ep-x", "claimable"),
        ("nosuchmachine/x", "known-machine"),
        ("pr-loop/github.com/O/R/pull/7", "canonical-resource"),
        ("pr-loop/github.com:443/o/r/pull/7", "canonical-resource"),
        ("pr-loop/github.com./o/r/pull/07", "canonical-resource"),
        ("saga/issue-042", "canonical-resource"),
        ("claim/saga/issue-7", "not-a-claim"),
        // Streams no ship run or work node has (helper-70, LOW).
        ("ship/x:y", "canonical-resource"),
        ("ship/a/b", "canonical-resource"),
        ("work-node/garbage", "canonical-resource"),
        ("work-node/0123456789ABCDEF:core", "canonical-resource"),
        ("work-node/0123456789abcdef:", "canonical-resource"),
    ] {
        let (code, out) = acquire(&db, resource, "agent-a", "c1", None);
        assert_eq!(code, 2, "{resource}: {out}");
        assert_eq!(out["error"]["field"], "resource", "{resource}: {out}");
        assert_eq!(out["error"]["rule"], rule, "{resource}: {out}");
    }
    assert_eq!(t.bytes(), before);
    // The spelling the verbs use is claimable.
    for (resource, id) in [
        ("pr-loop/github.com/o/r/pull/7", "c1"),
        ("ship/abc", "c2"),
        ("work-node/0123456789abcdef:core", "c3"),
    ] {
        let (code, out) = acquire(&db, resource, "agent-a", id, None);
        assert_eq!(code, 0, "{resource}: {out}");
    }
}

#[test]
fn every_spelling_of_a_pr_meets_its_fence() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(
        acquire(&db, "pr-loop/github.com/o/r/pull/7", "agent-a", "ca", None).0,
        0
    );
    let before = t.bytes();
    for url in [
        "https://github.com:443/o/r/pull/7",
        "https://github.com:0443/o/r/pull/7",
        "http://github.com:80/o/r/pull/7",
        "https://github.com./o/r/pull/7",
    ] {
        let args = [
            "pr",
            "confirm",
            "--pr",
            url,
            "--what",
            "ready",
            "--operator",
            "b",
        ];
        let (code, out, _) = cairn(&args, "", Some(&db));
        assert_eq!(code, 3, "{url}: {out}");
        assert_eq!(out["error"]["claim"]["holder"], "agent-a", "{url}: {out}");
    }
    assert_eq!(t.bytes(), before);
}

#[test]
fn an_issue_number_has_one_spelling() {
    let t = TempJournal::new();
    let args = [
        "saga",
        "save",
        "--kind",
        "issue",
        "--saga-id",
        "042",
        "--repo",
        "/nonexistent",
    ];
    let (code, out, _) = cairn(&args, "", Some(&t.path()));
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("saga-id")),
        "{out}"
    );
    for issue in ["42.0", "4.2e1", "\"042\"", "-42", "true"] {
        let mut record = BuildRecord::record(&["true"]);
        record["issue"] = serde_json::from_str(issue).expect("JSON");
        let b = BuildRecord::with(&serde_json::to_string_pretty(&record).expect("JSON"));
        let before = b.bytes();
        let (code, out) = b.run(&["--unit", "U1"]);
        assert_eq!(code, 2, "{issue}: {out}");
        assert_eq!(out["error"]["field"], "issue", "{issue}: {out}");
        assert_eq!(out["error"]["rule"], "issue-number", "{issue}: {out}");
        assert_eq!(b.bytes(), before, "{issue}: the record is unchanged");
        assert!(!b.journal.path().exists(), "{issue}: no journal");
    }
}

#[test]
fn a_claim_is_recorded_only_by_the_claim_verbs() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(acquire(&db, THREAD, "agent-a", "c0", None).0, 0);
    let before = t.bytes();
    let command = json!({"command": "acquire", "owner": "b", "claim_id": "cb", "ttl_seconds": 30});
    for stream in [
        "claim/claim/park/ep-x",
        "claim/saga/issue-7",
        "claim/saga/issue-8",
    ] {
        let (code, out, _) = cairn(&["exec", "claim", stream], &command.to_string(), Some(&db));
        assert_eq!(code, 2, "{stream}: {out}");
        assert_eq!(out["error"]["kind"], "recorded-by-cairn", "{stream}: {out}");
    }
    assert_eq!(t.bytes(), before);
}

#[test]
fn claim_show_without_a_journal_is_no_journal() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("typo.db");
    let (code, out, _) = cairn(&["claim", "show", "--resource", THREAD], "", Some(&db));
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("no-journal")),
        "{out}"
    );
    assert!(!db.exists(), "reading creates no journal");
    // A journal where the resource was never claimed answers `unclaimed`.
    let t = TempJournal::new();
    assert_eq!(
        acquire(&t.path(), "saga/issue-8", "agent-a", "c0", None).0,
        0
    );
    let (code, out, _) = cairn(
        &["claim", "show", "--resource", THREAD],
        "",
        Some(&t.path()),
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("unclaimed")),
        "{out}"
    );
}

#[test]
fn a_db_that_is_not_a_file_path_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let target = dir.path().join("j.db");
    for db in [
        format!("file:{}", target.display()),
        format!("file:{}?mode=rwc", target.display()),
        ":memory:".into(),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "claim",
                "acquire",
                "--resource",
                THREAD,
                "--owner",
                "a",
                "--claim-id",
                "c",
                "--ttl",
                "60",
                "--db",
                &db,
            ])
            .env_remove("CAIRN_DB")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("cairn runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(out.status.code(), Some(2), "{db}: {v}");
        assert_eq!(v["error"]["kind"], "not-a-journal", "{db}: {v}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
        assert!(left.is_empty(), "{db} left {left:?}");
    }
}

#[test]
fn a_closed_stderr_never_turns_a_recorded_grant_into_a_panic() {
    let t = TempJournal::new();
    for (owner, want) in [("agent-a", 0), ("agent-b", 3)] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "claim",
                "acquire",
                "--resource",
                THREAD,
                "--owner",
                owner,
                "--claim-id",
                owner,
                "--ttl",
                "60",
                "--db",
            ])
            .arg(t.path())
            .env_remove("CAIRN_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cairn runs");
        // The reader of stderr goes away before cairn writes its line.
        drop(child.stderr.take());
        let out = child.wait_with_output().expect("cairn exits");
        assert_eq!(out.status.code(), Some(want), "{owner}");
    }
}

#[test]
fn exec_records_only_onto_the_spelling_the_verbs_use() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(acquire(&db, THREAD, "agent-a", "c0", None).0, 0);
    let before = t.bytes();
    let drain = json!({"command": "adjust", "directive": "drain"}).to_string();
    for (machine, stream) in [
        ("park", "park/EP-0B1E6F5E-3C1A-4B7E-9D2A-5F1C2E3D4A5B"),
        ("park", "park/ep-x"),
        ("pr-loop", "pr-loop/github.com:443/o/r/pull/7"),
        ("pr-loop", "pr-loop/x"),
        ("saga", "saga/issue-07"),
        ("build-loop", "build-loop/issue-42:a/../b"),
    ] {
        let (code, out, _) = cairn(&["exec", machine, stream], &drain, Some(&db));
        assert_eq!(code, 2, "{stream}: {out}");
        assert_eq!(
            out["error"]["rule"], "canonical-resource",
            "{stream}: {out}"
        );
    }
    assert_eq!(t.bytes(), before);
    // Nor can a lease name them.
    for resource in [
        "build-loop/issue-07:U1",
        "build-loop/x",
        "build-loop/issue-7:U1/x",
    ] {
        let (code, out) = acquire(&db, resource, "agent-a", "c1", None);
        assert_eq!(
            (code, out["error"]["rule"].as_str()),
            (2, Some("canonical-resource")),
            "{resource}: {out}"
        );
    }
    assert_eq!(t.bytes(), before);
}

#[test]
fn a_run_record_unit_is_one_plain_name() {
    for unit in ["a/../b", "x/", "p//q", ".."] {
        let mut record = BuildRecord::record(&["true"]);
        record["units"][0]["id"] = json!(unit);
        let b = BuildRecord::with(&serde_json::to_string_pretty(&record).expect("JSON"));
        let (code, out) = b.run(&["--unit", unit]);
        assert_eq!(code, 2, "{unit}: {out}");
        assert!(!b.journal.path().exists(), "{unit}: no journal");
    }
}

#[test]
fn a_retried_acquire_of_an_expired_grant_is_claim_expired() {
    let t = TempJournal::new();
    let db = t.path();
    let args = |ttl: &'static str| {
        [
            "claim",
            "acquire",
            "--resource",
            THREAD,
            "--owner",
            "a",
            "--claim-id",
            "ca",
            "--ttl",
            ttl,
            "--idempotency-key",
            "KA",
        ]
    };
    let (code, out, _) = cairn(&args("1"), "", Some(&db));
    assert_eq!(code, 0, "{out}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let before = t.bytes();
    let (code, out, _) = cairn(&args("1"), "", Some(&db));
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (3, Some("claim-expired")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // A ttl has one spelling too.
    let (code, out, _) = cairn(&args("030"), "", Some(&db));
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("ttl-syntax")),
        "{out}"
    );
}

#[test]
fn a_reused_key_from_a_non_holder_is_fenced_before_it_is_compared() {
    let t = TempJournal::new();
    let db = t.path();
    let adjust = |directive: &str, extra: &[&str]| {
        let mut args = vec![
            "saga",
            "adjust",
            "--saga-id",
            "issue-7",
            "--directive",
            directive,
        ];
        args.extend_from_slice(extra);
        cairn(&args, "", Some(&db))
    };
    assert_eq!(
        cairn(
            &[
                "saga",
                "save",
                "--saga-id",
                "issue-7",
                "--repo",
                "/nonexistent"
            ],
            "",
            Some(&db)
        )
        .0,
        0
    );
    assert_eq!(adjust("drain", &["--idempotency-key", "K"]).0, 0);
    assert_eq!(acquire(&db, THREAD, "agent-b", "cb", None).0, 0);
    let before = t.bytes();
    let (code, out, _) = adjust("halt", &["--idempotency-key", "K", "--fencing-token", "99"]);
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (3, Some("stale-claim")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
}
