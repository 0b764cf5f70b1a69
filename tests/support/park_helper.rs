//! Park documents built the helper's way: every binding, evidence object and
//! receipt assembled literally, exactly as the park skill's helper (`fold.py`)
//! assembles and prints them (the contract sheet
//! `../shared/contracts/park-helper-wire-format.md`), never through cairn's own
//! library — so a test built on them fails when cairn's wire drifts from the helper's.
//! Below them, the runners the `park_helper*` tests share.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

pub const ROOT: &str = "/srv/work/helper";
pub const HEAD: &str = "89abcdef0123456789abcdef0123456789abcdef";
pub const ANCHOR: &str = "rsry-7a1";
pub const EPISODE: &str = "ep-6f1c2e3d-4a5b-4c7e-9d2a-0b1e6f5e3c1a";
pub const INTENT: &str = "park-5a6b4c7d-8e9f-4a1b-9c3d-1c2d3e4f0a2b";
pub const ATTEMPT: &str = "attempt-9f0a1b2c-3d4e-4f5a-8b7c-2d3e4f5a6b7c";
pub const AT: &str = "2026-12-01T09:30:00+01:00";
pub const PR: &str = "https://github.com/example/helper/pull/12";
pub const REMOTE: &str = "git@github.com:example/helper.git";
pub const CANONICAL: &str = "github.com/example/helper";
pub const CHECKPOINT: &str = "refs/rosary/checkpoints/rsry-7a1";

/// `git -C ROOT …` as an argv array.
pub fn git(rest: &[&str]) -> Value {
    let mut v = vec!["git", "-C", ROOT];
    v.extend_from_slice(rest);
    json!(v)
}

/// The receipt's strict repository object.
pub fn repository() -> Value {
    json!({"path": ROOT, "vcs": "git", "branch": "feature/helper", "head": HEAD})
}

/// What the skill observes for `bind-repository`: exact commands and their
/// stdout as the skill passes it on (the helper compares it to the root as is).
pub fn observations() -> Value {
    json!({
        "root": {"command": git(&["rev-parse", "--show-toplevel"]), "stdout": ROOT},
        "git_dir": {"command": git(&["rev-parse", "--path-format=absolute", "--git-dir"]), "stdout": format!("{ROOT}/.git")},
        "common_dir": {"command": git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]), "stdout": format!("{ROOT}/.git")},
        "remote": {"command": git(&["remote", "get-url", "origin"]), "stdout": REMOTE}
    })
}

/// A `bind-repository` input, selected by bead.
pub fn bind_input() -> Value {
    json!({
        "selector": {"kind": "bead", "value": ANCHOR},
        "receipt_identity": {"episode_id": EPISODE, "anchor_bead": ANCHOR, "repository": repository()},
        "observations": observations(),
        "registrations": [
            {"name": "other", "url": "https://github.com/example/other"},
            {"name": "helper", "url": "https://github.com/example/helper.git"}
        ]
    })
}

/// The helper's `bind-repository` output for [`bind_input`], written out by hand:
/// the five bound commands, the matched registration with its canonical remote.
pub fn binding() -> Value {
    json!({
        "schema_version": 1,
        "selector": {"kind": "bead", "value": ANCHOR},
        "receipt_identity": {"episode_id": EPISODE, "anchor_bead": ANCHOR, "repository": repository()},
        "registration": {"name": "helper", "url": "https://github.com/example/helper.git", "canonical_remote": CANONICAL},
        "backend": "git",
        "bound_root": ROOT,
        "canonical_remote": CANONICAL,
        "observations": observations(),
        "commands": [
            git(&["status", "--porcelain=v2", "--branch"]),
            git(&["diff", "--name-only", "--diff-filter=U"]),
            git(&["rev-parse", "--path-format=absolute", "--git-dir"]),
            git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
            git(&["rev-parse", "HEAD"])
        ],
        "git_dir": format!("{ROOT}/.git"),
        "common_dir": format!("{ROOT}/.git")
    })
}

pub fn check(name: &str, category: &str, outcome: &str, evidence: Value) -> Value {
    json!({"name": name, "category": category, "outcome": outcome, "evidence": evidence, "observed_at": AT})
}

/// Durable preservation as the helper requires it: the reference is the resolved
/// head itself, resolved with `git -C ROOT cat-file -e REF^{commit}`.
pub fn durable(name: &str) -> Value {
    check(
        name,
        "preservation",
        "pass",
        json!({
            "source": "git", "detail": "checkpoint commit resolves", "backend": "git", "bound_root": ROOT,
            "workspace": ROOT, "state": "durable", "reference": HEAD, "resolved_head": HEAD,
            "resolver_command": git(&["cat-file", "-e", &format!("{HEAD}^{{commit}}")])
        }),
    )
}

/// Preflight preservation: `rsry_workspace_checkpoint` says a checkpoint can be taken.
pub fn checkpointable(name: &str) -> Value {
    check(
        name,
        "preservation",
        "pass",
        json!({
            "source": "rsry_workspace_checkpoint", "detail": "workspace can be checkpointed", "backend": "git",
            "bound_root": ROOT, "state": "checkpointable", "workspace": ROOT, "captured_head": HEAD,
            "checkpoint_available": true
        }),
    )
}

/// The resume target as the helper's resolver evidence carries it.
pub fn resume(outcome: &str, value: &str, kind: &str, resolved_head: &str) -> Value {
    check(
        "resume_target_resolvable",
        "resume",
        outcome,
        json!({
            "source": "git", "detail": "resume target resolved", "backend": "git", "bound_root": ROOT,
            "resolver_command": git(&["rev-parse", value]),
            "target": {"kind": kind, "value": value, "resolved_head": resolved_head}
        }),
    )
}

/// A durable observation of a parked bead, anchored by human confirmation, resumed
/// from a checkpoint: eligible to write a receipt.
pub fn observation() -> Value {
    json!({
        "schema_version": 1,
        "protocol_phase": "durable",
        "pr_backed": false,
        "bead": {"acceptance_command": "make check", "pr_url": null},
        "checks": [
            check("anchor_confirmed", "identity", "pass", json!({"source": "human_confirmation", "detail": "current branch proposed rsry-7a1; the human confirmed it", "anchor": ANCHOR})),
            check("repository_resolved", "identity", "pass", json!({"source": "registered_repository_binding", "detail": "one registered origin", "binding": binding()})),
            check("no_active_dispatch", "quiescence", "pass", json!({"source": "rsry_active+rsry_dispatch_history", "detail": "no active dispatch", "active_records": []})),
            check("no_running_child_operation", "quiescence", "pass", json!({"source": "codex.current_child_operations", "detail": "collaboration.list_agents", "client": "codex", "authoritative": true, "running": []})),
            check("no_vcs_operation_or_conflict", "quiescence", "pass", json!({"source": "git", "detail": "no operation, no unresolved path", "backend": "git", "bound_root": ROOT,
                "commands": [git(&["status", "--porcelain=v2", "--branch"]), git(&["diff", "--name-only", "--diff-filter=U"])],
                "conflicts": [], "operations": []})),
            durable("tree_preserved"),
            durable("commits_reachable_or_checkpoint_resolvable"),
            check("close_condition_satisfied", "completion", "unknown", json!({"source": "rsry_bead_history", "detail": "history is not command-bound", "error": "rosary-a6166d is unavailable"})),
            check("bead_terminal", "completion", "fail", json!({"source": "rsry_list_beads", "detail": "structured status", "status": "open"})),
            resume("pass", CHECKPOINT, "checkpoint", HEAD)
        ]
    })
}

/// The preflight form of [`observation`]: both preservation checks checkpointable.
pub fn preflight() -> Value {
    let mut v = observation();
    v["protocol_phase"] = json!("preflight");
    set(&mut v, checkpointable("tree_preserved"));
    set(
        &mut v,
        checkpointable("commits_reachable_or_checkpoint_resolvable"),
    );
    v
}

/// Makes `v` PR-backed with a `pr_merged` check.
pub fn pr_backed(v: &mut Value, pr_merged: Value) {
    v["pr_backed"] = json!(true);
    v["bead"]["pr_url"] = json!(PR);
    v["checks"].as_array_mut().expect("checks").push(pr_merged);
}

/// `pr_merged` as `gh pr view` answered it.
pub fn pr_merged(outcome: &str, response: Value) -> Value {
    check(
        "pr_merged",
        "completion",
        outcome,
        json!({"source": "gh", "detail": "gh pr view", "command": ["gh", "pr", "view", PR, "--json", "state,mergedAt,url"], "response": response}),
    )
}

/// Replaces the check with the same name.
pub fn set(v: &mut Value, new: Value) {
    let checks = v["checks"].as_array_mut().expect("checks");
    let i = checks
        .iter()
        .position(|c| c["name"] == new["name"])
        .expect("check present");
    checks[i] = new;
}

/// Removes the check named `name`.
pub fn remove(v: &mut Value, name: &str) {
    v["checks"]
        .as_array_mut()
        .expect("checks")
        .retain(|c| c["name"] != name);
}

/// A parked receipt for [`observation`] and `attempt`, as the skill builds it.
pub fn receipt(attempt: &str) -> Value {
    let mut r = observation();
    let extra = json!({
        "episode_id": EPISODE, "intent_id": INTENT, "attempt_id": attempt, "anchor_bead": ANCHOR,
        "provider_sessions": [{"provider": "codex", "id": "thread-1"}, {"provider": "claude", "id": "session-1"}],
        "repository": repository(),
        "outcome": "parked", "safe_to_close": true, "references": [CHECKPOINT, "https://example.com/notes/1"],
        "resume": {"checkpoint": CHECKPOINT, "next_action": "rerun make check after the fixture lands"}
    });
    for (k, val) in extra.as_object().expect("object") {
        r[k] = val.clone();
    }
    r
}

/// The exact fence the skill writes around receipt bytes.
pub fn fence(bytes: &str) -> String {
    format!("```work_episode_receipt/v1\n{bytes}\n```")
}

/// Runs `cairn` with `stdin` and its own scratch journal unless `db` is given:
/// (exit code, stdout exactly as printed, stderr).
pub fn raw(args: &[&str], stdin: &str, db: Option<&Path>) -> (i32, String, String) {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let db = db.map_or_else(|| scratch.path().join("journal.db"), Path::to_path_buf);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(&db)
        .env_remove("CAIRN_DB")
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
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a park verb; (exit code, stdout as JSON, stderr).
pub fn park(verb: &str, stdin: &str) -> (i32, Value, String) {
    let (code, out, err) = raw(&["park", verb], stdin, None);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {out}"));
    (code, v, err)
}

/// Asserts exit 0 and the helper's answer, value for value.
pub fn answers(verb: &str, stdin: &Value, want: Value) {
    let (code, out, err) = park(verb, &stdin.to_string());
    assert_eq!((code, &out), (0, &want), "{verb}: {err}");
}

/// Asserts exit 2 naming `field` and `rule`.
pub fn refused(verb: &str, stdin: &str, field: &str, rule: &str) {
    let (code, out, _) = park(verb, stdin);
    assert_eq!(
        (
            code,
            out["error"]["field"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (2, Some(field), Some(rule)),
        "{verb}: {out}"
    );
}

pub fn unsafe_with(phase: &str, reasons: &[&str]) -> Value {
    json!({"action": null, "candidate": null, "eligible": false, "protocol_phase": phase, "reasons": reasons})
}

pub fn eligible() -> Value {
    json!({"action": "write_receipt", "candidate": "parked", "eligible": true, "protocol_phase": "durable", "reasons": []})
}

pub fn checkpoint() -> Value {
    json!({"action": "checkpoint", "candidate": "parked", "eligible": false, "protocol_phase": "preflight", "reasons": ["durable preservation evidence required"]})
}

/// `cairn park VERB --episode-id … --intent-id … --attempt-id …` on `db`.
pub fn journaled(verb: &str, attempt: &str, stdin: &str, db: &Path) -> (i32, Value) {
    let args = [
        "park",
        verb,
        "--episode-id",
        EPISODE,
        "--intent-id",
        INTENT,
        "--attempt-id",
        attempt,
    ];
    let (code, out, err) = raw(&args, stdin, Some(db));
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v)
}
