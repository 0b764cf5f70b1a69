//! The universal invariants, through cairn's generic harness, on the real journal.

use cairn::testing::{check as harness, Config};
use cairn::Outcome;
use proptest::prelude::*;
use review_request::{check, Command, Gate, ReviewRequest};

fn command() -> impl Strategy<Value = Command> {
    let outcome = prop_oneof![
        Just(Outcome::Pass),
        Just(Outcome::Fail),
        Just(Outcome::Unknown)
    ];
    prop_oneof![
        prop_oneof![Just(""), Just("fix it")].prop_map(|t| Command::Open { title: t.into() }),
        (outcome.clone(), prop_oneof![Just("alice"), Just("")]).prop_map(|(o, who)| {
            Command::Approve {
                review: check(Gate::Review, o, who, None),
            }
        }),
        (outcome, proptest::option::of(0i32..2), any::<bool>()).prop_map(|(o, s, wrong)| {
            Command::Merge {
                ci: check(if wrong { Gate::Review } else { Gate::Ci }, o, "ci", s),
            }
        }),
        Just(Command::Withdraw),
    ]
}

#[test]
fn review_request_keeps_the_universal_invariants() {
    harness::<ReviewRequest, Command, _>(
        &Config {
            cases: 64,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../proptest-regressions/review-request.txt"
            )),
            session: None,
        },
        proptest::collection::vec(command(), 1..12),
        |_state, c| c.clone(),
    );
}

#[test]
fn a_users_binary_serves_builtin_and_user_machines() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_review-cairn"))
        .arg("machines")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    // Every built-in, and the user's machine beside them.
    let mut want: Vec<&str> = cairn::Registry::builtin()
        .iter()
        .map(|m| m.name())
        .collect();
    want.push("review-request");
    want.sort_unstable();
    assert_eq!(names, want);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_review-cairn"))
        .args(["graph", "review-request", "--format", "dot"])
        .output()
        .unwrap();
    // petgraph writes the DOT: states by number, named by their labels.
    let dot = String::from_utf8_lossy(&out.stdout);
    for label in ["label = \"approved\"", "label = \"merged\"", " -> "] {
        assert!(dot.contains(label), "{label}: {dot}");
    }
}

#[test]
fn the_demo_runs_end_to_end() {
    let dir = std::env::temp_dir().join(format!("rr-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_review-request"))
        .arg(dir.join("j.db"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("refused, as it must be"), "{stdout}");
    assert!(
        stdout.contains("audit ok: true, 3 transitions re-decided"),
        "{stdout}"
    );
    // The user's binary audits the same journal: the user machine is registered there.
    let audit = std::process::Command::new(env!("CARGO_BIN_EXE_review-cairn"))
        .args(["journal", "audit", "--db"])
        .arg(dir.join("j.db"))
        .output()
        .unwrap();
    assert_eq!(
        audit.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&audit.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
