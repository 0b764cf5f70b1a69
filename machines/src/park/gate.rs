//! `resume-gate`: v1 has no atomic episode claim, so resume is inspection only.
//! v2, opt-in only (the reviewed upgrade the seed requires before active resume),
//! authorizes resume when `atomic_claim` names a cairn claim on the episode that
//! the journal's readback shows held by the caller, live, under the current token;
//! on any doubt it answers v1's refusal, with the reason.

use serde::Serialize;
use serde_json::Value;

use super::{EpisodeId, IntentId, NAME};
use crate::evidence::wire::{self, InputError, Result};
use crate::reads::{claim_stream, Fact, Read};
use crate::Timestamp;

/// The tracker id of the missing claim/lease primitive (seed: `rosary-04faf5`).
pub const CLAIM_MECHANISM: &str = "rosary-04faf5";

/// The contract the missing primitive must meet, in the helper's words.
pub const CLAIM_CONTRACT: &str = "atomic episode claim/lease with a caller-stable claim ID, episode uniqueness, compare-and-set ownership, expiry, and release";

/// The fields of a cairn claim offered as `atomic_claim` to gate v2, exactly.
pub const CLAIM_FIELDS: [&str; 4] = ["resource", "owner", "claim_id", "token"];

/// `resume-gate` output, field for field the helper's.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Gate {
    pub authorized: bool,
    pub required_mechanism: &'static str,
    pub required_contract: &'static str,
    pub allowed_actions: Vec<&'static str>,
    pub blocked_actions: Vec<&'static str>,
    pub gate_order: Vec<&'static str>,
    pub reason: String,
}

/// A checked `resume-gate` input: the episode, the intent, and whatever was
/// offered as `atomic_claim` (read only by gate v2).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub episode_id: EpisodeId,
    pub intent_id: IntentId,
    pub atomic_claim: Value,
}

impl Request {
    /// The episode's own stream (`park/ep-…`): the resource its claim is on.
    pub fn resource(&self) -> String {
        format!("{NAME}/{}", self.episode_id)
    }

    /// The claim stream gate v2 reads back (`claim/park/ep-…`).
    pub fn claim_stream(&self) -> String {
        claim_stream(&self.resource())
    }
}

/// Validates the input: exactly `episode_id`, `intent_id` and `atomic_claim`.
pub fn parse(v: &Value) -> Result<Request> {
    let map = wire::object(v, "", &["episode_id", "intent_id", "atomic_claim"], &[])?;
    let episode_id = EpisodeId::parse(&wire::nonempty(map, "", "episode_id")?)
        .map_err(|e| InputError::new("episode_id", "episode-id", e.to_string()))?;
    let intent_id = IntentId::parse(&wire::nonempty(map, "", "intent_id")?)
        .map_err(|e| InputError::new("intent_id", "intent-id", e.to_string()))?;
    Ok(Request {
        episode_id,
        intent_id,
        atomic_claim: map.get("atomic_claim").cloned().unwrap_or(Value::Null),
    })
}

/// v1: validates the input and answers. Nothing offered as `atomic_claim` changes
/// the answer: no verifiable claim primitive exists in v1, so a comment-dedupe
/// flag or any claim-shaped object is read as nothing.
pub fn resume_gate(v: &Value) -> Result<Gate> {
    parse(v).map(|_| {
        refused(format!(
            "atomic resume claim primitive {CLAIM_MECHANISM} is unavailable"
        ))
    })
}

/// v2 (opt-in): authorized only when `request.atomic_claim` is exactly a cairn
/// claim (`{resource, owner, claim_id, token}`) on this episode's stream, and
/// `lease` — the readback of its claim stream (`None`: never claimed) — shows
/// that owner holding it under that claim id and token, unexpired at `now`.
/// Anything else is v1's refusal with the reason.
pub fn resume_gate_v2(request: &Request, lease: Option<&Read>, now: &Timestamp) -> Gate {
    match verify(request, lease, now) {
        Ok(held) => Gate {
            authorized: true,
            required_mechanism: CLAIM_MECHANISM,
            required_contract: CLAIM_CONTRACT,
            allowed_actions: vec![
                "read_only_inspection",
                "workspace_creation",
                "resumed_observation",
                "work",
            ],
            blocked_actions: vec![],
            gate_order: vec![
                "read_only_inspection",
                "atomic_claim_verified",
                "workspace_creation_allowed",
                "resumed_observation_allowed",
                "work_allowed",
            ],
            reason: held,
        },
        Err(why) => refused(format!("claim gate v2: {why}")),
    }
}

/// The helper's v1 answer with `reason`.
fn refused(reason: String) -> Gate {
    Gate {
        authorized: false,
        required_mechanism: CLAIM_MECHANISM,
        required_contract: CLAIM_CONTRACT,
        allowed_actions: vec!["read_only_inspection"],
        blocked_actions: vec!["workspace_creation", "resumed_observation", "work"],
        gate_order: vec![
            "read_only_inspection",
            "atomic_claim_required",
            "workspace_creation_blocked",
            "resumed_observation_blocked",
            "work_blocked",
        ],
        reason,
    }
}

/// The offered claim, checked against the readback: why it authorizes, or why not.
fn verify(
    request: &Request,
    lease: Option<&Read>,
    now: &Timestamp,
) -> std::result::Result<String, String> {
    let offered = offered(&request.atomic_claim)?;
    let resource = request.resource();
    if offered.resource != resource {
        return Err(format!(
            "atomic_claim names resource `{}`, not this episode's `{resource}`",
            offered.resource
        ));
    }
    let stream = request.claim_stream();
    let read = lease
        .filter(|r| r.stream == stream && r.version > 0)
        .ok_or_else(|| format!("`{resource}` was never claimed (`{stream}` has no events)"))?;
    let Some(Fact::Lease { holder, last_token }) = &read.fact else {
        return Err(format!("`{stream}` states no lease"));
    };
    let Some(h) = holder else {
        return Err(format!(
            "the claim on `{resource}` was released (last token {last_token}): nothing is held"
        ));
    };
    if h.owner != offered.owner || h.claim_id != offered.claim_id {
        return Err(format!(
            "`{resource}` is held by `{}` under claim `{}` (token {}) until {}, not by `{}` under claim `{}`",
            h.owner, h.claim_id, h.token, h.expires_at, offered.owner, offered.claim_id
        ));
    }
    if h.token != offered.token {
        return Err(format!(
            "token {} is not the current one: claim `{}` holds token {}",
            offered.token, h.claim_id, h.token
        ));
    }
    if !h.live_at(now) {
        return Err(format!(
            "the lease of token {} expired at {} (now {now}): acquire again for a new token",
            h.token, h.expires_at
        ));
    }
    Ok(format!(
        "`{}` holds `{resource}` under claim `{}` with the current token {} until {} (`{stream}` version {}, read at {now}): every act on the episode presents that token",
        h.owner, h.claim_id, h.token, h.expires_at, read.version
    ))
}

/// A cairn claim as offered in `atomic_claim`.
struct Offered {
    resource: String,
    owner: String,
    claim_id: String,
    token: u64,
}

/// `atomic_claim` read as a cairn claim: exactly [`CLAIM_FIELDS`], three
/// non-empty strings and a positive token; anything else names why it is not one.
fn offered(v: &Value) -> std::result::Result<Offered, String> {
    let Value::Object(map) = v else {
        return Err(format!(
            "atomic_claim is {}, not a cairn claim {{resource, owner, claim_id, token}}",
            match v {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            }
        ));
    };
    if let Some(extra) = map.keys().find(|k| !CLAIM_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "atomic_claim has the field `{extra}`, which a cairn claim does not: only a claim the journal holds authorizes resume"
        ));
    }
    let text = |key: &str| match map.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(format!("atomic_claim.{key} is not a non-empty string")),
    };
    let token = match map.get("token").and_then(Value::as_u64) {
        Some(t) if t > 0 => t,
        _ => return Err("atomic_claim.token is not a positive integer".to_owned()),
    };
    Ok(Offered {
        resource: text("resource")?,
        owner: text("owner")?,
        claim_id: text("claim_id")?,
        token,
    })
}
