//! `resume-gate`: v1 has no atomic episode claim, so resume is inspection only.

use serde::Serialize;
use serde_json::Value;

use super::{EpisodeId, IntentId};
use crate::evidence::wire::{self, InputError, Result};

/// The tracker id of the missing claim/lease primitive (seed: `rosary-04faf5`).
pub const CLAIM_MECHANISM: &str = "rosary-04faf5";

/// The contract the missing primitive must meet, in the helper's words.
pub const CLAIM_CONTRACT: &str = "atomic episode claim/lease with a caller-stable claim ID, episode uniqueness, compare-and-set ownership, expiry, and release";

/// `resume-gate` output, field for field the helper's.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Gate {
    pub authorized: bool,
    pub required_mechanism: &'static str,
    pub required_contract: &'static str,
    pub allowed_actions: [&'static str; 1],
    pub blocked_actions: [&'static str; 3],
    pub gate_order: [&'static str; 5],
    pub reason: String,
}

/// Validates the input (exactly `episode_id`, `intent_id` and `atomic_claim`) and
/// answers. Nothing offered as `atomic_claim` changes the answer: no verifiable
/// claim primitive exists in v1, so a comment-dedupe flag or any claim-shaped
/// object is read as nothing.
pub fn resume_gate(v: &Value) -> Result<Gate> {
    let map = wire::object(v, "", &["episode_id", "intent_id", "atomic_claim"], &[])?;
    EpisodeId::parse(&wire::nonempty(map, "", "episode_id")?)
        .map_err(|e| InputError::new("episode_id", "episode-id", e.to_string()))?;
    IntentId::parse(&wire::nonempty(map, "", "intent_id")?)
        .map_err(|e| InputError::new("intent_id", "intent-id", e.to_string()))?;
    Ok(Gate {
        authorized: false,
        required_mechanism: CLAIM_MECHANISM,
        required_contract: CLAIM_CONTRACT,
        allowed_actions: ["read_only_inspection"],
        blocked_actions: ["workspace_creation", "resumed_observation", "work"],
        gate_order: [
            "read_only_inspection",
            "atomic_claim_required",
            "workspace_creation_blocked",
            "resumed_observation_blocked",
            "work_blocked",
        ],
        reason: format!("atomic resume claim primitive {CLAIM_MECHANISM} is unavailable"),
    })
}
