//! The phase reports (leaf result packets) in the wire format the seed's leaves
//! already write: known fields typed, consumer-added fields kept as they are.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gates::Squash;

/// A leaf verdict: `ok`/`passed`/`shipped`, or `stopped:<reason>`.
pub fn stopped_reason(verdict: &str) -> Option<&str> {
    verdict.strip_prefix("stopped:")
}

/// §phase-1 report (kata-ship `resolve`, prompt-ship): `verdict` `ok | stopped:<reason>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phase1Report {
    /// `ok` or `stopped:<reason>`.
    pub verdict: String,
    /// The worktree the leaf says it worked in.
    pub worktree_path: String,
    /// The branch the leaf says it committed on.
    pub branch: String,
    /// The head the leaf committed (short or full).
    #[serde(default)]
    pub head_sha: Option<String>,
    /// Every path the leaf committed; missing is the empty set (every path out of scope).
    #[serde(default)]
    pub in_scope_paths: Option<Vec<String>>,
    /// The commit subject.
    #[serde(default)]
    pub commit_subject: Option<String>,
    /// The consumer's fields, including its `INTENT_FIELD`.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `clean | rerere-resolved | conflict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RebaseOutcome {
    /// Rebased without conflicts.
    Clean,
    /// rerere resolved the conflicts.
    RerereResolved,
    /// A conflict rerere could not clear: tiebreaker 3.
    Conflict,
}

/// A tiebreaker the leaf met: 1, 2 and 4 are auto-disposed with their grounding;
/// 3 and 5 stop and ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tiebreaker {
    /// 1–5.
    pub number: u8,
    /// ≤ 80 words of context.
    pub context: String,
    /// The disposition applied (1/2/4) or proposed (3/5).
    pub disposition: String,
    /// The evidence the disposition rests on (required for 1, 2, 4).
    #[serde(default)]
    pub grounding: Option<String>,
}

/// §phase-2-rebase-refine report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefineReport {
    /// `passed | flapping | daemon_unhealthy | stopped:<reason>`.
    pub verdict: String,
    /// How the one rebase went.
    pub rebase_outcome: RebaseOutcome,
    /// Refine iterations run.
    pub iterations_run: u32,
    /// The tip (short or full).
    pub tip_sha: String,
    /// `<sha> <subject>` lines.
    #[serde(default)]
    pub commits_added: Vec<String>,
    /// `<finding> — <grounding>`: every dismissal cites its grounding.
    #[serde(default)]
    pub dismissed_findings: Vec<String>,
    /// Only on `flapping` / `stopped`.
    #[serde(default)]
    pub remaining_findings: Option<Vec<String>>,
    /// Lint clean on the tip.
    pub lint_clean: bool,
    /// A broadening run (§phase-2-broadening) skips the rebase.
    #[serde(default)]
    pub rebase_already_done: bool,
    /// Tiebreakers met.
    #[serde(default)]
    pub tiebreakers: Vec<Tiebreaker>,
    /// Consumer fields.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `unchanged | clean | rerere-resolved | conflict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReRebase {
    /// The target had not moved.
    Unchanged,
    /// Re-rebased cleanly.
    Clean,
    /// rerere resolved it.
    RerereResolved,
    /// Tiebreaker 3.
    Conflict,
}

/// §phase-3 report up to the merge (cairn performs the merge and teardown itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreMergeReport {
    /// §phase-3 step 2.
    pub rebase_outcome_3_2: ReRebase,
    /// Step 3.
    pub tests_pass: bool,
    /// Step 3.
    pub lint_clean: bool,
    /// Step 4.
    pub squash: Squash,
    /// The full pre-squash commit (required unless `squash` is `n/a`).
    #[serde(default)]
    pub pre_squash_sha: Option<String>,
    /// `<sha> <subject>` per roll-up (required when squashed).
    #[serde(default)]
    pub rollups: Vec<String>,
    /// How many open review jobs `roborev fix --open --list` listed for the branch
    /// (an observation of the review tool; cairn does not run it).
    pub open_review_jobs: u64,
    /// Consumer fields.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}
