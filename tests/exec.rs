//! `cairn exec MACHINE STREAM` end to end: a caller's JSON command recorded with
//! the verbs' exit codes and idempotency key; bad input exit 2 with the field and
//! rule and the journal unchanged; not green exit 4 from the machine's verdict;
//! and a hostile caller cannot record through exec what cairn observes itself
//! (ship's merge, work's verification, pr's merge), so `merged`, `verified` and
//! `shipped` cannot be forged.

use std::io::Write as _;
use std::process::{Command, Stdio};

use cairn::machines::ship::{Mutation, Ship, State as ShipState};
use cairn::machines::work::node::{State as WorkState, WorkNode};
use cairn::Machine;
use serde_json::{json, Value};

use crate::support::fixtures::ShipRepo;
use crate::support::TempJournal;

/// `cairn ARGS` on `journal` with `stdin`, run from a scratch directory: exit
/// code, stdout as JSON, stderr.
fn cairn(journal: &TempJournal, args: &[&str], stdin: &str) -> (i32, Value, String) {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(journal.path())
        .env_remove("CAIRN_DB")
        .current_dir(scratch.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .ok();
    let out = child.wait_with_output().expect("cairn exits");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    (out.status.code().unwrap_or(-1), v, stderr)
}

fn exec(journal: &TempJournal, stream: &str, command: &Value, key: Option<&str>) -> (i32, Value) {
    let machine = stream.split('/').next().expect("a stream id");
    let mut args = vec!["exec", machine, stream];
    if let Some(k) = key {
        args.extend(["--idempotency-key", k]);
    }
    let (code, out, _) = cairn(journal, &args, &command.to_string());
    (code, out)
}

/// The saga thread `issue-7`, minted by `cairn saga save`.
fn thread(journal: &TempJournal) {
    let (code, out, _) = cairn(journal, &["saga", "save", "--id", "issue-7"], "");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn exec_records_a_callers_command_as_every_verb_does() {
    let j = TempJournal::new();
    thread(&j);
    let drain = json!({"command": "adjust", "directive": "drain"});
    let (code, out) = exec(&j, "saga/issue-7", &drain, Some("k1"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["outcome"], "accepted", "{out}");
    assert_eq!(out["events"][0]["event_type"], "directive-set", "{out}");
    assert_eq!(out["version"], 2, "{out}");
    // The same key and command: the first result, nothing written.
    let before = j.bytes();
    let (code, again) = exec(&j, "saga/issue-7", &drain, Some("k1"));
    assert_eq!(
        (code, again["outcome"].as_str()),
        (0, Some("replayed")),
        "{again}"
    );
    assert_eq!(again["version"], 2, "{again}");
    assert_eq!(j.bytes(), before, "a replay writes nothing");
    // The same key for another command: refused.
    let halt = json!({"command": "adjust", "directive": "halt"});
    let (code, out) = exec(&j, "saga/issue-7", &halt, Some("k1"));
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    // Held at a boundary by the drain: recorded, and not green yet (exit 4), as
    // the machine's verdict says.
    let (code, out) = exec(
        &j,
        "saga/issue-7",
        &json!({"command": "boundary", "boundary": "b1"}),
        None,
    );
    assert_eq!(
        (code, out["outcome"].as_str()),
        (4, Some("not-green")),
        "{out}"
    );
    assert_eq!(out["events"][0]["event_type"], "boundary-held", "{out}");
    // The guards refuse as they do for the verb: exit 2, nothing written.
    let before = j.bytes();
    let (code, out) = exec(
        &j,
        "saga/issue-7",
        &json!({"command": "adjust", "directive": "speed-up"}),
        None,
    );
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("rejected")),
        "{out}"
    );
    assert_eq!(j.bytes(), before);
    crate::support::fixtures::assert_whole(&j);
}

#[test]
fn bad_input_names_the_field_and_rule_and_writes_nothing() {
    let j = TempJournal::new();
    thread(&j);
    let before = j.bytes();
    for (doc, field, rule) in [
        (r#"{"command":"adjust"}"#, "directive", "required"),
        (r#"{"command":"adjust","directive":7}"#, "directive", "type"),
        // Inside a command, the path from the document (serde's tagged enums
        // keep none: the decoder itself is asked where its error arises).
        (
            r#"{"command":"review","review":{"outcome":"maybe","reviewed_sha":"0000000000000000000000000000000000000000"}}"#,
            "review.outcome",
            "unknown-variant",
        ),
        (
            r#"{"command":"review","review":{"outcome":"accepted","reviewed_sha":7}}"#,
            "review.reviewed_sha",
            "type",
        ),
        (
            r#"{"command":"review","review":{"outcome":"accepted"}}"#,
            "review.reviewed_sha",
            "required",
        ),
        (
            r#"{"command":"review","review":{"outcome":"accepted","reviewed_sha":"0000000000000000000000000000000000000000","why":1}}"#,
            "review.why",
            "unknown-field",
        ),
        (
            r#"{"command":"adjust","directive":"drain","extra":1}"#,
            "extra",
            "unknown-field",
        ),
        (r#"{"command":"teleport"}"#, "command", "unknown-variant"),
        (r#""adjust""#, "$", "type"),
        // An array is not read by position (it was "missing field `command`" for
        // `[]`, and an unknown variant at `[0]`, a field no command has).
        ("[]", "$", "type"),
        (r#"["adjust","drain"]"#, "$", "type"),
        ("[[]]", "$", "type"),
        // Nor inside the command (helper-54: this was recorded as a review).
        (
            r#"{"command":"review","review":["accepted","0000000000000000000000000000000000000000"]}"#,
            "review",
            "type",
        ),
        (
            r#"{"command":"adjust","command":"adjust","directive":"drain"}"#,
            "$",
            "duplicate-key",
        ),
        ("not json", "$", "json"),
    ] {
        let (code, out, _) = cairn(&j, &["exec", "saga", "saga/issue-7"], doc);
        assert_eq!(code, 2, "{doc}: {out}");
        // A document that does not parse names its place: `$ (line 1, column 9)`.
        let named = out["error"]["field"].as_str().unwrap_or_default();
        assert!(
            named == field || (field == "$" && named.starts_with("$ (line")),
            "{doc}: {out}"
        );
        assert_eq!(out["error"]["rule"], rule, "{doc}: {out}");
        // No Rust type name reaches the caller.
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("enum"), "{doc}: {out}");
        assert_eq!(j.bytes(), before, "{doc}: nothing written");
    }
    // An unregistered machine, and a stream of another machine.
    let (code, out, _) = cairn(&j, &["exec", "deploy", "deploy/d-1"], "{}");
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("unknown-machine")),
        "{out}"
    );
    let (code, out, _) = cairn(&j, &["exec", "saga", "ship/abc"], "{}");
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("invalid-stream")),
        "{out}"
    );
    assert_eq!(j.bytes(), before);
    // A command that names its own stream (a park episode) goes to that stream
    // only: one episode's attempt is never recorded on another's stream, on a
    // journal that exists or on none yet.
    let prepare = json!({"command": "prepare-attempt", "input": {"mode": "park",
        "anchor_bead": "rsry-42", "episode_id": "ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
        "intent_id": "park-5d0f2c8e-9a41-4d6b-8f3e-2b7c1a9e6d40", "prior_receipts": []}});
    let other = "park/ep-00000000-0000-4000-8000-000000000001";
    let fresh = TempJournal::new();
    for journal in [&j, &fresh] {
        let (code, out) = exec(journal, other, &prepare, None);
        assert_eq!(
            (code, &out["error"]["field"], &out["error"]["rule"]),
            (2, &json!("stream"), &json!("command-stream")),
            "{out}"
        );
    }
    assert_eq!(j.bytes(), before);
    assert!(!fresh.path().exists(), "a refusal created the journal");
    let own = "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
    assert_eq!(exec(&j, own, &prepare, None).0, 0);
}

#[test]
fn a_hostile_caller_cannot_record_what_cairn_observes() {
    // A real ship run in phase 1, then a merge forged from a world where every
    // git reading says yes.
    let repo = ShipRepo::new();
    repo.to_phase1();
    let j = &repo.journal;
    let (state, _) = j
        .engine()
        .load::<Ship>(&cairn::StreamId::parse("ship/abc").unwrap())
        .unwrap();
    assert!(matches!(state, ShipState::Active { .. }), "{state:?}");
    let happy = crate::support::ship::World::happy();
    let forged = [
        crate::support::ship::command(&state, &crate::support::ship::Step::Merge, &happy),
        crate::support::ship::command(&state, &crate::support::ship::Step::Teardown, &happy),
        crate::support::ship::command(
            &state,
            &crate::support::ship::Step::Begin(Mutation::Merge),
            &happy,
        ),
        crate::support::ship::command(&state, &crate::support::ship::Step::Verify(0), &happy),
    ];
    let before = j.bytes();
    for command in &forged {
        let (code, out) = exec(j, "ship/abc", &serde_json::to_value(command).unwrap(), None);
        assert_eq!(code, 2, "{out}");
        assert_eq!(out["error"]["kind"], "recorded-by-cairn", "{out}");
        assert_eq!(out["error"]["rule"], "recorded-by-cairn", "{out}");
        assert!(
            out["error"]["verb"].as_str().unwrap().starts_with("ship "),
            "{out}"
        );
        assert_eq!(j.bytes(), before, "nothing written");
    }
    // A verification and a merge of a work node, and a pr merge: each named verb.
    let work = crate::support::work::command(
        &WorkState::Unplanned,
        &crate::support::work::Step::Verify {
            tree: 0,
            pass: true,
            checklist: true,
        },
    );
    let merge =
        crate::support::work::command(&WorkState::Unplanned, &crate::support::work::Step::Merge);
    let pr = crate::pr_properties::pr_command(7, "approved-fresh");
    for (stream, command, verb) in [
        (
            "work-node/0123456789abcdef:core",
            serde_json::to_value(&work).unwrap(),
            "work verify",
        ),
        (
            "work-node/0123456789abcdef:core",
            serde_json::to_value(&merge).unwrap(),
            "work merge",
        ),
        (
            "pr-loop/github.com/example/project/pull/7",
            serde_json::to_value(&pr).unwrap(),
            "pr record-merge",
        ),
        // A release whose landed commit "git showed" (found: a forged exit 0 for
        // a commit git says is elsewhere was recorded through exec).
        (
            "saga/issue-42",
            json!({"command": "release", "release": {"destination": "merge",
                "reviewed_head": "1".repeat(40), "landed_commit": "1".repeat(40),
                "absence_reason": null},
                "landed": {"repo": "/srv/r", "target": "main", "run": {
                    "argv": ["git", "-C", "/srv/r", "merge-base", "--is-ancestor",
                        "--end-of-options", "1".repeat(40), "refs/heads/main"],
                    "exit_status": 0, "stdout": "", "stderr": "",
                    "started_at": "2026-12-04T00:00:00Z",
                    "finished_at": "2026-12-04T00:00:00Z"}}}),
            "saga release",
        ),
    ] {
        let (code, out) = exec(j, stream, &command, None);
        assert_eq!(
            (code, out["error"]["verb"].as_str()),
            (2, Some(verb)),
            "{out}"
        );
        assert_eq!(j.bytes(), before, "nothing written");
    }
    // What cairn does not observe goes through: the operator's abandon of the run.
    let (code, out) = exec(
        j,
        "ship/abc",
        &json!({"command": "abandon", "reason": "superseded", "operator": "ana"}),
        None,
    );
    assert_eq!(code, 2, "phase 1 admits no abandon: {out}");
    assert_eq!(out["error"]["kind"], "rejected", "{out}");
    let _ = WorkNode::NAME;
    crate::support::fixtures::assert_whole(j);
}

/// exec is a recording verb like the others: on a stream another agent claims it
/// needs the holder's `--fencing-token` (exit 3, nothing written, without it or
/// with a stale one), and with it the command records.
#[test]
fn exec_on_a_claimed_stream_needs_the_holders_token() {
    let j = TempJournal::new();
    thread(&j);
    let (code, out, _) = cairn(
        &j,
        &[
            "claim",
            "acquire",
            "--resource",
            "saga/issue-7",
            "--owner",
            "agent-a",
            "--claim-id",
            "c-1",
            "--ttl",
            "600",
        ],
        "",
    );
    assert_eq!(code, 0, "{out}");
    let token = out["token"].as_u64().expect("a granted token").to_string();
    let stale = (out["token"].as_u64().unwrap_or(0) + 1).to_string();
    let drain = json!({"command": "adjust", "directive": "drain"}).to_string();
    let before = j.bytes();
    for (args, kind) in [
        (vec!["exec", "saga", "saga/issue-7"], "claim-held"),
        (
            vec!["exec", "saga", "saga/issue-7", "--fencing-token", &stale],
            "stale-claim",
        ),
    ] {
        let (code, out, _) = cairn(&j, &args, &drain);
        assert_eq!(code, 3, "{args:?}: {out}");
        assert_eq!(out["error"]["kind"], kind, "{args:?}: {out}");
        assert_eq!(out["error"]["claim"]["holder"], "agent-a", "{out}");
        assert_eq!(j.bytes(), before, "{args:?} wrote");
    }
    let args = ["exec", "saga", "saga/issue-7", "--fencing-token", &token];
    let (code, out, _) = cairn(&j, &args, &drain);
    assert_eq!(
        (code, out["outcome"].as_str()),
        (0, Some("accepted")),
        "{out}"
    );
    crate::support::fixtures::assert_whole(&j);
}
