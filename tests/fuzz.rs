//! Hostile input: every machine-facing park verb fed generated garbage, in-process
//! (volume: 100,000 inputs per verb with CAIRN_SOAK=1) and through the real binary
//! (exit codes, panics, journal bytes). Seeds: proptest-regressions/fuzz.txt.

use std::io::Write;
use std::process::{Command, Stdio};

use cairn::machines::park::{self, bind, fold, gate, observation, prepare, receipt, wire};
use cairn::Machine as _;
use cairn::{Context, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{json, Value};

use crate::support::park::*;
use crate::support::TempJournal;

fn config(ci: u32, soak: u32) -> Config {
    Config {
        cases: if std::env::var_os("CAIRN_SOAK").is_some() {
            soak
        } else {
            ci
        },
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/fuzz.txt"
        )))),
        ..Config::default()
    }
}

/// Arbitrary JSON values, nested.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("pass"),
            Just("durable"),
            Just("git"),
            Just(EPISODE),
            Just(HEAD),
            Just(ROOT)
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    ".{0,8}".boxed(),
                    prop_oneof![
                        Just("checks"),
                        Just("evidence"),
                        Just("outcome"),
                        Just("name"),
                        Just("schema_version"),
                        Just("receipt_bytes"),
                        Just("comments")
                    ]
                    .prop_map(str::to_owned)
                    .boxed()
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A valid document for each verb.
fn valid(verb: u8) -> String {
    match verb {
        0 => observation().to_string(),
        1 => receipt().to_string(),
        2 => {
            let bytes = receipt().to_string();
            json!({"receipt_bytes": bytes, "comments": [{"id": 1, "body": fence(&bytes)}]}).to_string()
        }
        3 => json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": [receipt()]}).to_string(),
        4 => bind_input().to_string(),
        6 => crate::support::pr::doc("approved-fresh", "merge").to_string(),
        _ => json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": null}).to_string(),
    }
}

/// Garbage derived from a valid document, or from nothing.
fn garbage(verb: u8) -> impl Strategy<Value = Vec<u8>> {
    let doc = valid(verb);
    let len = doc.len();
    let d1 = doc.clone();
    let d2 = doc.clone();
    let d3 = doc.clone();
    let d4 = doc.clone();
    prop_oneof![
        // Truncated JSON.
        (0..len).prop_map(move |i| d1.as_bytes()[..i].to_vec()),
        // One byte replaced (may make invalid UTF-8).
        (0..len, any::<u8>()).prop_map(move |(i, b)| {
            let mut v = d2.as_bytes().to_vec();
            v[i] = b;
            v
        }),
        // A duplicate key injected after an opening brace.
        (0..len).prop_map(move |i| {
            let at = d3[i..].find('{').map_or(0, |j| i + j + 1);
            let mut s = d3.clone();
            s.insert_str(at, "\"outcome\":\"pass\",\"outcome\":\"pass\",");
            s.into_bytes()
        }),
        // A value swapped for a wrong type or a huge number.
        (
            0..len,
            prop_oneof![
                Just("1e999"),
                Just("-99999999999999999999999"),
                Just("[]"),
                Just("{}"),
                Just("true"),
                Just("\"\"")
            ]
        )
            .prop_map(move |(i, v)| {
                let s = &d4;
                let at = s[i..].find(':').map_or(s.len(), |j| i + j + 1);
                let end = s[at..].find([',', '}']).map_or(s.len(), |j| at + j);
                format!("{}{}{}", &s[..at], v, &s[end..]).into_bytes()
            }),
        // Deep nesting.
        (1usize..5000).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes()),
        // Arbitrary JSON and arbitrary bytes.
        any_json().prop_map(|v| v.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..64),
    ]
}

fn ctx() -> Context {
    Context {
        now: Timestamp::parse("2026-11-30T04:00:00Z").unwrap(),
        fresh_ids: (0..3).map(|i| uuid::Uuid::from_u128(i + 1)).collect(),
        session: None,
    }
}

/// What the CLI does with stdin for `verb`, in-process: Ok or a typed error, never a panic.
fn answer(verb: u8, bytes: &[u8]) -> Result<Value, wire::InputError> {
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| wire::InputError::new("$", "utf-8", "not utf-8"))?;
    let enc = |v: &dyn erased_serialize::Ser| v.value();
    match verb {
        0 => Ok(enc(&fold::evaluate(&observation::parse(
            &wire::parse_document(&text)?,
        )?))),
        1 => receipt::validate_bytes(&text).map(|_| json!({"valid": true})),
        2 => Ok(enc(&receipt::confirm(&receipt::parse_readback(
            &wire::parse_document(&text)?,
        )?)?
        .1)),
        3 => Ok(enc(&prepare::prepare(
            &wire::parse_document(&text)?,
            &ctx(),
        )?)),
        4 => Ok(enc(&bind::bind(&bind::parse(&wire::parse_document(
            &text,
        )?)?)?)),
        _ => Ok(enc(&gate::resume_gate(&wire::parse_document(&text)?)?)),
    }
}

mod erased_serialize {
    pub trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}

proptest! {
    #![proptest_config(config(400, 100_000))]

    #[test]
    fn evaluate_never_panics(input in garbage(0)) { let _ = answer(0, &input); }
    #[test]
    fn validate_receipt_never_panics(input in garbage(1)) { let _ = answer(1, &input); }
    #[test]
    fn confirm_readback_never_panics(input in garbage(2)) { let _ = answer(2, &input); }
    #[test]
    fn prepare_attempt_never_panics(input in garbage(3)) { let _ = answer(3, &input); }
    #[test]
    fn bind_repository_never_panics(input in garbage(4)) { let _ = answer(4, &input); }
    #[test]
    fn resume_gate_never_panics(input in garbage(5)) { let _ = answer(5, &input); }
    #[test]
    fn pr_classify_never_panics(input in garbage(6)) { let _ = answer(6, &input); }

    /// The machine's decide on garbage documents, in every state a real episode reaches.
    #[test]
    fn decide_never_panics(doc in any_json(), which in 0u8..4) {
        let e = park::EpisodeId::parse(EPISODE).unwrap();
        let i = park::IntentId::parse(INTENT).unwrap();
        let a = park::AttemptId::parse(ATTEMPT).unwrap();
        let command = match which {
            0 => park::Command::PrepareAttempt { input: doc },
            1 => park::Command::Evaluate { episode_id: e, intent_id: i, attempt_id: a, observation: doc },
            2 => park::Command::ValidateReceipt { episode_id: e, intent_id: i, attempt_id: a, receipt_bytes: doc.to_string() },
            _ => park::Command::ConfirmReadback { episode_id: e, intent_id: i, attempt_id: a, input: doc },
        };
        let _ = park::Park::decide(&park::State::Fresh, &command, &ctx());
    }
}

const VERBS: [&str; 7] = [
    "evaluate",
    "validate-receipt",
    "confirm-readback",
    "prepare-attempt",
    "bind-repository",
    "resume-gate",
    "observe",
];

fn run_bytes(args: &[&str], stdin: &[u8], db: &std::path::Path) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("cairn exits");
    let _ = writer.join();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

proptest! {
    #![proptest_config(config(12, 2_000))]

    /// Through the binary, with journal identity on the recording verbs: exit 0 (the
    /// mutation happened to stay valid) or 2 naming a field; never a panic or exit 1;
    /// on exit 2 the journal is byte-for-byte unchanged.
    #[test]
    fn garbage_through_the_binary(verb in 0u8..7, input in (0u8..7).prop_flat_map(garbage)) {
        let t = TempJournal::new();
        let db = t.path();
        let (code, out, _) = run_bytes(&["park", "prepare-attempt"], json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string().as_bytes(), &db);
        prop_assert_eq!(code, 0, "{}", out);
        let attempt = serde_json::from_str::<Value>(&out).unwrap()["attempt_id"].as_str().unwrap().to_owned();
        let before = t.bytes();
        let name = VERBS[verb as usize];
        let mut args = vec![if name == "observe" { "pr" } else { "park" }, name];
        if matches!(name, "evaluate" | "validate-receipt" | "confirm-readback") {
            args.extend(["--episode-id", EPISODE, "--intent-id", INTENT, "--attempt-id", attempt.as_str()]);
        }
        let (code, out, stderr) = run_bytes(&args, &input, &db);
        prop_assert!(!stderr.contains("panicked"), "{}", stderr);
        prop_assert!(code == 0 || code == 2, "exit {}: {} {}", code, out, stderr);
        if code == 2 {
            let v: Value = serde_json::from_str(&out).expect("one JSON error object");
            prop_assert!(v["error"]["field"].is_string() || v["error"]["violations"].is_array(), "{}", out);
            prop_assert_eq!(t.bytes(), before);
        }
    }
}

#[test]
fn input_past_the_size_limit_is_refused_with_bounded_memory() {
    let t = TempJournal::new();
    let big = vec![b' '; 20 << 20];
    let (code, out, _) = run_bytes(&["park", "check"], &big, &t.path());
    assert_eq!(code, 2);
    assert!(out.contains("\"rule\":\"input-size\""), "{out}");
}

#[test]
fn invalid_utf8_and_duplicate_keys_are_named() {
    let t = TempJournal::new();
    let (code, out, _) = run_bytes(
        &["park", "check"],
        b"{\"schema_version\": \"\xff\"}",
        &t.path(),
    );
    assert_eq!(
        (code, out.contains("\"rule\":\"utf-8\"")),
        (2, true),
        "{out}"
    );
    let mut doc = observation().to_string();
    doc.insert_str(1, "\"pr_backed\":true,");
    let (code, out, _) = run_bytes(&["park", "check"], doc.as_bytes(), &t.path());
    assert_eq!(
        (code, out.contains("\"rule\":\"duplicate-key\"")),
        (2, true),
        "{out}"
    );
}

proptest! {
    #![proptest_config(config(256, 100_000))]

    /// The ship machine's report-reading verbs on garbage reports, in the state each
    /// verb is admitted in (phase 1, 2, 3), with the runs the CLI would make.
    #[test]
    fn ship_reports_never_panic(doc in any_json(), which in 0u8..3) {
        use cairn::machines::ship::{gates, Command, Ship};
        use crate::support::ship::{happy, params, World, ROOT};
        let mut state = Ship::initial_state();
        for (step, w) in &happy()[..3 + which as usize] {
            let c = crate::support::ship::command(&state, step, w);
            let events = Ship::decide(&state, &c, &ctx()).expect("the happy prefix is accepted");
            state = events.iter().fold(state, Ship::evolve);
        }
        let w = World::happy();
        let p = params();
        let command = match which {
            0 => Command::Verify { report: doc, runs: w.runs(&gates::phase1d_plan(&p, ROOT)) },
            1 => Command::Refine { report: doc, runs: w.runs(&gates::refine_plan(&p, ROOT)) },
            _ => Command::PreMerge { report: doc, runs: w.runs(&gates::premerge_plan(&p, ROOT, None)) },
        };
        let _ = Ship::decide(&state, &command, &ctx());
    }
}

fn yamlish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("title: t\n".to_owned()),
        Just("work:\n".to_owned()),
        Just("  - id: a\n".to_owned()),
        Just("    task: t\n".to_owned()),
        Just("    depends_on: [a, b]\n".to_owned()),
        Just("    acceptance: [{id: A, statement: s, evidence: {kind: command, run: x, expect: {exit: 0, output_includes: ok}}}]\n".to_owned()),
        Just("    work:\n".to_owned()),
        Just("---\n".to_owned()),
        Just("!md |\n  x\n".to_owned()),
        Just("&a [*a]\n".to_owned()),
        Just("? [x]\n: y\n".to_owned()),
        "[ -~\n]{0,12}".prop_map(|s| s),
    ];
    proptest::collection::vec(token, 0..14).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config(512, 100_000))]

    /// Workspec validation, lineage and amendment never panic on hostile YAML.
    #[test]
    fn workspec_validation_never_panics(text in yamlish(), draft in ".{0,40}") {
        use cairn::machines::work::{amend, spec};
        let v = spec::validate(&text);
        let _ = spec::validate_with_draft(&text, &spec::Draft::Text(draft.clone()));
        if let Some(s) = &v.spec {
            let _ = crate::support::work::SPEC.len();
            let _ = cairn::machines::work::ready::ready_set(s, &Default::default());
        }
        let _ = amend::amend_criterion(&text, Some(&draft), &amend::AmendRequest {
            criterion_id: "A".into(), before: "s".into(), after: "t".into(), reason: "r".into(), authority: "a".into(),
        }, "2026-01-01T00:00:00Z");
        let _ = amend::add_touches(&text, &["a".to_owned()], &["x".to_owned()]);
    }
}
