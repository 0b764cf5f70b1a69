//! The `work-node` machine: one stream per node of one workspec
//! (`work-node/<spec key>:<address>`). cairn records what the skill did and refuses
//! what the evidence does not support; it dispatches no agent itself.
//!
//! `plan → dispatch → verify → (review) → (remediation …) → merge → integration
//! verify → done`, with `escalated` when the remediation budget is spent. Two axes
//! are reported separately: lifecycle (from the spec and the current session's
//! `done` records, see [`super::ready`]) and verification provenance
//! ([`Provenance`]).

use serde::{Deserialize, Serialize};

use super::spec::{validate, Criterion, Evidence, Node, Spec};
use crate::evidence::CommandRun;
use crate::evidence::{is_full_git_id, is_normal_abs_path};
use crate::{Context, EdgeSpec, GraphSpec, Machine, Rejection, StateSpec, Timestamp, Violation};

/// The machine's name.
pub const NAME: &str = "work-node";

/// The default remediation budget (rounds per node), tunable per dispatch.
pub const DEFAULT_BUDGET: u32 = 2;

/// The stream instance for a node of the spec keyed `spec_key`.
pub fn stream_instance(spec_key: &str, address: &[String]) -> String {
    let enc: Vec<String> = address
        .iter()
        .map(|id| {
            id.bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("+{b:02X}")
                    }
                })
                .collect()
        })
        .collect();
    format!("{spec_key}:{}", enc.join("/"))
}

pub use crate::evidence::sha256_hex;

/// The criterion-contract hash: SHA-256 of the criterion as written (canonical JSON).
pub fn contract_hash(c: &Criterion) -> String {
    sha256_hex(c.raw.to_string().as_bytes())
}

/// `work_plan`'s receipt (the parts cairn keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanReceipt {
    /// The brief, by reference.
    pub brief_path: String,
    /// Its SHA-256 (computed by cairn from the file).
    pub brief_sha256: String,
    /// `touches` as writable roots.
    pub writable_roots: Vec<String>,
    /// Always true.
    pub confine_writes: bool,
    /// Always `off`.
    pub escalation: String,
    /// Temporary worktree mode (true when several nodes are planned together).
    pub worktree: bool,
    /// `touch-overlap` advisories with the other selected nodes.
    pub overlaps: Vec<String>,
}

/// How a command criterion's process tree was contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Containment {
    /// A systemd scope (the group is the cgroup).
    SystemdScope,
    /// A new process group, killed as a group (a descendant calling setsid may survive).
    ProcessGroup,
}

/// One criterion's run, as cairn made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionRun {
    /// The criterion.
    pub criterion_id: String,
    /// Its contract hash when run.
    pub contract_hash: String,
    /// The command run (command criteria).
    pub run: Option<CommandRun>,
    /// Killed at its timeout.
    pub timed_out: bool,
    /// How it was contained.
    pub containment: Option<Containment>,
    /// The host's explicit confirmation (user criteria): the operator's words.
    pub confirmation: Option<String>,
}

/// A criterion's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion.
    pub criterion_id: String,
    /// Its contract hash.
    pub contract_hash: String,
    /// Passed?
    pub passed: bool,
    /// Why not (`exit-mismatch`, `floor-missing`, `timeout`, `shell-unavailable`,
    /// `agent-unavailable`, `user-confirmation-missing`, `not-run`).
    pub failure: Option<String>,
}

/// A checklist report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistReport {
    /// The item's index.
    pub index: usize,
    /// Done?
    pub done: bool,
}

/// The tree a verification ran against, as git reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeReading {
    /// The absolute worktree path.
    pub worktree_path: String,
    /// The expected full commit.
    pub expected_commit: String,
    /// `git rev-parse --show-toplevel`.
    pub toplevel: CommandRun,
    /// `git rev-parse HEAD`.
    pub head: CommandRun,
    /// `git status --porcelain --untracked-files=all`.
    pub status: CommandRun,
}

impl TreeReading {
    /// `None` when the tree is the expected one at the expected commit and clean;
    /// else what is wrong.
    pub fn problem(&self) -> Option<String> {
        let line = |r: &CommandRun| {
            (r.exit_status == Some(0))
                .then(|| r.stdout.lines().next().unwrap_or("").trim().to_owned())
        };
        match line(&self.toplevel) {
            Some(t) if t == self.worktree_path => {}
            Some(t) => return Some(format!("the tree's top level is `{t}`, not the worktree")),
            None => return Some("the worktree is not a readable git tree".into()),
        }
        match line(&self.head) {
            Some(h) if h == self.expected_commit => {}
            Some(h) => {
                return Some(format!(
                    "HEAD is {h}, not the expected {}",
                    self.expected_commit
                ))
            }
            None => return Some("HEAD could not be read".into()),
        }
        match (
            self.status.exit_status,
            self.status.stdout.trim().is_empty(),
        ) {
            (Some(0), true) => None,
            (Some(0), false) => Some("the tree has uncommitted or untracked changes".into()),
            _ => Some("the tree's status could not be read".into()),
        }
    }
}

/// A recorded verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// The session it ran in.
    pub session: String,
    /// Pre-merge (worker tree) or integration (merged tree).
    pub integration: bool,
    /// The tree.
    pub worktree_path: String,
    /// Its full commit.
    pub commit: String,
    /// Per criterion.
    pub criteria: Vec<CriterionResult>,
    /// Checklist accounting complete (each item exactly one `done` report).
    pub checklist_ok: bool,
    /// Every criterion passed, the tree was right, the checklist accounted for.
    pub passed: bool,
    /// Why not.
    pub failures: Vec<String>,
    /// When.
    pub at: Timestamp,
}

/// The review verdict (reporting data; never verification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewVerdict {
    /// Approved.
    Approve,
    /// Rejected: remediation.
    Reject,
}

/// The verification-provenance axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Passed this session, on the current target and contract.
    VerifiedThisSession,
    /// Failed this session.
    FailedThisSession,
    /// Passed in another session: `observed green; not verified this session`.
    ObservedGreenNotVerifiedThisSession,
    /// Failed in another session.
    ObservedFailureNotVerifiedThisSession,
    /// Ran against a tree or commit that is no longer the target (e.g. before a merge).
    StaleObservation,
    /// Ran against another criterion contract than the spec's current one.
    ConflictingObservation,
    /// Never verified.
    Unverified,
}

impl Provenance {
    /// The words a report must use.
    pub fn words(self) -> &'static str {
        match self {
            Provenance::VerifiedThisSession => "verified this session",
            Provenance::FailedThisSession => "failed this session",
            Provenance::ObservedGreenNotVerifiedThisSession => {
                "observed green; not verified this session"
            }
            Provenance::ObservedFailureNotVerifiedThisSession => {
                "observed failure; not verified this session"
            }
            Provenance::StaleObservation => "stale observation",
            Provenance::ConflictingObservation => "conflicting observation",
            Provenance::Unverified => "unverified",
        }
    }
}

/// The node's recorded history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRun {
    /// The node's address.
    pub address: Vec<String>,
    /// The last plan.
    pub plan: Option<PlanReceipt>,
    /// The persistent worker tree (fixed by the first dispatch).
    pub worktree: Option<String>,
    /// Remediation rounds dispatched.
    pub remediation_rounds: u32,
    /// The budget (from the last dispatch).
    pub budget: u32,
    /// Every verification.
    pub verifications: Vec<Verification>,
    /// Reviews (reporting data).
    pub reviews: Vec<(ReviewVerdict, Vec<String>)>,
    /// The merged tree and commit, after the last merge.
    pub merged: Option<(String, String)>,
    /// Verifications recorded before this index predate the last merge.
    pub merge_mark: usize,
    /// The session `done` was recorded in.
    pub done_session: Option<String>,
    /// A pending scope-amendment request.
    #[serde(default)]
    pub scope: Option<ScopeRequest>,
    /// The touches an approved scope amendment added (until the re-plan).
    #[serde(default)]
    pub approved_touches: Option<Vec<String>>,
}

/// Who holds a scope-amendment request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Holder {
    /// The root (within its declared authority).
    Root,
    /// Passed up: only the operator's explicit choice resolves it.
    User,
}

/// A scope-amendment request (a worker needs a path outside `touches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeRequest {
    /// Its id (minted when raised).
    pub request_id: String,
    /// The opaque target reference.
    pub target: String,
    /// The literal paths the change adds to `touches`.
    pub add_touches: Vec<String>,
    /// The exact proposed change.
    pub change: String,
    /// Why it is needed.
    pub rationale: String,
    /// Who holds it.
    pub holder: Holder,
}

/// The bounded options of an amendment decision, by zero-based index; the last is
/// the structural custom option (`custom: true`).
pub const SCOPE_OPTIONS: [&str; 4] = [
    "Approve",
    "Approve with modifications (see note)",
    "Reject",
    "Custom",
];

/// The machine's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "kebab-case")]
pub enum State {
    /// Nothing recorded.
    Unplanned,
    /// Planned, not dispatched.
    Planned {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Dispatched (or remediation dispatched) to the worker tree.
    Dispatched {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Verified (pre-merge), awaiting review or merge.
    Verified {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Review rejected: remediation or escalation.
    Rejected {
        /// The run.
        run: Box<NodeRun>,
    },
    /// The budget is spent: the user decides.
    Escalated {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Merged: integration evidence is needed.
    Merged {
        /// The run.
        run: Box<NodeRun>,
    },
    /// A scope amendment was approved: re-validate, re-plan, redispatch in the same worktree.
    AmendmentApproved {
        /// The run.
        run: Box<NodeRun>,
    },
    /// Every terminal-truth item held.
    Done {
        /// The run.
        run: Box<NodeRun>,
    },
}

impl State {
    /// The run, once planned.
    pub fn run(&self) -> Option<&NodeRun> {
        match self {
            State::Unplanned => None,
            State::Planned { run }
            | State::Dispatched { run }
            | State::Verified { run }
            | State::Rejected { run }
            | State::Escalated { run }
            | State::Merged { run }
            | State::AmendmentApproved { run }
            | State::Done { run } => Some(run),
        }
    }
}

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    /// `amend-criterion`: the spec and its draft as read, and the request.
    AmendCriterion {
        spec: String,
        draft: Option<String>,
        request: super::amend::AmendRequest,
    },
    RaiseScope {
        target: String,
        add_touches: Vec<String>,
        change: String,
        rationale: String,
    },
    PassUp {
        request_id: String,
        context: String,
        recommendation: String,
    },
    ResolveScope {
        request_id: String,
        selected: Vec<usize>,
        note: String,
        custom_instruction: Option<String>,
        on_behalf_of_user: bool,
        operator: String,
    },
    Plan {
        spec: String,
        address: Vec<String>,
        receipt: PlanReceipt,
    },
    /// `work_dispatch`'s outcome: a receipt (`dispatched`) or `not-dispatched`.
    Dispatch {
        run_id: Option<String>,
        worktree_path: String,
        expected_commit: String,
        budget: Option<u32>,
        finding: Option<String>,
    },
    Verify {
        spec: String,
        tree: Box<TreeReading>,
        runs: Vec<CriterionRun>,
        checklist: Vec<ChecklistReport>,
    },
    Review {
        verdict: ReviewVerdict,
        failed_criteria: Vec<String>,
        concerns: Vec<String>,
    },
    Remediate {
        run_id: String,
        worktree_path: String,
    },
    Escalate {
        reason: String,
    },
    Merge {
        merged_tree: String,
        commit: String,
    },
    /// `done`: the terminal truth checklist, with the dependencies cairn found done
    /// this session in the journal.
    Done {
        spec: String,
        deps_done: Vec<Vec<String>>,
    },
}

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    CriterionAmended {
        request: super::amend::AmendRequest,
        at: String,
        spec_sha256_before: String,
        spec_sha256_after: String,
    },
    ScopeRaised {
        request: ScopeRequest,
    },
    ScopePassedUp {
        request_id: String,
        context: String,
        recommendation: String,
    },
    ScopeApproved {
        request_id: String,
        selected: usize,
        add_touches: Vec<String>,
        note: String,
        operator: String,
        on_behalf_of_user: bool,
    },
    /// Rejected (or answered with a custom instruction): nothing changes.
    ScopeNotApproved {
        request_id: String,
        selected: usize,
        note: String,
        custom_instruction: Option<String>,
        operator: String,
        on_behalf_of_user: bool,
    },
    Planned {
        address: Vec<String>,
        receipt: PlanReceipt,
    },
    Dispatched {
        run_id: String,
        worktree_path: String,
        expected_commit: String,
        budget: u32,
        session: Option<String>,
    },
    /// A degraded `not-dispatched` result: carries the plan back, advances nothing.
    NotDispatched {
        finding: String,
        plan: PlanReceipt,
    },
    Verified {
        verification: Verification,
    },
    VerificationFailed {
        verification: Verification,
    },
    ReviewRecorded {
        verdict: ReviewVerdict,
        failed_criteria: Vec<String>,
        concerns: Vec<String>,
    },
    RemediationDispatched {
        round: u32,
        run_id: String,
        worktree_path: String,
    },
    Escalated {
        reason: String,
    },
    Merged {
        merged_tree: String,
        commit: String,
    },
    Done {
        session: String,
    },
}

/// The machine.
pub struct WorkNode;

/// The same stage as `state`, carrying `run`.
fn state_with(state: State, run: Box<NodeRun>) -> State {
    match state {
        State::Unplanned => State::Unplanned,
        State::Planned { .. } => State::Planned { run },
        State::Dispatched { .. } => State::Dispatched { run },
        State::Verified { .. } => State::Verified { run },
        State::Rejected { .. } => State::Rejected { run },
        State::Escalated { .. } => State::Escalated { run },
        State::Merged { .. } => State::Merged { run },
        State::AmendmentApproved { .. } => State::AmendmentApproved { run },
        State::Done { .. } => State::Done { run },
    }
}

fn reject(
    state: &State,
    command: &str,
    predicate: &str,
    field: Option<&str>,
    message: &str,
) -> Rejection {
    Rejection::single(
        NAME,
        command,
        WorkNode::state_name(state),
        Violation::new(predicate, field, message),
    )
}

fn spec_node(
    state: &State,
    command: &str,
    text: &str,
    address: &[String],
) -> Result<(Spec, Node), Rejection> {
    let v = validate(text);
    if !v.valid() {
        let first = v.findings.first().map(|f| f.render()).unwrap_or_default();
        return Err(reject(
            state,
            command,
            "spec-valid",
            Some("spec"),
            &format!("the workspec has errors ({first})"),
        ));
    }
    let spec = v.spec.ok_or_else(|| {
        reject(
            state,
            command,
            "spec-valid",
            Some("spec"),
            "the workspec could not be read",
        )
    })?;
    let node = spec.node(address).cloned().ok_or_else(|| {
        reject(
            state,
            command,
            "node-address",
            Some("node"),
            "no node at this address in the spec",
        )
    })?;
    Ok((spec, node))
}

/// The guard of `verify`, before anything runs: a session, a verifiable stage, and
/// the right tree (the dispatched worker tree before a merge, the merged tree at
/// the merged commit after it). Returns the run and whether this is integration evidence.
pub fn verify_admits<'a>(
    state: &'a State,
    worktree_path: &str,
    commit: &str,
    session: Option<&str>,
) -> Result<(&'a NodeRun, bool), Rejection> {
    let name = "verify";
    if session.map_or(true, |s| s.trim().is_empty()) {
        return Err(reject(
            state,
            name,
            "session",
            Some("session"),
            "verification is bound to a session",
        ));
    }
    let run = match state {
        State::Dispatched { run }
        | State::Verified { run }
        | State::Rejected { run }
        | State::Merged { run } => run,
        _ => {
            return Err(reject(
                state,
                name,
                "dispatched",
                None,
                "verify a dispatched node's tree",
            ))
        }
    };
    if !is_full_git_id(commit) {
        return Err(reject(
            state,
            name,
            "full-commit",
            Some("expected_commit"),
            "the full commit of the tree",
        ));
    }
    let integration = matches!(state, State::Merged { .. });
    match &run.merged {
        Some((t, c)) if integration && (t != worktree_path || c != commit) => Err(reject(
            state,
            name,
            "merged-tree",
            Some("worktree_path"),
            "after a merge, verify the merged tree at the merged commit",
        )),
        _ if !integration && run.worktree.as_deref() != Some(worktree_path) => Err(reject(
            state,
            name,
            "same-worktree",
            Some("worktree_path"),
            "pre-merge evidence runs in the dispatched persistent worker tree",
        )),
        _ => Ok((run, integration)),
    }
}

/// Judges a verification from the runs cairn made (pure: the audit re-judges).
pub fn judge(
    node: &Node,
    tree: &TreeReading,
    runs: &[CriterionRun],
    checklist: &[ChecklistReport],
    session: &str,
    integration: bool,
    at: Timestamp,
) -> Verification {
    let mut failures = vec![];
    if let Some(p) = tree.problem() {
        failures.push(format!("tree: {p}"));
    }
    let mut criteria = vec![];
    for c in &node.acceptance {
        let hash = contract_hash(c);
        let run = runs
            .iter()
            .find(|r| r.criterion_id == c.id && r.contract_hash == hash);
        let failure = match (&c.evidence, run) {
            (_, None) => Some("not-run".to_owned()),
            (Evidence::Agent { .. }, _) => Some("agent-unavailable".to_owned()),
            (Evidence::User { .. }, Some(r)) => match &r.confirmation {
                Some(c) if !c.trim().is_empty() => None,
                _ => Some("user-confirmation-missing".to_owned()),
            },
            (
                Evidence::Command {
                    exit,
                    output_includes,
                    ..
                },
                Some(r),
            ) => match &r.run {
                None => Some("not-run".to_owned()),
                Some(_) if r.timed_out => Some("timeout".to_owned()),
                Some(cr) => match cr.exit_status {
                    None => Some("shell-unavailable".to_owned()),
                    Some(126 | 127) if *exit != 126 && *exit != 127 => {
                        Some("shell-unavailable".to_owned())
                    }
                    Some(e) if i64::from(e) != *exit => Some("exit-mismatch".to_owned()),
                    Some(_)
                        if !cr.stdout.contains(output_includes.as_str())
                            && !cr.stderr.contains(output_includes.as_str()) =>
                    {
                        Some("floor-missing".to_owned())
                    }
                    Some(_) => None,
                },
            },
        };
        if let Some(f) = &failure {
            failures.push(format!("{}: {f}", c.id));
        }
        criteria.push(CriterionResult {
            criterion_id: c.id.clone(),
            contract_hash: hash,
            passed: failure.is_none(),
            failure,
        });
    }
    // Every checklist item needs exactly one `done` report.
    let mut checklist_ok = true;
    for i in 0..node.checklist.len() {
        let reports: Vec<&ChecklistReport> = checklist.iter().filter(|r| r.index == i).collect();
        if reports.len() != 1 || !reports[0].done {
            checklist_ok = false;
            failures.push(format!("checklist[{i}]: needs exactly one `done` report"));
        }
    }
    if let Some(r) = checklist.iter().find(|r| r.index >= node.checklist.len()) {
        checklist_ok = false;
        failures.push(format!("checklist[{}]: no such item", r.index));
    }
    Verification {
        session: session.to_owned(),
        integration,
        worktree_path: tree.worktree_path.clone(),
        commit: tree.expected_commit.clone(),
        passed: failures.is_empty(),
        criteria,
        checklist_ok,
        failures,
        at,
    }
}

/// The verification provenance of `run` for `session` against the spec's node.
pub fn provenance(run: Option<&NodeRun>, node: &Node, session: &str) -> Provenance {
    let Some(run) = run else {
        return Provenance::Unverified;
    };
    let Some(last) = run.verifications.last() else {
        return Provenance::Unverified;
    };
    let current: Vec<String> = node.acceptance.iter().map(contract_hash).collect();
    let hashes: Vec<String> = last
        .criteria
        .iter()
        .map(|c| c.contract_hash.clone())
        .collect();
    if hashes != current {
        return Provenance::ConflictingObservation;
    }
    let after_merge = run.verifications.len() > run.merge_mark;
    if run.merged.is_some() && !after_merge {
        return Provenance::StaleObservation;
    }
    match (last.session == session, last.passed) {
        (true, true) => Provenance::VerifiedThisSession,
        (true, false) => Provenance::FailedThisSession,
        (false, true) => Provenance::ObservedGreenNotVerifiedThisSession,
        (false, false) => Provenance::ObservedFailureNotVerifiedThisSession,
    }
}

/// The terminal truth checklist: every failing item, empty when `done` may be recorded.
pub fn terminal_truth(
    run: &NodeRun,
    spec: &Spec,
    node: &Node,
    deps_done: &[Vec<String>],
    session: &str,
) -> Vec<String> {
    let mut missing = vec![];
    let deps: Vec<Vec<String>> = spec
        .effective_deps(&node.address)
        .into_iter()
        .filter(|d| !deps_done.contains(d))
        .collect();
    if !deps.is_empty() {
        missing.push(format!(
            "every dependency permits the node: not done this session: {}",
            serde_json::to_string(&deps).unwrap_or_default()
        ));
    }
    let children: Vec<&Vec<String>> = node
        .children
        .iter()
        .filter(|c| !deps_done.contains(*c))
        .collect();
    if !children.is_empty() {
        missing.push(format!(
            "every child is done this session: {}",
            serde_json::to_string(&children).unwrap_or_default()
        ));
    }
    if !spec.open_decisions.is_empty() {
        missing.push(format!(
            "no open decision blocks the node: {}",
            spec.open_decisions.join(", ")
        ));
    }
    if let Some(r) = &run.scope {
        missing.push(format!(
            "no v1 limitation is routed around: the scope amendment {} is pending",
            r.request_id
        ));
    }
    let worker = run.worktree.clone();
    if worker.is_none() {
        missing.push(
            "the worker's actual tree and full commit are named (no dispatch recorded)".into(),
        );
    }
    let current: Vec<String> = node.acceptance.iter().map(contract_hash).collect();
    let counts = |v: &Verification| {
        v.passed
            && v.session == session
            && v.criteria
                .iter()
                .map(|c| c.contract_hash.clone())
                .collect::<Vec<_>>()
                == current
    };
    let pre = run.verifications[..run.merge_mark.min(run.verifications.len())]
        .iter()
        .any(|v| !v.integration && counts(v) && Some(&v.worktree_path) == worker.as_ref());
    if !pre {
        missing.push("verify ran in the worker's tree this session and accepted every criterion and the whole checklist".into());
    }
    match &run.merged {
        None => missing.push("integration evidence ran again after the merge, in the merged tree (no merge recorded)".into()),
        Some((tree, commit)) => {
            let integ = run.verifications[run.merge_mark.min(run.verifications.len())..]
                .iter()
                .any(|v| v.integration && counts(v) && &v.worktree_path == tree && &v.commit == commit);
            if !integ {
                missing.push("integration evidence ran again after the merge, in the merged tree".into());
            }
        }
    }
    missing
}

impl Machine for WorkNode {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    /// The id of a raised scope-amendment request.
    const FRESH_IDS: usize = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Unplanned
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let name = Self::command_name(command);
        let no = |predicate: &str, field: Option<&str>, message: &str| {
            Err(reject(state, name, predicate, field, message))
        };
        match state {
            State::Done { .. } => return no("node-open", None, "the node is done"),
            State::Escalated { .. } => {
                return no(
                    "node-open",
                    None,
                    "the remediation budget is spent and the node is escalated: the user holds it",
                )
            }
            _ => {}
        }
        match command {
            Command::AmendCriterion {
                spec,
                draft,
                request,
            } => {
                let at = ctx.now.to_string();
                let amended =
                    super::amend::amend_criterion(spec, draft.as_deref(), request, &at)
                        .map_err(|(code, m)| reject(state, name, code, Some("criterion"), &m))?;
                if let Some(run) = state.run() {
                    let (_, node) = spec_node(state, name, spec, &run.address)?;
                    if !node.acceptance.iter().any(|c| c.id == request.criterion_id) {
                        return no(
                            "criterion-of-node",
                            Some("criterion"),
                            "the criterion belongs to another node",
                        );
                    }
                }
                Ok(vec![Event::CriterionAmended {
                    request: request.clone(),
                    at,
                    spec_sha256_before: sha256_hex(spec.as_bytes()),
                    spec_sha256_after: sha256_hex(amended.as_bytes()),
                }])
            }
            Command::RaiseScope {
                target,
                add_touches,
                change,
                rationale,
            } => {
                let Some(run) = state.run() else {
                    return no(
                        "dispatched",
                        None,
                        "a scope amendment is raised for a dispatched node",
                    );
                };
                if !matches!(
                    state,
                    State::Dispatched { .. }
                        | State::Verified { .. }
                        | State::Rejected { .. }
                        | State::Merged { .. }
                ) {
                    return no(
                        "dispatched",
                        None,
                        "a scope amendment is raised for a dispatched node",
                    );
                }
                if run.scope.is_some() {
                    return no("one-pending", None, "a scope amendment is already pending");
                }
                if [target, change, rationale]
                    .iter()
                    .any(|x| x.trim().is_empty())
                {
                    return no(
                        "nonempty-string",
                        Some("change"),
                        "target, change and rationale are required",
                    );
                }
                if add_touches.is_empty()
                    || add_touches.iter().any(|t| {
                        t.contains(['*', '?', '[', '{'])
                            || t.starts_with('/')
                            || t.split('/').any(|x| x == "..")
                    })
                {
                    return no(
                        "literal-touches",
                        Some("add_touches"),
                        "the literal relative paths the change adds to touches (no globs)",
                    );
                }
                let id = ctx.fresh_ids.first().ok_or_else(|| {
                    reject(state, name, "fresh-id", None, "the context minted no id")
                })?;
                Ok(vec![Event::ScopeRaised {
                    request: ScopeRequest {
                        request_id: format!("amend-{id}"),
                        target: target.clone(),
                        add_touches: add_touches.clone(),
                        change: change.clone(),
                        rationale: rationale.clone(),
                        holder: Holder::Root,
                    },
                }])
            }
            Command::PassUp {
                request_id,
                context,
                recommendation,
            } => {
                let pending = state.run().and_then(|r| r.scope.as_ref());
                match pending {
                    Some(r) if &r.request_id == request_id && r.holder == Holder::Root => {}
                    Some(r) if &r.request_id == request_id => {
                        return no("root-held", None, "the request is already with the user")
                    }
                    _ => {
                        return no(
                            "pending-request",
                            Some("request_id"),
                            "no such pending request (never fabricate a request id)",
                        )
                    }
                }
                if context.trim().is_empty() || recommendation.trim().is_empty() {
                    return no(
                        "nonempty-string",
                        Some("context"),
                        "pass up with context and a recommendation",
                    );
                }
                Ok(vec![Event::ScopePassedUp {
                    request_id: request_id.clone(),
                    context: context.clone(),
                    recommendation: recommendation.clone(),
                }])
            }
            Command::ResolveScope {
                request_id,
                selected,
                note,
                custom_instruction,
                on_behalf_of_user,
                operator,
            } => {
                let Some(r) = state
                    .run()
                    .and_then(|r| r.scope.as_ref())
                    .filter(|r| &r.request_id == request_id)
                else {
                    return no(
                        "pending-request",
                        Some("request_id"),
                        "no such pending request (never fabricate a resolution)",
                    );
                };
                let custom = SCOPE_OPTIONS.len() - 1;
                let one = match selected.as_slice() {
                    [one] if *one < SCOPE_OPTIONS.len() => *one,
                    [one] => {
                        return no(
                            "option-index",
                            Some("selected"),
                            &format!("option {one} does not exist (0..{custom})"),
                        )
                    }
                    [] => {
                        return no(
                            "explicit-choice",
                            Some("selected"),
                            "an explicit choice: never a default or silence",
                        )
                    }
                    _ if selected.contains(&custom) => {
                        return no(
                            "custom-alone",
                            Some("selected"),
                            "the custom option is selected alone",
                        )
                    }
                    _ => {
                        return no(
                            "single-select",
                            Some("selected"),
                            "an amendment decision selects exactly one option",
                        )
                    }
                };
                if one == custom
                    && custom_instruction
                        .as_deref()
                        .map_or(true, |c| c.trim().is_empty())
                {
                    return no(
                        "custom-instruction",
                        Some("custom_instruction"),
                        "the custom option needs a non-empty customInstruction",
                    );
                }
                if one != custom && custom_instruction.is_some() {
                    return no(
                        "custom-instruction",
                        Some("custom_instruction"),
                        "a customInstruction goes only with the custom option",
                    );
                }
                if operator.trim().is_empty() {
                    return no("nonempty-string", Some("operator"), "who chose");
                }
                if r.holder == Holder::User && !on_behalf_of_user {
                    return no("on-behalf-of-user", Some("on_behalf_of_user"), "a user-held request is resolved only with onBehalfOfUser: true, after the operator actually chose");
                }
                if r.holder == Holder::Root && *on_behalf_of_user {
                    return no(
                        "on-behalf-of-user",
                        Some("on_behalf_of_user"),
                        "the root resolves within its own authority; pass up to act for the user",
                    );
                }
                let (request_id, note, operator) =
                    (request_id.clone(), note.clone(), operator.clone());
                Ok(vec![if one <= 1 {
                    Event::ScopeApproved {
                        request_id,
                        selected: one,
                        add_touches: r.add_touches.clone(),
                        note,
                        operator,
                        on_behalf_of_user: *on_behalf_of_user,
                    }
                } else {
                    Event::ScopeNotApproved {
                        request_id,
                        selected: one,
                        note,
                        custom_instruction: custom_instruction.clone(),
                        operator,
                        on_behalf_of_user: *on_behalf_of_user,
                    }
                }])
            }
            Command::Plan {
                spec,
                address,
                receipt,
            } => {
                if !matches!(
                    state,
                    State::Unplanned | State::Planned { .. } | State::AmendmentApproved { .. }
                ) {
                    return no("plannable", None, "a node is planned before its dispatch, or re-planned after an approved scope amendment");
                }
                if let Some(run) = state.run() {
                    if &run.address != address {
                        return no(
                            "node-address",
                            Some("address"),
                            "this stream is another node's",
                        );
                    }
                }
                let (_, node) = spec_node(state, name, spec, address)?;
                if let State::AmendmentApproved { run } = state {
                    let approved = run.approved_touches.clone().unwrap_or_default();
                    if !approved.iter().all(|t| node.touches.contains(t)) {
                        return no("revalidated-touches", Some("spec"), "update the workspec's touches to the approved scope and re-validate before re-planning");
                    }
                }
                if !receipt.confine_writes || receipt.escalation != "off" {
                    return no(
                        "plan-contract",
                        Some("receipt"),
                        "a plan confines writes and sets escalation off",
                    );
                }
                if receipt.writable_roots != node.touches {
                    return no(
                        "plan-contract",
                        Some("receipt.writable_roots"),
                        "writable roots are the node's touches",
                    );
                }
                if receipt.brief_sha256.len() != 64
                    || !receipt.brief_sha256.bytes().all(|b| b.is_ascii_hexdigit())
                {
                    return no(
                        "brief-hash",
                        Some("receipt.brief_sha256"),
                        "the brief's SHA-256 (64 hex)",
                    );
                }
                Ok(vec![Event::Planned {
                    address: address.clone(),
                    receipt: receipt.clone(),
                }])
            }
            Command::Dispatch {
                run_id,
                worktree_path,
                expected_commit,
                budget,
                finding,
            } => {
                let State::Planned { run } = state else {
                    return no(
                        "planned",
                        None,
                        "dispatch a planned node (a redispatch after a rejection is `remediate`)",
                    );
                };
                if let (Some(w), Some(_)) = (&run.worktree, run_id) {
                    if w != worktree_path {
                        return no(
                            "same-worktree",
                            Some("worktree_path"),
                            "a redispatch reuses the same persistent worktree",
                        );
                    }
                }
                match (run_id, finding) {
                    (None, Some(f)) if !f.trim().is_empty() => {
                        // Degraded: the plan comes back; nothing advances.
                        let plan = run
                            .plan
                            .clone()
                            .ok_or_else(|| reject(state, name, "planned", None, "no plan"))?;
                        Ok(vec![Event::NotDispatched {
                            finding: f.clone(),
                            plan,
                        }])
                    }
                    (Some(id), None) if !id.trim().is_empty() => {
                        if !is_normal_abs_path(worktree_path) {
                            return no(
                                "absolute-path",
                                Some("worktree_path"),
                                "the persistent worker tree, absolute",
                            );
                        }
                        if !is_full_git_id(expected_commit) {
                            return no(
                                "full-commit",
                                Some("expected_commit"),
                                "the full commit the worker starts from",
                            );
                        }
                        if budget == &Some(0) {
                            return no(
                                "budget",
                                Some("budget"),
                                "a remediation budget of at least one round",
                            );
                        }
                        Ok(vec![Event::Dispatched {
                            run_id: id.clone(),
                            worktree_path: worktree_path.clone(),
                            expected_commit: expected_commit.clone(),
                            budget: budget.unwrap_or(DEFAULT_BUDGET),
                            session: ctx.session.clone(),
                        }])
                    }
                    _ => no(
                        "dispatch-receipt",
                        Some("run_id"),
                        "a dispatch receipt (run id) or a not-dispatched finding, exactly one",
                    ),
                }
            }
            Command::Verify {
                spec,
                tree,
                runs,
                checklist,
            } => {
                let (run, integration) = verify_admits(
                    state,
                    &tree.worktree_path,
                    &tree.expected_commit,
                    ctx.session.as_deref(),
                )?;
                let session = ctx.session.clone().unwrap_or_default();
                let (_, node) = spec_node(state, name, spec, &run.address)?;
                let v = judge(
                    &node,
                    tree,
                    runs,
                    checklist,
                    &session,
                    integration,
                    ctx.now.clone(),
                );
                Ok(vec![if v.passed {
                    Event::Verified { verification: v }
                } else {
                    Event::VerificationFailed { verification: v }
                }])
            }
            Command::Review {
                verdict,
                failed_criteria,
                concerns,
            } => {
                if !matches!(state, State::Verified { .. } | State::Dispatched { .. }) {
                    return no("reviewable", None, "review a dispatched or verified node");
                }
                if *verdict == ReviewVerdict::Reject && failed_criteria.is_empty() {
                    return no(
                        "rejection-data",
                        Some("failed_criteria"),
                        "a rejection names the failed criterion ids",
                    );
                }
                Ok(vec![Event::ReviewRecorded {
                    verdict: *verdict,
                    failed_criteria: failed_criteria.clone(),
                    concerns: concerns.clone(),
                }])
            }
            Command::Remediate {
                run_id,
                worktree_path,
            } => {
                let State::Rejected { run } = state else {
                    return no("rejected", None, "remediation follows a rejection");
                };
                if run.remediation_rounds >= run.budget {
                    return no("budget", None, "the remediation budget is spent: the only transition is an escalation to the user");
                }
                if run.worktree.as_ref() != Some(worktree_path) {
                    return no(
                        "same-worktree",
                        Some("worktree_path"),
                        "a redispatch names the same persistent worktree",
                    );
                }
                if run_id.trim().is_empty() {
                    return no(
                        "dispatch-receipt",
                        Some("run_id"),
                        "the redispatch's run id",
                    );
                }
                Ok(vec![Event::RemediationDispatched {
                    round: run.remediation_rounds + 1,
                    run_id: run_id.clone(),
                    worktree_path: worktree_path.clone(),
                }])
            }
            Command::Escalate { reason } => {
                let State::Rejected { run } = state else {
                    return no(
                        "rejected",
                        None,
                        "escalate a rejected node whose budget is spent",
                    );
                };
                if run.remediation_rounds < run.budget {
                    return no("budget-spent", None, "rounds remain: remediate, or re-plan");
                }
                if reason.trim().is_empty() {
                    return no("nonempty-string", Some("reason"), "name the reason");
                }
                Ok(vec![Event::Escalated {
                    reason: reason.clone(),
                }])
            }
            Command::Merge {
                merged_tree,
                commit,
            } => {
                if !matches!(state, State::Verified { .. } | State::Merged { .. }) {
                    return no("verified", None, "merge a node whose worker tree verified");
                }
                if !is_normal_abs_path(merged_tree) || !is_full_git_id(commit) {
                    return no(
                        "merged-tree",
                        Some("merged_tree"),
                        "the merged tree's absolute path and full commit",
                    );
                }
                Ok(vec![Event::Merged {
                    merged_tree: merged_tree.clone(),
                    commit: commit.clone(),
                }])
            }
            Command::Done { spec, deps_done } => {
                let session = ctx.session.clone().ok_or_else(|| {
                    reject(
                        state,
                        name,
                        "session",
                        Some("session"),
                        "done is decided in a session",
                    )
                })?;
                let Some(run) = state.run() else {
                    return no("planned", None, "nothing is recorded for this node");
                };
                let (spec, node) = spec_node(state, name, spec, &run.address)?;
                let missing = terminal_truth(run, &spec, &node, deps_done, &session);
                if !missing.is_empty() {
                    let violations = missing
                        .iter()
                        .map(|m| Violation::new("terminal-truth", None, m.clone()))
                        .collect();
                    // `missing` is non-empty, so there is a violation to report.
                    return Err(Rejection::from_violations(
                        NAME,
                        name,
                        Self::state_name(state),
                        violations,
                    )
                    .unwrap_or_else(|| {
                        reject(
                            state,
                            name,
                            "terminal-truth",
                            None,
                            "the terminal truth checklist does not hold",
                        )
                    }));
                }
                Ok(vec![Event::Done { session }])
            }
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        let mut run = match (&state, event) {
            (State::Unplanned, Event::Planned { address, receipt }) => {
                return State::Planned {
                    run: Box::new(NodeRun {
                        address: address.clone(),
                        plan: Some(receipt.clone()),
                        worktree: None,
                        remediation_rounds: 0,
                        budget: DEFAULT_BUDGET,
                        verifications: vec![],
                        reviews: vec![],
                        merged: None,
                        merge_mark: 0,
                        done_session: None,
                        scope: None,
                        approved_touches: None,
                    }),
                }
            }
            (State::Unplanned, _) => return state,
            _ => match state.run() {
                Some(r) => Box::new(r.clone()),
                None => return state,
            },
        };
        match event {
            Event::Planned { receipt, .. } => {
                run.plan = Some(receipt.clone());
                run.approved_touches = None;
                State::Planned { run }
            }
            Event::CriterionAmended { .. } => state_with(state, run),
            Event::ScopeRaised { request } => {
                run.scope = Some(request.clone());
                state_with(state, run)
            }
            Event::ScopePassedUp { .. } => {
                if let Some(r) = run.scope.as_mut() {
                    r.holder = Holder::User;
                }
                state_with(state, run)
            }
            Event::ScopeApproved { add_touches, .. } => {
                run.scope = None;
                run.approved_touches = Some(add_touches.clone());
                State::AmendmentApproved { run }
            }
            Event::ScopeNotApproved { .. } => {
                run.scope = None;
                state_with(state, run)
            }
            Event::Dispatched {
                worktree_path,
                budget,
                ..
            } => {
                run.worktree = Some(worktree_path.clone());
                run.budget = *budget;
                State::Dispatched { run }
            }
            Event::NotDispatched { .. } => State::Planned { run },
            Event::Verified { verification } | Event::VerificationFailed { verification } => {
                run.verifications.push(verification.clone());
                match state {
                    State::Merged { .. } => State::Merged { run },
                    _ if verification.passed => State::Verified { run },
                    _ => State::Rejected { run },
                }
            }
            Event::ReviewRecorded {
                verdict,
                failed_criteria,
                ..
            } => {
                run.reviews.push((*verdict, failed_criteria.clone()));
                match verdict {
                    ReviewVerdict::Reject => State::Rejected { run },
                    ReviewVerdict::Approve => match state {
                        State::Dispatched { .. } => State::Dispatched { run },
                        _ => State::Verified { run },
                    },
                }
            }
            Event::RemediationDispatched { round, .. } => {
                run.remediation_rounds = *round;
                State::Dispatched { run }
            }
            Event::Escalated { .. } => State::Escalated { run },
            Event::Merged {
                merged_tree,
                commit,
            } => {
                run.merged = Some((merged_tree.clone(), commit.clone()));
                run.merge_mark = run.verifications.len();
                State::Merged { run }
            }
            Event::Done { session } => {
                run.done_session = Some(session.clone());
                State::Done { run }
            }
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state {
            State::AmendmentApproved { .. } => "amendment-approved",
            State::Unplanned => "unplanned",
            State::Planned { .. } => "planned",
            State::Dispatched { .. } => "dispatched",
            State::Verified { .. } => "verified",
            State::Rejected { .. } => "rejected",
            State::Escalated { .. } => "escalated",
            State::Merged { .. } => "merged",
            State::Done { .. } => "done",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::CriterionAmended { .. } => "criterion-amended",
            Event::ScopeRaised { .. } => "scope-raised",
            Event::ScopePassedUp { .. } => "scope-passed-up",
            Event::ScopeApproved { .. } => "scope-approved",
            Event::ScopeNotApproved { .. } => "scope-not-approved",
            Event::Planned { .. } => "planned",
            Event::Dispatched { .. } => "dispatched",
            Event::NotDispatched { .. } => "not-dispatched",
            Event::Verified { .. } => "verified",
            Event::VerificationFailed { .. } => "verification-failed",
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Approve,
                ..
            } => "review-approved",
            Event::ReviewRecorded {
                verdict: ReviewVerdict::Reject,
                ..
            } => "review-rejected",
            Event::RemediationDispatched { .. } => "remediation-dispatched",
            Event::Escalated { .. } => "escalated",
            Event::Merged { .. } => "merged",
            Event::Done { .. } => "done",
        }
    }

    fn verdict(_state: &State, events: &[Event]) -> crate::Verdict {
        super::verdict::verdict(events)
    }

    fn command_name(command: &Command) -> &'static str {
        match command {
            Command::AmendCriterion { .. } => "amend-criterion",
            Command::RaiseScope { .. } => "raise-scope",
            Command::PassUp { .. } => "pass-up",
            Command::ResolveScope { .. } => "resolve-scope",
            Command::Plan { .. } => "plan",
            Command::Dispatch { .. } => "dispatch",
            Command::Verify { .. } => "verify",
            Command::Review { .. } => "review",
            Command::Remediate { .. } => "remediate",
            Command::Escalate { .. } => "escalate",
            Command::Merge { .. } => "merge",
            Command::Done { .. } => "done",
        }
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name, terminal| StateSpec { name, terminal };
        GraphSpec {
            machine: NAME,
            initial: "unplanned",
            states: vec![
                s("unplanned", false),
                s("planned", false),
                s("dispatched", false),
                s("verified", false),
                s("rejected", false),
                s("escalated", true),
                s("merged", false),
                s("amendment-approved", false),
                s("done", true),
            ],
            edges: vec![
                e("amendment-approved", "planned", "planned"),
                e("unplanned", "planned", "planned"),
                e("planned", "planned", "planned"),
                e("planned", "not-dispatched", "planned"),
                e("planned", "dispatched", "dispatched"),
                e("dispatched", "verified", "verified"),
                e("dispatched", "verification-failed", "rejected"),
                e("verified", "verified", "verified"),
                e("verified", "verification-failed", "rejected"),
                e("rejected", "verified", "verified"),
                e("rejected", "verification-failed", "rejected"),
                e("dispatched", "review-approved", "dispatched"),
                e("dispatched", "review-rejected", "rejected"),
                e("verified", "review-approved", "verified"),
                e("verified", "review-rejected", "rejected"),
                e("rejected", "remediation-dispatched", "dispatched"),
                e("rejected", "escalated", "escalated"),
                e("verified", "merged", "merged"),
                e("merged", "merged", "merged"),
                e("merged", "verified", "merged"),
                e("merged", "verification-failed", "merged"),
                e("merged", "done", "done"),
            ]
            .into_iter()
            .chain(
                [
                    "unplanned",
                    "planned",
                    "dispatched",
                    "verified",
                    "rejected",
                    "merged",
                    "amendment-approved",
                ]
                .into_iter()
                .map(|from| e(from, "criterion-amended", from)),
            )
            .chain(
                ["dispatched", "verified", "rejected", "merged"]
                    .into_iter()
                    .flat_map(|from| {
                        [
                            e(from, "scope-raised", from),
                            e(from, "scope-passed-up", from),
                            e(from, "scope-not-approved", from),
                            e(from, "scope-approved", "amendment-approved"),
                        ]
                    }),
            )
            .collect(),
        }
    }
}
