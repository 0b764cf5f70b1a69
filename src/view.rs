//! What `cairn state` shows: a stream's state rebuilt by replay, and where a
//! time-travel version falls inside a transition.

use serde::Serialize;
use serde_json::Value;

/// A stream's state, type-erased, for the CLI and auditors.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StateView {
    /// The stream id.
    pub stream: String,
    /// Its machine.
    pub machine: String,
    /// How many events were replayed.
    pub version: u64,
    /// The state's node in the machine's graph.
    pub state_name: String,
    /// The state as JSON.
    pub state: Value,
    /// Set when `--at` lands between the events of one transition: the state shown
    /// is one no decision ever produced on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid_transition: Option<MidTransition>,
}

/// The transition a time-travel version falls inside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MidTransition {
    /// The transition record.
    pub transition_id: i64,
    /// Its first version.
    pub first_version: u64,
    /// Its last version: `--at` this version shows the whole transition.
    pub last_version: u64,
}
