//! What a ship run records: the events (past-tense facts, one target state each)
//! and what a resume observed.

use serde::{Deserialize, Serialize};

use super::gates::{Gate, Phase1d};
use super::owner::Owner;
use super::preflight::Preflight;
use super::recovery::{Failure, OpClass};
use super::report::{Phase1Report, PreMergeReport, RefineReport};
use super::state::{Mutation, Params, ReviewStatus};
use crate::evidence::{AbsPath, CommandRun, FullCommit};
use crate::Names;

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    Opened {
        params: Params,
        repo_root: AbsPath,
        anchor: CommandRun,
        /// The saga thread the run acts for, when named at open.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acts_for: Option<String>,
        /// The repository's identity on disk as open's preflight read it
        /// (`gates::identity_argv`; rules 15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
    },
    /// Preflight said `clean`.
    PreflightPassed {
        outcome: Preflight,
        review_status: ReviewStatus,
        runs: Vec<CommandRun>,
        advisory: Vec<CommandRun>,
        note: Option<String>,
    },
    /// Preflight said anything else.
    PreflightBlocked {
        outcome: Preflight,
        review_status: ReviewStatus,
        runs: Vec<CommandRun>,
        advisory: Vec<CommandRun>,
        note: Option<String>,
    },
    /// A git mutation was announced by `owner`; its result follows. `taken_from`:
    /// the step was in flight and its owner was shown gone.
    StepBegun {
        step: Mutation,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<Owner>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        taken_from: Option<Owner>,
    },
    AnchorDrifted {
        step: String,
        anchor: CommandRun,
    },
    WorktreeCreated {
        anchor: CommandRun,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        before: Vec<CommandRun>,
        add: CommandRun,
        verify: Vec<CommandRun>,
        gates: Vec<Gate>,
    },
    WorktreeCreationFailed {
        anchor: CommandRun,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        before: Vec<CommandRun>,
        add: CommandRun,
        verify: Vec<CommandRun>,
        cleanup: Vec<CommandRun>,
        failed: Vec<String>,
    },
    Phase1Reported {
        report: Phase1Report,
    },
    Phase1Verified {
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
    },
    ScopeTripped {
        trip: Phase1d,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
    },
    Phase1dFailed {
        failed: Vec<String>,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
    },
    /// A leaf stop the recovery table says to resume.
    LeafStopped {
        phase: u8,
        code: String,
        failure: Failure,
    },
    /// A leaf stop the recovery table says to tear down (empty by contract).
    LeafStoppedForTeardown {
        phase: u8,
        code: String,
        failure: Failure,
    },
    ScopeProceeded {
        operator: String,
    },
    ScopeAborted {
        operator: String,
    },
    Refined {
        report: RefineReport,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
        tiebreaker_4: String,
    },
    RefineStopped {
        report: RefineReport,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
        failure: Failure,
        code: String,
    },
    TiebreakerRaised {
        number: u8,
        context: String,
        proposed: String,
        phase: u8,
    },
    /// The operator answered; the phase-2 leaf is respawned with the disposition.
    RespawnedPhase2 {
        number: u8,
        disposition: String,
        operator: String,
    },
    /// The operator answered; the phase-3 leaf is respawned with the disposition.
    RespawnedPhase3 {
        number: u8,
        disposition: String,
        operator: String,
    },
    PreMergeChecked {
        report: PreMergeReport,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
        /// The tip the checks read: the one commit `merge` may merge.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tip: Option<FullCommit>,
        /// The commit the run ships: the pre-squash commit after a squash, else
        /// the tip (what a work node verified and what code review reviewed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shipped: Option<FullCommit>,
        /// The work nodes that vouched for the commit shipped, and that commit (the
        /// pre-squash commit, else the tip): `merge` is announced only while they
        /// still vouch for it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        work_nodes: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vouched: Option<FullCommit>,
        /// What `failed-work-absent` read of the shipped commit's history (rules
        /// 8): the merge re-applies the rule on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        history: Option<crate::ship::history::History>,
    },
    PreMergeStopped {
        report: PreMergeReport,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
        failure: Failure,
        code: String,
        /// The work nodes this pre-merge checked (kept for every later one).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        work_nodes: Vec<String>,
    },
    /// `merge --ff-only` of the checked tip succeeded, and cairn's readings after it
    /// show the primary on TARGET_BRANCH and TARGET_BRANCH holding the tip.
    MergeAccepted {
        attempt: u8,
        anchor: CommandRun,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        before: Vec<CommandRun>,
        merge: CommandRun,
        after: Vec<CommandRun>,
        merged_sha: FullCommit,
    },
    /// The first rejection: re-rebase, re-check, then one retry.
    MergeRejected {
        attempt: u8,
        anchor: CommandRun,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        before: Vec<CommandRun>,
        merge: CommandRun,
    },
    /// The second rejection, or a merge whose result could not be verified.
    MergeStopped {
        attempt: u8,
        anchor: CommandRun,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        before: Vec<CommandRun>,
        merge: CommandRun,
        after: Vec<CommandRun>,
        code: String,
    },
    /// Right before the merge, the primary was not on TARGET_BRANCH, not clean, or
    /// could not be read: nothing was merged; stop intact for `--resume`.
    MergeBlocked {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        code: String,
    },
    /// The branch moved after the pre-merge checks: nothing was merged; back to
    /// phase 3, whose checks see the new tip.
    MergeTipMoved {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        checked: FullCommit,
        seen: Option<String>,
    },
    /// At teardown, TARGET_BRANCH no longer holds the merged commit: nothing was
    /// removed; stop for `--resume` (phase 3 again: the merge is not standing).
    MergeLost {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        merged_sha: FullCommit,
        code: String,
    },
    /// Teardown removed everything.
    TornDown {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        remove: Option<CommandRun>,
        delete: Option<CommandRun>,
    },
    /// Teardown left something (`partial:<what>`).
    TeardownPartial {
        anchor: CommandRun,
        before: Vec<CommandRun>,
        remove: Option<CommandRun>,
        delete: Option<CommandRun>,
        teardown: String,
    },
    /// Resumed with 0 commits ahead: phase 1.
    ResumedPhase1(Resumption),
    /// Resumed with commits and refine not passed: phase-1d re-runs, then phase 2.
    ResumedPhase2(Resumption),
    /// Resumed after refine passed: phase 3.
    ResumedPhase3(Resumption),
    /// Resumed after the merge: the teardown.
    ResumedTeardown(Resumption),
    ResumeBlocked {
        anchor: CommandRun,
        runs: Vec<CommandRun>,
        reason: String,
    },
    ExternalOpRecorded {
        class: OpClass,
        op: String,
        denied: bool,
        attempt: u8,
    },
    PermissionBoundaryReached {
        class: OpClass,
        op: String,
        code: String,
    },
    /// The operator gave up on a run with nothing of its own in git.
    Abandoned {
        reason: String,
        operator: String,
    },
    /// The operator gave up on a run whose worktree and branch exist: they are
    /// removed (forced) by `teardown`, never left behind.
    AbandonedForTeardown {
        reason: String,
        operator: String,
    },
}

/// What a resume observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumption {
    /// The new session number.
    pub session: u32,
    /// The re-captured anchor.
    pub anchor: CommandRun,
    /// The primary's state and the worktree's whereabouts.
    pub runs: Vec<CommandRun>,
    /// The re-attach, when the worktree was gone and the branch was not.
    pub reattach: Option<CommandRun>,
    /// `git rev-list --count TARGET..HEAD` in the worktree.
    pub ahead: CommandRun,
    /// Its count.
    pub commits_ahead: u64,
}

impl Event {
    /// The resume's observation, for any of the four resume events.
    pub fn resumption(&self) -> Option<(&Resumption, u8)> {
        match self {
            Event::ResumedPhase1(r) => Some((r, 1)),
            Event::ResumedPhase2(r) => Some((r, 2)),
            Event::ResumedPhase3(r) | Event::ResumedTeardown(r) => Some((r, 3)),
            _ => None,
        }
    }
}
