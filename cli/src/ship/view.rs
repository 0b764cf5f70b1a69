//! How `cairn ship` shows a run: its stage, outcome code, the recovery table's
//! action and the verbs it admits next (the machine's `ship::next`).

use cairn::machines::ship::{self, gates::Gate, recovery, Ship, Stage, State};
use cairn::Machine;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What every ship verb prints: the run's view, and for a recording verb what
/// this transition recorded.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ShipView {
    /// The state's name in the graph.
    pub state: &'static str,
    /// The verbs the state admits next.
    pub next: Vec<&'static str>,
    /// The run, once one is open.
    #[serde(flatten)]
    pub run: Option<RunView>,
    /// `ship/<SHORT_ID>`.
    pub stream: String,
    /// The stream's version after this transition (recording verbs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The event types this transition recorded (recording verbs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<&'static str>>,
    /// The preflight's note (`preflight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The gates this transition derived from its runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<Vec<Gate>>,
    /// A partial teardown: each git run that failed, in git's own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Vec<Why>>,
}

/// An open run as the CLI shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunView {
    /// The stage, as the machine's state holds it.
    pub stage: Option<Value>,
    /// The outcome code (a stop's, the preflight's, `shipped`).
    pub code: Option<String>,
    /// What to do about it (the recovery table's action).
    pub action: Option<String>,
    pub repo_root: String,
    pub branch: String,
    pub worktree_path: String,
    pub target_branch: String,
    pub session: u32,
    pub refine_passed: bool,
    pub merge_attempts: u8,
    pub merged_sha: Option<String>,
    /// A git mutation in flight, and the process it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlightView>,
}

/// A git mutation announced and not yet recorded.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InFlightView {
    /// The ship verb.
    pub step: &'static str,
    /// The process it belongs to (`{pid, started}`; null in a journal from before
    /// rules 3).
    pub owner: Option<Value>,
}

/// `ship classify`: the preflight classifier's answer over cairn's own git runs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Classified {
    /// The outcome code (`clean`, `stopped:…`, …).
    pub outcome: String,
    pub may_create_worktree: bool,
    /// What to do about it.
    pub action: &'static str,
    /// The git runs it read.
    pub observations: Vec<cairn::machines::evidence::CommandRun>,
}

/// One failed git run of a partial teardown.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Why {
    pub argv: Vec<String>,
    pub exit_status: Option<i32>,
    /// Its stderr, trimmed.
    pub stderr: String,
}

/// The state as the CLI shows it: stage, outcome code, the recovery table's action.
pub fn view(state: &State, stream: String) -> ShipView {
    let name = Ship::state_name(state);
    let next = ship::next::verbs(state);
    let view = |run| ShipView {
        state: name,
        next,
        run,
        stream,
        version: None,
        events: None,
        note: None,
        gates: None,
        why: None,
    };
    let Some(run) = state.run() else {
        return view(None);
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
    view(Some(RunView {
        stage: stage.map(|s| serde_json::json!(s)),
        code,
        action,
        repo_root: run.repo_root.to_string(),
        branch: run.params.branch.clone(),
        worktree_path: run.params.worktree_path.clone(),
        target_branch: run.params.target_branch.clone(),
        session: run.session,
        refine_passed: run.refine_passed,
        merge_attempts: run.merge_attempts,
        merged_sha: run.merged_sha.as_ref().map(ToString::to_string),
        in_flight: run.begun.as_ref().map(|f| InFlightView {
            step: f.step.verb_name(),
            owner: f.owner.as_ref().map(|o| serde_json::json!(o)),
        }),
    }))
}
