//! What the `saga` verbs print, as types (`cairn schema saga <verb>`). The
//! thread's own values (its phases, status, gates) are shown as the machine
//! serializes them.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// The gate verbs (`doc-review`, `review`, `override`, `pr-ready`, `adjust`,
/// `boundary`, `merge-turn …`, `release`, `board`): the gates after the transition.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GatesView {
    pub saga_id: String,
    /// `saga/<saga id>`.
    pub stream: String,
    /// The stream's version after this transition.
    pub version: u64,
    /// The event types this transition recorded.
    pub events: Vec<&'static str>,
    /// Whether anything was recorded.
    pub submits: bool,
    /// The thread's gate record.
    pub gates: Value,
}

/// `saga save`: the tick as saved.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Saved {
    pub saga_id: Value,
    pub stream: String,
    pub version: u64,
    pub lifecycle_phase: Value,
    pub phase: Value,
    pub status: Value,
    pub next_phase: Value,
    /// The review round the next failing observation would start.
    pub next_round: u32,
}

/// The whole thread (`saga show`, `saga restore` when one is saved): the
/// thread as the machine serializes it, with `qa.allowed_cycles` filled in.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ThreadView {
    #[serde(flatten)]
    pub thread: Map<String, Value>,
    pub next_round: u32,
    pub next_phase: Value,
    /// The stream's state name (`show`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// `true` (`restore`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<bool>,
}

/// `saga restore`: the thread, or `{saga_id, found: false}` (exit 0, as the
/// saga skill's `saga.py restore` answers).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Restored {
    Found(ThreadView),
    Missing { saga_id: String, found: bool },
}

/// `saga scan`: threads to resume, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Scanned {
    pub candidates: Vec<Candidate>,
    pub count: usize,
}

/// A thread `saga scan` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Candidate {
    pub saga_id: Value,
    pub issue_ref: Value,
    pub plan_path: Value,
    pub branch: Value,
    pub lifecycle_phase: Value,
    pub status: Value,
    pub next_step: Value,
    pub next_round: u32,
}

/// `saga qa`: the QA allowance after the cycle.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QaView {
    pub saga_id: Value,
    /// The cycle's outcome.
    pub outcome: Value,
    pub lifecycle_phase: Value,
    pub post_merge_cycles: Value,
    pub allowed_cycles: Value,
    pub extension_taken: Value,
    /// The event types this transition recorded.
    pub events: Vec<&'static str>,
}
