//! What a ship run is and where it is: the consumer's parameters, the run's data,
//! the stage, and the git mutation in flight.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::command::Verb;
use super::gates::Phase1d;
use super::names;
use super::owner::Owner;
use super::preflight::Preflight;
use super::recovery::{Failure, OpClass};
use crate::evidence::{AbsPath, FullCommit};
use crate::Outcome;

/// A consumer's parameters (the seed's parameter table). Text, not checked types:
/// [`Params::check`] names the first broken rule in the seed's order (`open` runs it
/// before any git, and `decide` again).
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
    /// The consumer's own report fields beyond the wire format's
    /// (`report::SHEET_FIELDS`), declared when the run is opened: a phase report
    /// holds no other field (`report::consumer_fields`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consumer_fields: Vec<String>,
}

impl Params {
    /// `REPO_ROOT` as `WORKTREE_PATH` names it (`<REPO_ROOT>/.claude/worktrees/<SHORT_ID>`),
    /// once [`Params::check`] held.
    pub fn worktree_root(&self) -> Option<&str> {
        names::worktree_root(&self.worktree_path, &self.short_id)
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
    pub repo_root: AbsPath,
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
    pub merged_sha: Option<FullCommit>,
    /// Denials per external operation class this session.
    pub denials: BTreeMap<OpClass, u8>,
    /// A git mutation announced (recorded) before it ran, until its result is recorded.
    #[serde(default)]
    pub begun: Option<InFlight>,
    /// The work nodes the last passing pre-merge read, and the commit they vouched
    /// for: `merge` is announced only while they still do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub work_nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vouched: Option<FullCommit>,
    /// The commit the last passing pre-merge found the run ships (the pre-squash
    /// commit after a squash, else the tip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipped: Option<FullCommit>,
    /// The saga thread the run acts for (`saga/<saga id>`), named at open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acts_for: Option<String>,
    /// What the last passing pre-merge read of the shipped commit's history
    /// (`failed-work-absent`; none before rules 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<super::history::History>,
    /// The repository the run was opened in, as open's preflight read it on disk
    /// (`gates::identity_argv`: the device and inode of `REPO_ROOT/.git` and of its
    /// refs; none before rules 15, or when it could not be read — and then no
    /// merge is ever admitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// A git mutation in flight and the process that announced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The step.
    pub step: Mutation,
    /// Its owner (none in a journal from before rules 3).
    pub owner: Option<Owner>,
}

/// A step that mutates git. It is announced with `begin` (an append at the version
/// the caller read, naming the announcing process) before git runs, so two
/// processes can never both run it: the second append conflicts (exit 3) and that
/// process touches nothing; a process that finds the step in flight and its owner
/// alive exits 3 too. Only the step's result may follow, or, once the owner is
/// gone, one announcement that takes the step over.
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
    /// The name of the verb that runs this step.
    pub fn verb_name(self) -> &'static str {
        self.verb().name()
    }
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
    /// Pre-merge checks passed: cairn may run `merge --ff-only` of exactly `tip`.
    MergeReady {
        /// The tip the pre-merge checks read (none in a journal from before rules 3:
        /// `pre-merge` must run again).
        tip: Option<FullCommit>,
    },
    /// The ff-merge was rejected once: re-rebase, re-run `pre-merge`, then one retry.
    MergeRejected {
        /// The tip the last pre-merge checks read.
        tip: Option<FullCommit>,
    },
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
    /// Worktree creation failed and removed what it made (not a `--resume`
    /// candidate): once the cause is fixed the preflight runs again, or the
    /// operator abandons.
    CreationFailed {
        /// The failed gates.
        failed: Vec<String>,
    },
    /// An external operation was denied twice (`stopped:permission-boundary`):
    /// never retried in this session; `--resume` starts a fresh one (the preflight
    /// again when no worktree was made), or the operator abandons.
    PermissionBoundary {
        /// The stop code.
        code: String,
        /// Whether this run's worktree had been made when the boundary was reached.
        #[serde(default)]
        worktree: bool,
    },
}

impl Stage {
    /// Whether this run's worktree (and branch) may exist at this stage: made by
    /// `create` and not yet torn down.
    pub fn has_worktree(&self) -> bool {
        match self {
            Stage::Preflighted { .. }
            | Stage::CreationFailed { .. }
            | Stage::Shipped
            | Stage::TornDown { .. }
            | Stage::Abandoned { .. } => false,
            Stage::PermissionBoundary { worktree, .. } => *worktree,
            Stage::Phase1
            | Stage::ScopeTripped { .. }
            | Stage::Phase2
            | Stage::Phase3
            | Stage::MergeReady { .. }
            | Stage::MergeRejected { .. }
            | Stage::Merged
            | Stage::Stopped { .. }
            | Stage::Tiebreaker { .. }
            | Stage::TeardownPending { .. } => true,
        }
    }
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

/// Whether `stage` is terminal.
pub fn is_terminal(stage: &Stage) -> bool {
    matches!(
        stage,
        Stage::Shipped | Stage::TornDown { .. } | Stage::Abandoned { .. }
    )
}

/// Parameters for unit tests (`REPO_ROOT` is `/srv/repo`).
#[cfg(test)]
impl Params {
    pub(super) fn sample() -> Params {
        Params {
            short_id: "abc".into(),
            expected_basename: "repo".into(),
            branch: "wt-branch".into(),
            worktree_path: "/srv/repo/.claude/worktrees/abc".into(),
            target_branch: "trunk".into(),
            intent_field: "intent_excerpt".into(),
            files_max: 10,
            deletions_max: 300,
            tiebreaker_4: "ask-user".into(),
            tiebreaker_5: false,
            close_step: "echo".into(),
            consumer_fields: vec![],
        }
    }

    /// [`Params::sample`] with one of `branch`, `target_branch`, `worktree_path` set.
    pub(super) fn sample_with(field: &str, value: &str) -> Params {
        let mut p = Params::sample();
        match field {
            "branch" => p.branch = value.into(),
            "target_branch" => p.target_branch = value.into(),
            "worktree_path" => p.worktree_path = value.into(),
            other => panic!("no such sample field {other}"),
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_like_branches_and_paths_are_refused_naming_the_field() {
        assert_eq!(Params::sample().check(), Ok(()));
        for (field, value) in [
            ("branch", "--orphan"),
            ("branch", "-b"),
            ("target_branch", "--all"),
            ("worktree_path", "--end-of-options"),
        ] {
            let p = Params::sample_with(field, value);
            let (f, rule, _) = p.check().expect_err("an option-like value is refused");
            assert_eq!((f, rule), (field, "option-like"), "{p:?}");
        }
    }

    /// A declared consumer field and the INTENT_FIELD are plain ASCII names that
    /// no report field could be taken for (ship rules 9).
    #[test]
    fn declared_report_fields_are_plain_and_unlike_the_reports_own() {
        for (name, rule) in [
            ("kata\u{200B}ticket", "field-name"),
            ("\u{FF4B}ata", "field-name"),
            ("", "field-name"),
            ("tiebreakers_met", "field-name-resembles"),
            ("findings", "field-name-resembles"),
            ("notes", "field-name-twice"),
        ] {
            let mut p = Params::sample();
            p.consumer_fields = vec!["notes".into(), name.into()];
            let (f, r, _) = p.check().expect_err(name);
            assert_eq!((f, r), ("consumer_field", rule), "{name:?}");
        }
        let mut p = Params::sample();
        p.intent_field = "tiebreaker".into();
        let (f, r, _) = p.check().expect_err("a resembling intent field");
        assert_eq!((f, r), ("intent_field", "field-name-resembles"));
        p.intent_field = "resolve_intent_excerpt".into();
        p.consumer_fields = vec!["kata_ticket".into()];
        assert_eq!(p.check(), Ok(()));
    }

    /// Every field's first broken rule, in field order; a rule over two fields
    /// only where each holds: a bad short id does not also fail the worktree
    /// path, nor two bad equal branches the distinct-branch rule.
    #[test]
    fn violations_name_each_broken_field_once() {
        let mut p = Params::sample();
        p.short_id = "..".into();
        p.branch = "-b".into();
        p.target_branch = "-b".into();
        p.tiebreaker_4 = "a\u{7}".into();
        let named: Vec<(&str, &str)> = p.violations().iter().map(|(f, r, _)| (*f, *r)).collect();
        assert_eq!(
            named,
            [
                ("short_id", "short-id"),
                ("branch", "option-like"),
                ("target_branch", "option-like"),
                ("tiebreaker_4", "invisible-character"),
            ]
        );
        assert_eq!(
            p.check().map_err(|(f, r, _)| (f, r)),
            Err(("short_id", "short-id"))
        );
        let mut p = Params::sample();
        p.target_branch = p.branch.clone();
        let named: Vec<(&str, &str)> = p.violations().iter().map(|(f, r, _)| (*f, *r)).collect();
        assert_eq!(named, [("branch", "distinct-branch")]);
        // A consumer field equal to a broken intent field: the intent field's
        // own problem, once; equal to a sound one, declared twice.
        let mut p = Params::sample();
        p.intent_field = "tiebreaker".into();
        p.consumer_fields = vec!["tiebreaker".into()];
        let named: Vec<(&str, &str)> = p.violations().iter().map(|(f, r, _)| (*f, *r)).collect();
        assert_eq!(
            named,
            [
                ("intent_field", "field-name-resembles"),
                ("consumer_field", "field-name-resembles")
            ]
        );
        p.intent_field = "why_now".into();
        p.consumer_fields = vec!["why_now".into()];
        let named: Vec<(&str, &str)> = p.violations().iter().map(|(f, r, _)| (*f, *r)).collect();
        assert_eq!(named, [("consumer_field", "field-name-twice")]);
        // Field names are bounded (helper-93: 100,000 characters were taken).
        p.intent_field = "a".repeat(256);
        p.consumer_fields = vec!["b".repeat(256)];
        let named: Vec<(&str, &str)> = p.violations().iter().map(|(f, r, _)| (*f, *r)).collect();
        assert_eq!(
            named,
            [("intent_field", "length"), ("consumer_field", "length")]
        );
    }
}
