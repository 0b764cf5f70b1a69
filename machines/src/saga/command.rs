//! The saga's commands: a save (a full tick), the gate and boundary commands, and
//! one QA cycle after merge.

use serde::{Deserialize, Serialize};

use super::gates;
use super::state::{Kind, Phase, PhaseStatus, QaLimits, Status};
use crate::evidence::{AbsPath, CommandRun, FullCommit, RefName};
use crate::Names;

/// A save: every field optional (omitted = carried forward; an empty list clears).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Save {
    pub kind: Option<Kind>,
    pub lifecycle_phase: Option<Phase>,
    pub phase_status: Option<PhaseStatus>,
    pub status: Option<Status>,
    pub phase: Option<u32>,
    pub destination: Option<String>,
    pub issue_ref: Option<String>,
    pub plan_path: Option<String>,
    pub branch: Option<String>,
    pub head_sha: Option<String>,
    pub next_step: Option<String>,
    pub rounds_seen: Option<Vec<u32>>,
    pub checks_run: Option<Vec<String>>,
    pub work_session_paths: Option<Vec<String>>,
    pub files_modified: Option<Vec<String>>,
    pub pr_refs: Option<Vec<String>>,
    pub review_paths: Option<Vec<String>>,
    /// Raw `gate:state:ref` strings; parsed by the machine.
    pub gate_verdicts: Vec<String>,
    /// Always refused when present: `next_round` is derived.
    pub next_round: Option<u32>,
    /// The backend that runs (`inline`); recorded with the two below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orchestration_mode: Option<String>,
    /// What the recommender said (`inline` when a mode is chosen without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orchestration_recommended: Option<String>,
    /// The operator's pick (the mode when not named apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orchestration_operator_choice: Option<String>,
    /// The repository whose branch and `HEAD` the save captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<AbsPath>,
    /// cairn's capture runs in `repo` (`tick::capture_plan`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git: Vec<CommandRun>,
}

/// A scenario's result. `not-run` is never a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum ScenarioResult {
    Passed,
    Failed,
    Blocked,
    NotRun,
}

/// One scenario of a QA cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// Its result.
    pub result: ScenarioResult,
    /// Required when blocked.
    #[serde(default)]
    pub cause: Option<String>,
    /// The evidence (a path, a run, a transcript reference).
    #[serde(default)]
    pub evidence: Option<String>,
}

/// Commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    Save {
        saga_id: String,
        save: Box<Save>,
    },
    DocReview {
        review: gates::DocReview,
    },
    Review {
        review: gates::Review,
        /// The unit's build loop whose handed revision this review is of
        /// (`build-loop/<saga id>:<unit>`), when the caller names it: the engine
        /// reads it, and the reviewed SHA must be the revision it handed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    Override {
        gate: gates::Gate,
        rationale: String,
        operator: String,
    },
    /// The PR-ready gate: the doc-review and review gates, the revisions the build
    /// loop handed to code review (read from the journal), and freshness read by
    /// cairn (`evidence::fresh::plan(repo, reviewed_sha)`, run in that order).
    PrReady {
        repo: AbsPath,
        handed: Vec<gates::Handed>,
        runs: Vec<CommandRun>,
        /// Which repository `repo` is (`evidence::git::repository_of`; rules 9).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repository: Vec<CommandRun>,
    },
    Adjust {
        directive: String,
    },
    Boundary {
        boundary: String,
    },
    TakeTurn {
        unit: String,
        branch: RefName,
        merge_worktree: AbsPath,
        holder: String,
    },
    /// Release a `merging` row left by a dead turn, from what git shows: the
    /// `gates::ancestor_plan(repo, branch, target)` and (when the merge worktree
    /// exists) `gates::merge_head_plan` runs.
    ReleaseTurn {
        unit: String,
        repo: AbsPath,
        target: RefName,
        ancestor: Box<CommandRun>,
        merge_head: Option<Box<CommandRun>>,
        /// Which repository `repo` is (rules 9).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repository: Vec<CommandRun>,
    },
    /// The holder's merge, as git shows it: `gates::merged_plan(repo, branch,
    /// merged_tip, target)` run by cairn, in order.
    MarkMerged {
        unit: String,
        holder: String,
        merged_tip: FullCommit,
        repo: AbsPath,
        target: RefName,
        runs: Vec<CommandRun>,
        /// The ship run whose merge this is (`ship/<SHORT_ID>`), when the caller
        /// names it: the engine reads it, and its branch, repository, target and
        /// merged commit must be this merge's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// Which repository `repo` is (rules 9).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repository: Vec<CommandRun>,
    },
    Release {
        release: gates::Release,
        /// Where cairn read the landed commit (rules 3: required with one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        landed: Option<Box<gates::LandedReading>>,
        /// The ship run that merged it (`ship/<SHORT_ID>`), when the caller names it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    Board {
        boundary: String,
        written_field: String,
        deployment: Option<gates::Deployment>,
        retro_trigger_fired: bool,
        /// The (Stage, Status) pair the caller submits, when it names one.
        #[serde(default)]
        pair: Option<(String, String)>,
    },
    /// One QA cycle after merge; `extension` asks for the one extension; `limits`
    /// are the run record's, when it carries them.
    Qa {
        scenarios: Vec<Scenario>,
        extension: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limits: Option<QaLimits>,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    command.variant_name()
}
