//! What a caller asks of a ship run: the commands (each carrying the runs cairn
//! made itself) and the verbs [`super::admits`] is asked about.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::owner::Claim;
use super::recovery::OpClass;
use super::state::{Mutation, Params, ReviewStatus};
use crate::evidence::CommandRun;
use crate::Names;

/// The user's answer to a scope-gate trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeAnswer {
    /// Accept the scope and continue to phase 2.
    Proceed,
    /// Remove worktree and branch.
    Abort,
}

/// Commands. Every `CommandRun` is a run cairn made itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    /// Capture the anchor and run preflight (from idle).
    Open {
        params: Params,
        anchor: CommandRun,
        runs: Vec<CommandRun>,
        review_status: ReviewStatus,
        #[serde(default)]
        advisory: Vec<CommandRun>,
        /// The saga thread the run acts for (`saga/<saga id>`), when it acts for one:
        /// only that thread may credit the run's merge to a unit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acts_for: Option<String>,
    },
    /// Re-run preflight (after the operator dealt with a blocked outcome).
    Preflight {
        runs: Vec<CommandRun>,
        review_status: ReviewStatus,
        #[serde(default)]
        advisory: Vec<CommandRun>,
    },
    /// Announce a git mutation before running it, naming this process (and, to take
    /// over a step in flight, showing its owner gone).
    Begin {
        step: Mutation,
        #[serde(default)]
        claim: Option<Claim>,
    },
    /// §phase-1b: the anchor, the branch read right before, `git worktree add`, its
    /// verifications (or, after a failed add, the readings that say whether the add
    /// made the branch) and the cleanup.
    Create {
        anchor: CommandRun,
        #[serde(default)]
        before: Vec<CommandRun>,
        add: Option<CommandRun>,
        verify: Vec<CommandRun>,
        cleanup: Vec<CommandRun>,
    },
    /// The phase-1 report and the §phase-1d verification.
    Verify {
        report: Value,
        runs: Vec<CommandRun>,
    },
    /// The user's answer to a scope trip.
    AnswerScope {
        answer: ScopeAnswer,
        operator: String,
    },
    /// The phase-2 report and the worktree re-verify.
    Refine {
        report: Value,
        runs: Vec<CommandRun>,
    },
    /// The phase-3 pre-merge report and checks; `work_nodes` are the work nodes
    /// whose verified commit this run ships (`work-node/<spec>:<address>`), read
    /// by the engine: each must vouch for the commit it merges.
    PreMerge {
        report: Value,
        runs: Vec<CommandRun>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        work_nodes: Vec<String>,
    },
    /// The anchor, the primary's readings right before, `git merge --ff-only` of
    /// the checked tip, and the readings after it.
    Merge {
        anchor: CommandRun,
        #[serde(default)]
        before: Vec<CommandRun>,
        merge: Option<CommandRun>,
        after: Vec<CommandRun>,
    },
    /// Teardown: readings, then remove what is there.
    Teardown {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        remove: Option<CommandRun>,
        delete: Option<CommandRun>,
    },
    /// §resume-mechanics.
    Resume {
        anchor: CommandRun,
        runs: Vec<CommandRun>,
        reattach: Option<CommandRun>,
        ahead: Option<CommandRun>,
        phase1d: Vec<CommandRun>,
    },
    /// The operator's answer to a stop tiebreaker.
    AnswerTiebreaker {
        number: u8,
        disposition: String,
        operator: String,
    },
    /// An external operation's attempt (bounded retry).
    ExternalOp {
        class: OpClass,
        op: String,
        denied: bool,
    },
    /// The operator gives up (skip/abort of a reclaimable outcome, or a stop).
    Abandon { reason: String, operator: String },
}

/// The verbs, for [`admits`](super::admits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Verb {
    Begin(Mutation),
    Open,
    Preflight,
    Create,
    Verify,
    AnswerScope,
    Refine,
    PreMerge,
    Merge,
    Teardown,
    Resume,
    AnswerTiebreaker,
    ExternalOp,
    Abandon,
}

impl Verb {
    /// The verb of a command.
    pub(super) fn of(c: &Command) -> Verb {
        match c {
            Command::Begin { step, .. } => Verb::Begin(*step),
            Command::Open { .. } => Verb::Open,
            Command::Preflight { .. } => Verb::Preflight,
            Command::Create { .. } => Verb::Create,
            Command::Verify { .. } => Verb::Verify,
            Command::AnswerScope { .. } => Verb::AnswerScope,
            Command::Refine { .. } => Verb::Refine,
            Command::PreMerge { .. } => Verb::PreMerge,
            Command::Merge { .. } => Verb::Merge,
            Command::Teardown { .. } => Verb::Teardown,
            Command::Resume { .. } => Verb::Resume,
            Command::AnswerTiebreaker { .. } => Verb::AnswerTiebreaker,
            Command::ExternalOp { .. } => Verb::ExternalOp,
            Command::Abandon { .. } => Verb::Abandon,
        }
    }
    /// The verb's name (the command's `command` tag).
    pub(super) fn name(self) -> &'static str {
        match self {
            Verb::Begin(_) => "begin",
            Verb::Open => "open",
            Verb::Preflight => "preflight",
            Verb::Create => "create",
            Verb::Verify => "verify",
            Verb::AnswerScope => "answer-scope",
            Verb::Refine => "refine",
            Verb::PreMerge => "pre-merge",
            Verb::Merge => "merge",
            Verb::Teardown => "teardown",
            Verb::Resume => "resume",
            Verb::AnswerTiebreaker => "answer-tiebreaker",
            Verb::ExternalOp => "external-op",
            Verb::Abandon => "abandon",
        }
    }
}
