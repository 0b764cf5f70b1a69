//! The typed observation (`evaluate` / `check` input): the fixed check set, its
//! categories, and one evidence type per check.
//!
//! Every check's outcome is a pure function of its evidence ([`derive`](fn@derive)); a
//! stated outcome that disagrees with its evidence is contradictory evidence and
//! refused (exit 2). So a truthy string, an empty list or a model summary can
//! never stand in for evidence: the evidence has to say *why*.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bind::{self, BindOutput};
use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::evidence::{is_full_git_id, is_full_jj_change, is_http_url, is_normal_abs_path};
use crate::{Outcome, Timestamp};

/// The fixed check set, in canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckName {
    AnchorConfirmed,
    RepositoryResolved,
    NoActiveDispatch,
    NoRunningChildOperation,
    NoVcsOperationOrConflict,
    TreePreserved,
    CommitsReachableOrCheckpointResolvable,
    CloseConditionSatisfied,
    BeadTerminal,
    PrMerged,
    ResumeTargetResolvable,
}

/// The fixed categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Identity,
    Quiescence,
    Preservation,
    Completion,
    Resume,
}

impl CheckName {
    pub const ALL: [CheckName; 11] = [
        CheckName::AnchorConfirmed,
        CheckName::RepositoryResolved,
        CheckName::NoActiveDispatch,
        CheckName::NoRunningChildOperation,
        CheckName::NoVcsOperationOrConflict,
        CheckName::TreePreserved,
        CheckName::CommitsReachableOrCheckpointResolvable,
        CheckName::CloseConditionSatisfied,
        CheckName::BeadTerminal,
        CheckName::PrMerged,
        CheckName::ResumeTargetResolvable,
    ];

    /// The one category this check belongs to.
    pub fn category(self) -> Category {
        match self {
            CheckName::AnchorConfirmed | CheckName::RepositoryResolved => Category::Identity,
            CheckName::NoActiveDispatch
            | CheckName::NoRunningChildOperation
            | CheckName::NoVcsOperationOrConflict => Category::Quiescence,
            CheckName::TreePreserved | CheckName::CommitsReachableOrCheckpointResolvable => {
                Category::Preservation
            }
            CheckName::CloseConditionSatisfied | CheckName::BeadTerminal | CheckName::PrMerged => {
                Category::Completion
            }
            CheckName::ResumeTargetResolvable => Category::Resume,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::AnchorConfirmed => "anchor_confirmed",
            CheckName::RepositoryResolved => "repository_resolved",
            CheckName::NoActiveDispatch => "no_active_dispatch",
            CheckName::NoRunningChildOperation => "no_running_child_operation",
            CheckName::NoVcsOperationOrConflict => "no_vcs_operation_or_conflict",
            CheckName::TreePreserved => "tree_preserved",
            CheckName::CommitsReachableOrCheckpointResolvable => {
                "commits_reachable_or_checkpoint_resolvable"
            }
            CheckName::CloseConditionSatisfied => "close_condition_satisfied",
            CheckName::BeadTerminal => "bead_terminal",
            CheckName::PrMerged => "pr_merged",
            CheckName::ResumeTargetResolvable => "resume_target_resolvable",
        }
    }
}

/// `preflight` (checkpoint authorization) or `durable` (receipt authorization).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Preflight,
    Durable,
}

/// The VCS backend of the bound workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Git,
    Jj,
}

impl Backend {
    /// The argv prefix every bound command starts with.
    pub fn bound_prefix(self, root: &str) -> [String; 3] {
        match self {
            Backend::Git => ["git".into(), "-C".into(), root.into()],
            Backend::Jj => ["jj".into(), "--repository".into(), root.into()],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Git => "git",
            Backend::Jj => "jj",
        }
    }

    /// True for a full immutable head of this backend (git object id / jj change id).
    pub fn is_full_head(self, s: &str) -> bool {
        match self {
            Backend::Git => is_full_git_id(s),
            Backend::Jj => is_full_jj_change(s),
        }
    }
}

/// The bead's structured fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bead {
    pub acceptance_command: String,
    pub pr_url: Option<String>,
}

pub use crate::evidence::CommandRun;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorSource {
    Explicit,
    ActiveDispatch,
    CurrentBranch,
    RecentlyTouchedBead,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorEvidence {
    pub source: AnchorSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RepositorySource {
    #[serde(rename = "registered_repository_binding")]
    RegisteredRepositoryBinding,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositoryEvidence {
    pub source: RepositorySource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Box<BindOutput>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DispatchSource {
    #[serde(rename = "rsry_active+rsry_dispatch_history")]
    RsryActiveAndDispatchHistory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchEvidence {
    pub source: DispatchSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_records: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChildSource {
    #[serde(rename = "codex.current_child_operations")]
    Codex,
    #[serde(rename = "claude.current_child_operations")]
    Claude,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    Codex,
    Claude,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildEvidence {
    pub source: ChildSource,
    pub detail: String,
    pub client: Provider,
    pub authoritative: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VcsEvidence {
    pub source: Backend,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreservationSource {
    RsryWorkspaceCheckpoint,
    Git,
    Jj,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreservationState {
    Checkpointable,
    Durable,
    Unpreserved,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreservationEvidence {
    pub source: PreservationSource,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    pub workspace: String,
    pub state: PreservationState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured_head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_available: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolver_command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseSource {
    RsryBeadHistory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloseEvidence {
    pub source: CloseSource,
    pub detail: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BeadSource {
    RsryListBeads,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeadEvidence {
    pub source: BeadSource,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrSource {
    Gh,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrEvidence {
    pub source: PrSource,
    pub detail: String,
    /// The exact argv: `gh pr view <pr_url> --json state,mergedAt,url`.
    pub command: Vec<String>,
    /// What `gh` printed, as JSON; read leniently (missing or malformed fields are `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Branch,
    Checkpoint,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeTarget {
    pub kind: TargetKind,
    pub value: String,
    pub resolved_head: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeEvidence {
    pub source: Backend,
    pub detail: String,
    pub backend: Backend,
    pub bound_root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolver_command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ResumeTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<CommandRun>>,
}

/// The typed evidence of one check: exactly one variant per check name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Evidence {
    Anchor(AnchorEvidence),
    Repository(RepositoryEvidence),
    Dispatch(DispatchEvidence),
    Child(ChildEvidence),
    Vcs(VcsEvidence),
    Preservation(PreservationEvidence),
    Close(CloseEvidence),
    Bead(BeadEvidence),
    Pr(PrEvidence),
    Resume(ResumeEvidence),
}

/// One validated check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckItem {
    pub name: CheckName,
    pub category: Category,
    pub outcome: Outcome,
    pub evidence: Evidence,
    pub observed_at: Timestamp,
}

/// A validated observation: checks in canonical order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    pub schema_version: u32,
    pub protocol_phase: Phase,
    pub pr_backed: bool,
    pub bead: Bead,
    pub checks: Vec<CheckItem>,
}

/// The observation's top-level keys.
pub const OBSERVATION_KEYS: [&str; 5] = [
    "schema_version",
    "protocol_phase",
    "pr_backed",
    "bead",
    "checks",
];

/// The enumerated non-terminal bead statuses.
pub const NONTERMINAL_STATUSES: [&str; 3] = ["open", "in_progress", "blocked"];
/// The terminal bead statuses.
pub const TERMINAL_STATUSES: [&str; 2] = ["done", "closed"];

impl Observation {
    /// The check named `name`, if present.
    pub fn check(&self, name: CheckName) -> Option<&CheckItem> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The outcome of `name` (`unknown` when absent: absence never passes).
    pub fn outcome(&self, name: CheckName) -> Outcome {
        self.check(name).map_or(Outcome::Unknown, |c| c.outcome)
    }

    /// The binding of a passing `repository_resolved`.
    pub fn binding(&self) -> Option<&BindOutput> {
        match self
            .check(CheckName::RepositoryResolved)
            .map(|c| &c.evidence)
        {
            Some(Evidence::Repository(r)) => r.binding.as_deref(),
            _ => None,
        }
    }

    /// The anchor of `anchor_confirmed`.
    pub fn anchor(&self) -> Option<&str> {
        match self.check(CheckName::AnchorConfirmed).map(|c| &c.evidence) {
            Some(Evidence::Anchor(a)) => a.anchor.as_deref(),
            _ => None,
        }
    }

    /// The preservation evidence of `name` (one of the two preservation checks).
    pub fn preservation(&self, name: CheckName) -> Option<&PreservationEvidence> {
        match self.check(name).map(|c| &c.evidence) {
            Some(Evidence::Preservation(p)) => Some(p),
            _ => None,
        }
    }

    /// The resume target of `resume_target_resolvable`.
    pub fn resume_target(&self) -> Option<&ResumeTarget> {
        match self
            .check(CheckName::ResumeTargetResolvable)
            .map(|c| &c.evidence)
        {
            Some(Evidence::Resume(r)) => r.target.as_ref(),
            _ => None,
        }
    }
}

/// Parses and validates an observation document.
pub fn parse(v: &Value) -> Result<Observation> {
    parse_at(v, "", &[])
}

/// Parses the observation fields of `v` (which may carry `extra` keys, as a receipt does).
pub fn parse_at(v: &Value, path: &str, extra: &[&str]) -> Result<Observation> {
    let map = wire::object(v, path, &OBSERVATION_KEYS, extra)?;
    let schema_version: u32 = wire::field(map, path, "schema_version")?;
    if schema_version != 1 {
        return Err(InputError::new(
            at(path, "schema_version"),
            "schema-version",
            "only schema_version 1 is understood",
        ));
    }
    let protocol_phase: Phase = wire::field(map, path, "protocol_phase")?;
    let pr_backed: bool = wire::field(map, path, "pr_backed")?;
    let bead: Bead = wire::field(map, path, "bead")?;
    let derived = bead.pr_url.as_deref().is_some_and(is_http_url);
    if pr_backed != derived {
        return Err(InputError::new(
            at(path, "pr_backed"),
            "pr-backed-derived",
            format!("pr_backed must be {derived}: it is true exactly when bead.pr_url is a valid non-empty http(s) URL"),
        ));
    }
    let checks_path = at(path, "checks");
    let raw_checks = map
        .get("checks")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::new(&checks_path, "type", "expected an array of checks"))?;
    let mut checks: Vec<CheckItem> = Vec::with_capacity(raw_checks.len());
    for (i, raw) in raw_checks.iter().enumerate() {
        let p = idx(&checks_path, i);
        let item = parse_check(raw, &p, &bead)?;
        if checks.iter().any(|c| c.name == item.name) {
            return Err(InputError::new(
                at(&p, "name"),
                "duplicate-check",
                format!("`{}` appears twice", item.name.as_str()),
            ));
        }
        checks.push(item);
    }
    checks.sort_by_key(|c| c.name);
    let obs = Observation {
        schema_version,
        protocol_phase,
        pr_backed,
        bead,
        checks,
    };
    applicability(&obs, &checks_path)?;
    correlation(&obs, &checks_path)?;
    Ok(obs)
}

fn parse_check(raw: &Value, p: &str, bead: &Bead) -> Result<CheckItem> {
    let map = wire::object(
        raw,
        p,
        &["name", "category", "outcome", "evidence", "observed_at"],
        &[],
    )?;
    let name: CheckName = wire::field(map, p, "name").map_err(|e| InputError {
        rule: "unknown-check",
        ..e
    })?;
    if name == CheckName::PrMerged && !bead.pr_url.as_deref().is_some_and(is_http_url) {
        return Err(InputError::new(
            p,
            "inapplicable-check",
            "`pr_merged` is inapplicable: a bead that is not PR-backed must omit it",
        ));
    }
    let category: Category = wire::field(map, p, "category")?;
    if category != name.category() {
        return Err(InputError::new(
            at(p, "category"),
            "check-category",
            format!(
                "`{}` belongs to category `{}`",
                name.as_str(),
                format!("{:?}", name.category()).to_lowercase()
            ),
        ));
    }
    let outcome: Outcome = wire::field(map, p, "outcome")?;
    let observed_at: Timestamp = wire::field(map, p, "observed_at")?;
    let ep = at(p, "evidence");
    let raw_ev = map.get("evidence").cloned().unwrap_or(Value::Null);
    if !raw_ev.as_object().is_some_and(|o| !o.is_empty()) {
        return Err(InputError::new(
            &ep,
            "typed-evidence",
            "evidence must be a non-empty typed object",
        ));
    }
    let evidence = match name {
        CheckName::AnchorConfirmed => Evidence::Anchor(wire::typed(raw_ev, &ep)?),
        CheckName::RepositoryResolved => Evidence::Repository(wire::typed(raw_ev, &ep)?),
        CheckName::NoActiveDispatch => Evidence::Dispatch(wire::typed(raw_ev, &ep)?),
        CheckName::NoRunningChildOperation => Evidence::Child(wire::typed(raw_ev, &ep)?),
        CheckName::NoVcsOperationOrConflict => Evidence::Vcs(wire::typed(raw_ev, &ep)?),
        CheckName::TreePreserved | CheckName::CommitsReachableOrCheckpointResolvable => {
            Evidence::Preservation(wire::typed(raw_ev, &ep)?)
        }
        CheckName::CloseConditionSatisfied => Evidence::Close(wire::typed(raw_ev, &ep)?),
        CheckName::BeadTerminal => Evidence::Bead(wire::typed(raw_ev, &ep)?),
        CheckName::PrMerged => Evidence::Pr(wire::typed(raw_ev, &ep)?),
        CheckName::ResumeTargetResolvable => Evidence::Resume(wire::typed(raw_ev, &ep)?),
    };
    let derived = derive(&evidence, bead, &ep)?;
    if !derived.contains(&outcome) {
        return Err(InputError::new(
            at(p, "outcome"),
            "outcome-contradicts-evidence",
            format!(
                "`{}` is `{}` but its evidence supports only {}",
                name.as_str(),
                outcome_str(outcome),
                derived
                    .iter()
                    .map(|o| format!("`{}`", outcome_str(*o)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    Ok(CheckItem {
        name,
        category,
        outcome,
        evidence,
        observed_at,
    })
}

pub fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Unknown => "unknown",
    }
}

/// An error-only evidence object: `error` non-empty and no positive fields.
fn error_only(error: &Option<String>, positive: bool, ep: &str) -> Result<()> {
    match error {
        Some(e) if !e.trim().is_empty() && !positive => Ok(()),
        Some(_) if positive => Err(InputError::new(
            ep,
            "contradictory-evidence",
            "evidence carries both a result and an error",
        )),
        _ => Err(InputError::new(
            at(ep, "error"),
            "nonempty-string",
            "evidence without a result must name its error",
        )),
    }
}

fn detail(d: &str, ep: &str) -> Result<()> {
    if d.trim().is_empty() {
        return Err(InputError::new(
            at(ep, "detail"),
            "nonempty-string",
            "evidence needs a human detail",
        ));
    }
    Ok(())
}

fn bound_argv(argv: &[String], backend: Backend, root: &str, path: &str) -> Result<()> {
    let prefix = backend.bound_prefix(root);
    if argv.len() <= prefix.len() || argv[..prefix.len()] != prefix[..] {
        return Err(InputError::new(
            path,
            "bound-command",
            format!("every command must be argv starting `{}`", prefix.join(" ")),
        ));
    }
    Ok(())
}

fn root(root: &str, path: &str) -> Result<()> {
    if !is_normal_abs_path(root) {
        return Err(InputError::new(
            path,
            "absolute-path",
            "expected an absolute, normalised path",
        ));
    }
    Ok(())
}

/// The outcomes the evidence supports (one, or `fail`/`unknown` for an error-only object).
pub fn derive(evidence: &Evidence, bead: &Bead, ep: &str) -> Result<Vec<Outcome>> {
    use Outcome::{Fail, Pass, Unknown};
    let either = vec![Fail, Unknown];
    Ok(match evidence {
        Evidence::Anchor(a) => {
            detail(&a.detail, ep)?;
            match &a.anchor {
                Some(s) if !s.trim().is_empty() && a.error.is_none() => vec![Pass],
                Some(s) if s.trim().is_empty() => {
                    return Err(InputError::new(
                        at(ep, "anchor"),
                        "nonempty-string",
                        "the anchor is empty",
                    ))
                }
                _ => {
                    error_only(&a.error, a.anchor.is_some(), ep)?;
                    either
                }
            }
        }
        Evidence::Repository(r) => {
            detail(&r.detail, ep)?;
            match &r.binding {
                Some(b) => {
                    if r.error.is_some() {
                        return Err(InputError::new(
                            ep,
                            "contradictory-evidence",
                            "evidence carries both a binding and an error",
                        ));
                    }
                    bind::check_output(b, &at(ep, "binding"))?;
                    vec![Pass]
                }
                None => {
                    error_only(&r.error, false, ep)?;
                    either
                }
            }
        }
        Evidence::Dispatch(d) => {
            detail(&d.detail, ep)?;
            match &d.active_records {
                Some(records) if d.error.is_none() => {
                    vec![if records.is_empty() { Pass } else { Fail }]
                }
                _ => {
                    error_only(&d.error, d.active_records.is_some(), ep)?;
                    vec![Unknown]
                }
            }
        }
        Evidence::Child(c) => {
            detail(&c.detail, ep)?;
            let source_client = match c.source {
                ChildSource::Codex => Provider::Codex,
                ChildSource::Claude => Provider::Claude,
            };
            if source_client != c.client {
                return Err(InputError::new(
                    at(ep, "client"),
                    "child-source-client",
                    "the client must be the one the source names",
                ));
            }
            match (&c.running, c.authoritative) {
                (Some(running), true) if c.error.is_none() => {
                    vec![if running.is_empty() { Pass } else { Fail }]
                }
                (Some(_), true) => {
                    return Err(InputError::new(
                        ep,
                        "contradictory-evidence",
                        "evidence carries both a result and an error",
                    ))
                }
                (Some(running), false) if !running.is_empty() => {
                    // A non-authoritative read that still shows a running child: it is running.
                    vec![Fail, Unknown]
                }
                _ => {
                    error_only(&c.error, false, ep)?;
                    vec![Unknown]
                }
            }
        }
        Evidence::Vcs(v) => {
            detail(&v.detail, ep)?;
            if v.source != v.backend {
                return Err(InputError::new(
                    at(ep, "source"),
                    "vcs-source-backend",
                    "source and backend must name the same VCS",
                ));
            }
            root(&v.bound_root, &at(ep, "bound_root"))?;
            match (&v.commands, &v.conflicts, &v.operations) {
                (Some(commands), Some(conflicts), Some(operations)) if v.error.is_none() => {
                    if commands.is_empty() {
                        return Err(InputError::new(at(ep, "commands"), "argv", "the commands that were run must be listed"));
                    }
                    for (i, argv) in commands.iter().enumerate() {
                        bound_argv(argv, v.backend, &v.bound_root, &idx(&at(ep, "commands"), i))?;
                    }
                    vec![if conflicts.is_empty() && operations.is_empty() { Pass } else { Fail }]
                }
                (None, None, None) => {
                    error_only(&v.error, false, ep)?;
                    vec![Unknown]
                }
                _ => {
                    return Err(InputError::new(
                        ep,
                        "vcs-evidence-shape",
                        "a VCS reading carries commands, conflicts and operations together, or only an error",
                    ))
                }
            }
        }
        Evidence::Preservation(p) => {
            detail(&p.detail, ep)?;
            root(&p.bound_root, &at(ep, "bound_root"))?;
            if p.workspace != p.bound_root {
                return Err(InputError::new(
                    at(ep, "workspace"),
                    "bound-workspace",
                    "the workspace must be the bound root",
                ));
            }
            preservation(p, ep)?
        }
        Evidence::Close(c) => {
            detail(&c.detail, ep)?;
            if c.error.trim().is_empty() {
                return Err(InputError::new(
                    at(ep, "error"),
                    "nonempty-string",
                    "name the missing mechanism",
                ));
            }
            // v1: the close condition cannot be proven mechanically (rosary-a6166d).
            vec![Unknown]
        }
        Evidence::Bead(b) => {
            detail(&b.detail, ep)?;
            match b.status.as_deref() {
                Some(s) if TERMINAL_STATUSES.contains(&s) && b.error.is_none() => vec![Pass],
                Some(s) if NONTERMINAL_STATUSES.contains(&s) && b.error.is_none() => vec![Fail],
                Some(s) if TERMINAL_STATUSES.contains(&s) || NONTERMINAL_STATUSES.contains(&s) => {
                    return Err(InputError::new(
                        ep,
                        "contradictory-evidence",
                        "evidence carries both a status and an error",
                    ))
                }
                Some(s) => {
                    return Err(InputError::new(
                        at(ep, "status"),
                        "bead-status",
                        format!(
                            "`{s}` is not a bead status (open, in_progress, blocked, done, closed)"
                        ),
                    ))
                }
                None => {
                    error_only(&b.error, false, ep)?;
                    vec![Unknown]
                }
            }
        }
        Evidence::Pr(p) => {
            detail(&p.detail, ep)?;
            let url = bead.pr_url.clone().unwrap_or_default();
            let want: Vec<String> = [
                "gh",
                "pr",
                "view",
                url.as_str(),
                "--json",
                "state,mergedAt,url",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if p.command != want {
                return Err(InputError::new(
                    at(ep, "command"),
                    "pr-command",
                    format!("expected exactly `{}`", want.join(" ")),
                ));
            }
            match &p.response {
                Some(r) if p.error.is_none() => vec![pr_outcome(r, &url)],
                Some(_) => {
                    return Err(InputError::new(
                        ep,
                        "contradictory-evidence",
                        "evidence carries both a response and an error",
                    ))
                }
                None => {
                    error_only(&p.error, false, ep)?;
                    vec![Unknown]
                }
            }
        }
        Evidence::Resume(r) => {
            detail(&r.detail, ep)?;
            if r.source != r.backend {
                return Err(InputError::new(
                    at(ep, "source"),
                    "vcs-source-backend",
                    "source and backend must name the same VCS",
                ));
            }
            root(&r.bound_root, &at(ep, "bound_root"))?;
            match (&r.target, &r.resolver_command) {
                (Some(t), Some(cmd)) if r.error.is_none() => {
                    if t.value.trim().is_empty() {
                        return Err(InputError::new(at(ep, "target.value"), "nonempty-string", "the resume target is empty"));
                    }
                    if !r.backend.is_full_head(&t.resolved_head) {
                        return Err(InputError::new(at(ep, "target.resolved_head"), "full-head", "expected a full immutable head"));
                    }
                    if r.backend == Backend::Git {
                        let want: Vec<String> = ["git", "-C", r.bound_root.as_str(), "rev-parse", t.value.as_str()].iter().map(|s| s.to_string()).collect();
                        if *cmd != want {
                            return Err(InputError::new(at(ep, "resolver_command"), "resolver-command", format!("expected exactly `{}`", want.join(" "))));
                        }
                    } else {
                        bound_argv(cmd, r.backend, &r.bound_root, &at(ep, "resolver_command"))?;
                    }
                    vec![Pass]
                }
                (None, None) => {
                    error_only(&r.error, false, ep)?;
                    either
                }
                _ => return Err(InputError::new(ep, "resume-evidence-shape", "a resolved target carries target and resolver_command together, or only an error")),
            }
        }
    })
}

fn preservation(p: &PreservationEvidence, ep: &str) -> Result<Vec<Outcome>> {
    use Outcome::{Fail, Pass, Unknown};
    let positive = p.captured_head.is_some()
        || p.checkpoint_available.is_some()
        || p.reference.is_some()
        || p.resolved_head.is_some()
        || p.resolver_command.is_some();
    match p.state {
        PreservationState::Checkpointable => {
            if p.source != PreservationSource::RsryWorkspaceCheckpoint {
                return Err(InputError::new(
                    at(ep, "source"),
                    "preservation-source",
                    "checkpointable evidence comes from rsry_workspace_checkpoint",
                ));
            }
            let head = p.captured_head.as_deref().unwrap_or("");
            if !p.backend.is_full_head(head) {
                return Err(InputError::new(
                    at(ep, "captured_head"),
                    "full-head",
                    "expected the full captured head",
                ));
            }
            if p.checkpoint_available != Some(true) {
                return Err(InputError::new(
                    at(ep, "checkpoint_available"),
                    "checkpoint-available",
                    "checkpointable evidence needs checkpoint_available: true",
                ));
            }
            if p.reference.is_some()
                || p.resolved_head.is_some()
                || p.resolver_command.is_some()
                || p.error.is_some()
            {
                return Err(InputError::new(ep, "preservation-shape", "checkpointable evidence carries no reference, resolved head, resolver or error"));
            }
            Ok(vec![Pass])
        }
        PreservationState::Durable => {
            let source_backend = match p.source {
                PreservationSource::Git => Backend::Git,
                PreservationSource::Jj => Backend::Jj,
                PreservationSource::RsryWorkspaceCheckpoint => {
                    return Err(InputError::new(
                        at(ep, "source"),
                        "preservation-source",
                        "durable evidence is resolved by the VCS itself (git or jj)",
                    ))
                }
            };
            if source_backend != p.backend {
                return Err(InputError::new(
                    at(ep, "source"),
                    "vcs-source-backend",
                    "source and backend must name the same VCS",
                ));
            }
            let reference = p
                .reference
                .as_deref()
                .filter(|r| !r.trim().is_empty())
                .ok_or_else(|| {
                    InputError::new(
                        at(ep, "reference"),
                        "nonempty-string",
                        "durable evidence names its reference",
                    )
                })?;
            let head = p.resolved_head.as_deref().unwrap_or("");
            if !p.backend.is_full_head(head) {
                return Err(InputError::new(
                    at(ep, "resolved_head"),
                    "full-head",
                    "expected the full resolved head",
                ));
            }
            let cmd = p.resolver_command.as_deref().ok_or_else(|| {
                InputError::new(
                    at(ep, "resolver_command"),
                    "required",
                    "durable evidence names its resolver command",
                )
            })?;
            if p.backend == Backend::Git {
                let want: Vec<String> = [
                    "git",
                    "-C",
                    p.bound_root.as_str(),
                    "cat-file",
                    "-e",
                    &format!("{reference}^{{commit}}"),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                if cmd != want.as_slice() {
                    return Err(InputError::new(
                        at(ep, "resolver_command"),
                        "resolver-command",
                        format!("expected exactly `{}`", want.join(" ")),
                    ));
                }
            } else {
                bound_argv(cmd, p.backend, &p.bound_root, &at(ep, "resolver_command"))?;
            }
            if p.captured_head.is_some() || p.checkpoint_available.is_some() || p.error.is_some() {
                return Err(InputError::new(
                    ep,
                    "preservation-shape",
                    "durable evidence carries no captured head, checkpoint flag or error",
                ));
            }
            Ok(vec![Pass])
        }
        PreservationState::Unpreserved => {
            if p.source == PreservationSource::RsryWorkspaceCheckpoint {
                return Err(InputError::new(
                    at(ep, "source"),
                    "preservation-source",
                    "unpreserved state is read from the VCS (git or jj)",
                ));
            }
            error_only(&p.error, positive, ep)?;
            Ok(vec![Fail])
        }
        PreservationState::Unknown => {
            error_only(&p.error, positive, ep)?;
            Ok(vec![Unknown])
        }
    }
}

/// `pr_merged` from `gh pr view --json state,mergedAt,url`.
pub fn pr_outcome(response: &Value, pr_url: &str) -> Outcome {
    let state = response.get("state").and_then(Value::as_str);
    let url = response.get("url").and_then(Value::as_str);
    let merged_at = response.get("mergedAt");
    if url != Some(pr_url) {
        return Outcome::Unknown;
    }
    match (state, merged_at) {
        (Some("MERGED"), Some(Value::String(t))) if Timestamp::parse(t).is_ok() => Outcome::Pass,
        (Some("OPEN" | "CLOSED"), None | Some(Value::Null)) => Outcome::Fail,
        _ => Outcome::Unknown,
    }
}

/// Which checks must be present, given the others.
fn applicability(obs: &Observation, checks_path: &str) -> Result<()> {
    let bead_fails_nonterminal = matches!(
        obs.check(CheckName::BeadTerminal).map(|c| &c.evidence),
        Some(Evidence::Bead(BeadEvidence { status: Some(s), .. })) if NONTERMINAL_STATUSES.contains(&s.as_str())
    );
    for name in CheckName::ALL {
        let required = match name {
            CheckName::PrMerged => obs.pr_backed,
            CheckName::ResumeTargetResolvable => bead_fails_nonterminal,
            _ => true,
        };
        let present = obs.check(name).is_some();
        if required && !present {
            return Err(InputError::new(
                checks_path,
                "missing-check",
                format!("`{}` is required here", name.as_str()),
            ));
        }
        if !required && present {
            let why = match name {
                CheckName::PrMerged => "a bead that is not PR-backed must omit it",
                _ => "it is present only when bead_terminal fails from a non-terminal status",
            };
            return Err(InputError::new(
                checks_path,
                "inapplicable-check",
                format!("`{}` is inapplicable: {why}", name.as_str()),
            ));
        }
    }
    Ok(())
}

/// All VCS, preservation and resume evidence uses the binding's backend and bound root.
fn correlation(obs: &Observation, checks_path: &str) -> Result<()> {
    let mut seen: Vec<(CheckName, Backend, &str)> = Vec::new();
    for c in &obs.checks {
        match &c.evidence {
            Evidence::Vcs(v) => seen.push((c.name, v.backend, &v.bound_root)),
            Evidence::Preservation(p) => seen.push((c.name, p.backend, &p.bound_root)),
            Evidence::Resume(r) => seen.push((c.name, r.backend, &r.bound_root)),
            _ => {}
        }
    }
    let anchor: Option<(Backend, &str)> = obs
        .binding()
        .map(|b| (b.backend, b.bound_root.as_str()))
        .or_else(|| seen.first().map(|s| (s.1, s.2)));
    if let Some((backend, root)) = anchor {
        for (name, b, r) in &seen {
            if *b != backend || *r != root {
                return Err(InputError::new(
                    checks_path,
                    "bound-root-mismatch",
                    format!(
                        "`{}` observed {} at `{r}`, the binding is {} at `{root}`",
                        name.as_str(),
                        b.as_str(),
                        backend.as_str()
                    ),
                ));
            }
        }
    }
    if let (Some(binding), Some(anchor)) = (obs.binding(), obs.anchor()) {
        if binding.receipt_identity.anchor_bead != anchor {
            return Err(InputError::new(
                checks_path,
                "anchor-binding-mismatch",
                "the binding was made for another anchor",
            ));
        }
    }
    Ok(())
}
