//! review-request through cairn's graph-driven harness on the real journal: every
//! state and edge reached (the coverage report printed), the universal invariants
//! and two domain properties; its names pinned to its serde tags; and the team's
//! own `cairn` recording its commands with `cairn exec`.

use cairn::machines::testing::assert_serde_names;
use cairn::testing::{Config, Harness};
use cairn::Outcome;
use proptest::prelude::*;
use review_request::{check, Command, Event, Gate, ReviewRequest, State};

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
fn review_request_covers_its_graph() {
    let coverage = Harness::<ReviewRequest, Command>::new(&Config {
        cases: 64,
        regressions: Some(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../proptest-regressions/review-request.txt"
        )),
        session: None,
    })
    // Checked on every state a sequence reaches.
    .property("an approval names its reviewer", |s| match s {
        State::Approved { reviewer, .. } if reviewer.trim().is_empty() => {
            Err("approved by nobody".into())
        }
        _ => Ok(()),
    })
    // Checked on the last state of every sequence.
    .final_property("a merged request kept its title", |s| match s {
        State::Merged { title, .. } if title.trim().is_empty() => Err("merged untitled".into()),
        _ => Ok(()),
    })
    .run(proptest::collection::vec(command(), 1..12), |_state, c| {
        c.clone()
    });
    // Every state and edge was reached through the engine (the harness fails
    // otherwise); the report says how often, and which predicates refused.
    println!("{coverage}");
    assert!(coverage.is_complete());
    let refused = |command: &str, predicate: &str| {
        coverage
            .rejections
            .contains_key(&(command.to_owned(), predicate.to_owned()))
    };
    assert!(refused("approve", "gate-passes"), "{coverage}");
    assert!(refused("merge", "evidence-agrees"), "{coverage}");
    assert!(refused("withdraw", "allowed-in-state"), "{coverage}");
}

#[test]
fn names_are_the_serde_tags() {
    assert_serde_names::<State>(Some("state"), State::VARIANT_NAMES);
    assert_serde_names::<Event>(Some("type"), Event::VARIANT_NAMES);
    assert_serde_names::<Command>(Some("command"), Command::VARIANT_NAMES);
}

/// The team's `cairn exec review-request STREAM` with `command` on stdin: exit
/// code and stdout.
fn exec(db: &std::path::Path, command: &serde_json::Value) -> (i32, serde_json::Value) {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_review-cairn"))
        .args(["exec", "review-request", "review-request/rr-exec", "--db"])
        .arg(db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(command.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap(), v)
}

#[test]
fn the_teams_binary_records_its_own_commands_with_exec() {
    let dir = std::env::temp_dir().join(format!("rr-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("j.db");
    let open = serde_json::to_value(Command::Open {
        title: "add the widget".into(),
    })
    .unwrap();
    let (code, out) = exec(&db, &open);
    assert_eq!(
        (code, out["state_name"].as_str()),
        (0, Some("open")),
        "{out}"
    );
    // Unknown review evidence: refused, every failed predicate named, nothing written.
    let unknown = serde_json::to_value(Command::Approve {
        review: check(Gate::Review, Outcome::Unknown, "alice", None),
    })
    .unwrap();
    let (code, out) = exec(&db, &unknown);
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("rejected")),
        "{out}"
    );
    // A command that is not one of this machine's: the field and rule.
    let (code, out) = exec(&db, &serde_json::json!({"command": "approve"}));
    assert_eq!(
        (
            code,
            out["error"]["field"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (2, Some("review"), Some("required")),
        "{out}"
    );
    let pass = serde_json::to_value(Command::Approve {
        review: check(Gate::Review, Outcome::Pass, "alice", None),
    })
    .unwrap();
    let (code, out) = exec(&db, &pass);
    assert_eq!((code, out["version"].as_u64()), (0, Some(2)), "{out}");
    let audit = std::process::Command::new(env!("CARGO_BIN_EXE_review-cairn"))
        .args(["journal", "audit", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(audit.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
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
