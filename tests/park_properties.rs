//! Property tests of the park machine, seeds under proptest-regressions/park.txt.

use cairn::machines::park::{self, fold, observation, receipt, Command, Event, Park, State};
use cairn::{Context, Machine, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{json, Value};

use crate::park::park as run_cairn;
use crate::support::park::*;
use crate::support::TempJournal;

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/park.txt"
        )))),
        ..Config::default()
    }
}

/// The unknown form of each check's evidence.
fn unknown_form(name: &str) -> Value {
    let e = match name {
        "anchor_confirmed" => {
            json!({"source": "human_confirmation", "detail": "d", "error": "confirmation rejected"})
        }
        "repository_resolved" => {
            json!({"source": "registered_repository_binding", "detail": "d", "error": "rsry_repo_list failed"})
        }
        "no_active_dispatch" => {
            json!({"source": "rsry_active+rsry_dispatch_history", "detail": "d", "error": "timeout"})
        }
        "no_running_child_operation" => {
            json!({"source": "claude.current_child_operations", "detail": "d", "client": "claude", "authoritative": false, "error": "not scoped"})
        }
        "no_vcs_operation_or_conflict" => {
            json!({"source": "git", "detail": "d", "backend": "git", "bound_root": ROOT, "error": "unreadable"})
        }
        "tree_preserved" | "commits_reachable_or_checkpoint_resolvable" => {
            json!({"source": "git", "detail": "d", "backend": "git", "bound_root": ROOT, "workspace": ROOT, "state": "unknown", "error": "x"})
        }
        "bead_terminal" => {
            json!({"source": "rsry_list_beads", "detail": "d", "error": "no status"})
        }
        "resume_target_resolvable" => {
            json!({"source": "git", "detail": "d", "backend": "git", "bound_root": ROOT, "error": "unresolved"})
        }
        "pr_merged" => {
            json!({"source": "gh", "detail": "d", "command": ["gh", "pr", "view", PR, "--json", "state,mergedAt,url"], "error": "auth"})
        }
        _ => json!({"source": "rsry_bead_history", "detail": "d", "error": "unavailable"}),
    };
    let category = match name {
        "anchor_confirmed" | "repository_resolved" => "identity",
        "no_active_dispatch" | "no_running_child_operation" | "no_vcs_operation_or_conflict" => {
            "quiescence"
        }
        "tree_preserved" | "commits_reachable_or_checkpoint_resolvable" => "preservation",
        "resume_target_resolvable" => "resume",
        _ => "completion",
    };
    check(name, category, "unknown", e)
}

const CHECKS: [&str; 10] = [
    "anchor_confirmed",
    "repository_resolved",
    "no_active_dispatch",
    "no_running_child_operation",
    "no_vcs_operation_or_conflict",
    "tree_preserved",
    "commits_reachable_or_checkpoint_resolvable",
    "bead_terminal",
    "resume_target_resolvable",
    "pr_merged",
];

fn base(pr: bool, preflight_phase: bool) -> Value {
    let mut v = if preflight_phase {
        preflight()
    } else {
        observation()
    };
    if pr {
        pr_backed(
            &mut v,
            "pass",
            json!({"state": "MERGED", "mergedAt": "2026-11-29T10:00:00Z", "url": PR}),
        );
    }
    v
}

fn eval(v: &Value) -> Option<fold::Evaluation> {
    observation::parse(v).ok().map(|o| fold::evaluate(&o))
}

/// Sets the picked checks to their unknown form (pr_merged only on a PR-backed
/// observation): the names set.
fn set_unknown(
    v: &mut Value,
    pr: bool,
    picks: &std::collections::BTreeSet<usize>,
) -> Vec<&'static str> {
    let names: Vec<&str> = picks
        .iter()
        .map(|i| CHECKS[*i])
        .filter(|name| pr || *name != "pr_merged")
        .collect();
    for name in &names {
        set(v, name, unknown_form(name));
    }
    names
}

/// True when a preflight observation carries preservation evidence that is not
/// `checkpointable` (refused: `preservation-phase`).
fn preflight_not_checkpointable(v: &Value) -> bool {
    v["protocol_phase"] == "preflight"
        && v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["category"] == "preservation" && c["evidence"]["state"] != "checkpointable")
}

/// The evaluation of an observation with `unknown` checks; or, when it is refused
/// outright, `None` after checking it is for one of the two reasons it may be:
/// with `bead_terminal` unknown, `resume_target_resolvable` is inapplicable; a
/// preflight observation carries only checkpointable preservation evidence.
fn evaluated(v: &Value, unknown: &[&str]) -> Result<Option<fold::Evaluation>, TestCaseError> {
    match observation::parse(v) {
        Ok(o) => Ok(Some(fold::evaluate(&o))),
        Err(e) if e.rule == "preservation-phase" => {
            prop_assert!(preflight_not_checkpointable(v), "{:?}", e);
            Ok(None)
        }
        Err(e) => {
            prop_assert_eq!(
                (e.field.as_str(), e.rule),
                ("checks", "inapplicable-check"),
                "{:?}",
                e
            );
            prop_assert!(
                unknown.contains(&"bead_terminal")
                    && e.message.contains("resume_target_resolvable"),
                "{:?}",
                e
            );
            Ok(None)
        }
    }
}

fn ctx(n: u128) -> Context {
    Context {
        now: Timestamp::parse("2026-11-30T04:00:00Z").unwrap(),
        fresh_ids: (0..3).map(|i| uuid::Uuid::from_u128(n * 10 + i)).collect(),
        session: None,
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

#[derive(Debug, Clone)]
pub enum Step {
    Prepare {
        other_intent: bool,
    },
    Evaluate {
        obs: u8,
        stale: bool,
    },
    Validate {
        good: bool,
        stale: bool,
    },
    Confirm {
        comments: u8,
        other_bytes: bool,
        stale: bool,
    },
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        any::<bool>().prop_map(|other_intent| Step::Prepare { other_intent }),
        (0u8..4, any::<bool>()).prop_map(|(obs, stale)| Step::Evaluate { obs, stale }),
        (any::<bool>(), any::<bool>()).prop_map(|(good, stale)| Step::Validate { good, stale }),
        (0u8..4, any::<bool>(), any::<bool>()).prop_map(|(comments, other_bytes, stale)| {
            Step::Confirm {
                comments,
                other_bytes,
                stale,
            }
        }),
    ]
}

fn receipt_bytes(attempt: &str, variant: bool) -> String {
    let mut r = receipt();
    r["attempt_id"] = json!(attempt);
    if variant {
        r["references"] = json!(["refs/heads/another"]);
    }
    r.to_string()
}

/// The park command a step stands for, given the current attempt; and, for a
/// read-back, the bytes and comments it carries.
pub fn park_command(current: &str, s: &Step) -> (Command, Option<(String, Vec<Value>)>) {
    let current = current.to_owned();
    let attempt = |stale: bool| {
        if stale {
            ATTEMPT.to_owned()
        } else {
            current.clone()
        }
    };
    let ids = |stale: bool| {
        (
            park::EpisodeId::parse(EPISODE).unwrap(),
            park::IntentId::parse(INTENT).unwrap(),
            park::AttemptId::parse(&attempt(stale)).unwrap(),
        )
    };
    let mut confirm_input: Option<(String, Vec<Value>)> = None;
    let command = match s {
        Step::Prepare { other_intent } => Command::PrepareAttempt {
            input: json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE,
            "intent_id": if *other_intent { "park-99999999-6b7c-4d8e-9f0a-1b2c3d4e5f6a" } else { INTENT }, "prior_receipts": []}),
        },
        Step::Evaluate { obs, stale } => {
            let mut v = match obs {
                0 => observation(),
                1 => preflight(),
                _ => observation(),
            };
            if *obs == 2 {
                set(
                    &mut v,
                    "no_active_dispatch",
                    unknown_form("no_active_dispatch"),
                );
            }
            if *obs == 3 {
                v["schema_version"] = json!(9);
            }
            let (e, i, a) = ids(*stale);
            Command::Evaluate {
                episode_id: e,
                intent_id: i,
                attempt_id: a,
                observation: park::Observed::unparsed(v),
            }
        }
        Step::Validate { good, stale } => {
            let (e, i, a) = ids(*stale);
            let bytes = if *good {
                receipt_bytes(&a.to_string(), false)
            } else {
                "{\"not\":\"a receipt\"}".into()
            };
            Command::ValidateReceipt {
                episode_id: e,
                intent_id: i,
                attempt_id: a,
                receipt_bytes: bytes,
            }
        }
        Step::Confirm {
            comments,
            other_bytes,
            stale,
        } => {
            let (e, i, a) = ids(*stale);
            let bytes = receipt_bytes(&a.to_string(), *other_bytes);
            let list = match comments {
                0 => vec![json!({"id": 1, "body": fence(&bytes)})],
                1 => vec![json!({"id": 1, "body": format!("note\n{}", fence(&bytes))})],
                2 => vec![],
                _ => vec![
                    json!({"id": 1, "body": fence(&bytes)}),
                    json!({"id": 2, "body": fence(&receipt_bytes(&a.to_string(), !*other_bytes))}),
                ],
            };
            confirm_input = Some((bytes.clone(), list.clone()));
            Command::ConfirmReadback {
                episode_id: e,
                intent_id: i,
                attempt_id: a,
                input: json!({"receipt_bytes": bytes, "comments": list}),
            }
        }
    };
    (command, confirm_input)
}

/// The current attempt of a park state (the fixture's for a fresh episode).
pub fn current_attempt(state: &State) -> String {
    match state {
        State::Fresh => ATTEMPT.to_owned(),
        State::Prepared { episode }
        | State::CheckpointAuthorized { episode, .. }
        | State::ReceiptAuthorized { episode, .. }
        | State::ReceiptValidated { episode, .. }
        | State::SafeToClose { episode, .. } => episode.attempt_id.to_string(),
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Any applicable check `unknown` ⇒ never eligible (or refused outright).
    #[test]
    fn any_unknown_check_is_never_eligible(pr in any::<bool>(), pre in any::<bool>(), picks in proptest::collection::btree_set(0usize..10, 1..4)) {
        let mut v = base(pr, pre);
        let unknown = set_unknown(&mut v, pr, &picks);
        prop_assume!(!unknown.is_empty());
        if let Some(e) = evaluated(&v, &unknown)? {
            prop_assert!(!e.eligible, "{e:?}");
            prop_assert_ne!(e.action, Some(fold::Action::WriteReceipt));
        }
    }

    /// Preflight is never eligible, whatever else holds.
    #[test]
    fn preflight_is_never_eligible(pr in any::<bool>(), picks in proptest::collection::btree_set(0usize..10, 0..3), durable_preservation in any::<bool>()) {
        let mut v = base(pr, !durable_preservation);
        v["protocol_phase"] = json!("preflight");
        let unknown = set_unknown(&mut v, pr, &picks);
        if let Some(e) = evaluated(&v, &unknown)? {
            prop_assert!(!e.eligible);
            prop_assert_ne!(e.action, Some(fold::Action::WriteReceipt));
        }
    }

    /// No command sequence reaches safe_to_close without a receipt validated for the
    /// current attempt and read back byte for byte.
    #[test]
    fn safe_to_close_needs_a_validated_receipt_read_back(prefix in 0usize..=4, rest in proptest::collection::vec(step(), 0..12)) {
        // A prefix of the happy path, so every depth of the lifecycle is reached, then anything.
        let happy = [
            Step::Prepare { other_intent: false },
            Step::Evaluate { obs: 0, stale: false },
            Step::Validate { good: true, stale: false },
            Step::Confirm { comments: 0, other_bytes: false, stale: false },
        ];
        let steps: Vec<Step> = happy[..prefix].iter().cloned().chain(rest).collect();
        let mut reached_safe = false;
        let mut state = Park::initial_state();
        let mut validated: Vec<String> = Vec::new();
        for (n, s) in steps.iter().enumerate() {
            let current = current_attempt(&state);
            let (command, confirm_input) = park_command(&current, s);
            let Ok(events) = Park::decide(&state, &command, &ctx(n as u128 + 1)) else { continue };
            for ev in &events {
                if let Event::ReceiptValidated { receipt_sha256, .. } = ev { validated.push(receipt_sha256.clone()); }
                if let Event::ReceiptConfirmed { receipt_sha256, safe_to_close, .. } = ev {
                    prop_assert!(*safe_to_close);
                    let (bytes, comments) = confirm_input.clone().expect("only confirm-readback confirms");
                    prop_assert!(receipt::validate_bytes(&bytes).is_ok());
                    prop_assert_eq!(&park::sha256_hex(&bytes), receipt_sha256);
                    prop_assert!(matches!(&state, State::ReceiptValidated { receipt_sha256: s, .. } if s == receipt_sha256), "{state:?}");
                    prop_assert!(validated.contains(receipt_sha256));
                    prop_assert!(comments.iter().any(|c| c["body"] == fence(&bytes)));
                }
            }
            state = events.iter().fold(state, Park::evolve);
            reached_safe |= matches!(state, State::SafeToClose { .. });
        }
        // The happy prefix must actually get there: the property is not vacuous.
        if prefix == 4 {
            prop_assert!(reached_safe);
        }
        if let State::SafeToClose { receipt_sha256, safe_to_close, .. } = &state {
            prop_assert!(*safe_to_close && validated.contains(receipt_sha256));
        }
    }

    /// The evaluation is independent of the order the checks are listed in (its
    /// reasons too: checks are read into canonical order), and evaluating in a
    /// prepared episode is independent of the time and ids of the decision.
    #[test]
    fn evaluation_is_independent_of_check_order_and_time(pr in any::<bool>(), pre in any::<bool>(), picks in proptest::collection::btree_set(0usize..10, 0..3), order in Just((0..16usize).collect::<Vec<_>>()).prop_shuffle()) {
        // Preflight preservation is checkpointable or refused: keep it so here.
        let preservation = ["tree_preserved", "commits_reachable_or_checkpoint_resolvable"];
        let picks = picks.into_iter().filter(|i| !(pre && preservation.contains(&CHECKS[*i]))).collect();
        let mut v = base(pr, pre);
        if set_unknown(&mut v, pr, &picks).contains(&"bead_terminal") {
            // Inapplicable once the bead's status is unknown.
            remove(&mut v, "resume_target_resolvable");
        }
        let checks = v["checks"].as_array().unwrap().clone();
        let mut shuffled = v.clone();
        shuffled["checks"] = Value::Array(order.iter().filter(|i| **i < checks.len()).map(|i| checks[*i].clone()).collect());
        let (Some(a), Some(b)) = (eval(&v), eval(&shuffled)) else {
            return Err(TestCaseError::fail(format!("the observation is refused: {:?}", observation::parse(&v))));
        };
        prop_assert_eq!(a, b);
        // In a prepared episode, at two different times with different fresh ids.
        let prepare = park_command(ATTEMPT, &Step::Prepare { other_intent: false }).0;
        let prepared = Park::decide(&State::Fresh, &prepare, &ctx(1)).expect("the fixture prepares").iter().fold(State::Fresh, Park::evolve);
        let attempt = current_attempt(&prepared);
        let evaluate = Command::Evaluate { episode_id: park::EpisodeId::parse(EPISODE).unwrap(), intent_id: park::IntentId::parse(INTENT).unwrap(), attempt_id: park::AttemptId::parse(&attempt).unwrap(), observation: park::Observed::unparsed(v) };
        let later = Context { now: Timestamp::parse("2027-06-01T12:00:00Z").unwrap(), ..ctx(2) };
        let now = Park::decide(&prepared, &evaluate, &ctx(1));
        prop_assert!(now.is_ok(), "{:?}", now);
        prop_assert_eq!(now, Park::decide(&prepared, &evaluate, &later));
    }
}

fn mutation() -> impl Strategy<Value = (usize, String, Value)> {
    let values = prop_oneof![
        Just(json!(null)),
        Just(json!(true)),
        Just(json!(-1)),
        Just(json!(1e300)),
        Just(json!("")),
        Just(json!("pass")),
        Just(json!([])),
        Just(json!({})),
        Just(json!([[[[[]]]]])),
        Just(json!("ep-x")),
    ];
    let keys = prop_oneof![
        Just("outcome".to_owned()),
        Just("evidence".to_owned()),
        Just("name".to_owned()),
        Just("category".to_owned()),
        Just("observed_at".to_owned()),
        Just("extra".to_owned()),
    ];
    (0usize..10, keys, values)
}

proptest! {
    #![proptest_config(config(24))]

    /// Exit 2 ⇒ the journal is byte-for-byte unchanged (through the real binary).
    #[test]
    fn a_refused_evaluate_changes_nothing((i, key, value) in mutation()) {
        let t = TempJournal::new();
        let db = t.path();
        let (code, prepared, _) = run_cairn(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string(), Some(&db));
        prop_assert_eq!(code, 0);
        let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
        let mut v = observation();
        let n = v["checks"].as_array().unwrap().len();
        v["checks"][i % n][key.as_str()] = value;
        let before = t.bytes();
        let (code, out, stderr) = run_cairn(&["park", "evaluate", "--episode-id", EPISODE, "--intent-id", INTENT, "--attempt-id", &attempt], &v.to_string(), Some(&db));
        prop_assert!(code == 0 || code == 2, "exit {code}: {out} {stderr}");
        if code == 2 {
            prop_assert_eq!(t.bytes(), before);
            prop_assert!(out["error"]["field"].is_string() || out["error"]["violations"].is_array(), "{}", out);
        } else {
            // The mutation stayed valid: the answer is the evaluation.
            prop_assert!(out["eligible"].is_boolean(), "{}", out);
        }
    }
}
