//! The `cairn` binary end to end: exit codes, one JSON object on stdout, and
//! insta snapshots of stdout, stderr and the exit code together.

use std::path::Path;
use std::process::Command;

use cairn::Outcome;

use crate::support::ticket::{close, Command as TicketCommand, Ticket};
use crate::support::{ctx, tamper, TempJournal};

/// Runs `cairn` with `args`; the exit code, stdout and stderr, as one snapshot text.
pub fn run(args: &[&str], db: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_BUSY_TIMEOUT_MS");
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    let out = cmd.output().expect("cairn runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn transcript(args: &[&str], db: Option<&Path>) -> String {
    let (code, stdout, stderr) = run(args, db);
    let text = format!("exit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}");
    match db {
        Some(db) => text.replace(&db.display().to_string(), "[DB]"),
        None => text,
    }
}

fn lifecycle_journal() -> TempJournal {
    let t = TempJournal::new();
    let mut e = t.engine();
    let s = cairn::StreamId::parse("ticket/t1").unwrap();
    e.execute_with_context::<Ticket>(
        &s,
        &TicketCommand::Open {
            title: "fix it".into(),
        },
        &ctx(1),
        None,
    )
    .unwrap();
    e.execute_with_context::<Ticket>(
        &s,
        &TicketCommand::Comment {
            text: "on it".into(),
        },
        &ctx(2),
        None,
    )
    .unwrap();
    e.execute_with_context::<Ticket>(&s, &close(Outcome::Pass, Some(0)), &ctx(3), None)
        .unwrap();
    let s2 = cairn::StreamId::parse("ticket/t2").unwrap();
    e.execute_with_context::<Ticket>(
        &s2,
        &TicketCommand::Open {
            title: "another".into(),
        },
        &ctx(4),
        None,
    )
    .unwrap();
    t
}

#[test]
fn help_lists_every_verb() {
    insta::assert_snapshot!(transcript(&["--help"], None));
}

#[test]
fn every_verb_has_help_with_an_example() {
    let park = [
        "prepare-attempt",
        "evaluate",
        "check",
        "validate-receipt",
        "confirm-readback",
        "bind-repository",
        "resume-gate",
        "observe-vcs",
    ];
    let pr = [
        "classify",
        "observe",
        "offer-review-request",
        "confirm",
        "resolve-escalation",
        "record-merge",
        "dispose",
        "fetch",
    ];
    let mut verbs: Vec<Vec<&str>> = vec![
        vec!["machines"],
        vec!["graph"],
        vec!["state"],
        vec!["journal", "log"],
        vec!["journal", "verify"],
        vec!["journal", "audit"],
    ];
    verbs.extend(park.iter().map(|v| vec!["park", *v]));
    verbs.extend(pr.iter().map(|v| vec!["pr", *v]));
    verbs.push(vec!["ship", "preflight"]);
    for verb in &verbs {
        let mut args = verb.to_vec();
        args.push("--help");
        let (code, stdout, _) = run(&args, None);
        assert_eq!(code, 0, "{verb:?}");
        assert!(
            stdout.contains("Example:"),
            "{verb:?} has no example:\n{stdout}"
        );
    }
}

#[test]
fn usage_errors_exit_2_with_a_json_error() {
    insta::assert_snapshot!(transcript(&["frobnicate"], None));
    let (code, stdout, _) = run(&["state"], None);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["error"]["kind"], "usage");
}

#[test]
fn journal_log_table_and_json() {
    let t = lifecycle_journal();
    insta::assert_snapshot!(
        "journal_log_table",
        transcript(&["journal", "log"], Some(&t.path()))
    );
    insta::assert_snapshot!(
        "journal_log_json_stream",
        transcript(
            &[
                "journal",
                "log",
                "--stream",
                "ticket/t1",
                "--since",
                "1",
                "--limit",
                "1",
                "--format",
                "json"
            ],
            Some(&t.path())
        )
    );
}

#[test]
fn journal_verify_clean() {
    let t = lifecycle_journal();
    insta::assert_snapshot!(transcript(&["journal", "verify"], Some(&t.path())));
}

#[test]
fn journal_verify_names_a_tampered_event() {
    let t = lifecycle_journal();
    tamper(
        &t.raw(),
        r#"UPDATE events SET payload = replace(payload, 'on it', 'done') WHERE seq = 2"#,
    );
    insta::assert_snapshot!(transcript(&["journal", "verify"], Some(&t.path())));
}

#[test]
fn journal_audit_without_the_machine_registered_fails_closed() {
    // The shipped binary does not know the test-only `ticket` machine: nothing can
    // be re-decided, so the audit must not pass.
    let t = lifecycle_journal();
    let (code, stdout, _) = run(&["journal", "audit"], Some(&t.path()));
    assert_eq!(code, 5);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["findings"][0]["kind"], "unknown-machine");
}

#[test]
fn read_verbs_never_create_a_journal() {
    let t = TempJournal::new();
    for args in [
        &["journal", "verify"][..],
        &["journal", "log"],
        &["state", "ticket/t1"],
    ] {
        let (code, stdout, _) = run(args, Some(&t.path()));
        assert_eq!(code, 2, "{args:?}");
        assert!(stdout.contains("\"kind\":\"no-journal\""), "{stdout}");
    }
    assert!(!t.path().exists());
}

#[test]
fn state_errors_name_the_field() {
    let t = lifecycle_journal();
    insta::assert_snapshot!(
        "state_bad_stream",
        transcript(&["state", "not a stream"], Some(&t.path()))
    );
    insta::assert_snapshot!(
        "state_unknown_machine",
        transcript(&["state", "ticket/t1"], Some(&t.path()))
    );
    insta::assert_snapshot!(
        "graph_unknown_machine",
        transcript(&["graph", "nope"], None)
    );
}

#[test]
fn machines_lists_the_registry() {
    insta::assert_snapshot!(transcript(&["machines"], None));
}

#[test]
fn the_journal_location_falls_back_to_the_state_directory() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["journal", "verify"])
        .env_remove("CAIRN_DB")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{}",
            home.path().join("state/cairn/journal.db").display()
        )),
        "{stdout}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["journal", "verify"])
        .env_remove("CAIRN_DB")
        .env_remove("XDG_STATE_HOME")
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{}",
            home.path().join(".local/state/cairn/journal.db").display()
        )),
        "{stdout}"
    );
    let t = lifecycle_journal();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["journal", "verify"])
        .env("CAIRN_DB", t.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_malformed_expected_head_is_refused() {
    let t = lifecycle_journal();
    let good_hash = "e9288d3314bc7aa408392b8bd80e84520186275502d360e26a8957f15566376f";
    for head in [
        "4",
        "x:abc",
        &format!("0:{good_hash}"),
        &format!("4:{}", &good_hash[..63]),
        &format!("4:{}g", &good_hash[..63]),
    ] {
        let (code, stdout, _) = run(
            &["journal", "verify", "--expect-head", head],
            Some(&t.path()),
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            (
                code,
                v["error"]["field"].as_str(),
                v["error"]["rule"].as_str()
            ),
            (2, Some("expect_head"), Some("head-format")),
            "{head}: {stdout}"
        );
    }
    // The well-formed head of this journal anchors the tail.
    let (code, stdout, _) = run(
        &[
            "journal",
            "verify",
            "--expect-head",
            &format!("4:{good_hash}"),
        ],
        Some(&t.path()),
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("\"tail\":\"anchored\""), "{stdout}");
}
