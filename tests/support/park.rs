//! Park fixtures: valid wire documents for a parked episode, built in one place so
//! each table case changes exactly one thing.

use cairn::machines::park::bind::{self, BindInput};
use serde_json::{json, Value};

pub const ROOT: &str = "/srv/work/project";
pub const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
pub const ANCHOR: &str = "rsry-42";
pub const EPISODE: &str = "ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
pub const INTENT: &str = "park-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
pub const ATTEMPT: &str = "attempt-2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a";
pub const AT: &str = "2026-11-30T04:00:00Z";
pub const PR: &str = "https://github.com/example/project/pull/7";

fn argv(rest: &[&str]) -> Value {
    let mut v = vec!["git", "-C", ROOT];
    v.extend_from_slice(rest);
    json!(v)
}

/// A bind-repository input for a normal checkout.
pub fn bind_input() -> Value {
    json!({
        "selector": {"kind": "episode", "value": EPISODE},
        "receipt_identity": {
            "episode_id": EPISODE,
            "anchor_bead": ANCHOR,
            "repository": {"path": ROOT, "vcs": "git", "branch": "feature/park", "head": HEAD}
        },
        "observations": {
            "root": {"command": argv(&["rev-parse", "--show-toplevel"]), "stdout": format!("{ROOT}\n")},
            "git_dir": {"command": argv(&["rev-parse", "--path-format=absolute", "--git-dir"]), "stdout": format!("{ROOT}/.git\n")},
            "common_dir": {"command": argv(&["rev-parse", "--path-format=absolute", "--git-common-dir"]), "stdout": format!("{ROOT}/.git\n")},
            "remote": {"command": argv(&["remote", "get-url", "origin"]), "stdout": "git@GitHub.com:example/project.git\n"}
        },
        "registrations": [
            {"name": "project", "url": "https://github.com/example/project"},
            {"name": "other", "url": "https://github.com/example/other.git"}
        ]
    })
}

/// The binding the library produces for [`bind_input`].
pub fn binding() -> Value {
    let input: BindInput = serde_json::from_value(bind_input()).expect("fixture parses");
    serde_json::to_value(bind::bind(&input).expect("fixture binds")).expect("encodes")
}

pub fn check(name: &str, category: &str, outcome: &str, evidence: Value) -> Value {
    json!({"name": name, "category": category, "outcome": outcome, "evidence": evidence, "observed_at": AT})
}

fn durable(name: &str) -> Value {
    check(
        name,
        "preservation",
        "pass",
        json!({
            "source": "git", "detail": "resolved", "backend": "git", "bound_root": ROOT, "workspace": ROOT,
            "state": "durable", "reference": "refs/heads/feature/park", "resolved_head": HEAD,
            "resolver_command": argv(&["cat-file", "-e", "refs/heads/feature/park^{commit}"])
        }),
    )
}

fn checkpointable(name: &str) -> Value {
    check(
        name,
        "preservation",
        "pass",
        json!({
            "source": "rsry_workspace_checkpoint", "detail": "a checkpoint can be taken", "backend": "git",
            "bound_root": ROOT, "workspace": ROOT, "state": "checkpointable", "captured_head": HEAD, "checkpoint_available": true
        }),
    )
}

/// A valid durable observation of a parked (non-terminal, not PR-backed) bead: eligible.
pub fn observation() -> Value {
    json!({
        "schema_version": 1,
        "protocol_phase": "durable",
        "pr_backed": false,
        "bead": {"acceptance_command": "cargo test", "pr_url": null},
        "checks": [
            check("anchor_confirmed", "identity", "pass", json!({"source": "explicit", "detail": "passed on the command line", "anchor": ANCHOR})),
            check("repository_resolved", "identity", "pass", json!({"source": "registered_repository_binding", "detail": "bound", "binding": binding()})),
            check("no_active_dispatch", "quiescence", "pass", json!({"source": "rsry_active+rsry_dispatch_history", "detail": "none active", "active_records": []})),
            check("no_running_child_operation", "quiescence", "pass", json!({"source": "claude.current_child_operations", "detail": "TaskList", "client": "claude", "authoritative": true, "running": []})),
            check("no_vcs_operation_or_conflict", "quiescence", "pass", json!({"source": "git", "detail": "clean", "backend": "git", "bound_root": ROOT,
                "commands": [argv(&["status", "--porcelain=v2", "--branch"]), argv(&["diff", "--name-only", "--diff-filter=U"])], "conflicts": [], "operations": []})),
            durable("tree_preserved"),
            durable("commits_reachable_or_checkpoint_resolvable"),
            check("close_condition_satisfied", "completion", "unknown", json!({"source": "rsry_bead_history", "detail": "no command-bound history", "error": "unavailable until rosary-a6166d"})),
            check("bead_terminal", "completion", "fail", json!({"source": "rsry_list_beads", "detail": "structured status", "status": "in_progress"})),
            check("resume_target_resolvable", "resume", "pass", json!({"source": "git", "detail": "branch resolves", "backend": "git", "bound_root": ROOT,
                "resolver_command": argv(&["rev-parse", "feature/park"]), "target": {"kind": "branch", "value": "feature/park", "resolved_head": HEAD}}))
        ]
    })
}

/// The preflight form of [`observation`]: checkpointable preservation → action checkpoint.
pub fn preflight() -> Value {
    let mut v = observation();
    v["protocol_phase"] = json!("preflight");
    set(&mut v, "tree_preserved", checkpointable("tree_preserved"));
    set(
        &mut v,
        "commits_reachable_or_checkpoint_resolvable",
        checkpointable("commits_reachable_or_checkpoint_resolvable"),
    );
    v
}

/// Makes `v` PR-backed with a `pr_merged` check of the given response.
pub fn pr_backed(v: &mut Value, outcome: &str, response: Value) {
    v["pr_backed"] = json!(true);
    v["bead"]["pr_url"] = json!(PR);
    v["checks"].as_array_mut().expect("checks").push(check("pr_merged", "completion", outcome, json!({
        "source": "gh", "detail": "gh pr view", "command": ["gh", "pr", "view", PR, "--json", "state,mergedAt,url"], "response": response
    })));
}

/// Replaces the check named `name`.
pub fn set(v: &mut Value, name: &str, new: Value) {
    let checks = v["checks"].as_array_mut().expect("checks");
    let i = checks
        .iter()
        .position(|c| c["name"] == name)
        .expect("check present");
    checks[i] = new;
}

/// A mutable handle on the check named `name`.
pub fn get<'a>(v: &'a mut Value, name: &str) -> &'a mut Value {
    v["checks"]
        .as_array_mut()
        .expect("checks")
        .iter_mut()
        .find(|c| c["name"] == name)
        .expect("check present")
}

/// Removes the check named `name`.
pub fn remove(v: &mut Value, name: &str) {
    v["checks"]
        .as_array_mut()
        .expect("checks")
        .retain(|c| c["name"] != name);
}

/// A valid parked receipt built from [`observation`].
pub fn receipt() -> Value {
    let mut r = observation();
    let extra = json!({
        "episode_id": EPISODE, "intent_id": INTENT, "attempt_id": ATTEMPT, "anchor_bead": ANCHOR,
        "provider_sessions": [{"provider": "claude", "id": "session-1"}],
        "repository": {"path": ROOT, "vcs": "git", "branch": "feature/park", "head": HEAD},
        "outcome": "parked", "safe_to_close": true, "references": ["refs/heads/feature/park"],
        "resume": {"branch": "feature/park", "next_action": "finish the parser and rerun cargo test"}
    });
    for (k, v) in extra.as_object().expect("object") {
        r[k] = v.clone();
    }
    r
}

/// The exact fence around receipt bytes.
pub fn fence(bytes: &str) -> String {
    format!("```work_episode_receipt/v1\n{bytes}\n```")
}
