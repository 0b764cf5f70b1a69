//! PR-loop fixtures: `gh pr view --json
//! state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt`
//! readings in the shape gh prints them, one per state.

use serde_json::{json, Value};

pub const PR: &str = "https://github.com/example/project/pull/7";
/// The nine PR states, in the table's order.
pub const STATES: [&str; 9] = [
    "draft",
    "await-review",
    "changes-requested",
    "pending-or-failing-checks",
    "conflicting",
    "approved-stale",
    "approved-fresh",
    "merged",
    "closed",
];

pub const SHA: &str = "89abcdef0123456789abcdef0123456789abcdef";

pub fn check_run(name: &str, status: &str, conclusion: &str) -> Value {
    json!({"__typename": "CheckRun", "name": name, "workflowName": "ci", "status": status, "conclusion": conclusion,
           "startedAt": "2026-11-30T03:00:00Z", "completedAt": "2026-11-30T03:05:00Z", "detailsUrl": "https://github.com/example/project/actions/runs/1"})
}

pub fn status_context(context: &str, state: &str) -> Value {
    json!({"__typename": "StatusContext", "context": context, "state": state, "targetUrl": "https://ci.example/1", "startedAt": "2026-11-30T03:00:00Z"})
}

fn base() -> Value {
    json!({
        "state": "OPEN",
        "reviewDecision": "APPROVED",
        "mergeable": "MERGEABLE",
        "mergeStateStatus": "CLEAN",
        "statusCheckRollup": [check_run("test", "COMPLETED", "SUCCESS"), status_context("lint", "SUCCESS")],
        "isDraft": false,
        "mergedAt": null
    })
}

/// A reading for each of the nine states (approved ones need a freshness count).
pub fn reading(state: &str) -> Value {
    let mut r = base();
    match state {
        "draft" => {
            r["isDraft"] = json!(true);
            r["reviewDecision"] = json!("");
            r["mergeStateStatus"] = json!("DRAFT");
        }
        "await-review" => r["reviewDecision"] = json!("REVIEW_REQUIRED"),
        "changes-requested" => r["reviewDecision"] = json!("CHANGES_REQUESTED"),
        "pending-or-failing-checks" => {
            r["statusCheckRollup"] = json!([
                check_run("test", "COMPLETED", "FAILURE"),
                check_run("build", "IN_PROGRESS", "")
            ]);
            r["mergeStateStatus"] = json!("UNSTABLE");
        }
        "conflicting" => {
            r["mergeable"] = json!("CONFLICTING");
            r["mergeStateStatus"] = json!("DIRTY");
        }
        "approved-stale" | "approved-fresh" => {}
        "merged" => {
            r["state"] = json!("MERGED");
            r["mergedAt"] = json!("2026-11-30T05:00:00Z");
            r["mergeable"] = json!("UNKNOWN");
            r["mergeStateStatus"] = json!("UNKNOWN");
        }
        "closed" => {
            r["state"] = json!("CLOSED");
            r["mergeable"] = json!("UNKNOWN");
            r["mergeStateStatus"] = json!("UNKNOWN");
        }
        other => panic!("no fixture for {other}"),
    }
    r
}

/// The observe/classify document for a state.
pub fn doc(state: &str, destination: &str) -> Value {
    let commits = if state == "approved-stale" { 2 } else { 0 };
    json!({"pr": PR, "reading": reading(state), "reviewed_sha": SHA, "commits_since_review": commits, "destination": destination})
}
