//! `park resume-gate --claim-gate v2`, the opt-in reviewed upgrade (issue #24):
//! authorized only when `atomic_claim` names a cairn claim on the episode that the
//! journal's readback shows held by the caller, unexpired, under the current
//! token; anything else (missing, another owner or claim id, expired, released,
//! a stale token, an unknown field, a comment-dedupe flag, no journal) is the
//! helper's v1 refusal, key for key and value for value, with the reason. The
//! default stays the helper's v1 answer, byte for byte, whatever is claimed.

use std::path::Path;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::park::{EPISODE, INTENT};
use crate::support::park_helper::raw;
use crate::support::TempJournal;

const RESOURCE: &str = "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";

/// The helper's v1 answer.
fn v1() -> Value {
    json!({
        "allowed_actions": ["read_only_inspection"],
        "authorized": false,
        "blocked_actions": ["workspace_creation", "resumed_observation", "work"],
        "gate_order": ["read_only_inspection", "atomic_claim_required", "workspace_creation_blocked", "resumed_observation_blocked", "work_blocked"],
        "reason": "atomic resume claim primitive rosary-04faf5 is unavailable",
        "required_contract": "atomic episode claim/lease with a caller-stable claim ID, episode uniqueness, compare-and-set ownership, expiry, and release",
        "required_mechanism": "rosary-04faf5",
    })
}

fn input(claim: &Value) -> String {
    json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": claim}).to_string()
}

/// A cairn claim as the caller offers it.
fn offered(owner: &str, id: &str, token: u64) -> Value {
    json!({"resource": RESOURCE, "owner": owner, "claim_id": id, "token": token})
}

/// `resume-gate --claim-gate v2` on `db`: exit code and answer.
fn v2(db: &Path, claim: &Value) -> (i32, Value) {
    let (code, out, _) = cairn(
        &["park", "resume-gate", "--claim-gate", "v2"],
        &input(claim),
        Some(db),
    );
    (code, out)
}

/// Asserts v1's refusal with a v2 reason mentioning `why`.
fn refused(db: &Path, claim: &Value, why: &str) {
    let (code, mut out) = v2(db, claim);
    let reason = out["reason"].take();
    let reason = reason.as_str().unwrap_or_default();
    let mut want = v1();
    want["reason"] = Value::Null;
    assert_eq!((code, &out), (0, &want), "{claim}: {reason}");
    assert!(
        reason.starts_with("claim gate v2: ") && reason.contains(why),
        "{claim}: {reason} (wanted `{why}`)"
    );
}

fn claim(db: &Path, verb: &str, args: &[&str]) -> Value {
    let mut all = vec!["claim", verb, "--resource", RESOURCE];
    all.extend_from_slice(args);
    let (code, out, _) = cairn(&all, "", Some(db));
    assert_eq!(code, 0, "{out}");
    out
}

#[test]
fn v2_authorizes_only_a_live_claim_held_by_the_caller_under_the_current_token() {
    let t = TempJournal::new();
    let db = t.path();
    // No journal at all: refused, and reading created none.
    refused(&db, &offered("agent-a", "resume-a", 1), "never claimed");
    assert!(!db.exists(), "the gate created a journal");

    claim(
        &db,
        "acquire",
        &[
            "--owner",
            "agent-a",
            "--claim-id",
            "resume-a",
            "--ttl",
            "600",
        ],
    );
    let (code, out) = v2(&db, &offered("agent-a", "resume-a", 1));
    assert_eq!(
        (code, &out["authorized"], &out["blocked_actions"]),
        (0, &json!(true), &json!([])),
        "{out}"
    );
    assert_eq!(
        out["allowed_actions"],
        json!([
            "read_only_inspection",
            "workspace_creation",
            "resumed_observation",
            "work"
        ])
    );
    assert!(out["reason"].as_str().unwrap().contains("token 1"), "{out}");
    let before = t.bytes();

    // Everything else is v1's refusal with the reason.
    let cases = [
        (json!(null), "null"),
        (json!(true), "a boolean"),
        (json!({"comment_dedupe": true}), "`comment_dedupe`"),
        (
            json!({"resource": RESOURCE, "owner": "agent-a", "claim_id": "resume-a", "token": 1, "verified": true}),
            "`verified`",
        ),
        (
            json!({"resource": RESOURCE, "owner": "agent-a", "claim_id": "resume-a"}),
            "token",
        ),
        (
            json!({"resource": RESOURCE, "owner": "agent-a", "claim_id": "resume-a", "token": "1"}),
            "token",
        ),
        (
            json!({"resource": "park/ep-6f1c2e3d-4a5b-4c7e-9d2a-0b1e6f5e3c1a", "owner": "agent-a", "claim_id": "resume-a", "token": 1}),
            "not this episode's",
        ),
        (offered("agent-b", "resume-a", 1), "held by `agent-a`"),
        (offered("agent-a", "resume-b", 1), "held by `agent-a`"),
        (offered("agent-a", "resume-a", 2), "not the current one"),
    ];
    for (offer, why) in &cases {
        refused(&db, offer, why);
    }
    assert_eq!(t.bytes(), before, "the gate writes nothing");

    // Released: nothing is held.
    claim(&db, "release", &["--claim-id", "resume-a", "--token", "1"]);
    refused(&db, &offered("agent-a", "resume-a", 1), "released");
}

#[test]
fn v2_refuses_an_expired_lease_and_the_token_it_replaced() {
    let t = TempJournal::new();
    let db = t.path();
    let first = claim(
        &db,
        "acquire",
        &["--owner", "agent-a", "--claim-id", "resume-a", "--ttl", "1"],
    );
    let until = chrono::DateTime::parse_from_rfc3339(first["expires_at"].as_str().unwrap())
        .expect("an RFC3339 expiry");
    while chrono::Utc::now() <= until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    refused(&db, &offered("agent-a", "resume-a", 1), "expired");
    // Taken over: the old holder's token is stale, the new holder's authorizes.
    claim(
        &db,
        "acquire",
        &[
            "--owner",
            "agent-b",
            "--claim-id",
            "resume-b",
            "--ttl",
            "600",
        ],
    );
    refused(&db, &offered("agent-a", "resume-a", 1), "held by `agent-b`");
    assert_eq!(
        v2(&db, &offered("agent-b", "resume-b", 2)).1["authorized"],
        true
    );
}

#[test]
fn the_default_gate_is_the_helpers_v1_byte_for_byte_even_on_a_live_claim() {
    let t = TempJournal::new();
    let db = t.path();
    claim(
        &db,
        "acquire",
        &[
            "--owner",
            "agent-a",
            "--claim-id",
            "resume-a",
            "--ttl",
            "600",
        ],
    );
    let (_, want, _) = raw(&["park", "resume-gate"], &input(&json!(null)), None);
    assert_eq!(serde_json::from_str::<Value>(&want).unwrap(), v1());
    for args in [
        &["park", "resume-gate"][..],
        &["park", "resume-gate", "--claim-gate", "v1"][..],
    ] {
        let (code, out, err) = raw(args, &input(&offered("agent-a", "resume-a", 1)), Some(&db));
        assert_eq!((code, out.as_str()), (0, want.as_str()), "{args:?}: {err}");
    }
    // Bad input is exit 2 under either gate.
    for gate in ["v1", "v2"] {
        let (code, out, _) = cairn(
            &["park", "resume-gate", "--claim-gate", gate],
            &json!({"episode_id": "ep-x", "intent_id": INTENT, "atomic_claim": null}).to_string(),
            Some(&db),
        );
        assert_eq!(
            (code, out["error"]["field"].as_str()),
            (2, Some("episode_id")),
            "{out}"
        );
    }
    let (code, out, _) = cairn(
        &["park", "resume-gate", "--claim-gate", "v3"],
        &input(&json!(null)),
        Some(&db),
    );
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("usage")),
        "{out}"
    );
}
