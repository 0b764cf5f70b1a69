//! Documents built the helper's way walked through the journal with
//! `--episode-id/--intent-id/--attempt-id` after `prepare-attempt`, and an
//! episode recorded under rules v1 replaying and auditing beside them.

use serde_json::{json, Value};

use crate::support::park_helper::*;
use crate::support::TempJournal;

#[test]
fn helper_documents_walk_the_journal_to_safe_to_close() {
    let t = TempJournal::new();
    let db = t.path();
    let (code, out, err) = raw(
        &["park", "prepare-attempt"],
        &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string(),
        Some(&db),
    );
    assert_eq!(code, 0, "{err}");
    let prepared: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&prepared["action"], &prepared["ready"]),
        (&json!("evaluate"), &json!(true))
    );
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    assert_eq!(
        journaled("evaluate", &attempt, &preflight().to_string(), &db),
        (0, checkpoint())
    );
    assert_eq!(
        journaled("evaluate", &attempt, &observation().to_string(), &db),
        (0, eligible())
    );
    let bytes = serde_json::to_string_pretty(&receipt(&attempt)).unwrap();
    assert_eq!(
        journaled("validate-receipt", &attempt, &bytes, &db),
        (0, json!({"valid": true}))
    );
    let readback = json!({"receipt_bytes": bytes, "comments": [{"id": "c-20", "body": "parking"}, {"id": "c-21", "body": fence(&bytes)}]});
    assert_eq!(
        journaled("confirm-readback", &attempt, &readback.to_string(), &db),
        (
            0,
            json!({"comment_id": "c-21", "durable": true, "reasons": [], "safe_to_close": true})
        )
    );
    let (code, state, _) = raw(&["state", &format!("park/{EPISODE}")], "", Some(&db));
    let state: Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        (code, &state["state_name"], &state["state"]["comment_id"]),
        (0, &json!("safe-to-close"), &json!("c-21"))
    );
    let (code, audit, _) = raw(&["journal", "audit"], "", Some(&db));
    let audit: Value = serde_json::from_str(&audit).unwrap();
    assert_eq!(
        (code, &audit["ok"], &audit["redecided"]),
        (0, &json!(true), &json!(5)),
        "{audit}"
    );
    // The receipt now comes back as the prior success, and nothing new is recorded.
    let before = t.bytes();
    let source = json!({"receipt": receipt(&attempt), "source_bytes": bytes, "comment_id": "c-21"});
    let (code, out, _) = raw(
        &["park", "prepare-attempt"],
        &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": [source]}).to_string(),
        Some(&db),
    );
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, &out["action"]), (0, &json!("return_existing")));
    assert_eq!(t.bytes(), before);
}

/// One transition as rules v1 recorded it on the episode's stream.
fn v1_transition(expected: u64, command: Value, event: Value) -> cairn::journal::Append {
    use cairn::journal::{Append, NewEvent, TransitionRecord};
    let context = json!({"now": "2026-11-30T04:00:00Z", "fresh_ids": [
        "6f1c2e3d-4a5b-4c7e-9d2a-0b1e6f5e3c1a", "5a6b4c7d-8e9f-4a1b-9c3d-1c2d3e4f0a2b", "9f0a1b2c-3d4e-4f5a-8b7c-2d3e4f5a6b7c"
    ], "session": null});
    Append {
        stream: format!("park/{EPISODE}"),
        machine: "park".into(),
        expected_version: expected,
        events: vec![NewEvent {
            event_type: event["type"].as_str().unwrap().to_owned(),
            schema_version: 1,
            payload: event.to_string(),
        }],
        transition: TransitionRecord {
            command_name: command["command"].as_str().unwrap().to_owned(),
            command: command.to_string(),
            context: context.to_string(),
            rules_version: 1,
        },
        idempotency: None,
        recorded_at: "2026-11-30T04:00:00Z".into(),
        reads: Vec::new(),
        scans: Vec::new(),
    }
}

#[test]
fn a_journal_recorded_under_rules_v1_still_replays_and_audits() {
    // An episode as rules v1 recorded it: a detected anchor, the ten-command
    // binding, and v1's narrative reasons. v2 refuses that observation, so the
    // audit must say the rules moved (a notice), not that the record is forged.
    let mut old = preflight();
    old["checks"][0]["evidence"]["source"] = json!("current_branch");
    let ten: Vec<Value> = [
        &["status", "--porcelain=v2", "--branch"][..],
        &["diff", "--name-only", "--diff-filter=U"],
        &["rev-parse", "--show-toplevel"],
        &["rev-parse", "--path-format=absolute", "--git-dir"],
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        &["remote", "get-url", "origin"],
        &["branch", "--show-current"],
        &["rev-parse", "HEAD"],
        &["rev-parse", "@{upstream}"],
        &["merge-base", "--is-ancestor", "HEAD", "@{upstream}"],
    ]
    .iter()
    .map(|rest| git(rest))
    .collect();
    old["checks"][1]["evidence"]["binding"]["commands"] = json!(ten);
    let t = TempJournal::new();
    let db = t.path();
    let mut j = t.journal();
    let prepare = json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []});
    j.append(&v1_transition(
        0,
        json!({"command": "prepare-attempt", "input": prepare}),
        json!({"type": "attempt-prepared", "episode_id": EPISODE, "intent_id": INTENT, "anchor_bead": ANCHOR, "attempt_id": ATTEMPT, "at": "2026-11-30T04:00:00Z"}),
    ))
    .unwrap();
    let v1_reasons = json!([
        "anchor_confirmed=pass",
        "repository_resolved=pass",
        "no_active_dispatch=pass",
        "no_running_child_operation=pass",
        "no_vcs_operation_or_conflict=pass",
        "tree_preserved=pass",
        "commits_reachable_or_checkpoint_resolvable=pass",
        "close_condition_satisfied=unknown",
        "bead_terminal=fail",
        "resume_target_resolvable=pass",
        "parked: bead non-terminal; close_condition_satisfied unavailable until rosary-a6166d",
        "preflight: checkpoint the bound workspace, then re-observe preservation as durable"
    ]);
    j.append(&v1_transition(
        1,
        json!({"command": "evaluate", "episode_id": EPISODE, "intent_id": INTENT, "attempt_id": ATTEMPT, "observation": old}),
        json!({"type": "checkpoint-authorized", "attempt_id": ATTEMPT, "evaluation": {
            "action": "checkpoint", "candidate": "parked", "eligible": false, "protocol_phase": "preflight", "reasons": v1_reasons}}),
    ))
    .unwrap();
    drop(j);
    // v2 refuses that observation now.
    refused(
        "check",
        &old.to_string(),
        "checks[0].evidence.source",
        "anchor-unconfirmed",
    );
    let (code, state, _) = raw(&["state", &format!("park/{EPISODE}")], "", Some(&db));
    let state: Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        (
            code,
            &state["state_name"],
            &state["state"]["evaluation"]["reasons"]
        ),
        (0, &json!("checkpoint-authorized"), &v1_reasons)
    );
    // The episode goes on under v2: a new attempt, then the helper's documents.
    let (code, out, err) = raw(
        &["park", "prepare-attempt"],
        &prepare.to_string(),
        Some(&db),
    );
    assert_eq!(code, 0, "{err}");
    let attempt = serde_json::from_str::<Value>(&out).unwrap()["attempt_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        journaled("evaluate", &attempt, &observation().to_string(), &db),
        (0, eligible())
    );
    let (code, audit, _) = raw(&["journal", "audit"], "", Some(&db));
    let audit: Value = serde_json::from_str(&audit).unwrap();
    let kinds: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        (code, &audit["ok"], &audit["redecided"], kinds),
        (
            0,
            &json!(true),
            &json!(2),
            vec!["rules-changed", "rules-changed"]
        ),
        "{audit}"
    );
}
