//! `ship`: the worktree ship pipeline (seed `004_ca58b56f5390770e`) as a typed
//! machine. One stream per `SHORT_ID` (`ship/<SHORT_ID>`).
//!
//! cairn is the parent here. Every git gate is a command cairn runs itself against
//! the bound repository (`git -C <absolute dir>`, argv recorded with exit status,
//! output and time); the runs travel inside the command, and `decide` derives
//! every gate outcome from them (see [`gates`]), so the audit re-derives them from
//! the journal. Leaves' reports are input ([`report`]). cairn never fetches,
//! pulls or pushes, and mutates only what the seed lets the parent mutate:
//! `git worktree add` (creation, resume re-attach), `git worktree remove`, the
//! `merge --ff-only` and the branch delete of the teardown.
//!
//! Mutating steps are two-phase in the CLI: [`admits`] (pure, the same check
//! `decide` starts with) is asked before git is touched, then the runs are
//! decided. Failures follow the table in [`recovery`].

pub mod gates;
pub mod next;
pub mod preflight;
pub mod recovery;
pub mod report;
mod verdict;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::wire::typed;
use crate::evidence::CommandRun;
use crate::evidence::{is_full_git_id, is_normal_abs_path};
use crate::{Context, EdgeSpec, GraphSpec, Machine, Outcome, Rejection, StateSpec, Violation};
use gates::{Gate, Phase1d, Runs, Squash};
use preflight::Preflight;
use recovery::{Action, Failure, OpClass};
use report::{Phase1Report, PreMergeReport, ReRebase, RebaseOutcome, RefineReport};

/// The machine's name.
pub const NAME: &str = "ship";

/// A consumer's parameters (the seed's parameter table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `SHORT_ID`: the stream instance.
    pub short_id: String,
    /// `EXPECTED_REPO_BASENAME`.
    pub expected_basename: String,
    /// `BRANCH`.
    pub branch: String,
    /// `WORKTREE_PATH`: absolute, under `REPO_ROOT`.
    pub worktree_path: String,
    /// `TARGET_BRANCH`.
    pub target_branch: String,
    /// `INTENT_FIELD`: the phase-1 report field holding the intent excerpt.
    pub intent_field: String,
    /// `FILES_MAX`.
    pub files_max: u64,
    /// `DELETIONS_MAX`.
    pub deletions_max: u64,
    /// `TIEBREAKER_4`: the consumer's out-of-scope-finding protocol (recorded with each disposal).
    pub tiebreaker_4: String,
    /// `TIEBREAKER_5`: whether multi-target auto-mode applies.
    pub tiebreaker_5: bool,
    /// `CLOSE_STEP`: the post-merge work, mirrored in `next_action`.
    pub close_step: String,
}

fn is_ref_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.starts_with('/')
        && !s.ends_with('/')
        && !s.ends_with(".lock")
        && !s.contains("..")
        && !s.contains("@{")
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
}

impl Params {
    /// The parameter rules: `(field, rule, message)` of the first broken one.
    pub fn check(&self) -> Result<(), (&'static str, &'static str, String)> {
        let id_ok = !self.short_id.is_empty()
            && self.short_id.len() <= 64
            && self
                .short_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !id_ok {
            return Err((
                "short_id",
                "short-id",
                "1–64 characters of [A-Za-z0-9._-]".into(),
            ));
        }
        if self.expected_basename.is_empty() || self.expected_basename.contains('/') {
            return Err((
                "expected_basename",
                "basename",
                "a non-empty directory name without `/`".into(),
            ));
        }
        if !is_ref_name(&self.branch) {
            return Err(("branch", "ref-name", "not a usable branch name".into()));
        }
        if !is_ref_name(&self.target_branch) {
            return Err((
                "target_branch",
                "ref-name",
                "not a usable branch name".into(),
            ));
        }
        if self.branch == self.target_branch {
            return Err((
                "branch",
                "distinct-branch",
                "the worktree branch must differ from the target branch".into(),
            ));
        }
        if !is_normal_abs_path(&self.worktree_path) {
            return Err((
                "worktree_path",
                "absolute-path",
                "an absolute, normalised path".into(),
            ));
        }
        let ident =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident(&self.intent_field) {
            return Err((
                "intent_field",
                "field-name",
                "a report field name ([A-Za-z0-9_]+)".into(),
            ));
        }
        if self.tiebreaker_4.trim().is_empty() {
            return Err((
                "tiebreaker_4",
                "nonempty-string",
                "name the protocol".into(),
            ));
        }
        if self.close_step.trim().is_empty() {
            return Err((
                "close_step",
                "nonempty-string",
                "name the close step".into(),
            ));
        }
        Ok(())
    }
}

/// The review tool's status (§preflight-shared gate 3): an observation in the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewStatus {
    /// pass (the status command exited 0) | fail | unknown.
    pub outcome: Outcome,
    /// What the caller saw.
    pub detail: String,
}

/// What one ship run carries through every stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// The consumer's parameters.
    pub params: Params,
    /// `REPO_ROOT`, captured once from `git rev-parse --show-toplevel`.
    pub repo_root: String,
    /// 0 for the first session; +1 for each `--resume`.
    pub session: u32,
    /// The last phase-1 report's `in_scope_paths` (missing = the empty set).
    pub in_scope_paths: Option<Vec<String>>,
    /// Whether a rebase has been recorded (phase 2).
    pub rebase_done: bool,
    /// Whether refine has been recorded `passed`.
    pub refine_passed: bool,
    /// ff-merge attempts this session (at most two: one retry).
    pub merge_attempts: u8,
    /// The merged commit, once merged.
    pub merged_sha: Option<String>,
    /// Denials per external operation class this session.
    pub denials: BTreeMap<OpClass, u8>,
    /// A git mutation announced (recorded) before it ran, until its result is recorded.
    #[serde(default)]
    pub begun: Option<Mutation>,
}

/// A step that mutates git. It is announced with `begin` (an append at the version
/// the caller read) before git runs, so two processes can never both run it: the
/// second append conflicts (exit 3) and that process touches nothing. Only the
/// step's result (or `resume`, which re-observes after a crash) may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mutation {
    /// `git worktree add -b`.
    Create,
    /// `git merge --ff-only`.
    Merge,
    /// `git worktree remove` and `git branch -d|-D`.
    Teardown,
    /// A re-attach `git worktree add` (when needed).
    Resume,
}

impl Mutation {
    /// The verb that records this step's result.
    pub fn verb(self) -> Verb {
        match self {
            Mutation::Create => Verb::Create,
            Mutation::Merge => Verb::Merge,
            Mutation::Teardown => Verb::Teardown,
            Mutation::Resume => Verb::Resume,
        }
    }
}

/// Where a run is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "kebab-case")]
pub enum Stage {
    /// Preflight recorded: only `clean` may create the worktree.
    Preflighted {
        /// The classifier's outcome.
        outcome: Preflight,
    },
    /// The worktree exists; the work leaf's report is awaited.
    Phase1,
    /// The scope gate tripped: `proceed` or `abort`.
    ScopeTripped {
        /// The trip.
        trip: Phase1d,
    },
    /// Rebase + refine.
    Phase2,
    /// Refine passed: the ship leaf's pre-merge report is awaited.
    Phase3,
    /// Pre-merge checks passed: cairn may run `merge --ff-only`.
    MergeReady,
    /// The ff-merge was rejected once: re-rebase, then one retry.
    MergeRejected,
    /// Merged: teardown.
    Merged,
    /// Stopped intact for `--resume`.
    Stopped {
        /// Which failure.
        failure: Failure,
        /// The outcome code.
        code: String,
        /// The phase it stopped in.
        phase: u8,
    },
    /// A stop tiebreaker (3 or 5): the operator answers, the leaf is respawned.
    Tiebreaker {
        /// 3 or 5.
        number: u8,
        /// The packet's context.
        context: String,
        /// The proposed disposition.
        proposed: String,
        /// The phase to return to.
        phase: u8,
    },
    /// Remove the worktree and branch (empty by contract, or the user aborted).
    TeardownPending {
        /// Why.
        reason: String,
    },
    /// Terminal: merged and torn down.
    Shipped,
    /// Terminal: torn down without shipping.
    TornDown {
        /// Why.
        reason: String,
    },
    /// Terminal: abandoned by the operator.
    Abandoned {
        /// Why.
        reason: String,
    },
    /// Terminal: worktree creation failed (not a `--resume` candidate).
    CreationFailed {
        /// The failed gates.
        failed: Vec<String>,
    },
    /// Terminal: an external operation was denied twice.
    PermissionBoundary {
        /// The stop code.
        code: String,
    },
}

/// The machine's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    /// Nothing recorded.
    Idle,
    /// A run.
    Active {
        /// Its data.
        run: Box<Run>,
        /// Its stage.
        stage: Stage,
    },
}

impl State {
    /// The run, once opened.
    pub fn run(&self) -> Option<&Run> {
        match self {
            State::Idle => None,
            State::Active { run, .. } => Some(run),
        }
    }
    /// The stage, once opened.
    pub fn stage(&self) -> Option<&Stage> {
        match self {
            State::Idle => None,
            State::Active { stage, .. } => Some(stage),
        }
    }
}

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    },
    /// Re-run preflight (after the operator dealt with a blocked outcome).
    Preflight {
        runs: Vec<CommandRun>,
        review_status: ReviewStatus,
        #[serde(default)]
        advisory: Vec<CommandRun>,
    },
    /// Announce a git mutation before running it.
    Begin { step: Mutation },
    /// §phase-1b: the anchor, `git worktree add`, its verifications and cleanup.
    Create {
        anchor: CommandRun,
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
    /// The phase-3 pre-merge report and checks.
    PreMerge {
        report: Value,
        runs: Vec<CommandRun>,
    },
    /// `git merge --ff-only` (after the anchor) and the readings after it.
    Merge {
        anchor: CommandRun,
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

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    Opened {
        params: Params,
        repo_root: String,
        anchor: CommandRun,
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
    /// A git mutation was announced; its result follows.
    StepBegun {
        step: Mutation,
    },
    AnchorDrifted {
        step: String,
        anchor: CommandRun,
    },
    WorktreeCreated {
        anchor: CommandRun,
        add: CommandRun,
        verify: Vec<CommandRun>,
        gates: Vec<Gate>,
    },
    WorktreeCreationFailed {
        anchor: CommandRun,
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
    },
    PreMergeStopped {
        report: PreMergeReport,
        runs: Vec<CommandRun>,
        gates: Vec<Gate>,
        failure: Failure,
        code: String,
    },
    /// `merge --ff-only` succeeded and the primary's HEAD is the branch tip.
    MergeAccepted {
        attempt: u8,
        anchor: CommandRun,
        merge: CommandRun,
        after: Vec<CommandRun>,
        merged_sha: String,
    },
    /// The first rejection: re-rebase, then one retry.
    MergeRejected {
        attempt: u8,
        anchor: CommandRun,
        merge: CommandRun,
    },
    /// The second rejection, or a merge whose result could not be verified.
    MergeStopped {
        attempt: u8,
        anchor: CommandRun,
        merge: CommandRun,
        after: Vec<CommandRun>,
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
    Abandoned {
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

/// The preflight event: the classification, gate 3, and the divergence advisory.
fn preflighted(
    state: &State,
    verb: &str,
    (p, root): (&Params, &str),
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Event, Rejection> {
    exact(state, verb, "runs", runs, &gates::preflight_plan(p, root))?;
    exact(
        state,
        verb,
        "advisory",
        advisory,
        &gates::advisory_plan(p, root, advisory),
    )?;
    let outcome = preflight::classify(&gates::preflight_facts(p, root, runs))
        .with_review_status(review_status.outcome);
    let note = gates::divergence_note(p, root, advisory);
    let (review_status, runs, advisory) = (review_status.clone(), runs.to_vec(), advisory.to_vec());
    Ok(if outcome.may_create_worktree() {
        Event::PreflightPassed {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    } else {
        Event::PreflightBlocked {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    })
}

/// The machine.
pub struct Ship;

/// The verbs, for [`admits`].
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
    fn of(c: &Command) -> Verb {
        match c {
            Command::Begin { step } => Verb::Begin(*step),
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
    fn name(self) -> &'static str {
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

fn reject(
    state: &State,
    verb: &str,
    predicate: &str,
    field: Option<&str>,
    message: &str,
) -> Rejection {
    Rejection::single(
        NAME,
        verb,
        Ship::state_name(state),
        Violation::new(predicate, field, message),
    )
}

/// Whether `stage` is terminal.
pub fn is_terminal(stage: &Stage) -> bool {
    matches!(
        stage,
        Stage::Shipped
            | Stage::TornDown { .. }
            | Stage::Abandoned { .. }
            | Stage::CreationFailed { .. }
            | Stage::PermissionBoundary { .. }
    )
}

/// The pure guard every verb passes before anything happens: the CLI asks it
/// before it touches git, and `decide` starts with it.
pub fn admits(state: &State, verb: Verb) -> Result<(), Rejection> {
    let no =
        |predicate: &str, message: &str| Err(reject(state, verb.name(), predicate, None, message));
    let (run, stage) = match (state, verb) {
        (State::Idle, Verb::Open) => return Ok(()),
        (State::Idle, _) => {
            return no(
                "opened",
                "no ship run is open on this SHORT_ID: `cairn ship open` first",
            )
        }
        (State::Active { .. }, Verb::Open) => {
            return no(
                "not-opened",
                "this SHORT_ID already has a ship run; re-run `cairn ship preflight`",
            )
        }
        (State::Active { run, stage }, _) => (run, stage),
    };
    if is_terminal(stage) {
        return no("run-open", "this ship run has ended");
    }
    let mutating = matches!(
        verb,
        Verb::Create | Verb::Merge | Verb::Teardown | Verb::Resume
    );
    let verb_ok = match (run.begun, verb) {
        // The announced step's result.
        (Some(m), v) if v == m.verb() => return Ok(()),
        // A crashed `create` is observed by `resume` (the add may or may not have run).
        (Some(Mutation::Create), Verb::Resume) => return Ok(()),
        // Any other crashed step: `resume` where the stage admits it (a crashed
        // teardown is re-run instead: it is idempotent).
        (Some(_), Verb::Resume) => Verb::Resume,
        (Some(_), _) => {
            return no(
                "nothing-in-flight",
                "a git mutation is in flight: record its result, or `cairn ship resume`",
            )
        }
        (None, v) if mutating => {
            return no(
                "begun-first",
                &format!("announce the step first: `begin` `{}`", v.name()),
            )
        }
        (None, Verb::Begin(m)) => m.verb(),
        (None, v) => v,
    };
    let ok = match verb_ok {
        Verb::Open | Verb::Begin(_) => false,
        Verb::Preflight => matches!(stage, Stage::Preflighted { .. }),
        Verb::Create => {
            matches!(stage, Stage::Preflighted { outcome } if outcome.may_create_worktree())
        }
        Verb::Verify => matches!(stage, Stage::Phase1),
        Verb::AnswerScope => matches!(stage, Stage::ScopeTripped { .. }),
        Verb::Refine => {
            matches!(stage, Stage::Phase2)
                || matches!(stage, Stage::Stopped { failure: Failure::Refine, code, .. } if code == "flapping")
        }
        Verb::PreMerge => matches!(stage, Stage::Phase3),
        Verb::Merge => matches!(stage, Stage::MergeReady | Stage::MergeRejected),
        Verb::Teardown => matches!(stage, Stage::Merged | Stage::TeardownPending { .. }),
        Verb::Resume => !matches!(
            stage,
            Stage::Preflighted { .. } | Stage::TeardownPending { .. }
        ),
        Verb::AnswerTiebreaker => matches!(stage, Stage::Tiebreaker { .. }),
        Verb::ExternalOp => true,
        Verb::Abandon => {
            matches!(stage, Stage::Preflighted { outcome } if !outcome.may_create_worktree())
                || matches!(stage, Stage::Stopped { .. })
        }
    };
    if ok {
        return Ok(());
    }
    let why = match verb_ok {
        Verb::Create => "only a `clean` preflight may lead to `git worktree add`",
        Verb::Verify => "phase-1 verification needs a created worktree awaiting its report",
        Verb::AnswerScope => "no scope trip is pending",
        Verb::Refine => "refine runs in phase 2 (or as a broadening run after `flapping`)",
        Verb::PreMerge => "pre-merge checks run in phase 3, after refine passed",
        Verb::Merge => {
            "merge only after the pre-merge checks passed (or once more after one rejection)"
        }
        Verb::Teardown => {
            "teardown only after the merge, or when the recovery table says tear down"
        }
        Verb::Resume => "resume needs a worktree this stream created and a stage that can resume",
        Verb::AnswerTiebreaker => "no stop tiebreaker is pending",
        Verb::Abandon => "abandon a blocked preflight or a stopped run",
        _ => "not in this stage",
    };
    no("stage-admits", why)
}

fn bad(state: &State, verb: &str, field: &str, rule: &str, message: &str) -> Rejection {
    reject(
        state,
        verb,
        rule,
        Some(field),
        &format!("{field}: {message}"),
    )
}

/// Every planned argv ran, and nothing else did.
fn exact(
    state: &State,
    verb: &str,
    field: &str,
    runs: &[CommandRun],
    plan: &[Vec<String>],
) -> Result<(), Rejection> {
    if let Err(missing) = Runs(runs).covers(plan) {
        return Err(bad(
            state,
            verb,
            field,
            "evidence-complete",
            &format!("no recorded run of `{}`", missing.join(" ")),
        ));
    }
    if let Some(extra) = runs.iter().find(|r| !plan.contains(&r.argv)) {
        return Err(bad(
            state,
            verb,
            field,
            "evidence-bound",
            &format!(
                "`{}` is not a bound reading of this step",
                extra.argv.join(" ")
            ),
        ));
    }
    Ok(())
}

/// The anchor re-assertion every parent-side mutation starts with: `Some(events)`
/// when the anchor drifted (and then nothing may have run after it).
fn anchor_drift(
    state: &State,
    v: &str,
    anchor: &CommandRun,
    root: &str,
    ran_after: bool,
    field: &str,
) -> Result<Option<Vec<Event>>, Rejection> {
    argv_is(state, v, "anchor", anchor, &gates::anchor_argv(root))?;
    if gates::anchor_gate(anchor, root).outcome == Outcome::Pass {
        return Ok(None);
    }
    if ran_after {
        return Err(bad(
            state,
            v,
            field,
            "anchor-first",
            "nothing may run after the anchor drifted",
        ));
    }
    Ok(Some(vec![Event::AnchorDrifted {
        step: v.into(),
        anchor: anchor.clone(),
    }]))
}

/// The run an admitted verb acts on (`admits` refuses idle streams first).
fn opened<'a>(state: &'a State, v: &str) -> Result<&'a Run, Rejection> {
    state
        .run()
        .ok_or_else(|| bad(state, v, "state", "opened", "no run"))
}

fn argv_is(
    state: &State,
    verb: &str,
    field: &str,
    run: &CommandRun,
    want: &[String],
) -> Result<(), Rejection> {
    if run.argv != want {
        return Err(bad(
            state,
            verb,
            field,
            "evidence-bound",
            &format!("expected a run of `{}`", want.join(" ")),
        ));
    }
    Ok(())
}

fn nonempty(state: &State, verb: &str, field: &str, v: &str) -> Result<(), Rejection> {
    if v.trim().is_empty() {
        return Err(bad(state, verb, field, "nonempty-string", "is empty"));
    }
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(
    state: &State,
    verb: &str,
    v: &Value,
) -> Result<T, Rejection> {
    typed(v.clone(), "report").map_err(|e| bad(state, verb, &e.field, e.rule, &e.message))
}

/// The phase `--resume` picks from the tip: merged or refine recorded passed → 3;
/// 0 commits ahead → 1; else 2.
pub fn resume_phase(run: &Run, commits_ahead: u64) -> u8 {
    if run.merged_sha.is_some() || run.refine_passed {
        3
    } else if commits_ahead == 0 {
        1
    } else {
        2
    }
}

fn phase1d_events(run: &Run, runs: &[CommandRun], head: Option<&str>, extra: Vec<Gate>) -> Event {
    let in_scope = run.in_scope_paths.clone().unwrap_or_default();
    let (result, mut gates) = gates::phase1d(&run.params, &run.repo_root, runs, head, &in_scope);
    let hard_extra: Vec<String> = extra
        .iter()
        .filter(|g| g.outcome != Outcome::Pass)
        .map(|g| g.name.clone())
        .collect();
    gates.extend(extra);
    let result = if hard_extra.is_empty() {
        result
    } else {
        match result {
            Phase1d::Failed { mut failed } => {
                failed.extend(hard_extra);
                Phase1d::Failed { failed }
            }
            _ => Phase1d::Failed { failed: hard_extra },
        }
    };
    let runs = runs.to_vec();
    match result {
        Phase1d::Verified => Event::Phase1Verified { runs, gates },
        trip @ Phase1d::ScopeTripped { .. } => Event::ScopeTripped { trip, runs, gates },
        Phase1d::Failed { failed } => Event::Phase1dFailed {
            failed,
            runs,
            gates,
        },
    }
}

fn failure_of_leaf(reason: &str) -> Failure {
    match reason {
        "worktree-isolation-failed" => Failure::WorktreeIsolationFailed,
        "empty-result" => Failure::EmptyResult,
        _ => Failure::LeafStopped,
    }
}

impl Machine for Ship {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Idle
    }

    fn decide(state: &State, command: &Command, _ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let verb = Verb::of(command);
        let v = verb.name();
        admits(state, verb)?;
        match command {
            Command::Begin { step } => Ok(vec![Event::StepBegun { step: *step }]),
            Command::Open {
                params,
                anchor,
                runs,
                review_status,
                advisory,
            } => {
                params
                    .check()
                    .map_err(|(f, r, m)| bad(state, v, f, r, &m))?;
                let bound = matches!(anchor.argv.as_slice(), [g, c, dir, a, b] if g == "git" && c == "-C" && a == "rev-parse" && b == "--show-toplevel" && is_normal_abs_path(dir));
                if !bound {
                    return Err(bad(
                        state,
                        v,
                        "anchor",
                        "evidence-bound",
                        "expected a run of `git -C <absolute repo> rev-parse --show-toplevel`",
                    ));
                }
                let root = match Runs(std::slice::from_ref(anchor)).line(&anchor.argv) {
                    Some(r) if is_normal_abs_path(&r) => r,
                    _ => {
                        return Err(bad(
                            state,
                            v,
                            "repo",
                            "git-toplevel",
                            "`git rev-parse --show-toplevel` did not name a repository",
                        ))
                    }
                };
                if !params.worktree_path.starts_with(&format!("{root}/")) {
                    return Err(bad(
                        state,
                        v,
                        "worktree_path",
                        "anchored-path",
                        &format!("WORKTREE_PATH must be under REPO_ROOT `{root}`"),
                    ));
                }
                let preflight =
                    preflighted(state, v, (params, &root), runs, review_status, advisory)?;
                Ok(vec![
                    Event::Opened {
                        params: params.clone(),
                        repo_root: root,
                        anchor: anchor.clone(),
                    },
                    preflight,
                ])
            }
            Command::Preflight {
                runs,
                review_status,
                advisory,
            } => {
                let run = opened(state, v)?;
                Ok(vec![preflighted(
                    state,
                    v,
                    (&run.params, &run.repo_root),
                    runs,
                    review_status,
                    advisory,
                )?])
            }
            Command::Create {
                anchor,
                add,
                verify,
                cleanup,
            } => {
                let run = opened(state, v)?;
                let (p, root) = (&run.params, run.repo_root.as_str());
                if let Some(drifted) = anchor_drift(
                    state,
                    v,
                    anchor,
                    root,
                    add.is_some() || !verify.is_empty() || !cleanup.is_empty(),
                    "add",
                )? {
                    return Ok(drifted);
                }
                let add = add.as_ref().ok_or_else(|| {
                    bad(
                        state,
                        v,
                        "add",
                        "evidence-complete",
                        "the anchor held: `git worktree add` must have run",
                    )
                })?;
                argv_is(state, v, "add", add, &gates::create_argv(p, root))?;
                if add.exit_status != Some(0) {
                    // The add failed: whatever is at the path is not ours (a TOCTOU
                    // race with a live session): never remove it.
                    if !verify.is_empty() || !cleanup.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "cleanup",
                            "not-ours",
                            "after a failed `git worktree add`, nothing is verified or removed",
                        ));
                    }
                    return Ok(vec![Event::WorktreeCreationFailed {
                        anchor: anchor.clone(),
                        add: add.clone(),
                        verify: vec![],
                        cleanup: vec![],
                        failed: vec!["worktree-add".into()],
                    }]);
                }
                exact(
                    state,
                    v,
                    "verify",
                    verify,
                    &gates::create_verify_plan(p, root),
                )?;
                let g = gates::create_gates(p, root, verify);
                let failed: Vec<String> = g
                    .iter()
                    .filter(|g| g.outcome != Outcome::Pass)
                    .map(|g| g.name.clone())
                    .collect();
                if failed.is_empty() {
                    if !cleanup.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "cleanup",
                            "not-failed",
                            "a verified worktree is not removed",
                        ));
                    }
                    Ok(vec![Event::WorktreeCreated {
                        anchor: anchor.clone(),
                        add: add.clone(),
                        verify: verify.clone(),
                        gates: g,
                    }])
                } else {
                    exact(
                        state,
                        v,
                        "cleanup",
                        cleanup,
                        &gates::create_cleanup_plan(p, root),
                    )?;
                    Ok(vec![Event::WorktreeCreationFailed {
                        anchor: anchor.clone(),
                        add: add.clone(),
                        verify: verify.clone(),
                        cleanup: cleanup.clone(),
                        failed,
                    }])
                }
            }
            Command::Verify { report, runs } => {
                let run = opened(state, v)?;
                let p = &run.params;
                let r: Phase1Report = parse(state, v, report)?;
                match r.extra.get(&p.intent_field) {
                    Some(Value::String(s)) if !s.trim().is_empty() => {}
                    _ => {
                        return Err(bad(
                            state,
                            v,
                            &format!("report.{}", p.intent_field),
                            "intent-excerpt",
                            "the INTENT_FIELD excerpt (1–3 sentences) is required",
                        ))
                    }
                }
                if let Some(reason) = report::stopped_reason(&r.verdict) {
                    nonempty(state, v, "report.verdict", reason)?;
                    if !runs.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "runs",
                            "not-verified",
                            "a stopped leaf is not verified",
                        ));
                    }
                    let failure = failure_of_leaf(reason);
                    return Ok(vec![
                        Event::Phase1Reported { report: r.clone() },
                        if recovery::action(failure) == Action::Teardown {
                            Event::LeafStoppedForTeardown {
                                phase: 1,
                                code: r.verdict.clone(),
                                failure,
                            }
                        } else {
                            Event::LeafStopped {
                                phase: 1,
                                code: r.verdict.clone(),
                                failure,
                            }
                        },
                    ]);
                }
                if r.verdict != "ok" {
                    return Err(bad(
                        state,
                        v,
                        "report.verdict",
                        "verdict",
                        "expected `ok` or `stopped:<reason>`",
                    ));
                }
                let head = r.head_sha.as_deref().ok_or_else(|| {
                    bad(
                        state,
                        v,
                        "report.head_sha",
                        "required",
                        "an `ok` report names its head",
                    )
                })?;
                if head.len() < 7 || !head.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(bad(
                        state,
                        v,
                        "report.head_sha",
                        "git-id",
                        "at least 7 hex digits",
                    ));
                }
                exact(
                    state,
                    v,
                    "runs",
                    runs,
                    &gates::phase1d_plan(p, &run.repo_root),
                )?;
                let claimed = if r.worktree_path.starts_with('/') {
                    r.worktree_path.clone()
                } else {
                    format!(
                        "{}/{}",
                        run.repo_root,
                        r.worktree_path.trim_start_matches("./")
                    )
                };
                let claimed = claimed.trim_end_matches('/').to_owned();
                let extra = vec![
                    if claimed == p.worktree_path {
                        Gate {
                            name: "report-worktree-path".into(),
                            outcome: Outcome::Pass,
                            detail: claimed,
                        }
                    } else {
                        Gate {
                            name: "report-worktree-path".into(),
                            outcome: Outcome::Fail,
                            detail: format!(
                                "the report claims `{}`; the worktree is `{}`",
                                r.worktree_path, p.worktree_path
                            ),
                        }
                    },
                    Gate {
                        name: "report-branch".into(),
                        outcome: if r.branch == p.branch {
                            Outcome::Pass
                        } else {
                            Outcome::Fail
                        },
                        detail: format!("`{}`", r.branch),
                    },
                ];
                let mut with = run.clone();
                with.in_scope_paths = r.in_scope_paths.clone();
                Ok(vec![
                    Event::Phase1Reported { report: r.clone() },
                    phase1d_events(&with, runs, Some(head), extra),
                ])
            }
            Command::AnswerScope { answer, operator } => {
                nonempty(state, v, "operator", operator)?;
                let operator = operator.clone();
                Ok(vec![match answer {
                    ScopeAnswer::Proceed => Event::ScopeProceeded { operator },
                    ScopeAnswer::Abort => Event::ScopeAborted { operator },
                }])
            }
            Command::Refine { report, runs } => {
                let run = opened(state, v)?;
                let p = &run.params;
                let r: RefineReport = parse(state, v, report)?;
                for (i, d) in r.dismissed_findings.iter().enumerate() {
                    let grounded = d
                        .split_once(" — ")
                        .is_some_and(|(f, g)| !f.trim().is_empty() && !g.trim().is_empty());
                    if !grounded {
                        return Err(bad(
                            state,
                            v,
                            &format!("report.dismissed_findings[{i}]"),
                            "dismissal-grounding",
                            "every dismissal is `<finding> — <grounding>`",
                        ));
                    }
                }
                let mut stop_tb = None;
                for (i, t) in r.tiebreakers.iter().enumerate() {
                    let field = format!("report.tiebreakers[{i}]");
                    match t.number {
                        1 | 2 | 4 => {
                            if t.grounding.as_deref().map_or(true, |g| g.trim().is_empty()) {
                                return Err(bad(state, v, &format!("{field}.grounding"), "dismissal-grounding", "tiebreakers 1, 2 and 4 are auto-disposed with their grounding recorded"));
                            }
                        }
                        3 => stop_tb = Some(t),
                        5 if p.tiebreaker_5 => stop_tb = Some(t),
                        5 => {
                            return Err(bad(
                                state,
                                v,
                                &format!("{field}.number"),
                                "tiebreaker-5-declared",
                                "this consumer does not declare TIEBREAKER_5",
                            ))
                        }
                        _ => {
                            return Err(bad(
                                state,
                                v,
                                &format!("{field}.number"),
                                "tiebreaker-number",
                                "tiebreakers are 1–5",
                            ))
                        }
                    }
                    nonempty(state, v, &format!("{field}.disposition"), &t.disposition)?;
                }
                let passed = r.verdict == "passed";
                if !passed
                    && !matches!(r.verdict.as_str(), "flapping" | "daemon_unhealthy")
                    && report::stopped_reason(&r.verdict).map_or(true, |x| x.trim().is_empty())
                {
                    return Err(bad(
                        state,
                        v,
                        "report.verdict",
                        "verdict",
                        "expected passed | flapping | daemon_unhealthy | stopped:<reason>",
                    ));
                }
                if passed && (r.rebase_outcome == RebaseOutcome::Conflict || stop_tb.is_some()) {
                    return Err(bad(
                        state,
                        v,
                        "report.verdict",
                        "consistent-evidence",
                        "a rebase conflict or a stop tiebreaker contradicts `passed`",
                    ));
                }
                if passed && r.remaining_findings.is_some() {
                    return Err(bad(
                        state,
                        v,
                        "report.remaining_findings",
                        "consistent-evidence",
                        "remaining findings are reported only on flapping or stopped",
                    ));
                }
                let broadening = matches!(state.stage(), Some(Stage::Stopped { .. }));
                if broadening && !r.rebase_already_done {
                    return Err(bad(state, v, "report.rebase_already_done", "one-rebase", "a broadening run after `flapping` is a new refine run with rebase_already_done: true"));
                }
                if r.rebase_already_done && !run.rebase_done {
                    return Err(bad(
                        state,
                        v,
                        "report.rebase_already_done",
                        "one-rebase",
                        "no rebase is recorded for this ship",
                    ));
                }
                if r.rebase_outcome == RebaseOutcome::Conflict || stop_tb.is_some() {
                    let (number, context, proposed) = match stop_tb {
                        Some(t) => (t.number, t.context.clone(), t.disposition.clone()),
                        None => (
                            3,
                            "a rebase conflict rerere could not clear".into(),
                            "ask the operator".into(),
                        ),
                    };
                    return Ok(vec![Event::TiebreakerRaised {
                        number,
                        context,
                        proposed,
                        phase: 2,
                    }]);
                }
                if !passed {
                    let (failure, code) = match r.verdict.as_str() {
                        "daemon_unhealthy" => {
                            (Failure::DaemonUnhealthy, "daemon_unhealthy".to_owned())
                        }
                        other => (Failure::Refine, other.to_owned()),
                    };
                    return Ok(vec![Event::RefineStopped {
                        report: r,
                        runs: runs.clone(),
                        gates: vec![],
                        failure,
                        code,
                    }]);
                }
                exact(
                    state,
                    v,
                    "runs",
                    runs,
                    &gates::refine_plan(p, &run.repo_root),
                )?;
                let mut g = gates::refine_gates(p, &run.repo_root, runs, &r.tip_sha);
                g.push(Gate {
                    name: "lint-clean".into(),
                    outcome: if r.lint_clean {
                        Outcome::Pass
                    } else {
                        Outcome::Fail
                    },
                    detail: "the report's lint_clean".into(),
                });
                if g.iter().all(|g| g.outcome == Outcome::Pass) {
                    Ok(vec![Event::Refined {
                        report: r,
                        runs: runs.clone(),
                        gates: g,
                        tiebreaker_4: p.tiebreaker_4.clone(),
                    }])
                } else {
                    let code = format!(
                        "stopped:phase-2-reverify:{}",
                        g.iter()
                            .filter(|g| g.outcome != Outcome::Pass)
                            .map(|g| g.name.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    );
                    Ok(vec![Event::RefineStopped {
                        report: r,
                        runs: runs.clone(),
                        gates: g,
                        failure: Failure::Phase2Reverify,
                        code,
                    }])
                }
            }
            Command::PreMerge { report, runs } => {
                let run = opened(state, v)?;
                let p = &run.params;
                let r: PreMergeReport = parse(state, v, report)?;
                let pre = r.pre_squash_sha.as_deref();
                match (r.squash, pre) {
                    (Squash::NotApplicable, None) => {}
                    (Squash::NotApplicable, Some(_)) => {
                        return Err(bad(
                            state,
                            v,
                            "report.pre_squash_sha",
                            "consistent-evidence",
                            "no squash: no pre-squash commit",
                        ))
                    }
                    (_, Some(s)) if is_full_git_id(s) => {}
                    _ => {
                        return Err(bad(
                            state,
                            v,
                            "report.pre_squash_sha",
                            "full-head",
                            "a squash (or its fall-back) names the full pre-squash commit",
                        ))
                    }
                }
                if r.squash == Squash::Squashed && r.rollups.is_empty() {
                    return Err(bad(
                        state,
                        v,
                        "report.rollups",
                        "required",
                        "a squash lists its roll-ups",
                    ));
                }
                if r.rebase_outcome_3_2 == ReRebase::Conflict {
                    if !runs.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "runs",
                            "not-verified",
                            "a conflicted rebase is not verified",
                        ));
                    }
                    return Ok(vec![Event::TiebreakerRaised {
                        number: 3,
                        context: "the phase-3 re-rebase hit a conflict rerere could not clear"
                            .into(),
                        proposed: "ask the operator".into(),
                        phase: 3,
                    }]);
                }
                exact(
                    state,
                    v,
                    "runs",
                    runs,
                    &gates::premerge_plan(
                        p,
                        &run.repo_root,
                        if r.squash == Squash::NotApplicable {
                            None
                        } else {
                            pre
                        },
                    ),
                )?;
                let mut g = gates::premerge_gates(p, &run.repo_root, runs, r.squash, pre);
                g.push(Gate {
                    name: "review-jobs-closed".into(),
                    outcome: if r.open_review_jobs == 0 {
                        Outcome::Pass
                    } else {
                        Outcome::Fail
                    },
                    detail: format!("{} open review jobs", r.open_review_jobs),
                });
                let (failure, code) = if !r.tests_pass || !r.lint_clean {
                    (Some(Failure::TestLint), "stopped:test_lint_fail".to_owned())
                } else if let Some(f) = g.iter().find(|g| g.outcome != Outcome::Pass) {
                    (
                        Some(Failure::PreMerge),
                        format!("stopped:pre-merge:{}", f.name),
                    )
                } else {
                    (None, String::new())
                };
                Ok(vec![match failure {
                    None => Event::PreMergeChecked {
                        report: r,
                        runs: runs.clone(),
                        gates: g,
                    },
                    Some(failure) => Event::PreMergeStopped {
                        report: r,
                        runs: runs.clone(),
                        gates: g,
                        failure,
                        code,
                    },
                }])
            }
            Command::Merge {
                anchor,
                merge,
                after,
            } => {
                let run = opened(state, v)?;
                let (p, root) = (&run.params, run.repo_root.as_str());
                if let Some(drifted) = anchor_drift(
                    state,
                    v,
                    anchor,
                    root,
                    merge.is_some() || !after.is_empty(),
                    "merge",
                )? {
                    return Ok(drifted);
                }
                let m = merge.as_ref().ok_or_else(|| {
                    bad(
                        state,
                        v,
                        "merge",
                        "evidence-complete",
                        "the anchor held: the merge must have run",
                    )
                })?;
                argv_is(state, v, "merge", m, &gates::merge_argv(p, root))?;
                let attempt = run.merge_attempts + 1;
                let merged_sha = if m.exit_status == Some(0) {
                    exact(state, v, "after", after, &gates::merge_after_plan(p, root))?;
                    let plan = gates::merge_after_plan(p, root);
                    let r = Runs(after);
                    match (r.line(&plan[0]), r.line(&plan[1])) {
                        (Some(a), Some(b)) if a == b && is_full_git_id(&a) => Some(a),
                        _ => None,
                    }
                } else {
                    if !after.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "after",
                            "not-merged",
                            "a rejected merge has no readings after it",
                        ));
                    }
                    None
                };
                let (anchor, merge, after) = (anchor.clone(), m.clone(), after.clone());
                Ok(vec![match merged_sha {
                    Some(merged_sha) => Event::MergeAccepted {
                        attempt,
                        anchor,
                        merge,
                        after,
                        merged_sha,
                    },
                    None if merge.exit_status == Some(0) => Event::MergeStopped {
                        attempt,
                        anchor,
                        merge,
                        after,
                        code: "stopped:merge-unverified".into(),
                    },
                    None if attempt >= 2 => Event::MergeStopped {
                        attempt,
                        anchor,
                        merge,
                        after,
                        code: "stopped:ff-rejected-twice".into(),
                    },
                    None => Event::MergeRejected {
                        attempt,
                        anchor,
                        merge,
                    },
                }])
            }
            Command::Teardown {
                anchor,
                before,
                remove,
                delete,
            } => {
                let run = opened(state, v)?;
                let (p, root) = (&run.params, run.repo_root.as_str());
                if let Some(drifted) = anchor_drift(
                    state,
                    v,
                    anchor,
                    root,
                    !before.is_empty() || remove.is_some() || delete.is_some(),
                    "before",
                )? {
                    return Ok(drifted);
                }
                exact(
                    state,
                    v,
                    "before",
                    before,
                    &gates::teardown_before_plan(p, root),
                )?;
                let force = matches!(state.stage(), Some(Stage::TeardownPending { .. }));
                let (listed, branch) = gates::teardown_present(p, root, before);
                let expect = |present: Option<bool>,
                              run: &Option<CommandRun>,
                              want: Vec<String>,
                              field: &str|
                 -> Result<bool, Rejection> {
                    match (present, run) {
                        (Some(true), Some(r)) => {
                            argv_is(state, v, field, r, &want)?;
                            Ok(r.exit_status == Some(0))
                        }
                        (Some(true), None) => Err(bad(
                            state,
                            v,
                            field,
                            "evidence-complete",
                            "it is there: it must be removed",
                        )),
                        (Some(false), None) => Ok(true),
                        (None, None) => Ok(false),
                        (_, Some(_)) => Err(bad(
                            state,
                            v,
                            field,
                            "evidence-bound",
                            "only what the readings show is removed",
                        )),
                    }
                };
                let removed = expect(
                    listed,
                    remove,
                    gates::teardown_remove_argv(p, root, force),
                    "remove",
                )?;
                let deleted = expect(
                    branch,
                    delete,
                    gates::teardown_delete_argv(p, root, force),
                    "delete",
                )?;
                let teardown = match (removed, deleted) {
                    (true, true) => "clean".to_owned(),
                    (false, true) => "partial:worktree".to_owned(),
                    (true, false) => "partial:branch".to_owned(),
                    (false, false) => "partial:worktree,branch".to_owned(),
                };
                let (anchor, before, remove, delete) = (
                    anchor.clone(),
                    before.clone(),
                    remove.clone(),
                    delete.clone(),
                );
                Ok(vec![if teardown == "clean" {
                    Event::TornDown {
                        anchor,
                        before,
                        remove,
                        delete,
                    }
                } else {
                    Event::TeardownPartial {
                        anchor,
                        before,
                        remove,
                        delete,
                        teardown,
                    }
                }])
            }
            Command::Resume {
                anchor,
                runs,
                reattach,
                ahead,
                phase1d,
            } => {
                let run = opened(state, v)?;
                let (p, root) = (&run.params, run.repo_root.as_str());
                if let Some(drifted) = anchor_drift(
                    state,
                    v,
                    anchor,
                    root,
                    !runs.is_empty()
                        || reattach.is_some()
                        || ahead.is_some()
                        || !phase1d.is_empty(),
                    "runs",
                )? {
                    return Ok(drifted);
                }
                exact(state, v, "runs", runs, &gates::resume_plan(p, root))?;
                let (clean, current, listed, branch) = gates::resume_facts(p, root, runs);
                let blocked = |reason: &str| -> Result<Vec<Event>, Rejection> {
                    if reattach.is_some() || ahead.is_some() || !phase1d.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "reattach",
                            "evidence-bound",
                            "a blocked resume runs nothing further",
                        ));
                    }
                    Ok(vec![Event::ResumeBlocked {
                        anchor: anchor.clone(),
                        runs: runs.clone(),
                        reason: reason.into(),
                    }])
                };
                match clean {
                    Some(true) => {}
                    Some(false) => return blocked("stopped:primary-dirty"),
                    None => return blocked("stopped:unreadable:status"),
                }
                match current {
                    Some(c) if c == p.target_branch => {}
                    Some(_) => return blocked("stopped:primary-off-branch"),
                    None => return blocked("stopped:unreadable:current-branch"),
                }
                match (listed, branch, reattach) {
                    (Some(true), _, None) => {}
                    (Some(false), Some(true), Some(r)) => {
                        argv_is(state, v, "reattach", r, &gates::reattach_argv(p, root))?;
                        if r.exit_status != Some(0) {
                            if ahead.is_some() || !phase1d.is_empty() {
                                return Err(bad(
                                    state,
                                    v,
                                    "ahead",
                                    "evidence-bound",
                                    "a failed re-attach runs nothing further",
                                ));
                            }
                            return Ok(vec![Event::ResumeBlocked {
                                anchor: anchor.clone(),
                                runs: runs.clone(),
                                reason: "stopped:worktree-prep-failed".into(),
                            }]);
                        }
                    }
                    (Some(false), Some(true), None) => {
                        return Err(bad(
                            state,
                            v,
                            "reattach",
                            "evidence-complete",
                            "the branch has no worktree: re-attach it",
                        ))
                    }
                    (Some(false), Some(false), None) => {
                        return blocked("refused:worktree-and-branch-gone")
                    }
                    (None, _, None) | (_, None, None) => {
                        return blocked("stopped:unreadable:worktree")
                    }
                    (_, _, Some(_)) => {
                        return Err(bad(
                            state,
                            v,
                            "reattach",
                            "evidence-bound",
                            "re-attach only a branch whose worktree is gone",
                        ))
                    }
                }
                let ahead = ahead.as_ref().ok_or_else(|| {
                    bad(
                        state,
                        v,
                        "ahead",
                        "evidence-complete",
                        "the tip decides the phase: count the commits ahead",
                    )
                })?;
                argv_is(state, v, "ahead", ahead, &gates::ahead_argv(p))?;
                let Some(count) = Runs(std::slice::from_ref(ahead))
                    .line(&ahead.argv)
                    .and_then(|s| s.parse::<u64>().ok())
                else {
                    if !phase1d.is_empty() {
                        return Err(bad(
                            state,
                            v,
                            "phase1d",
                            "evidence-bound",
                            "an unreadable tip runs nothing further",
                        ));
                    }
                    return Ok(vec![Event::ResumeBlocked {
                        anchor: anchor.clone(),
                        runs: runs.clone(),
                        reason: "stopped:unreadable:tip".into(),
                    }]);
                };
                let phase = resume_phase(run, count);
                let resumption = Resumption {
                    session: run.session + 1,
                    anchor: anchor.clone(),
                    runs: runs.clone(),
                    reattach: reattach.clone(),
                    ahead: ahead.clone(),
                    commits_ahead: count,
                };
                let mut events = vec![match phase {
                    1 => Event::ResumedPhase1(resumption),
                    2 => Event::ResumedPhase2(resumption),
                    _ if run.merged_sha.is_some() => Event::ResumedTeardown(resumption),
                    _ => Event::ResumedPhase3(resumption),
                }];
                if phase == 2 {
                    // §resume-mechanics 6: a runaway commit from the prior session is not amnestied.
                    exact(state, v, "phase1d", phase1d, &gates::phase1d_plan(p, root))?;
                    events.push(phase1d_events(run, phase1d, None, vec![]));
                } else if !phase1d.is_empty() {
                    return Err(bad(
                        state,
                        v,
                        "phase1d",
                        "evidence-bound",
                        "phase-1d re-runs only before phase 2",
                    ));
                }
                Ok(events)
            }
            Command::AnswerTiebreaker {
                number,
                disposition,
                operator,
            } => {
                let Some(Stage::Tiebreaker {
                    number: pending, ..
                }) = state.stage()
                else {
                    return Err(reject(
                        state,
                        v,
                        "stage-admits",
                        None,
                        "no stop tiebreaker is pending",
                    ));
                };
                if number != pending {
                    return Err(bad(
                        state,
                        v,
                        "number",
                        "pending-tiebreaker",
                        &format!("tiebreaker {pending} is pending"),
                    ));
                }
                nonempty(state, v, "disposition", disposition)?;
                nonempty(state, v, "operator", operator)?;
                let (number, disposition, operator) =
                    (*number, disposition.clone(), operator.clone());
                Ok(vec![match state.stage() {
                    Some(Stage::Tiebreaker { phase: 3, .. }) => Event::RespawnedPhase3 {
                        number,
                        disposition,
                        operator,
                    },
                    _ => Event::RespawnedPhase2 {
                        number,
                        disposition,
                        operator,
                    },
                }])
            }
            Command::ExternalOp { class, op, denied } => {
                let run = opened(state, v)?;
                nonempty(state, v, "op", op)?;
                let before = run.denials.get(class).copied().unwrap_or(0);
                let attempt = before + 1;
                let mut events = vec![Event::ExternalOpRecorded {
                    class: *class,
                    op: op.clone(),
                    denied: *denied,
                    attempt,
                }];
                if *denied && before >= 1 {
                    events.push(Event::PermissionBoundaryReached {
                        class: *class,
                        op: op.clone(),
                        code: recovery::denial_code(*class).into(),
                    });
                }
                Ok(events)
            }
            Command::Abandon { reason, operator } => {
                nonempty(state, v, "reason", reason)?;
                nonempty(state, v, "operator", operator)?;
                Ok(vec![Event::Abandoned {
                    reason: reason.clone(),
                    operator: operator.clone(),
                }])
            }
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        let (mut run, stage) = match (state, event) {
            (
                State::Idle,
                Event::Opened {
                    params, repo_root, ..
                },
            ) => {
                let run = Run {
                    params: params.clone(),
                    repo_root: repo_root.clone(),
                    session: 0,
                    in_scope_paths: None,
                    rebase_done: false,
                    refine_passed: false,
                    merge_attempts: 0,
                    merged_sha: None,
                    denials: BTreeMap::new(),
                    begun: None,
                };
                return State::Active {
                    run: Box::new(run),
                    // Blocked until the preflight event that always follows.
                    stage: Stage::Preflighted {
                        outcome: Preflight::Unreadable("preflight".into()),
                    },
                };
            }
            // Total: nothing but `opened` moves an idle stream.
            (State::Idle, _) => return State::Idle,
            (State::Active { run, stage }, _) => (run, stage),
        };
        let stop = |failure: Failure, code: String, phase: u8| match recovery::action(failure) {
            Action::Teardown => Stage::TeardownPending { reason: code },
            _ => Stage::Stopped {
                failure,
                code,
                phase,
            },
        };
        run.begun = match event {
            Event::StepBegun { step } => Some(*step),
            Event::WorktreeCreated { .. }
            | Event::WorktreeCreationFailed { .. }
            | Event::AnchorDrifted { .. }
            | Event::MergeAccepted { .. }
            | Event::MergeRejected { .. }
            | Event::MergeStopped { .. }
            | Event::TornDown { .. }
            | Event::TeardownPartial { .. }
            | Event::ResumedPhase1(_)
            | Event::ResumedPhase2(_)
            | Event::ResumedPhase3(_)
            | Event::ResumedTeardown(_)
            | Event::ResumeBlocked { .. } => None,
            _ => run.begun,
        };
        let stage = match event {
            Event::Opened { .. } | Event::StepBegun { .. } => stage,
            Event::PreflightPassed { outcome, .. } | Event::PreflightBlocked { outcome, .. } => {
                Stage::Preflighted {
                    outcome: outcome.clone(),
                }
            }
            Event::AnchorDrifted { .. } => match stage {
                Stage::Preflighted { .. } => Stage::Preflighted {
                    outcome: Preflight::RepoAnchorDrift,
                },
                other => other,
            },
            Event::WorktreeCreated { .. } => Stage::Phase1,
            Event::WorktreeCreationFailed { failed, .. } => Stage::CreationFailed {
                failed: failed.clone(),
            },
            Event::Phase1Reported { report } => {
                run.in_scope_paths = report.in_scope_paths.clone();
                stage
            }
            Event::Phase1Verified { .. } => Stage::Phase2,
            Event::ScopeTripped { trip, .. } => Stage::ScopeTripped { trip: trip.clone() },
            Event::Phase1dFailed { failed, .. } => Stage::Stopped {
                failure: Failure::Phase1dVerify,
                code: format!("stopped:phase-1d:{}", failed.join(",")),
                phase: 1,
            },
            Event::LeafStopped {
                phase,
                code,
                failure,
            } => Stage::Stopped {
                failure: *failure,
                code: code.clone(),
                phase: *phase,
            },
            Event::LeafStoppedForTeardown { code, .. } => Stage::TeardownPending {
                reason: code.clone(),
            },
            Event::ScopeProceeded { .. } => Stage::Phase2,
            Event::ScopeAborted { .. } => Stage::TeardownPending {
                reason: "scope gate: the user aborted".into(),
            },
            Event::Refined { .. } => {
                run.rebase_done = true;
                run.refine_passed = true;
                Stage::Phase3
            }
            Event::RefineStopped {
                report,
                failure,
                code,
                ..
            } => {
                run.rebase_done =
                    run.rebase_done || report.rebase_outcome != RebaseOutcome::Conflict;
                stop(*failure, code.clone(), 2)
            }
            Event::TiebreakerRaised {
                number,
                context,
                proposed,
                phase,
            } => Stage::Tiebreaker {
                number: *number,
                context: context.clone(),
                proposed: proposed.clone(),
                phase: *phase,
            },
            Event::RespawnedPhase2 { .. } => Stage::Phase2,
            Event::RespawnedPhase3 { .. } => Stage::Phase3,
            Event::PreMergeChecked { .. } => Stage::MergeReady,
            Event::PreMergeStopped { failure, code, .. } => stop(*failure, code.clone(), 3),
            Event::MergeAccepted {
                attempt,
                merged_sha,
                ..
            } => {
                run.merge_attempts = *attempt;
                run.merged_sha = Some(merged_sha.clone());
                Stage::Merged
            }
            Event::MergeRejected { attempt, .. } => {
                run.merge_attempts = *attempt;
                Stage::MergeRejected
            }
            Event::MergeStopped { attempt, code, .. } => {
                run.merge_attempts = *attempt;
                let failure = if code == "stopped:ff-rejected-twice" {
                    Failure::FfRejectedTwice
                } else {
                    Failure::PreMerge
                };
                stop(failure, code.clone(), 3)
            }
            Event::TornDown { .. } => match stage {
                Stage::TeardownPending { reason } => Stage::TornDown { reason },
                _ => Stage::Shipped,
            },
            Event::TeardownPartial { teardown, .. } => match stage {
                s @ Stage::TeardownPending { .. } => s,
                _ => stop(Failure::TeardownPartial, teardown.clone(), 3),
            },
            Event::ResumedPhase1(r)
            | Event::ResumedPhase2(r)
            | Event::ResumedPhase3(r)
            | Event::ResumedTeardown(r) => {
                run.session = r.session;
                run.merge_attempts = 0;
                run.denials.clear();
                match event {
                    Event::ResumedPhase3(_) => Stage::Phase3,
                    Event::ResumedTeardown(_) => Stage::Merged,
                    _ => Stage::Phase1,
                }
            }
            Event::ResumeBlocked { .. } => stage,
            Event::ExternalOpRecorded { class, denied, .. } => {
                if *denied {
                    *run.denials.entry(*class).or_insert(0) += 1;
                } else {
                    run.denials.remove(class);
                }
                stage
            }
            Event::PermissionBoundaryReached { code, .. } => {
                Stage::PermissionBoundary { code: code.clone() }
            }
            Event::Abandoned { reason, .. } => Stage::Abandoned {
                reason: reason.clone(),
            },
        };
        State::Active { run, stage }
    }

    fn state_name(state: &State) -> &'static str {
        match state.stage() {
            None => "idle",
            Some(s) => match s {
                Stage::Preflighted { outcome } if outcome.may_create_worktree() => {
                    "preflight-clean"
                }
                Stage::Preflighted { .. } => "preflight-blocked",
                Stage::Phase1 => "phase-1",
                Stage::ScopeTripped { .. } => "scope-tripped",
                Stage::Phase2 => "phase-2",
                Stage::Phase3 => "phase-3",
                Stage::MergeReady => "merge-ready",
                Stage::MergeRejected => "merge-rejected",
                Stage::Merged => "merged",
                Stage::Stopped { .. } => "stopped",
                Stage::Tiebreaker { .. } => "tiebreaker-pending",
                Stage::TeardownPending { .. } => "teardown-pending",
                Stage::Shipped => "shipped",
                Stage::TornDown { .. } => "torn-down",
                Stage::Abandoned { .. } => "abandoned",
                Stage::CreationFailed { .. } => "creation-failed",
                Stage::PermissionBoundary { .. } => "permission-boundary",
            },
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::Opened { .. } => "opened",
            Event::PreflightPassed { .. } => "preflight-passed",
            Event::PreflightBlocked { .. } => "preflight-blocked",
            Event::StepBegun { .. } => "step-begun",
            Event::AnchorDrifted { .. } => "anchor-drifted",
            Event::WorktreeCreated { .. } => "worktree-created",
            Event::WorktreeCreationFailed { .. } => "worktree-creation-failed",
            Event::Phase1Reported { .. } => "phase-1-reported",
            Event::Phase1Verified { .. } => "phase-1-verified",
            Event::ScopeTripped { .. } => "scope-tripped",
            Event::Phase1dFailed { .. } => "phase-1d-failed",
            Event::LeafStopped { .. } => "leaf-stopped",
            Event::LeafStoppedForTeardown { .. } => "leaf-stopped-for-teardown",
            Event::ScopeProceeded { .. } => "scope-proceeded",
            Event::ScopeAborted { .. } => "scope-aborted",
            Event::Refined { .. } => "refined",
            Event::RefineStopped { .. } => "refine-stopped",
            Event::TiebreakerRaised { .. } => "tiebreaker-raised",
            Event::RespawnedPhase2 { .. } => "respawned-phase-2",
            Event::RespawnedPhase3 { .. } => "respawned-phase-3",
            Event::PreMergeChecked { .. } => "pre-merge-checked",
            Event::PreMergeStopped { .. } => "pre-merge-stopped",
            Event::MergeAccepted { .. } => "merge-accepted",
            Event::MergeRejected { .. } => "merge-rejected",
            Event::MergeStopped { .. } => "merge-stopped",
            Event::TornDown { .. } => "torn-down",
            Event::TeardownPartial { .. } => "teardown-partial",
            Event::ResumedPhase1(_) => "resumed-phase-1",
            Event::ResumedPhase2(_) => "resumed-phase-2",
            Event::ResumedPhase3(_) => "resumed-phase-3",
            Event::ResumedTeardown(_) => "resumed-teardown",
            Event::ResumeBlocked { .. } => "resume-blocked",
            Event::ExternalOpRecorded { .. } => "external-op-recorded",
            Event::PermissionBoundaryReached { .. } => "permission-boundary-reached",
            Event::Abandoned { .. } => "abandoned",
        }
    }

    fn verdict(state: &State, events: &[Event]) -> crate::Verdict {
        verdict::verdict(state, events)
    }

    fn command_name(command: &Command) -> &'static str {
        Verb::of(command).name()
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name, terminal| StateSpec { name, terminal };
        const LIVE: [&str; 13] = [
            "idle",
            "preflight-clean",
            "preflight-blocked",
            "phase-1",
            "scope-tripped",
            "phase-2",
            "phase-3",
            "merge-ready",
            "merge-rejected",
            "merged",
            "stopped",
            "tiebreaker-pending",
            "teardown-pending",
        ];
        let mut edges = vec![
            e("idle", "opened", "preflight-blocked"),
            e("preflight-clean", "anchor-drifted", "preflight-blocked"),
            e("preflight-clean", "worktree-created", "phase-1"),
            e(
                "preflight-clean",
                "worktree-creation-failed",
                "creation-failed",
            ),
            e("preflight-blocked", "abandoned", "abandoned"),
            e("phase-1", "phase-1-reported", "phase-1"),
            e("phase-1", "phase-1-verified", "phase-2"),
            e("phase-1", "scope-tripped", "scope-tripped"),
            e("phase-1", "phase-1d-failed", "stopped"),
            e("phase-1", "leaf-stopped", "stopped"),
            e("phase-1", "leaf-stopped-for-teardown", "teardown-pending"),
            e("scope-tripped", "scope-proceeded", "phase-2"),
            e("scope-tripped", "scope-aborted", "teardown-pending"),
            e("phase-2", "refined", "phase-3"),
            e("stopped", "refined", "phase-3"),
            e("phase-2", "refine-stopped", "stopped"),
            e("stopped", "refine-stopped", "stopped"),
            e("phase-2", "tiebreaker-raised", "tiebreaker-pending"),
            e("stopped", "tiebreaker-raised", "tiebreaker-pending"),
            e("phase-3", "tiebreaker-raised", "tiebreaker-pending"),
            e("tiebreaker-pending", "respawned-phase-2", "phase-2"),
            e("tiebreaker-pending", "respawned-phase-3", "phase-3"),
            e("phase-3", "pre-merge-checked", "merge-ready"),
            e("phase-3", "pre-merge-stopped", "stopped"),
            e("merge-ready", "merge-accepted", "merged"),
            e("merge-ready", "merge-rejected", "merge-rejected"),
            e("merge-ready", "merge-stopped", "stopped"),
            e("merge-rejected", "merge-accepted", "merged"),
            e("merge-rejected", "merge-stopped", "stopped"),
            e("merged", "torn-down", "shipped"),
            e("merged", "teardown-partial", "stopped"),
            e("teardown-pending", "torn-down", "torn-down"),
            e("teardown-pending", "teardown-partial", "teardown-pending"),
            e("teardown-pending", "anchor-drifted", "teardown-pending"),
            e("stopped", "abandoned", "abandoned"),
        ];
        for from in ["preflight-clean", "preflight-blocked"] {
            edges.push(e(from, "preflight-passed", "preflight-clean"));
            edges.push(e(from, "preflight-blocked", "preflight-blocked"));
        }
        for from in [
            "phase-1",
            "scope-tripped",
            "phase-2",
            "phase-3",
            "merge-ready",
            "merge-rejected",
            "merged",
            "stopped",
            "tiebreaker-pending",
        ] {
            edges.push(e(from, "anchor-drifted", from));
            edges.push(e(from, "resume-blocked", from));
            edges.push(e(from, "resumed-phase-1", "phase-1"));
            edges.push(e(from, "resumed-phase-2", "phase-1"));
            edges.push(e(from, "resumed-phase-3", "phase-3"));
            edges.push(e(from, "resumed-teardown", "merged"));
        }
        // A crashed `create` is recovered by `resume` from the clean preflight.
        for (event, to) in [
            ("resumed-phase-1", "phase-1"),
            ("resumed-phase-2", "phase-1"),
            ("resume-blocked", "preflight-clean"),
        ] {
            edges.push(e("preflight-clean", event, to));
        }
        for from in LIVE.iter().filter(|s| **s != "idle") {
            if *from != "preflight-blocked" {
                edges.push(e(from, "step-begun", from));
            }
            edges.push(e(from, "external-op-recorded", from));
            edges.push(e(
                from,
                "permission-boundary-reached",
                "permission-boundary",
            ));
        }
        let mut states: Vec<StateSpec> = LIVE.iter().map(|n| s(*n, false)).collect();
        for t in [
            "shipped",
            "torn-down",
            "abandoned",
            "creation-failed",
            "permission-boundary",
        ] {
            states.push(s(t, true));
        }
        GraphSpec {
            machine: NAME,
            initial: "idle",
            states,
            edges,
        }
    }
}
