//! The park machine through the real `cairn` binary: every rule of the seed as a
//! table case asserting the exact exit code and output, the journal left
//! byte-for-byte unchanged by refusals, and a whole episode walked to safe_to_close.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::park::*;
use crate::support::{Mutation, TempJournal};

/// Runs `cairn` with `stdin`; (exit code, stdout JSON, stderr).
pub fn park(args: &[&str], stdin: &str, db: Option<&Path>) -> (i32, Value, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .env_remove("CAIRN_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Never touch a real user journal from a test, nor one shared between runs: a
    // fixed path (even one under /nonexistent) is created when the tests run as root,
    // and then carries every earlier run's streams (and schema) into this one.
    let scratch = tempfile::tempdir().expect("a temp dir");
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    } else {
        cmd.env("CAIRN_DB", scratch.path().join("journal.db"));
    }
    let mut child = cmd.spawn().expect("cairn runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .ok();
    let out = child.wait_with_output().expect("cairn exits");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.ends_with('\n'),
        "output ends with a newline: {stdout:?}"
    );
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one JSON object: {stdout:?}"
    );
    let v: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {stdout}"));
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check_doc(v: &Value) -> (i32, Value) {
    let (code, out, _) = park(&["park", "check"], &v.to_string(), None);
    (code, out)
}

/// Asserts a refusal: exit 2 naming `rule` (and the field, when given).
fn refused(v: &Value, rule: &str, field: Option<&str>) {
    let (code, out) = check_doc(v);
    assert_eq!(code, 2, "expected exit 2 ({rule}), got {out}");
    assert_eq!(out["error"]["rule"], rule, "{out}");
    if let Some(f) = field {
        assert_eq!(out["error"]["field"], f, "{out}");
    }
}

/// Asserts an unsafe result: exit 0, not eligible, no action.
fn unsafe_result(v: &Value) -> Value {
    let (code, out) = check_doc(v);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (out["eligible"].clone(), out["action"].clone()),
        (json!(false), Value::Null),
        "{out}"
    );
    out
}

#[test]
fn a_durable_parked_observation_is_eligible_to_write_a_receipt() {
    let (code, out) = check_doc(&observation());
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["eligible"], true);
    assert_eq!(out["action"], "write_receipt");
    assert_eq!(out["candidate"], "parked");
    assert_eq!(out["protocol_phase"], "durable");
    // The helper's reasons list only what blocks: nothing here.
    assert_eq!(out["reasons"], json!([]));
}

#[test]
fn preflight_authorizes_a_checkpoint_and_is_never_eligible() {
    let (code, out) = check_doc(&preflight());
    assert_eq!(code, 0);
    assert_eq!(
        (
            out["eligible"].clone(),
            out["action"].clone(),
            out["candidate"].clone()
        ),
        (json!(false), json!("checkpoint"), json!("parked"))
    );
    // Preflight with durable preservation: refused, as the helper refuses it —
    // a preflight observation carries checkpointable evidence only.
    let mut v = observation();
    v["protocol_phase"] = json!("preflight");
    refused(&v, "preservation-phase", Some("checks[5].evidence.state"));
}

#[test]
fn checkpointable_evidence_in_the_durable_phase_is_refused() {
    let mut v = preflight();
    v["protocol_phase"] = json!("durable");
    refused(&v, "preservation-phase", Some("checks[5].evidence.state"));
}

#[test]
fn schema_rules() {
    let mut v = observation();
    v["extra"] = json!(1);
    refused(&v, "unknown-field", Some("extra"));
    let mut v = observation();
    v.as_object_mut().unwrap().remove("bead");
    refused(&v, "required", Some("bead"));
    let mut v = observation();
    v["schema_version"] = json!(2);
    refused(&v, "schema-version", Some("schema_version"));
    let mut v = observation();
    v["protocol_phase"] = json!("postflight");
    refused(&v, "type", Some("protocol_phase"));
    let mut v = observation();
    get(&mut v, "bead_terminal")["observed_at"] = json!("2026-11-30T04:00:00");
    refused(&v, "type", Some("checks[8].observed_at"));
    let mut v = observation();
    get(&mut v, "bead_terminal")["extra"] = json!(true);
    refused(&v, "unknown-field", Some("checks[8].extra"));
    let mut v = observation();
    get(&mut v, "bead_terminal")["evidence"]["mood"] = json!("good");
    refused(&v, "type", Some("checks[8].evidence"));
}

#[test]
fn the_check_set_is_fixed() {
    let mut v = observation();
    remove(&mut v, "no_active_dispatch");
    refused(&v, "missing-check", Some("checks"));
    let mut v = observation();
    let dup = get(&mut v, "no_active_dispatch").clone();
    v["checks"].as_array_mut().unwrap().push(dup);
    refused(&v, "duplicate-check", None);
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["name"] = json!("vibes_ok");
    refused(&v, "unknown-check", None);
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["category"] = json!("identity");
    refused(&v, "check-category", Some("checks[2].category"));
}

#[test]
fn pr_backed_is_derived_from_the_url_and_pr_merged_applies_iff_pr_backed() {
    let mut v = observation();
    v["pr_backed"] = json!(true);
    refused(&v, "pr-backed-derived", Some("pr_backed"));
    // A pr_url that is not a valid http(s) URL means not PR-backed, whatever it says.
    let mut v = observation();
    v["bead"]["pr_url"] = json!("github.com/example/project/pull/7");
    assert_eq!(check_doc(&v).1["eligible"], true);
    v["pr_backed"] = json!(true);
    refused(&v, "pr-backed-derived", Some("pr_backed"));
    let mut v = observation();
    pr_backed(
        &mut v,
        "fail",
        json!({"state": "OPEN", "mergedAt": null, "url": PR}),
    );
    assert_eq!(check_doc(&v).1["eligible"], true);
    remove(&mut v, "pr_merged");
    refused(&v, "missing-check", None);
    let mut v = observation();
    v["checks"].as_array_mut().unwrap().push(check(
        "pr_merged",
        "completion",
        "unknown",
        json!({"source": "gh", "detail": "x", "command": ["gh"], "error": "no"}),
    ));
    refused(&v, "inapplicable-check", None);
}

#[test]
fn pr_evidence_is_read_as_gh_prints_it() {
    let cases = [
        (
            json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": PR}),
            "pass",
        ),
        (
            json!({"state": "OPEN", "mergedAt": null, "url": PR}),
            "fail",
        ),
        (json!({"state": "CLOSED", "url": PR}), "fail"),
        (
            json!({"state": "MERGED", "mergedAt": "yesterday", "url": PR}),
            "unknown",
        ),
        (
            json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": "https://github.com/example/project/pull/8"}),
            "unknown",
        ),
        (
            json!({"state": "DRAFTY", "mergedAt": null, "url": PR}),
            "unknown",
        ),
        (json!({"mergedAt": null, "url": PR}), "unknown"),
    ];
    for (response, derived) in cases {
        for stated in ["pass", "fail", "unknown"] {
            let mut v = observation();
            pr_backed(&mut v, stated, response.clone());
            let (code, out) = check_doc(&v);
            if stated == derived {
                assert_eq!(code, 0, "{response} {stated}: {out}");
                // Unknown PR evidence is unsafe; a known one leaves the parked candidate eligible.
                assert_eq!(out["eligible"], derived != "unknown", "{response}: {out}");
            } else {
                assert_eq!(
                    (code, out["error"]["rule"].clone()),
                    (2, json!("outcome-contradicts-evidence")),
                    "{response} stated {stated}: {out}"
                );
            }
        }
    }
    let mut v = observation();
    pr_backed(
        &mut v,
        "pass",
        json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": PR}),
    );
    get(&mut v, "pr_merged")["evidence"]["command"] = json!(["gh", "pr", "view", PR]);
    refused(&v, "pr-command", None);
}

#[test]
fn bead_status_rules() {
    // Terminal with unavailable history: unsafe, never completed or parked.
    for status in ["done", "closed"] {
        let mut v = observation();
        remove(&mut v, "resume_target_resolvable");
        get(&mut v, "bead_terminal")["outcome"] = json!("pass");
        get(&mut v, "bead_terminal")["evidence"]["status"] = json!(status);
        let out = unsafe_result(&v);
        assert_eq!(out["candidate"], Value::Null, "{out}");
    }
    for status in ["open", "in_progress", "blocked"] {
        let mut v = observation();
        get(&mut v, "bead_terminal")["evidence"]["status"] = json!(status);
        assert_eq!(check_doc(&v).1["eligible"], true, "{status}");
    }
    // Missing status: unknown, unsafe; and then resume_target_resolvable is inapplicable.
    let mut v = observation();
    remove(&mut v, "resume_target_resolvable");
    get(&mut v, "bead_terminal")["outcome"] = json!("unknown");
    get(&mut v, "bead_terminal")["evidence"] = json!({"source": "rsry_list_beads", "detail": "no status field", "error": "status missing"});
    unsafe_result(&v);
    // Any other status is a schema error.
    let mut v = observation();
    get(&mut v, "bead_terminal")["evidence"]["status"] = json!("wontfix");
    refused(&v, "bead-status", Some("checks[8].evidence.status"));
    // A stated outcome that contradicts the status.
    let mut v = observation();
    get(&mut v, "bead_terminal")["outcome"] = json!("pass");
    refused(
        &v,
        "outcome-contradicts-evidence",
        Some("checks[8].outcome"),
    );
    // resume_target_resolvable present when the bead is terminal: inapplicable.
    let mut v = observation();
    get(&mut v, "bead_terminal")["outcome"] = json!("pass");
    get(&mut v, "bead_terminal")["evidence"]["status"] = json!("done");
    refused(&v, "inapplicable-check", None);
}

#[test]
fn close_condition_is_unknown_in_v1() {
    for outcome in ["pass", "fail"] {
        let mut v = observation();
        get(&mut v, "close_condition_satisfied")["outcome"] = json!(outcome);
        refused(&v, "outcome-contradicts-evidence", None);
    }
    let mut v = observation();
    get(&mut v, "close_condition_satisfied")["evidence"]["error"] = json!("");
    refused(&v, "nonempty-string", None);
}

#[test]
fn any_unknown_base_check_is_unsafe() {
    let unknowns = [
        (
            "no_active_dispatch",
            json!({"source": "rsry_active+rsry_dispatch_history", "detail": "timeout", "error": "rsry_active timed out"}),
        ),
        (
            "no_running_child_operation",
            json!({"source": "codex.current_child_operations", "detail": "not exposed", "client": "codex", "authoritative": false, "error": "adapter not exposed"}),
        ),
        (
            "no_vcs_operation_or_conflict",
            json!({"source": "git", "detail": "unreadable", "backend": "git", "bound_root": ROOT, "error": "index.lock"}),
        ),
        (
            "tree_preserved",
            json!({"source": "git", "detail": "?", "backend": "git", "bound_root": ROOT, "workspace": ROOT, "state": "unknown", "error": "x"}),
        ),
    ];
    for (name, evidence) in unknowns {
        let mut v = observation();
        get(&mut v, name)["outcome"] = json!("unknown");
        get(&mut v, name)["evidence"] = evidence;
        let out = unsafe_result(&v);
        assert_eq!(out["candidate"], Value::Null, "{name}: {out}");
    }
}

#[test]
fn evidence_must_say_why() {
    // A truthy string or an empty object is never evidence.
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["evidence"] = json!("all good");
    refused(&v, "typed-evidence", None);
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["evidence"] = json!({});
    refused(&v, "typed-evidence", None);
    // Active records fail the check; claiming pass over them is contradictory.
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["evidence"]["active_records"] = json!([{"id": "d-1"}]);
    refused(&v, "outcome-contradicts-evidence", None);
    // Running children fail; a non-authoritative empty list proves nothing.
    let mut v = observation();
    get(&mut v, "no_running_child_operation")["evidence"]["authoritative"] = json!(false);
    get(&mut v, "no_running_child_operation")["evidence"]["running"] = json!([]);
    refused(&v, "nonempty-string", None);
    let mut v = observation();
    get(&mut v, "no_running_child_operation")["evidence"]["client"] = json!("codex");
    refused(&v, "child-source-client", None);
    // A model-prose source for preservation is refused.
    let mut v = observation();
    get(&mut v, "tree_preserved")["evidence"]["source"] = json!("model_summary");
    refused(&v, "type", None);
    // VCS commands must be bound to the root, in argv form.
    let mut v = observation();
    get(&mut v, "no_vcs_operation_or_conflict")["evidence"]["commands"] =
        json!([["git", "status"]]);
    refused(&v, "bound-command", Some("checks[4].evidence.commands[0]"));
    // An operation in progress fails the check.
    let mut v = observation();
    get(&mut v, "no_vcs_operation_or_conflict")["evidence"]["operations"] = json!(["rebase"]);
    get(&mut v, "no_vcs_operation_or_conflict")["outcome"] = json!("fail");
    unsafe_result(&v);
    // Durable evidence needs its exact resolver and a full head.
    let mut v = observation();
    get(&mut v, "tree_preserved")["evidence"]["resolved_head"] = json!("0123abc");
    refused(&v, "full-head", None);
    let mut v = observation();
    get(&mut v, "tree_preserved")["evidence"]["resolver_command"] =
        json!(["git", "-C", ROOT, "rev-parse", "HEAD"]);
    refused(&v, "resolver-command", None);
}

#[test]
fn every_vcs_reading_uses_the_bound_root() {
    let mut v = observation();
    let other = "/srv/work/elsewhere";
    let e = &mut get(&mut v, "tree_preserved")["evidence"];
    e["bound_root"] = json!(other);
    e["workspace"] = json!(other);
    e["resolver_command"] = json!([
        "git",
        "-C",
        other,
        "cat-file",
        "-e",
        "refs/heads/feature/park^{commit}"
    ]);
    refused(&v, "bound-root-mismatch", None);
}

#[test]
fn durable_references_must_resolve_to_the_resume_head() {
    // Passing evidence at two heads contradicts itself (the helper would fold it
    // as eligible and refuse the receipt later): refused at evaluate.
    let other = "fedcba9876543210fedcba9876543210fedcba98";
    let mut v = observation();
    get(&mut v, "commits_reachable_or_checkpoint_resolvable")["evidence"]["resolved_head"] =
        json!(other);
    refused(&v, "heads-agree", Some("checks"));
    // A resume target that no longer resolves to the head is a `fail`: unsafe, not refused.
    let mut v = observation();
    get(&mut v, "resume_target_resolvable")["evidence"]["target"]["resolved_head"] = json!(other);
    refused(&v, "heads-agree", Some("checks"));
    get(&mut v, "resume_target_resolvable")["outcome"] = json!("fail");
    let out = unsafe_result(&v);
    assert_eq!(out["reasons"], json!(["resume_target_resolvable=fail"]));
}

#[test]
fn ids_must_be_canonical() {
    let flags = |e: &str, i: &str, a: &str| {
        park(
            &[
                "park",
                "evaluate",
                "--episode-id",
                e,
                "--intent-id",
                i,
                "--attempt-id",
                a,
            ],
            &observation().to_string(),
            None,
        )
    };
    for (e, i, a, field) in [
        (
            "ep-0B1E6F5E-3C1A-4B7E-9D2A-5F1C2E3D4A5B",
            INTENT,
            ATTEMPT,
            "episode_id",
        ),
        (EPISODE, "park-nope", ATTEMPT, "intent_id"),
        (
            EPISODE,
            INTENT,
            "attempt-{2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a}",
            "attempt_id",
        ),
        (INTENT, EPISODE, ATTEMPT, "episode_id"),
    ] {
        let (code, out, _) = flags(e, i, a);
        assert_eq!(
            (code, out["error"]["field"].clone()),
            (2, json!(field)),
            "{out}"
        );
    }
    let (code, out, _) = park(
        &["park", "evaluate", "--episode-id", EPISODE],
        &observation().to_string(),
        None,
    );
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("identity-flags"))
    );
}

#[test]
fn an_unknown_verb_exits_2() {
    let (code, out, _) = park(&["park", "close-bead"], "{}", None);
    assert_eq!((code, out["error"]["kind"].clone()), (2, json!("usage")));
}

#[test]
fn bad_input_is_refused_without_a_panic() {
    for stdin in [
        "",
        "{",
        "[]",
        "null",
        "{\"schema_version\": 1e999}",
        "\u{0}",
        "{\"a\":1}{\"b\":2}",
    ] {
        let (code, out, stderr) = park(&["park", "check"], stdin, None);
        assert_eq!(code, 2, "{stdin:?}: {out}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (code, _, stderr) = park(&["park", "check"], &deep, None);
    assert_eq!(code, 2);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("overflow"),
        "{stderr}"
    );
}

/// Walks one episode through the journal: prepare, preflight checkpoint, durable
/// evaluation, receipt validation, read-back. Returns the journal and the attempt.
fn walk_to_validated(t: &TempJournal) -> (String, String) {
    let db = t.path();
    let (code, prepared, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string(), Some(&db));
    assert_eq!(
        (code, prepared["action"].clone(), prepared["ready"].clone()),
        (0, json!("evaluate"), json!(true)),
        "{prepared}"
    );
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    let ids = [
        "--episode-id",
        EPISODE,
        "--intent-id",
        INTENT,
        "--attempt-id",
        attempt.as_str(),
    ];
    let with = |verb: &'static str| -> Vec<&str> { [&["park", verb][..], &ids[..]].concat() };
    let (code, out, _) = park(&with("evaluate"), &preflight().to_string(), Some(&db));
    assert_eq!(
        (code, out["action"].clone()),
        (0, json!("checkpoint")),
        "{out}"
    );
    let (code, out, _) = park(&with("evaluate"), &observation().to_string(), Some(&db));
    assert_eq!(
        (code, out["action"].clone()),
        (0, json!("write_receipt")),
        "{out}"
    );
    let mut r = receipt();
    r["attempt_id"] = json!(attempt);
    let bytes = serde_json::to_string(&r).unwrap();
    let (code, out, _) = park(&with("validate-receipt"), &bytes, Some(&db));
    assert_eq!((code, out), (0, json!({"valid": true})));
    (attempt, bytes)
}

#[test]
fn an_episode_walks_from_preflight_to_safe_to_close() {
    let t = TempJournal::new();
    let db = t.path();
    let (attempt, bytes) = walk_to_validated(&t);
    let ids = [
        "--episode-id",
        EPISODE,
        "--intent-id",
        INTENT,
        "--attempt-id",
        attempt.as_str(),
    ];
    let confirm = [&["park", "confirm-readback"][..], &ids[..]].concat();
    let readback = json!({"receipt_bytes": bytes, "comments": [{"id": 11, "body": "parking now"}, {"id": 12, "body": fence(&bytes)}]});
    let (code, out, _) = park(&confirm, &readback.to_string(), Some(&db));
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (
            out["durable"].clone(),
            out["safe_to_close"].clone(),
            out["comment_id"].clone()
        ),
        (json!(true), json!(true), json!(12))
    );

    let stream = format!("park/{EPISODE}");
    let (code, state, _) = park(&["state", &stream], "", Some(&db));
    assert_eq!(
        (code, state["state_name"].clone(), state["version"].clone()),
        (0, json!("safe-to-close"), json!(5)),
        "{state}"
    );
    assert_eq!(state["state"]["safe_to_close"], true);
    let (_, at2, _) = park(&["state", &stream, "--at", "2"], "", Some(&db));
    assert_eq!(at2["state_name"], "checkpoint-authorized");
    let (code, log, _) = park(
        &["journal", "log", "--stream", &stream, "--format", "json"],
        "",
        Some(&db),
    );
    assert_eq!(code, 0);
    let types: Vec<&str> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "attempt-prepared",
            "checkpoint-authorized",
            "receipt-authorized",
            "receipt-validated",
            "receipt-confirmed"
        ]
    );
    // Only the confirmation carries safe_to_close.
    let carriers: Vec<&str> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["payload"].get("safe_to_close").is_some())
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(carriers, ["receipt-confirmed"]);
    let (code, audit, _) = park(&["journal", "audit"], "", Some(&db));
    assert_eq!(
        (code, audit["ok"].clone(), audit["redecided"].clone()),
        (0, json!(true), json!(5)),
        "{audit}"
    );
    let (code, verify, _) = park(&["journal", "verify"], "", Some(&db));
    assert_eq!((code, verify["ok"].clone()), (0, json!(true)));

    // A repeated durable success returns the recorded result and writes nothing.
    let before = t.bytes();
    let (code, again, _) = park(&confirm, &readback.to_string(), Some(&db));
    assert_eq!((code, again), (0, out));
    // And prepare-attempt with the receipt as a prior success returns it unchanged.
    let prior = json!({"receipt": serde_json::from_str::<Value>(&bytes).unwrap(), "source_bytes": bytes, "comment_id": 12});
    let (code, existing, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": [prior]}).to_string(), Some(&db));
    assert_eq!(
        (code, existing["action"].clone()),
        (0, json!("return_existing")),
        "{existing}"
    );
    assert_eq!(
        existing["prior_sources"],
        json!([{"comment_id": 12, "source_bytes": bytes}])
    );
    assert!(existing.get("attempt_id").is_none());
    assert_eq!(t.bytes(), before, "no new transition");
}

#[test]
fn refusals_and_unsafe_results_leave_the_journal_unchanged() {
    let t = TempJournal::new();
    let db = t.path();
    let (attempt, bytes) = walk_to_validated(&t);
    let before = t.bytes();
    let ids = |a: &str| {
        vec![
            "--episode-id".to_owned(),
            EPISODE.to_owned(),
            "--intent-id".to_owned(),
            INTENT.to_owned(),
            "--attempt-id".to_owned(),
            a.to_owned(),
        ]
    };
    let run = |verb: &str, a: &str, stdin: &str| {
        let mut args = vec!["park".to_owned(), verb.to_owned()];
        args.extend(ids(a));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        park(&args, stdin, Some(&db))
    };
    // A stale attempt id: a correlation error.
    let (code, out, _) = run("evaluate", ATTEMPT, &observation().to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("attempt-current")),
        "{out}"
    );
    // Evaluation after validation: past evaluation.
    let (code, out, _) = run("evaluate", &attempt, &observation().to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("evaluate-allowed")),
        "{out}"
    );
    // Read-back of bytes that were never validated.
    let mut other = receipt();
    other["attempt_id"] = json!(attempt);
    other["references"] = json!(["refs/heads/other"]);
    let other_bytes = other.to_string();
    let (code, out, _) = run("confirm-readback", &attempt, &json!({"receipt_bytes": other_bytes, "comments": [{"id": 1, "body": fence(&other_bytes)}]}).to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("receipt-validated")),
        "{out}"
    );
    // A read-back that does not prove durability: a result, not an error, and nothing recorded.
    let (code, out, _) = run("confirm-readback", &attempt, &json!({"receipt_bytes": bytes, "comments": [{"id": 1, "body": format!("see below\n{}", fence(&bytes))}]}).to_string());
    assert_eq!(
        (code, out["durable"].clone(), out["safe_to_close"].clone()),
        (0, json!(false), json!(false)),
        "{out}"
    );
    // Conflicting same-intent bytes: unsafe even beside an exact copy.
    let (code, out, _) = run("confirm-readback", &attempt, &json!({"receipt_bytes": bytes, "comments": [{"id": 1, "body": fence(&bytes)}, {"id": 2, "body": fence(&other_bytes)}]}).to_string());
    assert_eq!((code, out["durable"].clone()), (0, json!(false)), "{out}");
    // Garbage on stdin.
    let (code, _, _) = run("validate-receipt", &attempt, "{\"episode_id\":");
    assert_eq!(code, 2);
    assert_eq!(t.bytes(), before, "nothing above may change the journal");
    let (_, state, _) = park(&["state", &format!("park/{EPISODE}")], "", Some(&db));
    assert_eq!(state["state_name"], "receipt-validated");
}

#[test]
fn an_unsafe_evaluation_records_nothing() {
    let t = TempJournal::new();
    let db = t.path();
    let (code, prepared, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string(), Some(&db));
    assert_eq!(code, 0);
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    let before = t.bytes();
    let mut v = observation();
    get(&mut v, "no_active_dispatch")["evidence"]["active_records"] = json!([{"id": "d-9"}]);
    get(&mut v, "no_active_dispatch")["outcome"] = json!("fail");
    let (code, out, _) = park(
        &[
            "park",
            "evaluate",
            "--episode-id",
            EPISODE,
            "--intent-id",
            INTENT,
            "--attempt-id",
            &attempt,
        ],
        &v.to_string(),
        Some(&db),
    );
    assert_eq!((code, out["eligible"].clone()), (0, json!(false)));
    assert_eq!(t.bytes(), before);
    // Each retry gets a fresh attempt; episode and intent are preserved.
    let (_, again, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string(), Some(&db));
    assert_ne!(again["attempt_id"], prepared["attempt_id"]);
    assert_eq!(
        (again["episode_id"].clone(), again["intent_id"].clone()),
        (json!(EPISODE), json!(INTENT))
    );
    // Another intent on the same episode is refused.
    let other_intent = "park-99999999-6b7c-4d8e-9f0a-1b2c3d4e5f6a";
    let (code, out, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": other_intent, "prior_receipts": []}).to_string(), Some(&db));
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("intent-preserved")),
        "{out}"
    );
}

#[test]
fn prepare_attempt_mints_missing_ids_and_asks_for_a_retry() {
    let (code, out, _) = park(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": "rsry 1", "episode_id": EPISODE, "intent_id": null, "prior_receipts": []}).to_string(), None);
    assert_eq!(
        (
            code,
            out["action"].clone(),
            out["ready"].clone(),
            out["episode_id"].clone()
        ),
        (0, json!("retry"), json!(false), json!(EPISODE))
    );
    let intent = out["intent_id"].as_str().unwrap();
    assert!(
        intent.starts_with("park-") && intent.len() == 41,
        "{intent}"
    );
    assert_eq!(
        out["retry_command"],
        format!("/park-work --episode-id {EPISODE} --intent-id {intent} 'rsry 1'")
    );
    assert!(out.get("attempt_id").is_none());
    let (code, out, _) = park(&["park", "prepare-attempt"], &json!({"mode": "resume", "anchor_bead": ANCHOR, "episode_id": null, "intent_id": null, "prior_receipts": []}).to_string(), None);
    assert_eq!((code, out["error"]["rule"].clone()), (2, json!("mode")));
}

#[test]
fn prior_receipts_must_agree_whatever_their_order() {
    let r = receipt();
    let mut other = receipt();
    other["resume"]["next_action"] = json!("something else entirely");
    let src =
        |v: &Value, id: u64| json!({"receipt": v, "source_bytes": v.to_string(), "comment_id": id});
    let input = |priors: Vec<Value>| {
        json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": priors}).to_string()
    };
    for priors in [
        vec![src(&r, 1), src(&other, 2)],
        vec![src(&other, 2), src(&r, 1)],
    ] {
        let (code, out, _) = park(&["park", "prepare-attempt"], &input(priors), None);
        assert_eq!(
            (code, out["error"]["rule"].clone()),
            (2, json!("prior-receipts-agree")),
            "{out}"
        );
    }
    // Semantically identical duplicates (another attempt, another session) → return_existing, sources by comment id.
    let mut dup = receipt();
    dup["attempt_id"] = json!("attempt-33333333-6b7c-4d8e-9f0a-1b2c3d4e5f6a");
    dup["provider_sessions"] = json!([{"provider": "codex", "id": "s-2"}]);
    let (code, out, _) = park(
        &["park", "prepare-attempt"],
        &input(vec![src(&dup, 30), src(&r, 4)]),
        None,
    );
    assert_eq!(
        (code, out["action"].clone()),
        (0, json!("return_existing")),
        "{out}"
    );
    let ids: Vec<u64> = out["prior_sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["comment_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [4, 30]);
    assert_eq!(out["receipt"], r);
    // A malformed matching receipt, or one for another episode: unsafe.
    let mut bad = receipt();
    bad["safe_to_close"] = json!("true");
    let (code, out, _) = park(
        &["park", "prepare-attempt"],
        &input(vec![src(&bad, 1)]),
        None,
    );
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("safe-to-close-literal")),
        "{out}"
    );
    let mut foreign = receipt();
    foreign["episode_id"] = json!("ep-44444444-6b7c-4d8e-9f0a-1b2c3d4e5f6a");
    let (code, _, _) = park(
        &["park", "prepare-attempt"],
        &input(vec![src(&foreign, 1)]),
        None,
    );
    assert_eq!(code, 2);
    // source_bytes that are not the receipt beside them.
    let (code, out, _) = park(
        &["park", "prepare-attempt"],
        &input(vec![
            json!({"receipt": r, "source_bytes": other.to_string(), "comment_id": 1}),
        ]),
        None,
    );
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("source-bytes-match")),
        "{out}"
    );
    // A receipt of another intent is not a candidate (a fresh attempt, recorded:
    // on a journal of its own, never a shared default path).
    let t = TempJournal::new();
    let mut elsewhere = receipt();
    elsewhere["intent_id"] = json!("park-55555555-6b7c-4d8e-9f0a-1b2c3d4e5f6a");
    let (code, out, _) = park(
        &["park", "prepare-attempt"],
        &input(vec![src(&elsewhere, 1)]),
        Some(&t.path()),
    );
    assert_eq!(
        (code, out["action"].clone()),
        (0, json!("evaluate")),
        "{out}"
    );
}

#[test]
fn receipt_rules() {
    let valid = |r: &Value| park(&["park", "validate-receipt"], &r.to_string(), None);
    assert_eq!(valid(&receipt()).1, json!({"valid": true}));
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "receipt-phase",
            Box::new(|r| {
                r["protocol_phase"] = json!("preflight");
                r["checks"] = preflight()["checks"].clone();
            }),
        ),
        (
            "safe-to-close-literal",
            Box::new(|r| r["safe_to_close"] = json!(1)),
        ),
        ("episode-id", Box::new(|r| r["episode_id"] = json!("ep-1"))),
        (
            "anchor-equals-confirmed",
            Box::new(|r| r["anchor_bead"] = json!("rsry-other")),
        ),
        (
            "unique-sessions",
            Box::new(|r| {
                r["provider_sessions"] =
                    json!([{"provider": "claude", "id": "a"}, {"provider": "claude", "id": "a"}])
            }),
        ),
        (
            "type",
            Box::new(|r| r["provider_sessions"] = json!([{"provider": "gemini", "id": "a"}])),
        ),
        (
            "full-head",
            Box::new(|r| r["repository"]["head"] = json!("abc123")),
        ),
        (
            "repository-equals-binding",
            Box::new(|r| r["repository"]["branch"] = json!("main")),
        ),
        (
            "nonempty-string",
            Box::new(|r| r["references"] = json!(["refs/heads/feature/park", " "])),
        ),
        (
            "one-target",
            Box::new(|r| r["resume"]["checkpoint"] = json!("cp-1")),
        ),
        (
            "resume-equals-evidence",
            Box::new(|r| r["resume"]["branch"] = json!("other-branch")),
        ),
        (
            "required",
            Box::new(|r| {
                r.as_object_mut().unwrap().remove("resume");
            }),
        ),
        (
            "outcome-equals-fold",
            Box::new(|r| r["outcome"] = json!("completed")),
        ),
        ("unknown-field", Box::new(|r| r["note"] = json!("trust me"))),
    ];
    for (rule, mutate) in cases {
        let mut r = receipt();
        mutate(&mut r);
        let (code, out, _) = valid(&r);
        assert_eq!(
            (code, out["error"]["rule"].clone()),
            (2, json!(rule)),
            "{out}"
        );
    }
    // No fence inside the bytes.
    let mut r = receipt();
    r["resume"]["next_action"] = json!("run ```cargo test```");
    assert_eq!(valid(&r).1["error"]["rule"], "fence-inside");
}

#[test]
fn bind_repository_rules() {
    let bind = |v: &Value| park(&["park", "bind-repository"], &v.to_string(), None);
    let (code, out, _) = bind(&bind_input());
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["canonical_remote"], "github.com/example/project");
    assert_eq!(out["registration"]["name"], "project");
    assert_eq!(out["bound_root"], ROOT);
    let commands = out["commands"].as_array().unwrap();
    assert!(!commands.is_empty(), "{out}");
    assert!(commands
        .iter()
        .all(|c| c[0] == "git" && c[1] == "-C" && c[2] == ROOT));
    // A linked worktree.
    let mut v = bind_input();
    v["observations"]["git_dir"]["stdout"] = json!("/srv/main/.git/worktrees/project\n");
    v["observations"]["common_dir"]["stdout"] = json!("/srv/main/.git\n");
    assert_eq!(bind(&v).0, 0);
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "selector-mismatch",
            Box::new(|v| v["selector"] = json!({"kind": "bead", "value": "rsry-other"})),
        ),
        (
            "path-root-mismatch",
            Box::new(|v| v["observations"]["root"]["stdout"] = json!("/srv/work\n")),
        ),
        (
            "bound-command",
            Box::new(|v| {
                v["observations"]["remote"]["command"] =
                    json!(["git", "remote", "get-url", "origin"])
            }),
        ),
        (
            "git-dir-relationship",
            Box::new(|v| v["observations"]["git_dir"]["stdout"] = json!("/tmp/elsewhere/.git\n")),
        ),
        (
            "registration-match",
            Box::new(
                |v| v["registrations"] = json!([{"name": "a", "url": "https://github.com/example/project.git"}, {"name": "b", "url": "ssh://git@github.com/example/project"}]),
            ),
        ),
        (
            "registration-match",
            Box::new(|v| {
                v["registrations"] =
                    json!([{"name": "a", "url": "https://github.com:8443/example/project"}])
            }),
        ),
        (
            "remote-url",
            Box::new(|v| v["observations"]["remote"]["stdout"] = json!("/local/mirror\n")),
        ),
        (
            "backend-unsupported",
            Box::new(|v| v["receipt_identity"]["repository"]["vcs"] = json!("jj")),
        ),
    ];
    for (rule, mutate) in cases {
        let mut v = bind_input();
        mutate(&mut v);
        let (code, out, _) = bind(&v);
        assert_eq!(
            (code, out["error"]["rule"].clone()),
            (2, json!(rule)),
            "{out}"
        );
    }
}

#[test]
fn the_resume_gate_never_authorizes() {
    for claim in [
        json!(null),
        json!({"dedupe": true}),
        json!({"claim_id": "c-1", "owner": "me", "lease_expiry": "2099-01-01T00:00:00Z"}),
    ] {
        let (code, out, _) = park(
            &["park", "resume-gate"],
            &json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": claim}).to_string(),
            None,
        );
        assert_eq!(code, 0);
        assert_eq!(out["authorized"], false);
        assert_eq!(out["required_mechanism"], "rosary-04faf5");
        assert_eq!(out["allowed_actions"], json!(["read_only_inspection"]));
        assert_eq!(
            out["blocked_actions"],
            json!(["workspace_creation", "resumed_observation", "work"])
        );
        assert_eq!(
            out["gate_order"],
            json!([
                "read_only_inspection",
                "atomic_claim_required",
                "workspace_creation_blocked",
                "resumed_observation_blocked",
                "work_blocked"
            ])
        );
    }
    let (code, _, _) = park(
        &["park", "resume-gate"],
        &json!({"episode_id": "ep-x", "intent_id": INTENT}).to_string(),
        None,
    );
    assert_eq!(code, 2);
}

#[test]
fn the_readme_episode_script_reaches_safe_to_close() {
    // The README's main-job command runs this script; keep it true.
    let t = TempJournal::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/park-episode.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_DB", t.path())
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("\"state_name\":\"safe-to-close\""),
        "{stdout}"
    );
    assert!(stdout.contains("\"redecided\":5"), "{stdout}");
    assert!(stdout.contains("receipt-confirmed v1"), "{stdout}");
}

#[test]
fn a_refused_transition_creates_no_journal() {
    // No journal yet: a refusal (no prepared attempt) and an unsafe evaluation must not
    // leave even an empty file behind.
    let t = TempJournal::new();
    let db = t.path();
    let ids = [
        "--episode-id",
        EPISODE,
        "--intent-id",
        INTENT,
        "--attempt-id",
        ATTEMPT,
    ];
    let (code, out, _) = park(
        &[&["park", "evaluate"][..], &ids].concat(),
        &observation().to_string(),
        Some(&db),
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("attempt-prepared")),
        "{out}"
    );
    let (code, _, _) = park(
        &[
            "pr",
            "confirm",
            "--pr",
            crate::support::pr::PR,
            "--what",
            "merge",
            "--operator",
            "a",
        ],
        "",
        Some(&db),
    );
    assert_eq!(code, 2);
    assert!(
        !db.exists(),
        "a refused transition created {}",
        db.display()
    );
}

/// #21, park trusts no fact the journal contradicts: a `pr_merged: pass` for a PR
/// whose loop in this journal is live and has not seen the merge is refused,
/// naming the loop's stream, with nothing written; once the loop records the
/// merge (cairn's reading of a merged PR), the same evaluation authorizes the
/// receipt, and the audit re-decides it with the loop's version it read.
#[test]
fn a_pr_loop_that_has_not_seen_the_merge_outranks_pr_merged() {
    use crate::support::pr;
    let t = TempJournal::new();
    let db = t.path();
    let prepare = json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE,
        "intent_id": INTENT, "prior_receipts": []});
    let (code, prepared, _) = park(
        &["park", "prepare-attempt"],
        &prepare.to_string(),
        Some(&db),
    );
    assert_eq!(code, 0, "{prepared}");
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    let evaluate = |v: &Value| {
        park(
            &[
                "park",
                "evaluate",
                "--episode-id",
                EPISODE,
                "--intent-id",
                INTENT,
                "--attempt-id",
                &attempt,
            ],
            &v.to_string(),
            Some(&db),
        )
    };
    let mut v = observation();
    let merged = json!({"state": "MERGED", "mergedAt": "2026-11-30T03:00:00Z", "url": PR});
    pr_backed(&mut v, "pass", merged);
    // A spelling that is no PR identity cairn can read names no loop the journal
    // could be asked about: refused, not waved through (the hostile pass's bypass).
    let before = t.bytes();
    for odd in [
        "https://github.com/%65xample/project/pull/7",
        "https://user@github.com/example/project/pull/7",
        "https://github.com/example/project/pull/7%2F",
        "https://github.com/example/project/pull/\u{ff17}",
    ] {
        let mut w = observation();
        let response = json!({"state": "MERGED", "mergedAt": "2026-11-30T03:00:00Z", "url": odd});
        pr_backed(&mut w, "pass", response);
        w["bead"]["pr_url"] = json!(odd);
        let argv = ["gh", "pr", "view", odd, "--json", "state,mergedAt,url"];
        get(&mut w, "pr_merged")["evidence"]["command"] = json!(argv);
        let (code, out, _) = evaluate(&w);
        let violation = &out["error"]["violations"][0];
        assert_eq!(
            (code, &violation["predicate"], &violation["field"]),
            (2, &json!("pr-identity"), &json!("bead.pr_url")),
            "{odd}: {out}"
        );
    }
    assert_eq!(t.bytes(), before, "a refusal wrote");
    // No loop for this PR in the journal: the journal says nothing (the read is
    // of a stream at version 0), so the observation decides — on a second episode.
    {
        let other = TempJournal::new();
        let odb = other.path();
        let (code, p, _) = park(
            &["park", "prepare-attempt"],
            &prepare.to_string(),
            Some(&odb),
        );
        assert_eq!(code, 0, "{p}");
        let a = p["attempt_id"].as_str().unwrap().to_owned();
        let (code, out, _) = park(
            &[
                "park",
                "evaluate",
                "--episode-id",
                EPISODE,
                "--intent-id",
                INTENT,
                "--attempt-id",
                &a,
            ],
            &v.to_string(),
            Some(&odb),
        );
        assert_eq!((code, &out["eligible"]), (0, &json!(true)), "{out}");
    }
    // The loop, spelled another way, is observing: its merge is not seen yet.
    let spelled = "https://GitHub.com/Example/Project/pull/07";
    let mut reading = pr::doc("changes-requested", "merge");
    reading["pr"] = json!(spelled);
    let (code, out, _) = park(&["pr", "observe"], &reading.to_string(), Some(&db));
    assert_eq!(code, 0, "{out}");
    let before = t.bytes();
    let (code, out, _) = evaluate(&v);
    let violation = &out["error"]["violations"][0];
    assert_eq!(
        (code, &violation["predicate"], &violation["field"]),
        (2, &json!("journal-agrees"), &json!("checks.pr_merged")),
        "{out}"
    );
    assert!(
        violation["message"]
            .as_str()
            .is_some_and(|m| m.contains("pr-loop/github.com/example/project/pull/7")),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote");
    // The loop reads the PR merged with cairn's own gh run: the journal now agrees.
    let gh = pr::StandInGh::new();
    gh.answer(&pr::reading("merged"));
    let mut rest = pr::doc("merged", "merge");
    rest.as_object_mut().unwrap().remove("reading");
    let (code, out, _) = pr::cairn_with(
        &["pr", "observe", "--pr", PR],
        &rest.to_string(),
        &db,
        Some(gh.dir.path()),
        &[],
    );
    assert_eq!((code, &out["state"]), (0, &json!("complete")), "{out}");
    let (code, out, _) = evaluate(&v);
    assert_eq!((code, &out["eligible"]), (0, &json!(true)), "{out}");
    let (code, out, _) = park(&["journal", "audit"], "", Some(&db));
    assert_eq!(code, 0, "{out}");
}

/// The anchor is the retry command's positional argument: one that reads as an
/// option, or holds a character a person cannot see, is refused at input (exit
/// 2, `field: anchor_bead`), nothing written (helper-70, LOW: `--help` and U+202E
/// were recorded and pasted into `retry_command`).
#[test]
fn an_anchor_that_reads_as_an_option_or_hides_a_character_is_refused() {
    let t = TempJournal::new();
    let db = t.path();
    for (anchor, rule) in [
        ("--help", "option-like"),
        ("--episode-id=ep-x", "option-like"),
        ("bd-1\u{202E}2", "invisible-character"),
        ("bd-1\u{0}", "invisible-character"),
    ] {
        let (code, out, _) = park(
            &["park", "prepare-attempt"],
            &json!({"mode": "park", "anchor_bead": anchor, "episode_id": null, "intent_id": null, "prior_receipts": []}).to_string(),
            Some(&db),
        );
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some("anchor_bead"), Some(rule)),
            "{anchor:?}: {out}"
        );
    }
    assert!(!db.exists(), "nothing written");
}
