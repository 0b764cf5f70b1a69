//! The saga's state: the thread a tick leaves (phase, status, lists, gate verdicts),
//! its gate record and QA allowance, and the state names the graph uses.

use serde::{Deserialize, Serialize};

use super::gates;
use crate::evidence::{next_round, FullCommit};

/// `issue` (default) or `task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An issue thread (`issue-<N>`).
    #[default]
    Issue,
    /// An ad-hoc task thread (`task-<slug>`).
    Task,
}

/// `lifecycle_phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Phase {
    Ideation,
    Brainstorm,
    Plan,
    Review,
    Work,
    Qa,
    Retro,
}

/// `phase_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum PhaseStatus {
    Pending,
    InProgress,
    Complete,
}

/// `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Status {
    Active,
    Blocked,
    Paused,
    HandedOff,
    Done,
    Abandoned,
}

/// The six canonical gate states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum GateState {
    Done,
    InProgress,
    Blocked,
    Failed,
    Halted,
    NotReached,
}

/// The six states as the wire spells them.
pub const GATE_STATES: [&str; 6] = [
    "done",
    "in-progress",
    "blocked",
    "failed",
    "halted",
    "not-reached",
];

/// A gate verdict `gate:state:ref`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// The gate.
    pub gate: String,
    /// Its state.
    pub state: GateState,
    /// The reference (may be empty, may hold colons).
    pub reference: String,
}

/// Parses `gate:state:ref`, splitting on the first two colons only.
pub fn parse_gate_verdict(s: &str) -> Result<GateVerdict, String> {
    let mut parts = s.splitn(3, ':');
    let gate = parts.next().unwrap_or("");
    let (Some(state), Some(reference)) = (parts.next(), parts.next()) else {
        return Err(format!("gate verdict `{s}` is not `gate:state:ref`"));
    };
    if gate.trim().is_empty() {
        return Err(format!("gate verdict `{s}` names no gate"));
    }
    let state = match state {
        "done" => GateState::Done,
        "in-progress" => GateState::InProgress,
        "blocked" => GateState::Blocked,
        "failed" => GateState::Failed,
        "halted" => GateState::Halted,
        "not-reached" => GateState::NotReached,
        other => {
            return Err(format!(
                "gate verdict `{s}`: state `{other}` is not one of {}",
                GATE_STATES.join(" | ")
            ))
        }
    };
    Ok(GateVerdict {
        gate: gate.to_owned(),
        state,
        reference: reference.to_owned(),
    })
}

/// The thread as the last tick left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Thread {
    pub saga_id: String,
    pub kind: Kind,
    pub lifecycle_phase: Phase,
    pub phase_status: PhaseStatus,
    pub status: Status,
    pub phase: u32,
    pub destination: Option<String>,
    pub issue_ref: Option<String>,
    pub plan_path: Option<String>,
    pub branch: Option<String>,
    /// The caller's `--head-sha` is recorded as given (else the `HEAD` git showed,
    /// always full): a string.
    pub head_sha: Option<String>,
    pub next_step: Option<String>,
    pub rounds_seen: Vec<u32>,
    pub checks_run: Vec<String>,
    pub work_session_paths: Vec<String>,
    pub files_modified: Vec<String>,
    pub pr_refs: Vec<String>,
    pub review_paths: Vec<String>,
    pub gate_verdicts: Vec<GateVerdict>,
    pub ticks: u32,
    /// The backend that runs, what was recommended, what the operator picked.
    #[serde(default)]
    pub orchestration_mode: Option<String>,
    #[serde(default)]
    pub orchestration_recommended: Option<String>,
    #[serde(default)]
    pub orchestration_operator_choice: Option<String>,
    pub qa: QaAllowance,
    #[serde(default)]
    pub gates: GateRecord,
}

/// The gates, boundaries, merge turn, release and board of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[allow(missing_docs)]
pub struct GateRecord {
    pub doc_review: Option<gates::DocReview>,
    pub review: Option<gates::Review>,
    pub overrides: Vec<gates::Override>,
    pub ready_for_pr: Option<FullCommit>,
    /// The unit whose green iteration handed the revision PR-ready passed for
    /// (none for a PR-ready recorded before it named one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_unit: Option<String>,
    /// The repository PR-ready read the review fresh in (its common dir and
    /// identity on disk, `evidence::git::repository_of`; saga rules 9): a turn
    /// taken on that PR-ready merges there, and a release lands there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_repository: Option<String>,
    /// The repository the thread's first PR-ready read (saga rules 11): every
    /// later PR-ready reads there too, whatever build loop runs elsewhere since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    pub directive: Option<gates::Directive>,
    pub paused_at: Option<String>,
    pub units: gates::Units,
    pub release: Option<gates::Release>,
    pub board: Vec<(String, String, String)>,
}

impl GateRecord {
    /// The thread's work landed: a unit's merge is recorded (by its holder, or
    /// from what git showed after a dead turn), or a release recorded the commit
    /// that landed. What "merged" means for QA and for the board's Verify move.
    pub fn landed(&self) -> bool {
        self.units
            .values()
            .any(|u| u.merge_state == gates::MergeState::Merged)
            || self
                .release
                .as_ref()
                .is_some_and(|release| release.landed_commit.is_some())
    }
}

impl Thread {
    /// Derived, never stored or set.
    pub fn next_round(&self) -> u32 {
        next_round(&self.rounds_seen)
    }
    /// `phase + 1` once the phase is complete.
    pub fn next_phase(&self) -> u32 {
        if self.phase_status == PhaseStatus::Complete {
            self.phase + 1
        } else {
            self.phase
        }
    }
}

/// QA after merge: the failures counted against the allowance (3 standard + 2
/// escalated cycles unless the run record carries other limits), then exactly one
/// extension. Passing, blocked and unrun cycles count nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct QaAllowance {
    /// Failed cycles counted against the allowance (rules v1 counted every cycle).
    pub post_merge_cycles: u32,
    /// The one extension was taken.
    pub extension_taken: bool,
    /// The last outcome.
    pub last_outcome: Option<QaOutcome>,
    /// The limits the run record carried, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<QaLimits>,
}

/// Standard cycles.
pub const QA_STANDARD: u32 = 3;
/// Escalated cycles.
pub const QA_ESCALATED: u32 = 2;

/// The post-merge allowance's limits, from the run record's run configuration
/// (`standard_cycle_allowance`, `escalated_cycle_allowance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaLimits {
    /// Standard cycles.
    pub standard: u32,
    /// Escalated cycles.
    pub escalated: u32,
}

impl Default for QaLimits {
    fn default() -> Self {
        QaLimits {
            standard: QA_STANDARD,
            escalated: QA_ESCALATED,
        }
    }
}

impl QaAllowance {
    /// The standard and escalated cycles (the run record's, else 3 + 2).
    pub fn budget(&self) -> u32 {
        let l = self.limits.unwrap_or_default();
        l.standard.saturating_add(l.escalated)
    }

    /// Failed cycles allowed now: the budget, plus one once the extension is taken.
    pub fn allowed(&self) -> u32 {
        self.budget()
            .saturating_add(u32::from(self.extension_taken))
    }
}

/// A QA cycle's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum QaOutcome {
    /// Every scenario passed: the PASS that moves the phase to `qa`.
    Passed,
    /// Passed where run, but a scenario did not run: not a PASS.
    PassedWithProofDebt,
    /// A scenario is blocked (with its cause).
    Blocked,
    /// A scenario failed: back to the build loop; the phase stays `work`.
    ReEntersTheBuildLoop,
    /// A scenario failed and the allowance (with its one extension, if taken) is
    /// spent: recorded for the operator, never a refusal, never a weaker test.
    Exhausted,
}

/// The machine's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    /// Nothing saved.
    Empty,
    /// A thread.
    Thread {
        /// Its data.
        thread: Box<Thread>,
    },
}

impl State {
    /// The thread, once minted.
    pub fn thread(&self) -> Option<&Thread> {
        match self {
            State::Empty => None,
            State::Thread { thread } => Some(thread),
        }
    }
}

/// The state's name in the graph: `empty`, `before-qa`, `qa` or `retro`.
pub(super) fn state_name(state: &State) -> &'static str {
    match state.thread().map(|t| t.lifecycle_phase) {
        None => "empty",
        Some(Phase::Qa) => "qa",
        Some(Phase::Retro) => "retro",
        Some(_) => "before-qa",
    }
}
