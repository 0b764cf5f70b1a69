//! The node's commands, and the evidence they carry: the plan receipt, the
//! dispatch receipt, the tree reading and criterion runs a verification judges,
//! the review verdict.

use serde::{Deserialize, Serialize};

use crate::evidence::CommandRun;
use crate::work::amend::AmendRequest;

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl Command {
    /// The command's name, for rejections and the journal's transition record.
    pub(super) fn name(&self) -> &'static str {
        match self {
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

/// The review verdict (reporting data; never verification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewVerdict {
    /// Approved.
    Approve,
    /// Rejected: remediation.
    Reject,
}
