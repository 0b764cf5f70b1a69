//! The helper's wire, held: documents built exactly as the park skill's helper
//! builds them (`support::park_helper`) run through every `cairn park` verb, and
//! each answer compared with the helper's — fields, values and stdout bytes
//! (`json.dump(obj, sort_keys=True)` and a newline). `park_helper_fold` holds
//! `evaluate`'s answers, `park_helper_journal` the journaled walk.

use serde_json::{json, Value};

use crate::support::park_helper::*;
use crate::support::TempJournal;

#[test]
fn bind_repository_answers_with_the_helpers_binding_and_its_five_commands() {
    answers("bind-repository", &bind_input(), binding());
    // A trailing newline on an observation's stdout (as git prints it) binds the same.
    let mut v = bind_input();
    for key in ["root", "git_dir", "common_dir", "remote"] {
        let s = v["observations"][key]["stdout"]
            .as_str()
            .unwrap()
            .to_owned();
        v["observations"][key]["stdout"] = json!(format!("{s}\n"));
    }
    let (code, out, _) = park("bind-repository", &v.to_string());
    assert_eq!((code, &out["commands"]), (0, &binding()["commands"]));
}

#[test]
fn bind_repository_refuses_an_empty_branch_or_a_head_that_is_not_a_full_id() {
    for (key, value, rule) in [
        ("branch", "", "nonempty-string"),
        ("branch", "   ", "nonempty-string"),
        ("head", "", "full-head"),
        ("head", "89abcdef", "full-head"),
        ("head", &HEAD.to_uppercase(), "full-head"),
    ] {
        let mut v = bind_input();
        v["receipt_identity"]["repository"][key] = json!(value);
        refused(
            "bind-repository",
            &v.to_string(),
            &format!("receipt_identity.repository.{key}"),
            rule,
        );
    }
    // A 64-hex (SHA-256) head is a full id.
    let mut v = bind_input();
    v["receipt_identity"]["repository"]["head"] = json!(format!("{HEAD}{}", &HEAD[..24]));
    assert_eq!(park("bind-repository", &v.to_string()).0, 0);
}

#[test]
fn a_helper_made_binding_passes_every_verb() {
    answers("check", &observation(), eligible());
    answers("evaluate", &observation(), eligible());
    answers("check", &preflight(), checkpoint());
    let bytes = receipt(ATTEMPT).to_string();
    let (code, out, err) = raw(&["park", "validate-receipt"], &bytes, None);
    assert_eq!((code, out.as_str()), (0, "{\"valid\": true}\n"), "{err}");
    answers(
        "confirm-readback",
        &json!({"receipt_bytes": bytes, "comments": [{"id": "c-1", "body": "parking"}, {"id": "c-2", "body": fence(&bytes)}]}),
        json!({"comment_id": "c-2", "durable": true, "reasons": [], "safe_to_close": true}),
    );
}

#[test]
fn receipts_the_helper_wrote_come_back_through_prepare_attempt() {
    let first = receipt(ATTEMPT);
    let mut retry = receipt("attempt-0a1b2c3d-4e5f-4a6b-8c7d-3e4f5a6b7c8d");
    retry["provider_sessions"] = json!([]);
    retry["references"] = json!([]);
    let prior = |r: &Value, id: &str| json!({"receipt": r, "source_bytes": r.to_string(), "comment_id": id});
    let input = |priors: Value| json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": priors});
    answers(
        "prepare-attempt",
        &input(json!([prior(&retry, "c-9"), prior(&first, "c-10")])),
        json!({
            "action": "return_existing", "ready": true, "episode_id": EPISODE, "intent_id": INTENT,
            "receipt": first,
            "prior_sources": [
                {"comment_id": "c-10", "source_bytes": first.to_string()},
                {"comment_id": "c-9", "source_bytes": retry.to_string()}
            ]
        }),
    );
    // Bare receipts carry no source: the first in their canonical order, no prior_sources.
    answers(
        "prepare-attempt",
        &input(json!([retry, first])),
        json!({"action": "return_existing", "ready": true, "episode_id": EPISODE, "intent_id": INTENT, "receipt": retry}),
    );
}

#[test]
fn a_malformed_prior_receipt_is_refused_never_skipped() {
    let t = TempJournal::new();
    let db = t.path();
    // An open episode, so a refusal has a journal to leave unchanged.
    let prepare = |priors: Value| {
        json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": priors}).to_string()
    };
    let (code, _, err) = raw(&["park", "prepare-attempt"], &prepare(json!([])), Some(&db));
    assert_eq!(code, 0, "{err}");
    let before = t.bytes();
    for bad in [json!(null), json!(""), json!(0), json!([]), json!(true)] {
        let (code, out, _) = raw(
            &["park", "prepare-attempt"],
            &prepare(json!([receipt(ATTEMPT), bad])),
            Some(&db),
        );
        let out: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some("prior_receipts[1]"), Some("type")),
            "{bad}: {out}"
        );
    }
    // A wrapper missing its receipt is a malformed wrapper, not a bare receipt.
    let (code, out, _) = raw(
        &["park", "prepare-attempt"],
        &prepare(json!([{"source_bytes": "{}", "comment_id": "c-1"}])),
        Some(&db),
    );
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("required")),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote to the journal");
}

#[test]
fn the_resume_gate_answers_exactly_as_the_helper() {
    let want = "{\"allowed_actions\": [\"read_only_inspection\"], \"authorized\": false, \
        \"blocked_actions\": [\"workspace_creation\", \"resumed_observation\", \"work\"], \
        \"gate_order\": [\"read_only_inspection\", \"atomic_claim_required\", \"workspace_creation_blocked\", \"resumed_observation_blocked\", \"work_blocked\"], \
        \"reason\": \"atomic resume claim primitive rosary-04faf5 is unavailable\", \
        \"required_contract\": \"atomic episode claim/lease with a caller-stable claim ID, episode uniqueness, compare-and-set ownership, expiry, and release\", \
        \"required_mechanism\": \"rosary-04faf5\"}\n";
    for claim in [
        json!(null),
        json!({"comment_dedupe": true}),
        json!("claim-1"),
    ] {
        let input = json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": claim});
        let (code, out, err) = raw(&["park", "resume-gate"], &input.to_string(), None);
        assert_eq!((code, out.as_str()), (0, want), "{err}");
    }
    // Exactly the three fields.
    refused(
        "resume-gate",
        &json!({"episode_id": EPISODE, "intent_id": INTENT}).to_string(),
        "atomic_claim",
        "required",
    );
    refused(
        "resume-gate",
        &json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": null, "lease": 1})
            .to_string(),
        "lease",
        "unknown-field",
    );
}

#[test]
fn confirm_readback_answers_exactly_as_the_helper() {
    let bytes = receipt(ATTEMPT).to_string();
    let other = receipt("attempt-0a1b2c3d-4e5f-4a6b-8c7d-3e4f5a6b7c8d").to_string();
    let readback = |comments: Value| json!({"receipt_bytes": bytes, "comments": comments});
    let not_found = json!({"comment_id": null, "durable": false, "reasons": ["matching receipt comment not found"], "safe_to_close": false});
    let conflict = json!({"comment_id": null, "durable": false, "reasons": ["conflicting receipt bytes for stable intent"], "safe_to_close": false});
    answers(
        "confirm-readback",
        &readback(json!([{"id": "c-3", "body": fence(&bytes)}])),
        json!({"comment_id": "c-3", "durable": true, "reasons": [], "safe_to_close": true}),
    );
    // Two exact fences: the first one read back.
    answers(
        "confirm-readback",
        &readback(
            json!([{"id": "c-8", "body": fence(&bytes)}, {"id": "c-3", "body": fence(&bytes)}]),
        ),
        json!({"comment_id": "c-8", "durable": true, "reasons": [], "safe_to_close": true}),
    );
    for comments in [
        json!([]),
        json!([{"id": "c-1", "body": "parked for today"}]),
        // Prose around the fence is not the exact sole fence.
        json!([{"id": "c-1", "body": format!("Parked:\n{}", fence(&bytes))}]),
        json!([{"id": "c-1", "body": format!("{}\n", fence(&bytes))}]),
        // A fenced document that is not a valid receipt is no candidate.
        json!([{"id": "c-1", "body": fence(&format!("{{\"intent_id\": \"{INTENT}\"}}"))}]),
    ] {
        answers("confirm-readback", &readback(comments), not_found.clone());
    }
    // A valid receipt for the same intent with other bytes: a conflict, even beside the exact one.
    for comments in [
        json!([{"id": "c-4", "body": fence(&other)}]),
        json!([{"id": "c-3", "body": fence(&bytes)}, {"id": "c-4", "body": fence(&other)}]),
        json!([{"id": "c-3", "body": fence(&bytes)}, {"id": "c-5", "body": fence(&serde_json::to_string_pretty(&receipt(ATTEMPT)).unwrap())}]),
    ] {
        answers("confirm-readback", &readback(comments), conflict.clone());
    }
}

#[test]
fn stdout_is_the_bytes_the_helper_prints() {
    let (code, out, _) = raw(&["park", "check"], &observation().to_string(), None);
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"action\": \"write_receipt\", \"candidate\": \"parked\", \"eligible\": true, \"protocol_phase\": \"durable\", \"reasons\": []}\n")
    );
    let (code, out, _) = raw(&["park", "check"], &preflight().to_string(), None);
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"action\": \"checkpoint\", \"candidate\": \"parked\", \"eligible\": false, \"protocol_phase\": \"preflight\", \"reasons\": [\"durable preservation evidence required\"]}\n")
    );
    // Non-ASCII is escaped as \uXXXX (astral characters as a surrogate pair).
    let bytes = receipt(ATTEMPT).to_string();
    let input =
        json!({"receipt_bytes": bytes, "comments": [{"id": "c-é😀", "body": fence(&bytes)}]});
    let (code, out, _) = raw(&["park", "confirm-readback"], &input.to_string(), None);
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"comment_id\": \"c-\\u00e9\\ud83d\\ude00\", \"durable\": true, \"reasons\": [], \"safe_to_close\": true}\n")
    );
    let (code, out, _) = raw(
        &["park", "prepare-attempt"],
        &json!({"mode": "park", "anchor_bead": "rsry 7", "episode_id": EPISODE, "intent_id": null, "prior_receipts": []}).to_string(),
        None,
    );
    let minted: Value = serde_json::from_str(&out).unwrap();
    let intent = minted["intent_id"].as_str().unwrap();
    assert_eq!(
        (code, out),
        (0, format!("{{\"action\": \"retry\", \"episode_id\": \"{EPISODE}\", \"intent_id\": \"{intent}\", \"ready\": false, \"retry_command\": \"/park-work --episode-id {EPISODE} --intent-id {intent} 'rsry 7'\"}}\n"))
    );
    // A binding prints nested objects and arrays the same way.
    let (_, out, _) = raw(
        &["park", "bind-repository"],
        &bind_input().to_string(),
        None,
    );
    assert!(
        out.starts_with("{\"backend\": \"git\", \"bound_root\": \"/srv/work/helper\", \"canonical_remote\": \"github.com/example/helper\", \"commands\": [[\"git\", \"-C\", \"/srv/work/helper\", \"status\", "),
        "{out}"
    );
    assert!(
        out.ends_with(
            "\"schema_version\": 1, \"selector\": {\"kind\": \"bead\", \"value\": \"rsry-7a1\"}}\n"
        ),
        "{out}"
    );
}
