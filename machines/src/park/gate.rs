//! `resume-gate`: v1 has no atomic episode claim, so resume is inspection only.

use serde::Serialize;
use serde_json::{json, Value};

use super::{EpisodeId, IntentId};
use crate::evidence::wire::{self, InputError, Result};

/// The tracker id of the missing claim/lease primitive (seed: `rosary-04faf5`).
pub const CLAIM_MECHANISM: &str = "rosary-04faf5";

/// `resume-gate` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    pub authorized: bool,
    pub required_mechanism: &'static str,
    pub required_contract: Value,
    pub allowed_actions: Vec<&'static str>,
    pub blocked_actions: Vec<&'static str>,
    pub gate_order: Vec<&'static str>,
}

/// Validates the input and answers. Nothing offered as `atomic_claim` changes the
/// answer: no verifiable claim primitive exists in v1.
pub fn resume_gate(v: &Value) -> Result<Gate> {
    let map = wire::object(v, "", &["episode_id", "intent_id"], &["atomic_claim"])?;
    EpisodeId::parse(&wire::nonempty(map, "", "episode_id")?)
        .map_err(|e| InputError::new("episode_id", "episode-id", e.to_string()))?;
    IntentId::parse(&wire::nonempty(map, "", "intent_id")?)
        .map_err(|e| InputError::new("intent_id", "intent-id", e.to_string()))?;
    Ok(Gate {
        authorized: false,
        required_mechanism: CLAIM_MECHANISM,
        required_contract: json!({
            "claim_id": "caller-stable claim id",
            "uniqueness": "at most one holder per episode",
            "compare_and_set": "ownership is compared and set against the current episode state",
            "owner": "an owner identity",
            "lease_expiry": "a lease expiry",
            "readback": "authoritative readback of the claim",
            "release": "explicit release and terminal semantics",
        }),
        allowed_actions: vec!["read_only_inspection"],
        blocked_actions: vec!["workspace_creation", "resumed_observation", "work"],
        gate_order: vec![
            "require_atomic_episode_claim",
            "block_workspace_creation",
            "block_resumed_observation",
            "block_work",
        ],
    })
}
