//! The durable receipt `work_episode_receipt/v1`: validation, the fence, and
//! `confirm-readback`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bind::Repository;
use super::fold::{evaluate, Action, Candidate};
use super::observation::{
    self, CheckName, Observation, Phase, Provider, TargetKind, OBSERVATION_KEYS,
};
use super::{AttemptId, EpisodeId, IntentId};
use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::evidence::AbsPath;

/// The fence's info string.
pub const FENCE_TAG: &str = "work_episode_receipt/v1";

const RECEIPT_KEYS: [&str; 9] = [
    "episode_id",
    "intent_id",
    "attempt_id",
    "anchor_bead",
    "provider_sessions",
    "repository",
    "outcome",
    "safe_to_close",
    "references",
];

#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ProviderSession {
    pub provider: Provider,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    pub next_action: String,
}

/// A validated receipt.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub observation: Observation,
    pub episode_id: EpisodeId,
    pub intent_id: IntentId,
    pub attempt_id: AttemptId,
    pub anchor_bead: String,
    pub provider_sessions: Vec<ProviderSession>,
    pub repository: Repository,
    pub outcome: Candidate,
    pub references: Vec<String>,
    pub resume: Option<Resume>,
}

impl Receipt {
    /// What two receipts for one intent must agree on: episode, anchor, outcome,
    /// the bead's acceptance/PR contract, `pr_backed`, repository and binding,
    /// head, and resume data (attempts, sessions and observation times may differ).
    pub fn semantics(&self) -> Value {
        serde_json::json!({
            "episode_id": self.episode_id.to_string(),
            "intent_id": self.intent_id.to_string(),
            "anchor_bead": self.anchor_bead,
            "outcome": self.outcome,
            "bead": self.observation.bead,
            "pr_backed": self.observation.pr_backed,
            "repository": self.repository,
            "binding": self.observation.binding(),
            "resume": self.resume,
            "resume_target": self.observation.resume_target(),
        })
    }
}

/// The exact fence around receipt bytes.
pub fn fence(bytes: &str) -> String {
    format!("```{FENCE_TAG}\n{bytes}\n```")
}

/// Validates receipt bytes exactly as they will be fenced.
pub fn validate_bytes(bytes: &str) -> Result<Receipt> {
    if bytes.contains("```") {
        return Err(InputError::new(
            "$",
            "fence-inside",
            "receipt bytes must not contain a code fence",
        ));
    }
    validate(&wire::parse_document(bytes)?)
}

/// Validates a receipt document.
pub fn validate(v: &Value) -> Result<Receipt> {
    let mut all: Vec<&str> = RECEIPT_KEYS.to_vec();
    all.push("resume");
    let map = wire::object(
        v,
        "",
        &[OBSERVATION_KEYS.as_slice(), RECEIPT_KEYS.as_slice()].concat(),
        &["resume"],
    )?;
    let obs = observation::parse_at(v, "", &all)?;
    if obs.protocol_phase != Phase::Durable {
        return Err(InputError::new(
            "protocol_phase",
            "receipt-phase",
            "a preflight observation is never receipt-eligible",
        ));
    }
    let id = |key: &str| wire::nonempty(map, "", key);
    let episode_id = EpisodeId::parse(&id("episode_id")?)
        .map_err(|e| InputError::new("episode_id", "episode-id", e.to_string()))?;
    let intent_id = IntentId::parse(&id("intent_id")?)
        .map_err(|e| InputError::new("intent_id", "intent-id", e.to_string()))?;
    let attempt_id = AttemptId::parse(&id("attempt_id")?)
        .map_err(|e| InputError::new("attempt_id", "attempt-id", e.to_string()))?;
    let anchor_bead = wire::nonempty(map, "", "anchor_bead")?;
    let outcome: Candidate = wire::field(map, "", "outcome")?;
    if map.get("safe_to_close") != Some(&Value::Bool(true)) {
        return Err(InputError::new(
            "safe_to_close",
            "safe-to-close-literal",
            "safe_to_close must be the literal true",
        ));
    }
    // The sessions are evidence attached to the episode, never its identity: the
    // list may be empty (the helper writes such receipts), its entries unique.
    let provider_sessions: Vec<ProviderSession> = wire::field(map, "", "provider_sessions")?;
    for (i, s) in provider_sessions.iter().enumerate() {
        if s.id.trim().is_empty() {
            return Err(InputError::new(
                at(&idx("provider_sessions", i), "id"),
                "nonempty-string",
                "a provider session id is empty",
            ));
        }
        if provider_sessions[..i].contains(s) {
            return Err(InputError::new(
                idx("provider_sessions", i),
                "unique-sessions",
                "provider sessions must be unique",
            ));
        }
    }
    let repository: Repository = wire::field(map, "", "repository")?;
    let references: Vec<String> = wire::field(map, "", "references")?;
    if let Some(i) = references.iter().position(|r| r.trim().is_empty()) {
        return Err(InputError::new(
            idx("references", i),
            "nonempty-string",
            "every reference is a non-empty string",
        ));
    }
    let resume: Option<Resume> = match map.get("resume") {
        None => None,
        Some(_) => Some(wire::field(map, "", "resume")?),
    };

    // The claimed outcome must be the deterministic fold of the embedded checks.
    let evaluation = evaluate(&obs);
    if !(evaluation.eligible && evaluation.action == Some(Action::WriteReceipt)) {
        return Err(InputError::new(
            "checks",
            "receipt-eligible",
            format!(
                "the embedded checks do not authorize a receipt: {}",
                evaluation.reasons.join("; ")
            ),
        ));
    }
    if evaluation.candidate != Some(outcome) {
        return Err(InputError::new(
            "outcome",
            "outcome-equals-fold",
            "the outcome is not the fold of the embedded checks",
        ));
    }
    if outcome == Candidate::Completed {
        return Err(InputError::new(
            "outcome",
            "completed-unavailable",
            "v1 cannot validate a completed receipt (rosary-a6166d)",
        ));
    }
    if obs.anchor() != Some(anchor_bead.as_str()) {
        return Err(InputError::new(
            "anchor_bead",
            "anchor-equals-confirmed",
            "anchor_bead must equal anchor_confirmed's anchor",
        ));
    }
    let binding = obs.binding().ok_or_else(|| {
        InputError::new(
            "checks",
            "binding",
            "repository_resolved carries no binding",
        )
    })?;
    if AbsPath::parse(&repository.path).is_err() {
        return Err(InputError::new(
            "repository.path",
            "absolute-path",
            "expected an absolute, normalised path",
        ));
    }
    if repository.branch.trim().is_empty() {
        return Err(InputError::new(
            "repository.branch",
            "nonempty-string",
            "the branch is empty",
        ));
    }
    if !repository.vcs.is_full_head(&repository.head) {
        return Err(InputError::new(
            "repository.head",
            "full-head",
            "expected a full immutable head (40/64 hex for git, a full change id for jj)",
        ));
    }
    if repository.path != binding.bound_root
        || repository.vcs != binding.backend
        || repository != binding.receipt_identity.repository
    {
        return Err(InputError::new(
            "repository",
            "repository-equals-binding",
            "the repository object must equal the validated repository_resolved binding",
        ));
    }
    if binding.receipt_identity.episode_id != episode_id.to_string()
        || binding.receipt_identity.anchor_bead != anchor_bead
    {
        return Err(InputError::new(
            "episode_id",
            "identity-equals-binding",
            "the binding was made for another episode or anchor",
        ));
    }
    for name in [
        CheckName::TreePreserved,
        CheckName::CommitsReachableOrCheckpointResolvable,
    ] {
        let head = obs
            .preservation(name)
            .and_then(|p| p.resolved_head.as_deref());
        if head != Some(repository.head.as_str()) {
            return Err(InputError::new(
                "repository.head",
                "preservation-equals-head",
                format!("`{}` does not resolve to repository.head", name.as_str()),
            ));
        }
    }
    let target = obs.resume_target().ok_or_else(|| {
        InputError::new(
            "checks",
            "resume-target",
            "resume_target_resolvable carries no target",
        )
    })?;
    let resume_ref = resume
        .as_ref()
        .ok_or_else(|| InputError::new("resume", "required", "a parked receipt carries resume"))?;
    if resume_ref.next_action.trim().is_empty() {
        return Err(InputError::new(
            "resume.next_action",
            "nonempty-string",
            "next_action is empty",
        ));
    }
    let (kind, value) = match (&resume_ref.branch, &resume_ref.checkpoint) {
        (Some(b), None) if !b.trim().is_empty() => (TargetKind::Branch, b),
        (None, Some(c)) if !c.trim().is_empty() => (TargetKind::Checkpoint, c),
        _ => {
            return Err(InputError::new(
                "resume",
                "one-target",
                "exactly one non-empty `branch` or `checkpoint`",
            ))
        }
    };
    if target.kind != kind || &target.value != value || target.resolved_head != repository.head {
        return Err(InputError::new("resume", "resume-equals-evidence", "the resume target and its head must equal resume_target_resolvable's target and repository.head"));
    }
    Ok(Receipt {
        observation: obs,
        episode_id,
        intent_id,
        attempt_id,
        anchor_bead,
        provider_sessions,
        repository,
        outcome,
        references,
        resume,
    })
}

/// One bead comment as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    pub id: Value,
    pub body: String,
}

/// `confirm-readback` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadbackInput {
    pub receipt_bytes: String,
    pub comments: Vec<Comment>,
}

/// `confirm-readback` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Readback {
    pub comment_id: Option<Value>,
    pub durable: bool,
    pub reasons: Vec<String>,
    pub safe_to_close: bool,
}

/// Parses a `confirm-readback` document.
pub fn parse_readback(v: &Value) -> Result<ReadbackInput> {
    wire::object(v, "", &["receipt_bytes", "comments"], &[])?;
    let input: ReadbackInput = wire::typed(v.clone(), "$")?;
    for (i, c) in input.comments.iter().enumerate() {
        if !(c.id.is_string() || c.id.is_u64() || c.id.is_i64()) {
            return Err(InputError::new(
                at(&idx("comments", i), "id"),
                "comment-id",
                "a comment id is a string or an integer",
            ));
        }
    }
    Ok(input)
}

/// Orders comment ids: integers numerically, then strings.
pub fn id_key(id: &Value) -> (u8, i128, String) {
    match id {
        Value::Number(n) => (0, n.as_i64().map_or(i128::MAX, i128::from), String::new()),
        Value::String(s) => (1, 0, s.clone()),
        other => (2, 0, other.to_string()),
    }
}

/// The receipt bytes of a comment whose body is exactly one fence, nothing around
/// it (and no fence inside), or `None`.
fn sole_fence(body: &str) -> Option<&str> {
    let open = format!("```{FENCE_TAG}\n");
    let inner = body.strip_prefix(&open)?.strip_suffix("\n```")?;
    (!inner.is_empty() && !inner.contains("```")).then_some(inner)
}

/// The helper's answer when no exact sole fence proves durability.
pub const NOT_FOUND: &str = "matching receipt comment not found";
/// The helper's answer when a valid receipt for the same intent has other bytes.
pub const CONFLICT: &str = "conflicting receipt bytes for stable intent";

/// A read-back, confirmed: the receipt, the helper's answer, and cairn's own
/// account of each comment (for a human, never part of the wire).
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    pub receipt: Receipt,
    pub readback: Readback,
    pub notes: Vec<String>,
}

/// Confirms durability. The receipt bytes validate; a comment is a candidate
/// only when its body is exactly one fence around a valid receipt for the same
/// intent: with these exact bytes it proves durability (the first such comment
/// read back), with other bytes it is a conflict, which wins.
pub fn confirm(input: &ReadbackInput) -> Result<Confirmed> {
    let receipt = validate_bytes(&input.receipt_bytes)
        .map_err(|e| InputError::new(format!("receipt_bytes.{}", e.field), e.rule, e.message))?;
    let mut notes = Vec::new();
    let mut exact = Vec::new();
    let mut conflicting = false;
    for c in &input.comments {
        let Some(inner) = sole_fence(&c.body) else {
            if c.body.contains(&fence(&input.receipt_bytes)) {
                notes.push(format!(
                    "comment {}: the receipt with other text around it, not proof",
                    c.id
                ));
            }
            continue;
        };
        // Read as the helper reads it (a repeated key: the last one wins).
        let candidate = serde_json::from_str::<Value>(inner)
            .map_err(|e| e.to_string())
            .and_then(|v| validate(&v).map_err(|e| e.to_string()));
        match candidate {
            Err(why) => notes.push(format!(
                "comment {}: a fenced document that is not a valid receipt, ignored ({why})",
                c.id
            )),
            Ok(r) if r.intent_id != receipt.intent_id => {}
            Ok(_) if inner == input.receipt_bytes => {
                notes.push(format!(
                    "comment {}: exactly the fenced receipt bytes",
                    c.id
                ));
                exact.push(c.id.clone());
            }
            Ok(_) => {
                notes.push(format!(
                    "comment {}: a receipt for the same intent with other bytes",
                    c.id
                ));
                conflicting = true;
            }
        }
    }
    let unproven = |why: &str| Readback {
        comment_id: None,
        durable: false,
        reasons: vec![why.to_owned()],
        safe_to_close: false,
    };
    let readback = match exact.first() {
        _ if conflicting => unproven(CONFLICT),
        None => unproven(NOT_FOUND),
        Some(first) => Readback {
            comment_id: Some(first.clone()),
            durable: true,
            reasons: vec![],
            safe_to_close: true,
        },
    };
    Ok(Confirmed {
        receipt,
        readback,
        notes,
    })
}
