//! `cairn claim` through the real binary: bad input is exit 2 naming its field and
//! rule with the journal byte for byte unchanged, contention is exit 3 naming who
//! holds the lease and until when, idempotency keys, the readback, the audit
//! re-deciding claim transitions (a forged grant is named), and the graph.

use std::path::Path;

use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
use cairn::machines::claim::Claim;
use cairn::Machine;
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::TempJournal;

pub const RESOURCE: &str = "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
pub const STREAM: &str = "claim/park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";

/// `cairn claim VERB --resource RESOURCE ARGS…` on `db`: (exit code, stdout JSON, stderr).
pub fn claim(db: &Path, verb: &str, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["claim", verb, "--resource", RESOURCE];
    all.extend_from_slice(args);
    cairn(&all, "", Some(db))
}

pub fn acquire(db: &Path, owner: &str, id: &str, ttl: &str) -> (i32, Value, String) {
    claim(
        db,
        "acquire",
        &["--owner", owner, "--claim-id", id, "--ttl", ttl],
    )
}

/// The claim stream's event types, in order.
pub fn events(db: &Path) -> Vec<String> {
    Journal::open_read_only(db, &Options::default())
        .expect("the journal opens")
        .read_stream(STREAM, None)
        .expect("the stream reads")
        .into_iter()
        .map(|e| e.event_type)
        .collect()
}

/// `journal audit` and `journal verify` pass.
pub fn whole(db: &Path) {
    for verb in ["audit", "verify"] {
        let (code, out, _) = cairn(&["journal", verb], "", Some(db));
        assert_eq!(code, 0, "journal {verb}: {out}");
    }
}

#[test]
fn bad_input_is_exit_2_naming_field_and_rule_and_writes_nothing() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(acquire(&db, "agent-a", "c1", "60").0, 0);
    let before = t.bytes();
    let cases: &[(&str, &[&str], &str, &str)] = &[
        (
            "acquire",
            &["--owner", "", "--claim-id", "c2", "--ttl", "5"],
            "owner",
            "nonempty-string",
        ),
        (
            "acquire",
            &["--owner", "b\u{200B}", "--claim-id", "c2", "--ttl", "5"],
            "owner",
            "invisible-character",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c\u{202E}2", "--ttl", "5"],
            "claim_id",
            "invisible-character",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c\u{2066}2", "--ttl", "5"],
            "claim_id",
            "invisible-character",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c\n2", "--ttl", "5"],
            "claim_id",
            "invisible-character",
        ),
        (
            "acquire",
            &["--owner", "--b", "--claim-id", "c2", "--ttl", "5"],
            "owner",
            "option-like",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "-c2", "--ttl", "5"],
            "claim_id",
            "option-like",
        ),
        (
            "acquire",
            &["--owner", " b", "--claim-id", "c2", "--ttl", "5"],
            "owner",
            "surrounding-space",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c2", "--ttl", "0"],
            "ttl",
            "ttl-range",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c2", "--ttl", "86401"],
            "ttl",
            "ttl-range",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c2", "--ttl", "5m"],
            "ttl",
            "ttl-syntax",
        ),
        (
            "acquire",
            &["--owner", "b", "--claim-id", "c2", "--ttl", "-5"],
            "ttl",
            "ttl-syntax",
        ),
        (
            "renew",
            &["--claim-id", "c1", "--token", "0", "--ttl", "5"],
            "token",
            "fencing-token",
        ),
        (
            "renew",
            &["--claim-id", "c1", "--token", "one", "--ttl", "5"],
            "token",
            "fencing-token",
        ),
        (
            "release",
            &["--claim-id", "", "--token", "1"],
            "claim_id",
            "nonempty-string",
        ),
    ];
    for (verb, args, field, rule) in cases {
        let (code, out, _) = claim(&db, verb, args);
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some(*field), Some(*rule)),
            "{verb} {args:?}: {out}"
        );
    }
    let long = "x".repeat(cairn::machines::claim::NAME_MAX + 1);
    let (code, out, _) = acquire(&db, &long, "c2", "5");
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("length")),
        "{out}"
    );
    for (resource, rule) in [
        ("no-slash", "stream-id"),
        ("park/a b", "stream-id"),
        ("claim/park/x", "not-a-claim"),
        (&*format!("park/{}", "x".repeat(190)), "length"),
    ] {
        let args = [
            "claim",
            "acquire",
            "--resource",
            resource,
            "--owner",
            "b",
            "--claim-id",
            "c",
            "--ttl",
            "5",
        ];
        let (code, out, _) = cairn(&args, "", Some(&db));
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some("resource"), Some(rule)),
            "{resource}: {out}"
        );
    }
    assert_eq!(
        t.bytes(),
        before,
        "a refused input changes no byte of the journal"
    );
    // Bad input never creates a journal either.
    let fresh = TempJournal::new();
    assert_eq!(acquire(&fresh.path(), "b", "c", "0").0, 2);
    assert!(!fresh.path().exists());
}

#[test]
fn a_live_claim_refuses_others_with_exit_3_naming_who_and_until_when() {
    let t = TempJournal::new();
    let db = t.path();
    let (code, won, _) = acquire(&db, "agent-a", "resume-1", "600");
    assert_eq!(code, 0, "{won}");
    assert_eq!(
        (
            &won["holder"],
            &won["claim_id"],
            &won["token"],
            &won["live"],
            &won["version"],
            &won["state"]
        ),
        (
            &json!("agent-a"),
            &json!("resume-1"),
            &json!(1),
            &json!(true),
            &json!(1),
            &json!("held")
        ),
        "{won}"
    );
    assert_eq!(won["events"], json!(["acquired"]));
    let before = t.bytes();
    let (code, lost, stderr) = acquire(&db, "agent-b", "resume-2", "600");
    assert_eq!(
        (code, lost["error"]["kind"].as_str()),
        (3, Some("claim-held")),
        "{lost}"
    );
    assert_eq!(lost["error"]["claim"]["holder"], "agent-a");
    assert_eq!(lost["error"]["claim"]["expires_at"], won["expires_at"]);
    assert_eq!(
        lost["error"]["violations"][0]["predicate"],
        "held-by-another"
    );
    let until = won["expires_at"].as_str().unwrap();
    assert!(
        stderr.contains("`agent-a` holds it under claim `resume-1` (token 1) until")
            && stderr.contains(until),
        "{stderr}"
    );
    // A stale token or claim id on renew and release: exit 3, nothing written.
    for (verb, args) in [
        (
            "renew",
            vec!["--claim-id", "resume-1", "--token", "2", "--ttl", "5"],
        ),
        (
            "renew",
            vec!["--claim-id", "resume-2", "--token", "1", "--ttl", "5"],
        ),
        ("release", vec!["--claim-id", "resume-1", "--token", "7"]),
    ] {
        let (code, out, _) = claim(&db, verb, &args);
        assert_eq!(
            (code, out["error"]["kind"].as_str()),
            (3, Some("stale-claim")),
            "{verb} {args:?}: {out}"
        );
    }
    assert_eq!(t.bytes(), before, "refusals write nothing");
    // The holder asking again reads its grant back: exit 0, no event.
    let (code, again, _) = acquire(&db, "agent-a", "resume-1", "5");
    assert_eq!(
        (
            code,
            &again["token"],
            &again["events"],
            &again["expires_at"]
        ),
        (0, &json!(1), &json!([]), &won["expires_at"]),
        "{again}"
    );
    assert_eq!(t.bytes(), before, "a readback writes nothing");
    // Renew, release, then the next grant has a greater token.
    let (code, renewed, _) = claim(
        &db,
        "renew",
        &["--claim-id", "resume-1", "--token", "1", "--ttl", "900s"],
    );
    assert_eq!(
        (code, &renewed["events"], &renewed["token"]),
        (0, &json!(["renewed"]), &json!(1)),
        "{renewed}"
    );
    assert_ne!(renewed["expires_at"], won["expires_at"]);
    let (code, released, _) = claim(&db, "release", &["--claim-id", "resume-1", "--token", "1"]);
    assert_eq!(
        (code, &released["state"], &released["live"]),
        (0, &json!("released"), &json!(false)),
        "{released}"
    );
    let (code, retry, _) = claim(&db, "release", &["--claim-id", "resume-1", "--token", "1"]);
    assert_eq!(
        (code, &retry["events"]),
        (0, &json!([])),
        "a repeated release is a readback: {retry}"
    );
    let (code, next, _) = acquire(&db, "agent-b", "resume-2", "60");
    assert_eq!(
        (code, &next["token"], &next["events"]),
        (0, &json!(2), &json!(["acquired"])),
        "{next}"
    );
    assert_eq!(events(&db), ["acquired", "renewed", "released", "acquired"]);
    whole(&db);
}

#[test]
fn show_is_the_authoritative_readback_and_never_creates_a_journal() {
    let t = TempJournal::new();
    let db = t.path();
    // No journal at all: an error, never "free" (a mistyped --db), and none made.
    let (code, missing, _) = claim(&db, "show", &[]);
    assert_eq!(
        (code, missing["error"]["kind"].as_str()),
        (2, Some("no-journal")),
        "{missing}"
    );
    assert!(!db.exists(), "show created a journal");
    // A journal where the resource was never claimed: `unclaimed`.
    let other = [
        "claim",
        "acquire",
        "--resource",
        "saga/issue-9",
        "--owner",
        "o",
        "--claim-id",
        "o",
        "--ttl",
        "5",
    ];
    assert_eq!(cairn(&other, "", Some(&db)).0, 0);
    let before = t.bytes();
    let (code, none, _) = claim(&db, "show", &[]);
    assert_eq!(code, 0, "{none}");
    assert_eq!(
        (
            &none["state"],
            &none["live"],
            &none["holder"],
            &none["token"],
            &none["version"],
            &none["stream"]
        ),
        (
            &json!("unclaimed"),
            &json!(false),
            &Value::Null,
            &Value::Null,
            &json!(0),
            &json!(STREAM)
        )
    );
    assert_eq!(t.bytes(), before, "show wrote");
    assert_eq!(acquire(&db, "agent-a", "c1", "600").0, 0);
    let (code, shown, stderr) = claim(&db, "show", &[]);
    assert_eq!(code, 0);
    for field in [
        "holder",
        "claim_id",
        "token",
        "acquired_at",
        "expires_at",
        "live",
        "version",
        "as_of",
        "resource",
    ] {
        assert!(
            shown.get(field).is_some_and(|v| !v.is_null()),
            "{field}: {shown}"
        );
    }
    assert_eq!(
        (&shown["holder"], &shown["live"], &shown["released_at"]),
        (&json!("agent-a"), &json!(true), &Value::Null)
    );
    assert!(stderr.contains("held by `agent-a`"), "{stderr}");
}

#[test]
fn an_idempotency_key_replays_the_grant_and_refuses_another_request() {
    let t = TempJournal::new();
    let db = t.path();
    let keyed = |owner: &str| {
        claim(
            &db,
            "acquire",
            &[
                "--owner",
                owner,
                "--claim-id",
                "c1",
                "--ttl",
                "60",
                "--idempotency-key",
                "k1",
            ],
        )
    };
    let (code, first, _) = keyed("agent-a");
    assert_eq!(code, 0, "{first}");
    let before = t.bytes();
    let (code, replay, stderr) = keyed("agent-a");
    assert_eq!(
        (code, &replay["token"], &replay["events"]),
        (0, &json!(1), &json!(["acquired"])),
        "{replay}"
    );
    assert!(stderr.contains("idempotency key matched"), "{stderr}");
    let (code, other, _) = keyed("agent-b");
    assert_eq!(
        (code, other["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{other}"
    );
    assert_eq!(t.bytes(), before);
}

/// A keyed acquire retried after its grant was released answers `stale-claim`
/// naming the release (helper-68: it answered `claim-expired`, "has expired"),
/// with the readback, and writes nothing.
#[test]
fn a_keyed_acquire_retried_after_its_release_is_stale_not_expired() {
    let t = TempJournal::new();
    let db = t.path();
    let keyed = || {
        let args = [
            "--owner",
            "agent-a",
            "--claim-id",
            "c1",
            "--ttl",
            "600",
            "--idempotency-key",
            "k1",
        ];
        claim(&db, "acquire", &args)
    };
    assert_eq!(keyed().0, 0);
    let (code, out, _) = claim(&db, "release", &["--claim-id", "c1", "--token", "1"]);
    assert_eq!(code, 0, "{out}");
    let before = t.bytes();
    let (code, retry, _) = keyed();
    assert_eq!(
        (
            code,
            retry["error"]["kind"].as_str(),
            retry["error"]["claim"]["state"].as_str()
        ),
        (3, Some("stale-claim"), Some("released")),
        "{retry}"
    );
    let message = retry["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("was released"), "{retry}");
    assert_eq!(t.bytes(), before);
}

/// Appends a transition the rules do not yield: `agent-b` granted while
/// `agent-a`'s lease is live (valid chain, current rules).
fn forge_a_second_holder(db: &Path) {
    let (code, won, _) = acquire(db, "agent-a", "c1", "3600");
    assert_eq!(code, 0, "{won}");
    let now = won["acquired_at"].as_str().unwrap();
    let command =
        json!({"command": "acquire", "owner": "agent-b", "claim_id": "c2", "ttl_seconds": 60});
    let event = json!({"type": "taken-over",
        "grant": {"owner": "agent-b", "claim_id": "c2", "token": 2, "acquired_at": now, "expires_at": won["expires_at"]},
        "expired": {"owner": "agent-a", "claim_id": "c1", "token": 1, "acquired_at": now, "expires_at": won["expires_at"]}});
    let mut j = Journal::open(db, &Options::default()).unwrap();
    j.append(&Append {
        stream: STREAM.into(),
        machine: "claim".into(),
        expected_version: 1,
        events: vec![NewEvent {
            event_type: "taken-over".into(),
            schema_version: 1,
            payload: event.to_string(),
        }],
        transition: TransitionRecord {
            command_name: "acquire".into(),
            command: command.to_string(),
            context: json!({"now": now, "fresh_ids": []}).to_string(),
            rules_version: Claim::RULES_VERSION,
        },
        idempotency: None,
        recorded_at: now.into(),
        reads: Vec::new(),
        scans: Vec::new(),
    })
    .unwrap();
}

#[test]
fn the_audit_re_decides_every_claim_transition_and_names_a_forged_grant() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(acquire(&db, "agent-a", "c0", "1").0, 0);
    let (code, audit, _) = cairn(&["journal", "audit", "--stream", STREAM], "", Some(&db));
    assert_eq!(
        (code, &audit["redecided"], &audit["ok"]),
        (0, &json!(1), &json!(true)),
        "{audit}"
    );

    let forged = TempJournal::new();
    forge_a_second_holder(&forged.path());
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&forged.path()));
    let kinds: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(code == 5 && kinds.contains(&"redecide-rejected"), "{audit}");
}

#[test]
fn the_graph_renders_and_the_guide_shows_it() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["graph", "claim", "--format", "mermaid"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mermaid = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("claim_graph_mermaid", mermaid);
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/claim.md")).unwrap();
    let start = guide
        .find("<summary><code>cairn graph claim --format mermaid</code></summary>")
        .expect("docs/claim.md shows the claim graph");
    let body = guide[start..]
        .split("```mermaid\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a mermaid block");
    assert_eq!(
        body.trim_end(),
        mermaid.trim_end(),
        "regenerate the block in docs/claim.md with `cairn graph claim --format mermaid`"
    );
}

/// The claim examples the help pages print run as printed (one once printed a
/// resource that is not a canonical stream, refused with exit 2).
#[test]
fn the_help_examples_run_as_printed() {
    let j = TempJournal::new();
    let db = j.path();
    let mut ran = 0;
    for page in [
        &["claim", "--help"][..],
        &["claim", "acquire", "--help"],
        &["claim", "show", "--help"],
    ] {
        let (code, help, _) = crate::cli::run(page, None);
        assert_eq!(code, 0);
        let (_, example) = help.split_once("Example:\n").expect("an example");
        for line in example.replace("\\\n", " ").lines() {
            let Some(command) = line.trim().strip_prefix("cairn ") else {
                continue;
            };
            let words: Vec<&str> = command.split_whitespace().collect();
            let (code, _, stderr) = crate::cli::run(&words, Some(&db));
            assert_eq!(
                code,
                0,
                "`{}` from `{}`: {stderr}",
                line.trim(),
                page.join(" ")
            );
            ran += 1;
        }
    }
    assert_eq!(ran, 4);
}
