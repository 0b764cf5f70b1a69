//! The park helper's input documents as types, for their JSON Schemas
//! (`cairn schema park …`): the parsers in `observation`, `receipt`, `prepare`,
//! `bind` and `gate` read the same shapes field by field, with the rules a schema
//! cannot say (an outcome its evidence supports, ids that correlate).

use schemars::JsonSchema;

use serde_json::Value;

use super::bind::Repository;
use super::fold::Candidate;
use super::observation::{Bead, Category, CheckName, Evidence, Phase};
use super::receipt::{ProviderSession, Resume};
use crate::{Outcome, Timestamp};

/// The `evaluate` / `check` document: an observation of every check.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationDocument {
    /// Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub schema_version: u32,
    pub protocol_phase: Phase,
    /// True exactly when `bead.pr_url` is a non-empty http(s) URL.
    pub pr_backed: bool,
    pub bead: Bead,
    /// Each check once; `pr_merged` only for a PR-backed bead.
    pub checks: Vec<CheckDocument>,
}

/// One check of an observation.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckDocument {
    pub name: CheckName,
    /// The one category the check belongs to.
    pub category: Category,
    /// An outcome the evidence supports.
    pub outcome: Outcome,
    /// The check's typed evidence (the type its name calls for).
    pub evidence: Evidence,
    pub observed_at: Timestamp,
}

/// The `validate-receipt` document: a durable observation and the receipt's fields.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiptDocument {
    #[schemars(range(min = 1, max = 1))]
    pub schema_version: u32,
    pub protocol_phase: Phase,
    pub pr_backed: bool,
    pub bead: Bead,
    pub checks: Vec<CheckDocument>,
    /// `ep-<uuid>`
    pub episode_id: String,
    /// `park-<uuid>`
    pub intent_id: String,
    /// `attempt-<uuid>`
    pub attempt_id: String,
    /// The confirmed anchor (`anchor_confirmed`'s `anchor`).
    #[schemars(length(min = 1))]
    pub anchor_bead: String,
    /// Unique entries; may be empty.
    pub provider_sessions: Vec<ProviderSession>,
    pub repository: Repository,
    /// The fold of the embedded checks (`parked` in v1).
    pub outcome: Candidate,
    /// The literal `true`.
    pub safe_to_close: SafeToClose,
    /// Non-empty strings.
    pub references: Vec<String>,
    /// For a parked receipt: exactly one of `branch` or `checkpoint`, and the next action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
}

/// The literal `true`.
#[derive(Debug, Clone, Copy)]
pub struct SafeToClose;

impl JsonSchema for SafeToClose {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SafeToClose".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "const": true, "description": "the literal true" })
    }
}

/// The `prepare-attempt` document.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareDocument {
    /// Always `park`.
    pub mode: PrepareMode,
    #[schemars(length(min = 1))]
    pub anchor_bead: String,
    /// The episode a retry keeps (`ep-<uuid>`), or null for a new one.
    pub episode_id: Option<String>,
    /// The intent a retry keeps (`park-<uuid>`), or null for a new one.
    pub intent_id: Option<String>,
    /// Receipts already written: a bare receipt, or `{receipt, source_bytes, comment_id}`.
    pub prior_receipts: Vec<Value>,
}

/// `prepare-attempt` runs in mode `park` only.
#[derive(Debug, Clone, Copy, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrepareMode {
    Park,
}

/// The `resume-gate` document.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeGateDocument {
    /// `ep-<uuid>`
    pub episode_id: String,
    /// `park-<uuid>`
    pub intent_id: String,
    /// Anything offered as a claim; v1 has no verifiable claim, so it changes nothing.
    pub atomic_claim: Value,
}

/// `validate-receipt`'s answer.
#[derive(Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Valid {
    /// Always true: an invalid receipt is an input error (exit 2).
    pub valid: bool,
}
