//! The node's commands, and the evidence they carry: the plan receipt, the
//! dispatch receipt, the tree reading and criterion runs a verification judges,
//! the review verdict.

use serde::{Deserialize, Serialize};

use super::TreeReading;
use crate::evidence::CommandRun;
use crate::work::amend::AmendRequest;
use crate::Names;

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    /// `amend-criterion`: the spec and its draft as read, and the request.
    AmendCriterion {
        spec: String,
        draft: Option<String>,
        request: AmendRequest,
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
    /// The spec and its draft as read (`None`: absent or unreadable), the node and
    /// the plan receipt.
    Plan {
        spec: String,
        address: Vec<String>,
        receipt: PlanReceipt,
        #[serde(default)]
        draft: Option<String>,
    },
    /// `work_dispatch`'s outcome: a receipt (`dispatched`) or `not-dispatched`.
    Dispatch {
        run_id: Option<String>,
        worktree_path: String,
        expected_commit: String,
        budget: Option<u32>,
        finding: Option<String>,
        /// cairn's reading of the worker tree's repository
        /// ([`dispatch_plan`](super::dispatch_plan)).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<CommandRun>,
        /// That repository's identity on disk (`evidence::git::identity_argv` of
        /// the common dir the reading named; work-node rules 10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<CommandRun>,
    },
    /// The spec and its draft as read, the tree before the criteria ran, each
    /// criterion's run, the checklist reports, the tree read again after the last
    /// criterion, and (re-verifying a done node) whether the tree contains the
    /// merged commit.
    Verify {
        spec: String,
        tree: Box<TreeReading>,
        runs: Vec<CriterionRun>,
        checklist: Vec<ChecklistReport>,
        #[serde(default)]
        draft: Option<String>,
        #[serde(default)]
        after: Option<Box<TreeReading>>,
        #[serde(default)]
        contains: Option<CommandRun>,
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
    /// The merged tree and commit, the spec and draft as read, and cairn's git
    /// reading of the merged tree ([`merge_plan`](super::merge_plan)).
    Merge {
        merged_tree: String,
        commit: String,
        #[serde(default)]
        spec: String,
        #[serde(default)]
        draft: Option<String>,
        #[serde(default)]
        reading: Option<Vec<CommandRun>>,
        /// The dispatch's repository's identity on disk, read again
        /// (`evidence::git::identity_argv` of its common dir; work-node rules 11).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<CommandRun>,
    },
    /// `done`: the terminal truth checklist, with the dependencies cairn found
    /// satisfied this session in the journal, and the draft as read.
    Done {
        spec: String,
        deps_done: Vec<Vec<String>>,
        #[serde(default)]
        draft: Option<String>,
        /// The run of [`done_plan`](super::done_plan): the merge's branch still
        /// holds the merged commit (work-node rules 12; absent before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        holds: Option<CommandRun>,
        /// The merged tree read again (its repository and that repository's
        /// identity, as `merge` read them; work-node rules 14).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<Box<TreeReading>>,
    },
}

impl Command {
    /// The command's name, for rejections and the journal's transition record.
    pub(super) fn name(&self) -> &'static str {
        self.variant_name()
    }
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
    /// The one-time challenge cairn minted for a user criterion (32 hex), which
    /// the confirmation must quote: `I confirm <challenge>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
    /// Where the confirmation was read ([`CONTROLLING_TERMINAL`]); absent when no
    /// channel the agent's shell does not control could be opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// What a watch of the tree saw change while the command ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<TreeWatch>,
}

/// The one channel a user criterion's confirmation is accepted from: the
/// controlling terminal of the `cairn` process (`/dev/tty`), which an agent's
/// non-interactive shell (no controlling terminal) cannot read or answer.
pub const CONTROLLING_TERMINAL: &str = "controlling-terminal";

pub use crate::evidence::watch::TreeWatch;

/// A checklist report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistReport {
    /// The item's index.
    pub index: usize,
    /// Done?
    pub done: bool,
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
