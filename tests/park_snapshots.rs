//! insta snapshots of every `cairn park` verb on representative inputs: exit code,
//! stdout and stderr together. Fresh ids, times, temp paths and object ids are redacted.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::park::*;

fn transcript(args: &[&str], stdin: &str) -> String {
    // A journal of this call's own (a fixed path is created when the tests run as
    // root, and then shared by every run).
    let scratch = tempfile::tempdir().expect("a temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_DB", scratch.path().join("journal.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .ok();
    let out = child.wait_with_output().expect("cairn exits");
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

macro_rules! snap {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"(ep|park|attempt)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "$1-[UUID]"),
            (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", "[TIME]"),
            (r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]"),
            (r"\b[0-9a-f]{40}\b", "[OID]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn check_outputs() {
    snap!(
        "park_check_eligible",
        transcript(&["park", "check"], &observation().to_string())
    );
    snap!(
        "park_check_preflight_checkpoint",
        transcript(&["park", "check"], &preflight().to_string())
    );
    let mut v = observation();
    get(&mut v, "no_running_child_operation")["outcome"] = json!("unknown");
    get(&mut v, "no_running_child_operation")["evidence"] = json!({"source": "codex.current_child_operations", "detail": "adapter missing", "client": "codex", "authoritative": false, "error": "collaboration.list_agents is not exposed"});
    snap!(
        "park_check_unsafe",
        transcript(&["park", "check"], &v.to_string())
    );
    let mut v = observation();
    get(&mut v, "bead_terminal")["evidence"]["status"] = json!("wontfix");
    snap!(
        "park_check_refused",
        transcript(&["park", "check"], &v.to_string())
    );
}

#[test]
fn prepare_attempt_outputs() {
    snap!("park_prepare_retry", transcript(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": null, "intent_id": null, "prior_receipts": []}).to_string()));
    let r = receipt();
    let prior = json!({"receipt": r, "source_bytes": r.to_string(), "comment_id": "c-9"});
    snap!("park_prepare_return_existing", transcript(&["park", "prepare-attempt"], &json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": [prior]}).to_string()));
}

#[test]
fn receipt_outputs() {
    let bytes = receipt().to_string();
    snap!(
        "park_validate_receipt",
        transcript(&["park", "validate-receipt"], &bytes)
    );
    let input = json!({"receipt_bytes": bytes, "comments": [{"id": 3, "body": "parked, see receipt"}, {"id": 4, "body": fence(&bytes)}]});
    snap!(
        "park_confirm_readback_durable",
        transcript(&["park", "confirm-readback"], &input.to_string())
    );
    let input = json!({"receipt_bytes": bytes, "comments": [{"id": 3, "body": format!("Parked:\n{}", fence(&bytes))}]});
    snap!(
        "park_confirm_readback_not_proven",
        transcript(&["park", "confirm-readback"], &input.to_string())
    );
}

#[test]
fn bind_and_gate_outputs() {
    snap!(
        "park_bind_repository",
        transcript(&["park", "bind-repository"], &bind_input().to_string())
    );
    snap!("park_resume_gate", transcript(&["park", "resume-gate"], &json!({"episode_id": EPISODE, "intent_id": INTENT, "atomic_claim": {"comment_dedupe": true}}).to_string()));
}

#[test]
fn graph_and_machines() {
    snap!(
        "park_graph_mermaid",
        transcript(&["graph", "park", "--format", "mermaid"], "")
    );
    snap!(
        "park_graph_dot",
        transcript(&["graph", "park", "--format", "dot"], "")
    );
}
