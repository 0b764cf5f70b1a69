//! How `cairn ship` shows a run: its stage, outcome code, the recovery table's
//! action and the verbs it admits next (the machine's `ship::next`).

use cairn::machines::ship::{self, recovery, Ship, Stage, State};
use cairn::Machine;
use serde_json::{json, Value};

/// The state as the CLI shows it: stage, outcome code, the recovery table's action.
pub fn view(state: &State) -> Value {
    let name = Ship::state_name(state);
    let next = ship::next::verbs(state);
    let Some(run) = state.run() else {
        return json!({ "state": name, "next": next });
    };
    let stage = state.stage();
    let (code, action) = match stage {
        Some(Stage::Preflighted { outcome }) => {
            (Some(outcome.code()), Some(outcome.action().to_owned()))
        }
        Some(Stage::Stopped { failure, code, .. }) => (
            Some(code.clone()),
            Some(recovery::guidance(*failure).to_owned()),
        ),
        Some(Stage::ScopeTripped { .. }) => (
            Some("scope-gate-tripped".to_owned()),
            Some(recovery::guidance(recovery::Failure::ScopeGate).to_owned()),
        ),
        Some(Stage::Tiebreaker { number, .. }) => (
            Some(format!("tiebreaker:{number}")),
            Some(recovery::guidance(recovery::Failure::StopTiebreaker).to_owned()),
        ),
        Some(Stage::TeardownPending { reason }) => (
            Some(reason.clone()),
            Some("remove worktree and branch: `cairn ship teardown`".to_owned()),
        ),
        Some(Stage::CreationFailed { failed }) => (
            Some("stopped:worktree-prep-failed".to_owned()),
            Some(format!(
                "{} ({})",
                recovery::guidance(recovery::Failure::WorktreeCreation),
                failed.join(", ")
            )),
        ),
        Some(Stage::PermissionBoundary { code, .. }) => (
            Some(code.clone()),
            Some(recovery::guidance(recovery::Failure::PermissionBoundary).to_owned()),
        ),
        Some(Stage::Shipped) => (
            Some("shipped".to_owned()),
            Some(format!(
                "CLOSE_STEP: {} --commit {}",
                run.params.close_step,
                run.merged_sha.as_deref().unwrap_or("")
            )),
        ),
        _ => (None, None),
    };
    let mut out = json!({
        "state": name,
        "stage": stage,
        "code": code,
        "action": action,
        "repo_root": run.repo_root,
        "branch": run.params.branch,
        "worktree_path": run.params.worktree_path,
        "target_branch": run.params.target_branch,
        "session": run.session,
        "refine_passed": run.refine_passed,
        "merge_attempts": run.merge_attempts,
        "merged_sha": run.merged_sha,
        "next": next,
    });
    // A git mutation in flight, and the process it belongs to.
    if let Some(f) = &run.begun {
        out["in_flight"] = json!({ "step": f.step.verb_name(), "owner": f.owner });
    }
    out
}
