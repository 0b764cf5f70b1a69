//! `journal audit` re-derives the pr-loop's tier, rounds and merge from the recorded
//! evidence: a transition appended through the journal API with an intact hash
//! chain, but events the rules do not yield from its command, is named.

use std::path::Path;

use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
use cairn::machines::pr_loop::PrLoop;
use cairn::Machine;
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::pr::*;
use crate::support::TempJournal;

const STREAM: &str = "pr-loop/github.com/example/project/pull/7";

/// Appends one transition the rules did not produce (valid chain, rules v2).
fn forge(db: &Path, version: u64, command: &Value, events: &[Value]) {
    let mut j = Journal::open(db, &Options::default()).unwrap();
    j.append(&Append {
        stream: STREAM.into(),
        machine: "pr-loop".into(),
        expected_version: version,
        events: events
            .iter()
            .map(|e| NewEvent {
                event_type: e["type"].as_str().unwrap().into(),
                schema_version: 1,
                payload: e.to_string(),
            })
            .collect(),
        transition: TransitionRecord {
            command_name: command["command"].as_str().unwrap().into(),
            command: command.to_string(),
            context: serde_json::to_string(&crate::support::ctx(9)).unwrap(),
            rules_version: PrLoop::RULES_VERSION,
        },
        idempotency: None,
        recorded_at: "2026-11-30T09:00:00Z".into(),
        reads: Vec::new(),
        scans: Vec::new(),
    })
    .unwrap();
}

fn last_command(t: &TempJournal) -> Value {
    serde_json::from_str(t.commands().last().expect("a transition")).unwrap()
}

fn audit_names(db: &Path, kind: &str) {
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(db));
    let kinds: Vec<&str> = audit["findings"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["kind"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        code == 5 && audit["ok"] == json!(false) && kinds.contains(&kind),
        "{audit}"
    );
}

fn observed(classification: &Value) -> Value {
    json!({"type": "observed", "pr": PR, "classification": classification,
           "at": "2026-11-30T00:09:00Z", "source": "stdin"})
}

#[test]
fn a_round_the_same_reading_did_not_start_fails_the_audit() {
    let t = TempJournal::new();
    let mut failing = doc("pending-or-failing-checks", "merge");
    failing["reading"]["headRefOid"] = json!("a".repeat(40));
    let (code, out, _) = cairn(&["pr", "observe"], &failing.to_string(), Some(&t.path()));
    assert_eq!(code, 0, "{out}");
    let command = last_command(&t);
    // The same reading again, recorded as a second round.
    forge(
        &t.path(),
        2,
        &command,
        &[
            observed(&out["classification"]),
            json!({"type": "round-started", "round": 2,
                   "basis": {"head": "a".repeat(40), "on": "pending-or-failing-checks"}}),
        ],
    );
    audit_names(&t.path(), "redecide-mismatch");
}

#[test]
fn a_tier_applied_without_its_token_fails_the_audit() {
    let t = TempJournal::new();
    let mut failing = doc("pending-or-failing-checks", "merge");
    failing["failure_shape"] = json!("depth");
    failing["tiers"] =
        json!({"ladder": ["haiku", "sonnet"], "current": "haiku", "ceiling": "sonnet"});
    let (code, out, _) = cairn(&["pr", "observe"], &failing.to_string(), Some(&t.path()));
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("escalation-proposed")),
        "{out}"
    );
    let command = json!({"command": "resolve-escalation", "mode": "attended",
                         "decision": "apply", "approval_token": "esc-guessed"});
    forge(
        &t.path(),
        out["version"].as_u64().unwrap(),
        &command,
        &[json!({"type": "escalation-applied", "to": "sonnet", "approval_token": "esc-guessed"})],
    );
    audit_names(&t.path(), "redecide-rejected");
}

#[test]
fn a_merge_the_recorded_reading_does_not_show_fails_the_audit() {
    let t = TempJournal::new();
    let fresh = FreshRepo::new();
    let (code, _, _) = cairn(
        &["pr", "observe", "--repo", fresh.repo()],
        &fresh.doc("approved-fresh", "merge").to_string(),
        Some(&t.path()),
    );
    assert_eq!(code, 0);
    let (code, out, _) = cairn(
        &[
            "pr",
            "confirm",
            "--pr",
            PR,
            "--what",
            "merge",
            "--operator",
            "alice",
        ],
        "",
        Some(&t.path()),
    );
    assert_eq!(code, 0, "{out}");
    // gh showed the PR still open; the forged record says it merged.
    let mut open = reading("approved-fresh");
    open["headRefOid"] = json!(fresh.head());
    let command = json!({"command": "record-merge",
                         "evidence": {"source": "gh", "run": gh_run(&open)}});
    forge(
        &t.path(),
        out["version"].as_u64().unwrap(),
        &command,
        &[
            json!({"type": "merged-by-loop", "merged_at": "2026-11-30T05:00:00Z", "via": {"source": "gh"}}),
        ],
    );
    audit_names(&t.path(), "redecide-rejected");
}

/// A loop recorded under rules v1 (its commands and events as v1 wrote them):
/// it replays, `state` reads it, and the audit passes with a `rules-changed` notice.
#[test]
fn a_rules_v1_journal_still_replays_and_audits_with_a_notice() {
    let t = TempJournal::new();
    let classification = |state: &str, action: &str| {
        json!({"state": state, "action": action, "checks": "passing", "merge_offer": action == "offer-merge",
               "request_review": false, "next_step": "n"})
    };
    let old_input = json!({"pr": PR, "reading": reading("changes-requested"), "reviewed_sha": SHA,
                           "commits_since_review": 0, "unresolved_threads": null, "destination": "merge",
                           "failure_shape": "depth", "tiers": {"ladder": ["a", "b"], "current": "a", "ceiling": "b"},
                           "freshness_observation": gh_run(&json!(0))});
    let transitions: Vec<(Value, Vec<Value>)> = vec![
        (
            json!({"command": "observe", "input": old_input}),
            vec![
                json!({"type": "observed", "pr": PR, "classification": classification("changes-requested", "new-round"), "at": "2026-11-30T00:01:00Z"}),
                json!({"type": "round-started", "round": 1}),
                json!({"type": "escalation-proposed", "proposal": {"from": "a", "to": "b", "cost_delta": 1}}),
            ],
        ),
        (
            json!({"command": "resolve-escalation", "mode": "attended", "decision": "apply", "approval_token": "tok-1"}),
            vec![json!({"type": "escalation-applied", "to": "b", "approval_token": "tok-1"})],
        ),
        (
            json!({"command": "observe", "input": {"pr": PR, "reading": reading("approved-fresh"), "reviewed_sha": SHA, "commits_since_review": 0, "unresolved_threads": null, "destination": "merge", "failure_shape": null, "tiers": null}}),
            vec![
                json!({"type": "observed", "pr": PR, "classification": classification("approved-fresh", "offer-merge"), "at": "2026-11-30T00:02:00Z"}),
                json!({"type": "merge-offered"}),
            ],
        ),
        (
            json!({"command": "confirm", "what": "merge", "operator": "alice"}),
            vec![json!({"type": "merge-confirmed", "operator": "alice"})],
        ),
        (
            json!({"command": "record-merge", "merged_at": "2026-11-30T06:00:00Z"}),
            vec![json!({"type": "merged-by-loop", "merged_at": "2026-11-30T06:00:00Z"})],
        ),
    ];
    let mut j = Journal::open(&t.path(), &Options::default()).unwrap();
    let mut version = 0;
    for (command, events) in &transitions {
        j.append(&Append {
            stream: STREAM.into(),
            machine: "pr-loop".into(),
            expected_version: version,
            events: events
                .iter()
                .map(|e| NewEvent {
                    event_type: e["type"].as_str().unwrap().into(),
                    schema_version: 1,
                    payload: e.to_string(),
                })
                .collect(),
            transition: TransitionRecord {
                command_name: command["command"].as_str().unwrap().into(),
                command: command.to_string(),
                context: json!({"now": "2026-11-30T00:01:00Z", "fresh_ids": []}).to_string(),
                rules_version: 1,
            },
            idempotency: None,
            recorded_at: "2026-11-30T00:01:00Z".into(),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .unwrap();
        version += events.len() as u64;
    }
    drop(j);
    let (code, state, _) = cairn(&["state", STREAM], "", Some(&t.path()));
    assert_eq!(
        (
            code,
            state["state_name"].clone(),
            state["state"]["l"]["tier"].clone()
        ),
        (0, json!("complete"), json!("b")),
        "{state}"
    );
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&t.path()));
    let kinds: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert_eq!(code, 0, "{audit}");
    assert!(
        audit["ok"] == json!(true)
            && !kinds.is_empty()
            && kinds.iter().all(|k| *k == "rules-changed"),
        "{audit}"
    );
}
