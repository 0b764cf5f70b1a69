//! The saga's gates and boundaries, as data and pure rules: the doc-review gate,
//! the review gate (typed outcome; freshness is the shared `evidence::fresh`
//! reading), overrides labelled by the one gate they waive, the adjustment
//! envelope, the merge turn and the git readings that release it, release, and the
//! board's allowed boundary moves.
//!
//! Every git argv here is planned with `evidence::git::git`, and a caller's name
//! (a branch, a target) always follows `--end-of-options`: git never reads it as an
//! option, even if it got past the input checks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evidence::git::git;
use crate::evidence::{AbsPath, CommandRun, FullCommit, RefName};

/// Which gate an override waives (one per override, never both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// An unresolved P0/P1 plan-review finding.
    DocReview,
    /// The code-review outcome or staleness.
    ReviewGate,
}

/// Code review's typed outcome (the sole review-acceptance decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum ReviewOutcome {
    Accepted,
    CycleCapBestAvailable,
    RepairsRequested,
    ReviewIncomplete,
}

impl ReviewOutcome {
    /// `accepted` and `cycle_cap_best_available` may reach PR-ready.
    pub fn passes(self) -> bool {
        matches!(
            self,
            ReviewOutcome::Accepted | ReviewOutcome::CycleCapBestAvailable
        )
    }
}

/// The doc-review gate's reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocReview {
    /// Unresolved P0 and P1 findings.
    pub unresolved_p0_p1: u32,
    /// Where it was read (run record `review_cycles`, same-session output, artifact).
    pub source: String,
}

/// The review gate's reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The typed outcome.
    pub outcome: ReviewOutcome,
    /// The full reviewed SHA.
    pub reviewed_sha: FullCommit,
}

/// A revision the build loop handed to code review: the unit whose iteration went
/// green, and the full revision it went green at (the unit's
/// `build_loop.handed_to_code_review`, as cairn journaled it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handed {
    /// The unit.
    pub unit: String,
    /// The full revision.
    pub revision: FullCommit,
    /// The repository the build loop went green in (build-loop rules 3): PR-ready
    /// reads the review fresh there (saga rules 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// The thread's destinations (`admission.destination`); `plan-only` merges nothing.
pub const DESTINATIONS: [&str; 4] = ["plan-only", "pr", "merge", "nonprod-deploy"];

/// The destination that merges nothing.
pub const PLAN_ONLY: &str = "plan-only";

/// An override: the gate it waives, the rationale, the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    /// The one gate.
    pub gate: Gate,
    /// Why (recorded; never a silent skip).
    pub rationale: String,
    /// Who.
    pub operator: String,
    /// For the review gate: the reviewed SHA it was given for.
    pub reviewed_sha: Option<FullCommit>,
}

/// An adjustment-envelope directive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "directive", content = "boundary", rename_all = "kebab-case")]
pub enum Directive {
    /// `quiesce`: finish the in-flight unit, start nothing new.
    Drain,
    /// `andon_halt` / `cancel` / `abort`: the same at the boundary, and stop.
    Halt,
    /// `pause_after: <boundary>`: halt exactly there until an explicit continue.
    Pause(String),
    /// The explicit continue signal.
    Continue,
}

/// Parses a directive; a malformed or unknown one fails closed, naming it.
pub fn parse_directive(s: &str) -> Result<Directive, String> {
    match s.trim() {
        "drain" | "quiesce" => Ok(Directive::Drain),
        "halt" | "andon_halt" | "cancel" | "abort" => Ok(Directive::Halt),
        "continue" => Ok(Directive::Continue),
        other => match other.strip_prefix("pause_after:").or_else(|| other.strip_prefix("pause:")) {
            Some(b) if !b.trim().is_empty() => Ok(Directive::Pause(b.trim().to_owned())),
            _ => Err(format!("unknown or malformed directive `{s}`: the run halts (drain | halt | pause_after:<boundary> | continue)")),
        },
    }
}

/// What a phase boundary may do under the current directive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundaryDecision {
    /// Start the next phase.
    Proceed,
    /// Finish the in-flight unit; start nothing new.
    Hold,
    /// Halted exactly here until `continue`.
    Paused,
}

/// The decision at `boundary`.
pub fn at_boundary(
    directive: Option<&Directive>,
    paused_at: Option<&str>,
    boundary: &str,
) -> BoundaryDecision {
    if paused_at.is_some() {
        return BoundaryDecision::Paused;
    }
    match directive {
        Some(Directive::Drain | Directive::Halt) => BoundaryDecision::Hold,
        Some(Directive::Pause(b)) if b == boundary => BoundaryDecision::Paused,
        _ => BoundaryDecision::Proceed,
    }
}

/// A unit row's merge state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum MergeState {
    Ready,
    Merging,
    Merged,
}

/// A unit row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitRow {
    /// `ready → merging → merged`.
    pub merge_state: MergeState,
    /// The turn's holder while merging.
    pub holder: Option<String>,
    /// The unit's branch. A string: rules v1 recorded turns whose branch was not
    /// checked (an option-like name), and every stored snapshot must still decode.
    pub branch: String,
    /// Where the merge runs. A string for the same reason (v1 did not check it was
    /// absolute).
    pub merge_worktree: Option<String>,
    /// The merged tip.
    pub merged_tip: Option<FullCommit>,
    /// The commit PR-ready passed for when the turn was taken: a merge recorded
    /// from git must carry it (found: a turn taken on a copy of the target, whose
    /// tip "contained" the branch, credited a merge of nothing reviewed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<FullCommit>,
    /// The repository PR-ready read the review fresh in when the turn was taken
    /// (saga rules 9): the merge is read there or refused (helper-79: a merge
    /// made in a clone, or read there, was credited to the unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// What git shows about a `merging` row left by a dead turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnEvidence {
    /// The branch is in the target: the merge happened.
    Merged,
    /// The merge worktree is gone or has no MERGE_HEAD, and the branch is not in the target.
    NotMerged,
    /// A merge is in progress in the worktree: a live holder.
    InProgress,
    /// git could not say.
    Unknown,
}

/// `git -C REPO merge-base --is-ancestor --end-of-options A B`.
fn is_ancestor(repo: &str, a: &str, b: &str) -> Vec<String> {
    git(
        repo,
        &["merge-base", "--is-ancestor", "--end-of-options", a, b],
    )
}

/// A branch by its full ref: a tag, a commit id, `HEAD` or `main~1` given as a
/// branch names no `refs/heads/…` and git reads nothing (found: `--target <the
/// landed commit itself>` made "is the commit on the target" trivially true).
pub fn branch_ref(branch: &str) -> String {
    format!("refs/heads/{branch}")
}

/// `git -C REPO merge-base --is-ancestor --end-of-options COMMITISH
/// refs/heads/TARGET`: exit 0 when `commitish` (a unit's branch, as
/// `refs/heads/BRANCH` when it is one, or a commit) is on the target branch.
pub fn ancestor_plan(repo: &str, commitish: &str, target: &str) -> Vec<String> {
    is_ancestor(repo, commitish, &branch_ref(target))
}

/// `git -C MERGE_WORKTREE rev-parse -q --verify --end-of-options MERGE_HEAD`: exit 0
/// while a merge is in progress there.
pub fn merge_head_plan(merge_worktree: &str) -> Vec<String> {
    git(
        merge_worktree,
        &[
            "rev-parse",
            "-q",
            "--verify",
            "--end-of-options",
            "MERGE_HEAD",
        ],
    )
}

/// The readings that show a unit merged, and that what merged is what was
/// reviewed. When the turn knows the commit PR-ready passed for (`reviewed`): the
/// branch's tip is in it (nothing on the branch the review did not see: found by
/// a hostile pass, a commit added after the review merged on the saga's path where
/// ship's refuses it), it is in the merged tip, and the merged tip is in the
/// target (the merge landed where the turn merges onto). Without it (a turn taken
/// under earlier rules): the branch is in the merged tip, and the tip in the
/// target. With no branch to read — the merge names its ship run, whose own
/// readings saw the reviewed commit land (the branch may be gone after the run's
/// teardown) — only the last.
pub fn merged_plan(
    repo: &str,
    branch: Option<&str>,
    reviewed: Option<&str>,
    merged_tip: &str,
    target: &str,
) -> Vec<Vec<String>> {
    let mut plan = match (branch, reviewed) {
        (Some(b), Some(c)) => vec![
            is_ancestor(repo, &branch_ref(b), c),
            is_ancestor(repo, c, merged_tip),
        ],
        (Some(b), None) => vec![is_ancestor(repo, &branch_ref(b), merged_tip)],
        (None, _) => vec![],
    };
    plan.push(ancestor_plan(repo, merged_tip, target));
    plan
}

/// Reads the release readings: `merge-base --is-ancestor BRANCH TARGET` and
/// `rev-parse -q --verify MERGE_HEAD` in the merge worktree (if it exists).
pub fn turn_evidence(ancestor: &CommandRun, merge_head: Option<&CommandRun>) -> TurnEvidence {
    match ancestor.exit_status {
        Some(0) => TurnEvidence::Merged,
        Some(1) => match merge_head.map(|r| r.exit_status) {
            None => TurnEvidence::NotMerged,
            Some(Some(0)) => TurnEvidence::InProgress,
            Some(Some(1 | 128)) => TurnEvidence::NotMerged,
            Some(_) => TurnEvidence::Unknown,
        },
        _ => TurnEvidence::Unknown,
    }
}

/// The board's allowed submissions: boundary → (Stage, Status). `review-accepted`
/// submits nothing.
pub const BOARD: &[(&str, Option<(&str, &str)>)] = &[
    ("admission-exit", Some(("Planning", "Designing"))),
    ("plan-review-pass", Some(("Planning", "Ready for Active"))),
    ("build-start", Some(("Active", "Implementing"))),
    ("review-accepted", None),
    (
        "merge-and-deploy",
        Some(("Verify", "Awaiting verification")),
    ),
    ("close", Some(("Verify", "Ready to close"))),
];

/// The pair a boundary submits (`close` with the retro trigger fired submits
/// `Retro / Ready to close`), or why it cannot.
pub fn board_pair(
    boundary: &str,
    retro_trigger_fired: bool,
) -> Result<Option<(&'static str, &'static str)>, String> {
    let (_, pair) = BOARD.iter().find(|(b, _)| *b == boundary).ok_or_else(|| {
        format!(
            "`{boundary}` is not a board boundary ({})",
            BOARD
                .iter()
                .map(|(b, _)| *b)
                .collect::<Vec<_>>()
                .join(" | ")
        )
    })?;
    Ok(match (boundary, retro_trigger_fired) {
        ("close", true) => Some(("Retro", "Ready to close")),
        _ => *pair,
    })
}

/// The non-production deployment's result, for `merge-and-deploy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Deployment {
    Succeeded,
    Failed,
    NotRun,
    /// There is no deployable software.
    NoDeployableSoftware,
}

/// The release result: reviewed head and landed commit kept apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// `none`, `pr`, `merge`, `nonprod-deploy`.
    pub destination: String,
    /// The head code review accepted.
    pub reviewed_head: Option<FullCommit>,
    /// The commit that landed (a squash or rebase lands another one).
    pub landed_commit: Option<FullCommit>,
    /// Why nothing landed (destination `none`).
    pub absence_reason: Option<String>,
}

/// Where cairn read a landed commit: `git -C REPO merge-base --is-ancestor
/// --end-of-options LANDED TARGET` ([`ancestor_plan`]), run by cairn. A release
/// records a landed commit only as this reading shows it on the branch it landed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LandedReading {
    /// The repository read.
    pub repo: AbsPath,
    /// The branch the commit landed on.
    pub target: RefName,
    /// The ancestry reading.
    pub run: CommandRun,
    /// Which repository `repo` is (`evidence::git::repository_of`; saga rules 9).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repository: Vec<CommandRun>,
}

/// Unit rows by id.
pub type Units = BTreeMap<String, UnitRow>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_fail_closed() {
        assert_eq!(parse_directive("quiesce").unwrap(), Directive::Drain);
        assert_eq!(
            parse_directive("pause_after:phase-2").unwrap(),
            Directive::Pause("phase-2".into())
        );
        assert!(parse_directive("pause_after:")
            .unwrap_err()
            .contains("pause_after:"));
        assert!(parse_directive("speed-up")
            .unwrap_err()
            .contains("`speed-up`"));
        assert_eq!(
            at_boundary(Some(&Directive::Pause("b2".into())), None, "b1"),
            BoundaryDecision::Proceed
        );
        assert_eq!(
            at_boundary(Some(&Directive::Pause("b2".into())), None, "b2"),
            BoundaryDecision::Paused
        );
        assert_eq!(
            at_boundary(Some(&Directive::Drain), None, "b1"),
            BoundaryDecision::Hold
        );
    }

    #[test]
    fn the_board_table() {
        assert_eq!(
            board_pair("build-start", false).unwrap(),
            Some(("Active", "Implementing"))
        );
        assert_eq!(board_pair("review-accepted", false).unwrap(), None);
        assert_eq!(
            board_pair("close", true).unwrap(),
            Some(("Retro", "Ready to close"))
        );
        assert!(board_pair("ship-it", false).is_err());
    }
}
