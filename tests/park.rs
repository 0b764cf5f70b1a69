//! The park machine through the real `cairn` binary: every rule of the seed as a
//! table case asserting the exact exit code and output, the journal left
//! byte-for-byte unchanged by refusals, and a whole episode walked to safe_to_close.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::park::*;
use crate::support::TempJournal;

/// Runs `cairn` with `stdin`; (exit code, stdout JSON, stderr).
pub fn park(args: &[&str], stdin: &str, db: Option<&Path>) -> (i32, Value, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args).env_remove("CAIRN_DB").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    } else {
        // Never touch a real user journal from a test.
        cmd.env("CAIRN_DB", "/nonexistent/cairn-test/journal.db");
    }
    let mut child = cmd.spawn().expect("cairn runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).ok();
    let out = child.wait_with_output().expect("cairn exits");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.ends_with('\n'), "output ends with a newline: {stdout:?}");
    assert_eq!(stdout.lines().count(), 1, "exactly one JSON object: {stdout:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), v, String::from_utf8_lossy(&out.stderr).into_owned())
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
    assert_eq!((out["eligible"].clone(), out["action"].clone()), (json!(false), Value::Null), "{out}");
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
    let reasons: Vec<&str> = out["reasons"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(reasons.contains(&"close_condition_satisfied=unknown") && reasons.contains(&"bead_terminal=fail"), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("rosary-a6166d")), "{reasons:?}");
}

#[test]
fn preflight_authorizes_a_checkpoint_and_is_never_eligible() {
    let (code, out) = check_doc(&preflight());
    assert_eq!(code, 0);
    assert_eq!((out["eligible"].clone(), out["action"].clone(), out["candidate"].clone()), (json!(false), json!("checkpoint"), json!("parked")));
    // Preflight with durable preservation: still never eligible, and no checkpoint.
    let mut v = observation();
    v["protocol_phase"] = json!("preflight");
    let out = unsafe_result(&v);
    assert_eq!(out["candidate"], "parked");
}

#[test]
fn checkpointable_evidence_in_the_durable_phase_is_not_eligible() {
    let mut v = preflight();
    v["protocol_phase"] = json!("durable");
    unsafe_result(&v);
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
    pr_backed(&mut v, "fail", json!({"state": "OPEN", "mergedAt": null, "url": PR}));
    assert_eq!(check_doc(&v).1["eligible"], true);
    remove(&mut v, "pr_merged");
    refused(&v, "missing-check", None);
    let mut v = observation();
    v["checks"].as_array_mut().unwrap().push(check("pr_merged", "completion", "unknown", json!({"source": "gh", "detail": "x", "command": ["gh"], "error": "no"})));
    refused(&v, "inapplicable-check", None);
}

#[test]
fn pr_evidence_is_read_as_gh_prints_it() {
    let cases = [
        (json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": PR}), "pass"),
        (json!({"state": "OPEN", "mergedAt": null, "url": PR}), "fail"),
        (json!({"state": "CLOSED", "url": PR}), "fail"),
        (json!({"state": "MERGED", "mergedAt": "yesterday", "url": PR}), "unknown"),
        (json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": "https://github.com/example/project/pull/8"}), "unknown"),
        (json!({"state": "DRAFTY", "mergedAt": null, "url": PR}), "unknown"),
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
                assert_eq!((code, out["error"]["rule"].clone()), (2, json!("outcome-contradicts-evidence")), "{response} stated {stated}: {out}");
            }
        }
    }
    let mut v = observation();
    pr_backed(&mut v, "pass", json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": PR}));
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
    refused(&v, "outcome-contradicts-evidence", Some("checks[8].outcome"));
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
        ("no_active_dispatch", json!({"source": "rsry_active+rsry_dispatch_history", "detail": "timeout", "error": "rsry_active timed out"})),
        ("no_running_child_operation", json!({"source": "codex.current_child_operations", "detail": "not exposed", "client": "codex", "authoritative": false, "error": "adapter not exposed"})),
        ("no_vcs_operation_or_conflict", json!({"source": "git", "detail": "unreadable", "backend": "git", "bound_root": ROOT, "error": "index.lock"})),
        ("tree_preserved", json!({"source": "git", "detail": "?", "backend": "git", "bound_root": ROOT, "workspace": ROOT, "state": "unknown", "error": "x"})),
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
    get(&mut v, "no_vcs_operation_or_conflict")["evidence"]["commands"] = json!([["git", "status"]]);
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
    get(&mut v, "tree_preserved")["evidence"]["resolver_command"] = json!(["git", "-C", ROOT, "rev-parse", "HEAD"]);
    refused(&v, "resolver-command", None);
}

#[test]
fn every_vcs_reading_uses_the_bound_root() {
    let mut v = observation();
    let other = "/srv/work/elsewhere";
    let e = &mut get(&mut v, "tree_preserved")["evidence"];
    e["bound_root"] = json!(other);
    e["workspace"] = json!(other);
    e["resolver_command"] = json!(["git", "-C", other, "cat-file", "-e", "refs/heads/feature/park^{commit}"]);
    refused(&v, "bound-root-mismatch", None);
}

#[test]
fn durable_references_must_resolve_to_the_resume_head() {
    let other = "fedcba9876543210fedcba9876543210fedcba98";
    let mut v = observation();
    get(&mut v, "commits_reachable_or_checkpoint_resolvable")["evidence"]["resolved_head"] = json!(other);
    let out = unsafe_result(&v);
    assert_eq!(out["candidate"], "parked");
}

#[test]
fn ids_must_be_canonical() {
    let flags = |e: &str, i: &str, a: &str| park(&["park", "evaluate", "--episode-id", e, "--intent-id", i, "--attempt-id", a], &observation().to_string(), None);
    for (e, i, a, field) in [
        ("ep-0B1E6F5E-3C1A-4B7E-9D2A-5F1C2E3D4A5B", INTENT, ATTEMPT, "episode_id"),
        (EPISODE, "park-nope", ATTEMPT, "intent_id"),
        (EPISODE, INTENT, "attempt-{2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a}", "attempt_id"),
        (INTENT, EPISODE, ATTEMPT, "episode_id"),
    ] {
        let (code, out, _) = flags(e, i, a);
        assert_eq!((code, out["error"]["field"].clone()), (2, json!(field)), "{out}");
    }
    let (code, out, _) = park(&["park", "evaluate", "--episode-id", EPISODE], &observation().to_string(), None);
    assert_eq!((code, out["error"]["rule"].clone()), (2, json!("identity-flags")));
}

#[test]
fn an_unknown_verb_exits_2() {
    let (code, out, _) = park(&["park", "close-bead"], "{}", None);
    assert_eq!((code, out["error"]["kind"].clone()), (2, json!("usage")));
}

#[test]
fn bad_input_is_refused_without_a_panic() {
    for stdin in ["", "{", "[]", "null", "{\"schema_version\": 1e999}", "\u{0}", "{\"a\":1}{\"b\":2}"] {
        let (code, out, stderr) = park(&["park", "check"], stdin, None);
        assert_eq!(code, 2, "{stdin:?}: {out}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (code, _, stderr) = park(&["park", "check"], &deep, None);
    assert_eq!(code, 2);
    assert!(!stderr.contains("panicked") && !stderr.contains("overflow"), "{stderr}");
}
