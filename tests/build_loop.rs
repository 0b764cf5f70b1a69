//! `cairn build-loop` with real child processes in a real git repository: a missing
//! program, a timeout, a failing check, a passing one, a command with a glob.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::git::git;
use crate::support::TempJournal;

struct Loop {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    record: PathBuf,
    journal: TempJournal,
}

fn record(baseline: &[&str], functional: Value, preview: bool) -> Value {
    json!({
        "schema": "run_record.v1", "issue": 42, "repo": "acme/widgets",
        "created_at": "2026-05-01T09:00:00+00:00", "updated_at": "2026-05-01T09:00:00+00:00",
        "admission": {"destination": "pr", "branch_preview": preview},
        "run_configuration": {"mechanical_tool_baseline": {"value": baseline, "chosen_by": "planner", "source": "profile"}},
        "approval_scope": {}, "roster": [], "review_cycles": [], "next_step": "build",
        "retro": {"trigger_fired": false},
        "units": [{"id": "U1", "branch": "work/42-u1", "merge_state": "ready", "functional_checks": functional, "owner_note": "keep me"}]
    })
}

impl Loop {
    fn new(rec: Value) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().canonicalize().unwrap().join("widgets");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("src/a.txt"), "a\n").unwrap();
        std::fs::write(repo.join("src/b.txt"), "b\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "init"]);
        let dir = repo.join(".claude/saga/runs");
        std::fs::create_dir_all(&dir).unwrap();
        let record = dir.join("issue-42.json");
        std::fs::write(&record, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
        Loop {
            _tmp: tmp,
            repo,
            record,
            journal: TempJournal::new(),
        }
    }
    fn run(&self, extra: &[&str]) -> (i32, Value, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "build-loop",
                "--issue",
                "42",
                "--repo-root",
                self.repo.to_str().unwrap(),
                "--db",
                self.journal.path().to_str().unwrap(),
            ])
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (
            out.status.code().unwrap_or(-1),
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}")),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
    fn read(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.record).unwrap()).unwrap()
    }
}

fn statuses(iteration: &Value, part: &str) -> Vec<String> {
    iteration[part]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn dry_run_prints_the_criterion_and_writes_nothing() {
    let l = Loop::new(record(
        &["uv run ruff check .", "cargo test"],
        json!([{"name": "hits", "command": "true"}]),
        false,
    ));
    let before = std::fs::read(&l.record).unwrap();
    let (code, out, _) = l.run(&["--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["baseline"][0]["catalogue_check"], "ruff");
    assert_eq!(out["baseline"][1]["catalogue_check"], Value::Null);
    assert_eq!(std::fs::read(&l.record).unwrap(), before);
    assert!(!l.journal.path().exists());
}

#[test]
fn an_iteration_records_pass_fail_and_could_not_execute_and_is_not_green() {
    let l = Loop::new(record(
        &[
            "true",
            "sh -c 'exit 3'",
            "no-such-program-cairn-test",
            "sleep 30",
            "echo 'unterminated",
        ],
        json!(["ls src/*.txt"]),
        true,
    ));
    let started = std::time::Instant::now();
    let (code, out, _) = l.run(&["--timeout", "1"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(code, 4, "not green yet: {out}");
    let it = &out["iteration"];
    assert_eq!(
        statuses(it, "baseline"),
        [
            "pass",
            "fail",
            "could-not-execute",
            "could-not-execute",
            "could-not-execute"
        ]
    );
    assert_eq!(it["baseline"][1]["exit_code"], 3);
    assert_eq!(it["baseline"][2]["exit_code"], Value::Null);
    // The glob was expanded by cairn, no shell involved.
    assert_eq!(statuses(it, "functional_checks"), ["pass"]);
    assert_eq!(it["functional_checks"][0]["detail"], "src/b.txt");
    // Declared without a command: could-not-execute, never a pass.
    assert_eq!(it["preview"]["status"], "could-not-execute");
    assert_eq!(it["scenario_smoke_reason"], "none-prescribed");
    let rec = l.read();
    let block = &rec["units"][0]["build_loop"];
    assert_eq!(block["iterations"].as_array().unwrap().len(), 1);
    assert!(block.get("handed_to_code_review").is_none());
    assert_eq!(
        rec["units"][0]["owner_note"], "keep me",
        "keys cairn does not own are left alone"
    );
    assert_eq!(rec["retro"], json!({"trigger_fired": false}));
    let text = std::fs::read_to_string(&l.record).unwrap();
    assert!(
        text.find("\"schema\"").unwrap() < text.find("\"issue\"").unwrap()
            && text.find("\"units\"").unwrap() < text.find("\"retro\"").unwrap(),
        "contract key order, then the others"
    );
}

#[test]
fn a_green_iteration_hands_the_full_revision_to_code_review() {
    let l = Loop::new(record(&["true", "test -f src/a.txt"], json!([]), false));
    let (code, out, _) = l.run(&["--unit", "U1"]);
    assert_eq!(code, 0, "{out}");
    let head = git(&l.repo, &["rev-parse", "HEAD"]);
    assert_eq!(out["handed_to_code_review"], head.as_str());
    let rec = l.read();
    assert_eq!(
        rec["units"][0]["build_loop"]["handed_to_code_review"]["revision"],
        head.as_str()
    );
    assert_eq!(
        rec["units"][0]["build_loop"]["iterations"][0]["preview"]["status"],
        "no-preview-declared"
    );
    // The contract sheet's spellings: whole seconds, `…Z` for the iteration and
    // the hand-off, `…+00:00` for updated_at.
    let shaped = |v: &Value, tail: &str| {
        let t = v.as_str().unwrap_or_default();
        t.len() == 19 + tail.len()
            && t.ends_with(tail)
            && chrono::DateTime::parse_from_rfc3339(t).is_ok()
    };
    let it = &rec["units"][0]["build_loop"]["iterations"][0];
    assert!(shaped(&it["started_at"], "Z"), "{it}");
    assert!(shaped(&it["finished_at"], "Z"), "{it}");
    let handed = &rec["units"][0]["build_loop"]["handed_to_code_review"];
    assert!(shaped(&handed["at"], "Z"), "{handed}");
    assert!(
        shaped(&rec["updated_at"], "+00:00"),
        "{}",
        rec["updated_at"]
    );
    // A second iteration is appended, never replaces the first.
    assert_eq!(l.run(&[]).0, 0);
    assert_eq!(
        l.read()["units"][0]["build_loop"]["iterations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let (code, out, _) = crate::park::park(&["journal", "audit"], "", Some(&l.journal.path()));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn refusals_write_nothing() {
    let mut rec = record(&["true"], json!([]), false);
    rec["schema"] = json!("run_record.v0");
    let l = Loop::new(rec);
    let before = std::fs::read(&l.record).unwrap();
    let (code, out, stderr) = l.run(&[]);
    assert_eq!(code, 3);
    // A kind the error schema lists (`cli_schema`), naming the field and rule.
    assert_eq!(
        crate::support::kind_field_rule(&out),
        ["record-version", "schema", "record-version"],
        "{out}"
    );
    assert!(
        stderr.contains("run_record: unknown record version 'run_record.v0'"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&l.record).unwrap(), before);

    let mut rec = record(&["true"], json!([]), false);
    rec["units"] = json!([{"id": "U1"}, {"id": "U2"}]);
    let l = Loop::new(rec);
    let (code, out, _) = l.run(&[]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("unit-named")),
        "{out}"
    );
    let (code, out, _) = l.run(&["--unit", "U9"]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("unit-exists")),
        "{out}"
    );
    assert!(!l.journal.path().exists());
}

#[test]
fn the_build_loop_does_not_run_over_a_blocking_doc_review() {
    let l = Loop::new(record(&["true"], json!([]), false));
    let saga = |args: &[&str]| crate::park::park(args, "", Some(&l.journal.path())).0;
    assert_eq!(
        saga(&[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--lifecycle-phase",
            "plan"
        ]),
        0
    );
    assert_eq!(
        saga(&[
            "saga",
            "doc-review",
            "--saga-id",
            "issue-42",
            "--unresolved-p0-p1",
            "1",
            "--source",
            "review_cycles"
        ]),
        0
    );
    let before = std::fs::read(&l.record).unwrap();
    let (code, out, _) = l.run(&[]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("doc-review-gate")),
        "{out}"
    );
    assert_eq!(std::fs::read(&l.record).unwrap(), before);
    assert_eq!(
        saga(&[
            "saga",
            "override",
            "--saga-id",
            "issue-42",
            "--gate",
            "doc-review",
            "--rationale",
            "tracked",
            "--operator",
            "ana"
        ]),
        0
    );
    assert_eq!(l.run(&[]).0, 0);
}

#[test]
fn build_loop_dry_run_snapshot() {
    let l = Loop::new(record(
        &["uv run ruff check .", "uv run mypy src", "cargo test"],
        json!([{"name": "cache hits", "command": "cargo test -p cache hits"}]),
        true,
    ));
    let (code, out, _) = l.run(&["--dry-run"]);
    assert_eq!(code, 0);
    insta::with_settings!({filters => vec![(r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]")]}, {
        insta::assert_snapshot!("build_loop_dry_run", serde_json::to_string_pretty(&out).unwrap());
    });
}

/// The checks pass only at a committed revision (build-loop rules 3; helper-79):
/// a fix left uncommitted, or HEAD moved while the checks ran, had a commit whose
/// own check fails recorded green and handed to code review. Now each is another
/// iteration, not green, and the record says why; nothing is handed on.
#[test]
fn checks_that_ran_on_no_commit_are_not_green() {
    // (a) the committed check fails; an uncommitted edit makes it pass.
    let l = Loop::new(record(&["sh check.sh"], json!([]), false));
    std::fs::write(l.repo.join("check.sh"), "exit 1\n").unwrap();
    git(&l.repo, &["add", "check.sh"]);
    git(&l.repo, &["commit", "-q", "-m", "a failing check"]);
    let (code, out, _) = l.run(&[]);
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    std::fs::write(l.repo.join("check.sh"), "exit 0\n").unwrap();
    let (code, out, _) = l.run(&[]);
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    let it = &l.read()["units"][0]["build_loop"]["iterations"][1];
    assert_eq!(
        it["baseline"][0]["status"], "pass",
        "the check itself passed: {it}"
    );
    assert_eq!(it["tree"]["held"], false, "{it}");
    assert!(
        it["tree"]["detail"]
            .as_str()
            .unwrap()
            .contains("uncommitted"),
        "{it}"
    );
    assert!(l.read()["units"][0]["build_loop"]
        .get("handed_to_code_review")
        .is_none());
    // Committed, the same check is green at the new commit.
    git(&l.repo, &["commit", "-q", "-am", "the fix"]);
    let (code, out, _) = l.run(&[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out["handed_to_code_review"],
        git(&l.repo, &["rev-parse", "HEAD"]).as_str()
    );
    let (code, out, _) = crate::park::park(&["journal", "audit"], "", Some(&l.journal.path()));
    assert_eq!(code, 0, "{out}");

    // (b) HEAD moves while the checks run (here, by a check itself): the failing
    // commit's check ran on the passing one's files.
    let l = Loop::new(record(&[], json!([]), false));
    std::fs::write(l.repo.join("check.sh"), "exit 0\n").unwrap();
    git(&l.repo, &["add", "check.sh"]);
    git(&l.repo, &["commit", "-q", "-m", "a passing check"]);
    let good = git(&l.repo, &["rev-parse", "HEAD"]);
    std::fs::write(l.repo.join("check.sh"), "exit 1\n").unwrap();
    git(&l.repo, &["commit", "-q", "-am", "a failing check"]);
    let bad = git(&l.repo, &["rev-parse", "HEAD"]);
    let mut rec = record(&[], json!([]), false);
    rec["units"][0]["functional_checks"] = json!([
        {"name": "switch", "command": format!("git checkout -q --detach {good}")},
        {"name": "check", "command": "sh check.sh"}
    ]);
    std::fs::write(&l.record, serde_json::to_string(&rec).unwrap()).unwrap();
    let (code, out, _) = l.run(&[]);
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    let it = &l.read()["units"][0]["build_loop"]["iterations"][0];
    assert_eq!(it["revision"], bad.as_str(), "{it}");
    assert!(
        it["tree"]["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("after the checks, HEAD was {good}")),
        "{it}"
    );
}

/// The run record is left out of the status only as an untracked file (helper-80):
/// `--record settings.json`, a tracked file the check reads, rewritten as a run
/// record that also flips the setting, had the edit read out of the status and
/// the iteration green.
#[test]
fn a_tracked_file_named_as_the_record_still_counts() {
    let l = Loop::new(record(&[], json!([]), false));
    std::fs::write(l.repo.join("settings.json"), r#"{"mode":"strict"}"#).unwrap();
    std::fs::write(l.repo.join("test.sh"), "grep -q lenient settings.json\n").unwrap();
    git(&l.repo, &["add", "settings.json", "test.sh"]);
    git(&l.repo, &["commit", "-q", "-m", "strict settings"]);
    let mut rec = record(&[], json!([{"name": "t", "command": "sh test.sh"}]), false);
    rec["mode"] = json!("lenient");
    let settings = l.repo.join("settings.json");
    std::fs::write(&settings, serde_json::to_string(&rec).unwrap()).unwrap();
    let (code, out, _) = crate::park::park(
        &[
            "build-loop",
            "--record",
            settings.to_str().unwrap(),
            "--repo-root",
            l.repo.to_str().unwrap(),
        ],
        "",
        Some(&l.journal.path()),
    );
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let it = &rec["units"][0]["build_loop"]["iterations"][0];
    assert_eq!(it["functional_checks"][0]["status"], "pass", "{it}");
    assert!(
        it["tree"]["detail"]
            .as_str()
            .unwrap()
            .contains("M settings.json"),
        "{it}"
    );
}

/// The tree is watched while the checks run (build-loop rules 6; helper-80): a
/// committed `result` of 1 flipped to 0 for the check and put back after it left
/// both readings clean at the revision, and the iteration green.
#[test]
fn a_change_put_back_while_the_checks_ran_is_seen() {
    let l = Loop::new(record(&[], json!([]), false));
    std::fs::write(l.repo.join("result"), "1\n").unwrap();
    git(&l.repo, &["add", "result"]);
    git(&l.repo, &["commit", "-q", "-m", "a failing result"]);
    let mut rec = record(&[], json!([]), false);
    rec["units"][0]["functional_checks"] = json!([
        {"name": "flip", "command": "sh -c 'echo 0 > result'"},
        {"name": "check", "command": "sh -c 'exit $(cat result)'"},
        {"name": "put back", "command": "git checkout -q result"}
    ]);
    std::fs::write(&l.record, serde_json::to_string(&rec).unwrap()).unwrap();
    let (code, out, _) = l.run(&[]);
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    let it = &l.read()["units"][0]["build_loop"]["iterations"][0];
    assert_eq!(it["functional_checks"][1]["status"], "pass", "{it}");
    assert!(
        it["tree"]["detail"]
            .as_str()
            .unwrap()
            .contains("`result` changed"),
        "{it}"
    );
    assert_eq!(git(&l.repo, &["diff", "--stat"]), "", "put back");
}

/// A tree whose status cairn does not take (a HEAD holding a gitlink: a nested
/// repository's files read against its own index) is not green, and says why
/// (build-loop rules 7; helper-81: it read only "could not be read").
#[test]
fn an_unread_status_says_why() {
    let l = Loop::new(record(&["true"], json!([]), false));
    let head = git(&l.repo, &["rev-parse", "HEAD"]);
    git(
        &l.repo,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{head},vendor"),
        ],
    );
    git(&l.repo, &["commit", "-q", "-m", "a gitlink"]);
    let (code, out, _) = l.run(&[]);
    assert_eq!((code, out["green"].as_bool()), (4, Some(false)), "{out}");
    let it = &l.read()["units"][0]["build_loop"]["iterations"][0];
    let detail = it["tree"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("could not be read: ") && detail.contains("gitlink"),
        "{it}"
    );
}
