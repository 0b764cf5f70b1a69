//! `cairn saga` end to end: ticks as full snapshots, derived rounds, gate verdicts,
//! phase authority, the QA allowance, restore and scan from the journal.

use serde_json::{json, Value};

use crate::support::TempJournal;

/// `cairn saga ARGS`, run from a scratch directory: a save reads git where it is
/// run, and these threads are not about any repository.
fn run(t: &TempJournal, args: &[&str]) -> (i32, Value) {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("saga")
        .args(args)
        .arg("--db")
        .arg(t.path())
        .env_remove("CAIRN_DB")
        .current_dir(scratch.path())
        .output()
        .expect("cairn runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (out.status.code().unwrap_or(-1), v)
}

/// Passes the gates the merge turn follows and records U1's merge as git shows
/// it: QA runs on merged threads only.
fn merge(t: &TempJournal, id: &str) {
    // The repository only has to outlive the merge's reading.
    drop(crate::support::saga::merged_in(&t.path(), id));
}

fn restore(t: &TempJournal, id: &str) -> Value {
    let (code, out) = run(t, &["restore", "--saga-id", id]);
    assert_eq!(code, 0, "{out}");
    out
}

#[test]
fn ticks_are_full_snapshots_and_rounds_are_derived() {
    let t = TempJournal::new();
    let (code, out) = run(
        &t,
        &[
            "save",
            "--id",
            "issue-42",
            "--issue-ref",
            "acme/widgets#42",
            "--lifecycle-phase",
            "work",
            "--phase-status",
            "in_progress",
            "--plan-path",
            "docs/plans/p.md",
            "--rounds-seen",
            "1",
            "--checks-run",
            "pytest|ruff",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (out["next_round"].clone(), out["phase"].clone()),
        (json!(2), json!(1))
    );
    // Omitted fields carry forward; a list flag replaces the whole list; "" clears.
    let (code, out) = run(
        &t,
        &[
            "save",
            "--id",
            "issue-42",
            "--rounds-seen",
            "1|2",
            "--checks-run",
            "mypy",
            "--phase-status",
            "complete",
            "--next-step",
            "open the PR",
        ],
    );
    assert_eq!(
        (code, out["next_round"].clone(), out["next_phase"].clone()),
        (0, json!(3), json!(2)),
        "{out}"
    );
    let r = restore(&t, "issue-42");
    assert_eq!(
        (
            r["found"].clone(),
            r["issue_ref"].clone(),
            r["checks_run"].clone(),
            r["ticks"].clone()
        ),
        (
            json!(true),
            json!("acme/widgets#42"),
            json!(["mypy"]),
            json!(2)
        )
    );
    assert_eq!(r["next_step"], "open the PR");
    run(&t, &["save", "--id", "issue-42", "--checks-run", ""]);
    assert_eq!(restore(&t, "issue-42")["checks_run"], json!([]));
    // next_round is never set.
    let bytes = t.bytes();
    let (code, out) = run(&t, &["save", "--id", "issue-42", "--next-round", "9"]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("next-round-derived")),
        "{out}"
    );
    assert_eq!(t.bytes(), bytes);
    assert_eq!(
        restore(&t, "issue-404"),
        json!({"saga_id": "issue-404", "found": false})
    );
}

#[test]
fn one_bad_gate_verdict_refuses_the_whole_save() {
    let t = TempJournal::new();
    assert_eq!(
        run(
            &t,
            &[
                "save",
                "--id",
                "issue-7",
                "--gate-verdict",
                "tests:done:ci:run:7"
            ]
        )
        .0,
        0
    );
    assert_eq!(
        restore(&t, "issue-7")["gate_verdicts"],
        json!([{"gate": "tests", "state": "done", "reference": "ci:run:7"}])
    );
    let bytes = t.bytes();
    let (code, out) = run(
        &t,
        &[
            "save",
            "--id",
            "issue-7",
            "--status",
            "blocked",
            "--gate-verdict",
            "lint:done:",
            "--gate-verdict",
            "tests:green:x",
        ],
    );
    assert_eq!(code, 2, "{out}");
    let msg = out["error"]["violations"][0]["message"].as_str().unwrap();
    for s in [
        "done",
        "in-progress",
        "blocked",
        "failed",
        "halted",
        "not-reached",
    ] {
        assert!(msg.contains(s), "the error names `{s}`: {msg}");
    }
    assert_eq!(t.bytes(), bytes, "nothing written");
    assert_eq!(restore(&t, "issue-7")["status"], "active");
    // A first save that is refused creates no journal at all.
    let fresh = TempJournal::new();
    assert_eq!(
        run(
            &fresh,
            &["save", "--id", "task-x", "--gate-verdict", "nope"]
        )
        .0,
        2
    );
    assert!(!fresh.path().exists());
}

#[test]
fn only_a_recorded_qa_pass_moves_the_thread_to_qa() {
    let t = TempJournal::new();
    assert_eq!(
        run(
            &t,
            &["save", "--id", "issue-9", "--lifecycle-phase", "work"]
        )
        .0,
        0
    );
    let (code, out) = run(&t, &["save", "--id", "issue-9", "--lifecycle-phase", "qa"]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("phase-authority")),
        "{out}"
    );
    merge(&t, "issue-9");
    // A FAIL keeps `work` with its evidence; an unrun scenario is not a pass.
    let (code, out) = run(
        &t,
        &[
            "qa",
            "--saga-id",
            "issue-9",
            "--scenario",
            "checkout=failed",
            "--scenario",
            "refund=passed",
        ],
    );
    assert_eq!(
        (
            code,
            out["outcome"].as_str(),
            out["lifecycle_phase"].as_str()
        ),
        (4, Some("re-enters-the-build-loop"), Some("work")),
        "{out}"
    );
    let (code, out) = run(
        &t,
        &[
            "qa",
            "--saga-id",
            "issue-9",
            "--scenario",
            "checkout=passed",
            "--scenario",
            "refund=not-run",
        ],
    );
    assert_eq!(
        (
            code,
            out["outcome"].as_str(),
            out["lifecycle_phase"].as_str()
        ),
        (4, Some("passed-with-proof-debt"), Some("work")),
        "{out}"
    );
    let (code, _) = run(
        &t,
        &["qa", "--saga-id", "issue-9", "--scenario", "refund=blocked"],
    );
    assert_eq!(code, 2, "a blocked scenario names its cause");
    let (code, out) = run(
        &t,
        &[
            "qa",
            "--saga-id",
            "issue-9",
            "--scenario",
            "checkout=passed",
            "--scenario",
            "refund=passed",
        ],
    );
    assert_eq!(
        (code, out["lifecycle_phase"].as_str()),
        (0, Some("qa")),
        "{out}"
    );
    let (code, out) = run(
        &t,
        &["save", "--id", "issue-9", "--lifecycle-phase", "work"],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("phase-authority")),
        "a thread that passed QA does not go back: {out}"
    );
    assert_eq!(
        run(
            &t,
            &["save", "--id", "issue-9", "--lifecycle-phase", "retro"]
        )
        .0,
        0
    );
}

#[test]
fn scan_finds_threads_by_issue_ref_plan_path_or_branch() {
    let t = TempJournal::new();
    run(
        &t,
        &[
            "save",
            "--id",
            "issue-1",
            "--issue-ref",
            "a/b#1",
            "--branch",
            "work/1",
        ],
    );
    run(
        &t,
        &[
            "save",
            "--id",
            "task-cache",
            "--kind",
            "task",
            "--plan-path",
            "docs/plans/cache.md",
        ],
    );
    run(
        &t,
        &[
            "save",
            "--id",
            "issue-2",
            "--issue-ref",
            "a/b#2",
            "--branch",
            "work/2",
        ],
    );
    let ids = |out: &Value| {
        out["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["saga_id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let (_, out) = run(&t, &["scan", "--issue-ref", "a/b#2"]);
    assert_eq!(ids(&out), ["issue-2"]);
    let (_, out) = run(
        &t,
        &[
            "scan",
            "--plan-path",
            "docs/plans/cache.md",
            "--branch",
            "work/1",
        ],
    );
    assert_eq!(ids(&out).len(), 2);
    let (_, out) = run(&t, &["scan"]);
    assert_eq!(
        (ids(&out)[0].as_str(), out["count"].clone()),
        ("issue-2", json!(3)),
        "newest first"
    );
}

#[test]
fn saga_show_snapshot() {
    let t = TempJournal::new();
    run(
        &t,
        &[
            "save",
            "--id",
            "issue-42",
            "--issue-ref",
            "acme/widgets#42",
            "--lifecycle-phase",
            "work",
            "--phase-status",
            "in_progress",
            "--plan-path",
            "docs/plans/p.md",
            "--rounds-seen",
            "1|2",
            "--gate-verdict",
            "tests:done:ci#7",
            "--gate-verdict",
            "review:blocked:",
            "--next-step",
            "fix the review findings",
            "--orchestration-mode",
            "inline",
        ],
    );
    merge(&t, "issue-42");
    run(
        &t,
        &[
            "qa",
            "--saga-id",
            "issue-42",
            "--scenario",
            "checkout=blocked:sandbox down",
        ],
    );
    let (code, out) = run(&t, &["show", "--saga-id", "issue-42"]);
    assert_eq!(code, 0);
    // The merged tip is a real commit of a fresh repository: its id varies by run,
    // as do the repository's place and its directories' device and inode numbers.
    insta::with_settings!({filters => vec![
        (r"[0-9a-f]{40}", "[SHA]"),
        (r#""/[^"]*/widgets/\.git [0-9]+:[0-9]+ [0-9]+:[0-9]+""#, r#""[TMP]/widgets/.git [DEV:INO] [DEV:INO]""#),
    ]}, {
        insta::assert_snapshot!("saga_show", serde_json::to_string_pretty(&out).unwrap());
    });
}
