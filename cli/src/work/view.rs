//! What the `work` verbs print, as types (`cairn schema work <verb>`). The
//! machine's own values (a lifecycle, blockers, a verification's provenance, a
//! proof, a plan) are shown as the machine serializes them.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What every recording `work` verb prints: this transition, the node's two axes
/// when a session is known, and what the verb adds.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NodeView {
    /// `work-node/<spec key>:<address>`.
    pub stream: String,
    /// The stream's version after this transition.
    pub version: u64,
    /// The event types this transition recorded.
    pub events: Vec<&'static str>,
    /// The node's state name.
    pub state: &'static str,
    /// The session both axes are judged in (`--session`, else `CAIRN_SESSION`);
    /// null: neither axis is claimed.
    pub session: Option<String>,
    /// The node's lifecycle in this session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Value>,
    /// What keeps it from being ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blockers: Option<Value>,
    /// Its verification provenance in this session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Value>,
    /// The provenance in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification_words: Option<Value>,
    /// `verify`: the verification recorded (null when none was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
    /// `plan` (null when nothing was planned) and a `dispatch` that was not
    /// dispatched: the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    /// `plan`: the plan's receipt (null when nothing was planned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Value>,
    /// `dispatch`: `not-dispatched` when the node was not dispatched.
    #[serde(rename = "dispatchState", skip_serializing_if = "Option::is_none")]
    pub dispatch_state: Option<&'static str>,
    /// `raise-scope`: the scope request recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// `resolve-scope`, `amend-criterion`: the spec rewritten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
    /// `merge`: which containment each command criterion of the integration
    /// verification ran under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containment: Option<Value>,
}

/// `work validate`: every finding, and the first error as an error object.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Validated {
    /// The spec file.
    pub path: Value,
    pub valid: bool,
    #[serde(rename = "errorCount")]
    pub error_count: usize,
    #[serde(rename = "warningCount")]
    pub warning_count: usize,
    pub findings: Vec<SpecFinding>,
    /// The first error, as the CLI's error object reads (`invalid-spec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SpecError>,
}

/// One finding of `work validate`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SpecFinding {
    /// Its stable code.
    pub code: Value,
    /// `error` or `warning`.
    pub severity: Value,
    /// Where in the spec.
    pub path: String,
    pub message: String,
    /// The finding as one line.
    pub rendered: String,
    /// What happened to it (a draft's finding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disposition: Option<Value>,
}

/// The first error of `work validate`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SpecError {
    /// `invalid-spec`.
    pub kind: &'static str,
    pub field: String,
    pub rule: Value,
    pub message: String,
}

/// `work ready`: the ready set, and every other node's lifecycle and blockers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadyView {
    pub spec: Value,
    pub session: String,
    /// The addresses of the ready nodes.
    pub ready: Vec<Vec<String>>,
    pub not_ready: Vec<NotReady>,
}

/// A node that is not ready.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NotReady {
    pub address: Vec<String>,
    pub lifecycle: Value,
    pub blockers: Value,
}

/// `work status`: every node's lifecycle, blockers and verification provenance.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StatusView {
    pub spec: Value,
    pub session: String,
    /// The addresses of the ready nodes.
    pub ready: Vec<Vec<String>>,
    pub nodes: Vec<NodeStatus>,
}

/// One node in `work status`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NodeStatus {
    pub address: Vec<String>,
    pub lifecycle: Value,
    pub blockers: Value,
    pub verification: Value,
    pub verification_words: Value,
    /// Which containment each command criterion of the last verification ran under.
    pub containment: Value,
    /// The last verification (the proof the provenance speaks of).
    pub proof: Value,
    /// The node's state name.
    pub stage: &'static str,
    /// Reviews recorded.
    pub reviews: usize,
}
