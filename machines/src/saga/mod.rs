//! `saga`: the work thread of seed `002_5521956d0644431d` (everything but the PR
//! continuation loop, which is `pr-loop`). One stream per thread
//! (`saga/<saga_id>`, `saga_id` = `issue-<N>` or `task-<slug>`).
//!
//! Ticks are full snapshots of list fields (omitted = carried forward, empty =
//! cleared); `next_round` is derived from `rounds_seen`, never set; gate verdicts
//! are `gate:state:ref`, split on the first two colons, and one bad verdict refuses
//! the whole save; this machine never moves `lifecycle_phase` past `work` by itself
//! — the advance to `qa` is a recorded QA PASS, and a FAIL keeps `work` with its
//! evidence. The QA allowance after merge is three standard and two escalated
//! cycles plus exactly one extension, never two; an unrun scenario is never a pass.

pub mod build;
pub mod gates;
mod verdict;

use serde::{Deserialize, Serialize};

use crate::evidence::is_full_git_id;
use crate::evidence::CommandRun;
use crate::{Context, EdgeSpec, GraphSpec, Machine, Rejection, StateSpec, Violation};

/// The machine's name.
pub const NAME: &str = "saga";

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

pub use crate::evidence::next_round;

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
    pub ready_for_pr: Option<String>,
    pub directive: Option<gates::Directive>,
    pub paused_at: Option<String>,
    pub units: gates::Units,
    pub release: Option<gates::Release>,
    pub board: Vec<(String, String, String)>,
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

/// QA after merge: 3 standard + 2 escalated cycles, then exactly one extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct QaAllowance {
    /// Cycles run after merge.
    pub post_merge_cycles: u32,
    /// The one extension was taken.
    pub extension_taken: bool,
    /// The last outcome.
    pub last_outcome: Option<QaOutcome>,
}

/// Standard cycles.
pub const QA_STANDARD: u32 = 3;
/// Escalated cycles.
pub const QA_ESCALATED: u32 = 2;

impl QaAllowance {
    /// Cycles allowed now.
    pub fn allowed(&self) -> u32 {
        QA_STANDARD + QA_ESCALATED + u32::from(self.extension_taken)
    }
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
}

/// The outcome the scenarios imply.
pub fn qa_outcome(scenarios: &[Scenario]) -> QaOutcome {
    if scenarios.iter().any(|s| s.result == ScenarioResult::Failed) {
        QaOutcome::ReEntersTheBuildLoop
    } else if scenarios
        .iter()
        .any(|s| s.result == ScenarioResult::Blocked)
    {
        QaOutcome::Blocked
    } else if scenarios.is_empty() || scenarios.iter().any(|s| s.result == ScenarioResult::NotRun) {
        QaOutcome::PassedWithProofDebt
    } else {
        QaOutcome::Passed
    }
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

/// Commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    },
    Override {
        gate: gates::Gate,
        rationale: String,
        operator: String,
    },
    /// The PR-ready gate: the doc-review and review gates, and staleness counted by cairn.
    PrReady {
        repo: String,
        count: CommandRun,
    },
    Adjust {
        directive: String,
    },
    Boundary {
        boundary: String,
    },
    TakeTurn {
        unit: String,
        branch: String,
        merge_worktree: String,
        holder: String,
    },
    /// Release a `merging` row left by a dead turn, from what git shows.
    ReleaseTurn {
        unit: String,
        ancestor: CommandRun,
        merge_head: Option<CommandRun>,
    },
    MarkMerged {
        unit: String,
        holder: String,
        merged_tip: String,
    },
    Release {
        release: gates::Release,
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
    /// One QA cycle after merge; `extension` asks for the one extension.
    Qa {
        scenarios: Vec<Scenario>,
        extension: bool,
    },
}

/// Events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    /// The thread as of this tick (a full snapshot).
    TickSaved {
        thread: Box<Thread>,
    },
    /// A tick that moves a QA-passed thread to `retro` (or saves within it).
    RetroTickSaved {
        thread: Box<Thread>,
    },
    /// The one extension of the QA allowance.
    QaExtensionGranted,
    QaCycleRecorded {
        cycle: u32,
        scenarios: Vec<Scenario>,
        outcome: QaOutcome,
    },
    /// A QA PASS: the only way `lifecycle_phase` reaches `qa`.
    AdvancedToQa,
    DocReviewRecorded {
        review: gates::DocReview,
    },
    ReviewRecorded {
        review: gates::Review,
    },
    OverrideRecorded {
        r#override: gates::Override,
    },
    ReadyForPr {
        reviewed_sha: String,
        commits_since_review: Option<u64>,
        count: CommandRun,
    },
    DirectiveSet {
        directive: gates::Directive,
    },
    BoundaryCrossed {
        boundary: String,
    },
    BoundaryHeld {
        boundary: String,
        directive: gates::Directive,
    },
    PausedAtBoundary {
        boundary: String,
    },
    TurnTaken {
        unit: String,
        branch: String,
        merge_worktree: String,
        holder: String,
    },
    TurnReleased {
        unit: String,
        evidence: gates::TurnEvidence,
        ancestor: CommandRun,
        merge_head: Option<CommandRun>,
    },
    UnitMerged {
        unit: String,
        merged_tip: String,
    },
    Released {
        release: gates::Release,
    },
    BoardMoved {
        boundary: String,
        stage: String,
        status: String,
    },
    /// A record whose field is the bare `Status` half: a half-write, reported as a failure.
    BoardHalfWrite {
        boundary: String,
        stage: String,
        status: String,
        written_field: String,
    },
}

/// The machine.
pub struct Saga;

const GATE_EVENTS: [&str; 14] = [
    "doc-review-recorded",
    "review-recorded",
    "override-recorded",
    "ready-for-pr",
    "directive-set",
    "boundary-crossed",
    "boundary-held",
    "paused-at-boundary",
    "turn-taken",
    "turn-released",
    "unit-merged",
    "released",
    "board-moved",
    "board-half-write",
];

/// A recorded plan review with unresolved P0/P1 findings and no doc-review override.
pub fn doc_review_blocks(g: &GateRecord) -> bool {
    g.doc_review
        .as_ref()
        .is_some_and(|d| d.unresolved_p0_p1 > 0)
        && !overridden(g, gates::Gate::DocReview, None)
}

fn overridden(g: &GateRecord, gate: gates::Gate, sha: Option<&str>) -> bool {
    g.overrides.iter().any(|o| {
        o.gate == gate && (gate == gates::Gate::DocReview || o.reviewed_sha.as_deref() == sha)
    })
}

fn decide_gate(
    state: &State,
    name: &str,
    t: &Thread,
    command: &Command,
) -> Result<Vec<Event>, Rejection> {
    let no = |predicate: &str, field: Option<&str>, message: &str| {
        Err(reject(state, name, predicate, field, message))
    };
    let g = &t.gates;
    let nonempty = |field: &str, v: &str| -> Result<(), Rejection> {
        if v.trim().is_empty() {
            Err(reject(
                state,
                name,
                "nonempty-string",
                Some(field),
                &format!("`{field}` is empty"),
            ))
        } else {
            Ok(())
        }
    };
    match command {
        Command::DocReview { review } => {
            nonempty("source", &review.source)?;
            Ok(vec![Event::DocReviewRecorded {
                review: review.clone(),
            }])
        }
        Command::Review { review } => {
            if !is_full_git_id(&review.reviewed_sha) {
                return no("full-sha", Some("reviewed_sha"), "the full reviewed SHA");
            }
            Ok(vec![Event::ReviewRecorded {
                review: review.clone(),
            }])
        }
        Command::Override {
            gate,
            rationale,
            operator,
        } => {
            nonempty("rationale", rationale)?;
            nonempty("operator", operator)?;
            let reviewed_sha = match gate {
                gates::Gate::DocReview => None,
                gates::Gate::ReviewGate => match &g.review {
                    Some(r) => Some(r.reviewed_sha.clone()),
                    None => {
                        return no(
                            "review-recorded",
                            Some("gate"),
                            "a review-gate override waives a recorded review: record it first",
                        )
                    }
                },
            };
            Ok(vec![Event::OverrideRecorded {
                r#override: gates::Override {
                    gate: *gate,
                    rationale: rationale.clone(),
                    operator: operator.clone(),
                    reviewed_sha,
                },
            }])
        }
        Command::PrReady { repo, count } => {
            let mut blocks = vec![];
            match &g.doc_review {
                Some(d) if d.unresolved_p0_p1 == 0 => {}
                _ if overridden(g, gates::Gate::DocReview, None) => {}
                Some(d) => blocks.push(Violation::new("doc-review-gate", None, format!("{} unresolved P0/P1 finding(s) ({}): only a recorded doc-review override passes", d.unresolved_p0_p1, d.source))),
                None => blocks.push(Violation::new("doc-review-gate", None, "no plan-review result is recorded")),
            }
            let Some(review) = &g.review else {
                blocks.push(Violation::new(
                    "review-gate",
                    None,
                    "no code-review outcome is recorded",
                ));
                return Err(Rejection::from_violations(
                    NAME,
                    name,
                    Saga::state_name(state),
                    blocks,
                )
                .unwrap_or_else(|| reject(state, name, "review-gate", None, "blocked")));
            };
            let waived = overridden(g, gates::Gate::ReviewGate, Some(&review.reviewed_sha));
            if !review.outcome.passes() && !waived {
                blocks.push(Violation::new(
                    "review-gate",
                    Some("outcome"),
                    format!("the review outcome blocks PR-ready: {:?}", review.outcome),
                ));
            }
            let n = gates::commits_since(count, repo, &review.reviewed_sha);
            match n {
                Some(0) => {}
                _ if waived => {}
                Some(k) => blocks.push(Violation::new(
                    "review-gate",
                    Some("reviewed_sha"),
                    format!("stale review: {k} commit(s) since the reviewed SHA"),
                )),
                None => blocks.push(Violation::new(
                    "review-gate",
                    Some("reviewed_sha"),
                    "the staleness count could not be read (fails closed)",
                )),
            }
            if let Some(v) = Rejection::from_violations(NAME, name, Saga::state_name(state), blocks)
            {
                return Err(v);
            }
            Ok(vec![Event::ReadyForPr {
                reviewed_sha: review.reviewed_sha.clone(),
                commits_since_review: n,
                count: count.clone(),
            }])
        }
        Command::Adjust { directive } => {
            let d = gates::parse_directive(directive)
                .map_err(|m| reject(state, name, "directive", Some("directive"), &m))?;
            if d == gates::Directive::Continue && g.paused_at.is_none() {
                return no("paused", Some("directive"), "nothing is paused");
            }
            Ok(vec![Event::DirectiveSet { directive: d }])
        }
        Command::Boundary { boundary } => {
            nonempty("boundary", boundary)?;
            Ok(vec![
                match gates::at_boundary(g.directive.as_ref(), g.paused_at.as_deref(), boundary) {
                    gates::BoundaryDecision::Proceed => Event::BoundaryCrossed {
                        boundary: boundary.clone(),
                    },
                    gates::BoundaryDecision::Hold => Event::BoundaryHeld {
                        boundary: boundary.clone(),
                        directive: g.directive.clone().unwrap_or(gates::Directive::Halt),
                    },
                    gates::BoundaryDecision::Paused => Event::PausedAtBoundary {
                        boundary: g.paused_at.clone().unwrap_or_else(|| boundary.clone()),
                    },
                },
            ])
        }
        Command::TakeTurn {
            unit,
            branch,
            merge_worktree,
            holder,
        } => {
            for (f, v) in [
                ("unit", unit),
                ("branch", branch),
                ("merge_worktree", merge_worktree),
                ("holder", holder),
            ] {
                nonempty(f, v)?;
            }
            if let Some((other, _)) = g
                .units
                .iter()
                .find(|(_, r)| r.merge_state == gates::MergeState::Merging)
            {
                return no(
                    "one-merging",
                    Some("unit"),
                    &format!("`{other}` holds the merge turn"),
                );
            }
            if g.units
                .get(unit)
                .is_some_and(|r| r.merge_state == gates::MergeState::Merged)
            {
                return no("not-merged", Some("unit"), "the unit is already merged");
            }
            Ok(vec![Event::TurnTaken {
                unit: unit.clone(),
                branch: branch.clone(),
                merge_worktree: merge_worktree.clone(),
                holder: holder.clone(),
            }])
        }
        Command::ReleaseTurn {
            unit,
            ancestor,
            merge_head,
        } => {
            let Some(row) = g
                .units
                .get(unit)
                .filter(|r| r.merge_state == gates::MergeState::Merging)
            else {
                return no(
                    "merging",
                    Some("unit"),
                    "the unit does not hold the merge turn",
                );
            };
            let bound = ancestor.argv.len() == 7
                && ancestor.argv[0] == "git"
                && ancestor.argv[1] == "-C"
                && ancestor.argv[3] == "merge-base"
                && ancestor.argv[4] == "--is-ancestor"
                && ancestor.argv[5] == row.branch;
            if !bound {
                return no(
                    "evidence-bound",
                    Some("ancestor"),
                    "expected `git -C REPO merge-base --is-ancestor BRANCH TARGET`",
                );
            }
            if let Some(m) = merge_head {
                let wt = row.merge_worktree.clone().unwrap_or_default();
                let want: Vec<String> = [
                    "git",
                    "-C",
                    wt.as_str(),
                    "rev-parse",
                    "-q",
                    "--verify",
                    "MERGE_HEAD",
                ]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
                if m.argv != want {
                    return no(
                        "evidence-bound",
                        Some("merge_head"),
                        "expected `git -C MERGE_WORKTREE rev-parse -q --verify MERGE_HEAD`",
                    );
                }
            }
            match gates::turn_evidence(ancestor, merge_head.as_ref()) {
                gates::TurnEvidence::InProgress => no(
                    "live-holder",
                    Some("unit"),
                    "a merge is in progress in the merge worktree: a live holder is never released",
                ),
                gates::TurnEvidence::Unknown => no(
                    "turn-evidence",
                    Some("unit"),
                    "git could not say whether the merge happened: nothing is released on trust",
                ),
                evidence => Ok(vec![Event::TurnReleased {
                    unit: unit.clone(),
                    evidence,
                    ancestor: ancestor.clone(),
                    merge_head: merge_head.clone(),
                }]),
            }
        }
        Command::MarkMerged {
            unit,
            holder,
            merged_tip,
        } => {
            match g.units.get(unit) {
                Some(r)
                    if r.merge_state == gates::MergeState::Merging
                        && r.holder.as_deref() == Some(holder.as_str()) => {}
                _ => {
                    return no(
                        "holds-turn",
                        Some("holder"),
                        "only the turn's holder records its merge",
                    )
                }
            }
            if !is_full_git_id(merged_tip) {
                return no("full-sha", Some("merged_tip"), "the full merged tip");
            }
            Ok(vec![Event::UnitMerged {
                unit: unit.clone(),
                merged_tip: merged_tip.clone(),
            }])
        }
        Command::Release { release } => {
            match (
                release.destination.as_str(),
                &release.landed_commit,
                &release.absence_reason,
            ) {
                ("none", None, Some(r)) if !r.trim().is_empty() => {}
                ("none", _, _) => return no(
                    "absence-recorded",
                    Some("absence_reason"),
                    "destination `none` records the absence with its reason, and no landed commit",
                ),
                (_, Some(c), None) if is_full_git_id(c) => {}
                (_, None, _) => {
                    return no(
                        "landed-commit",
                        Some("landed_commit"),
                        "nothing landed: a closeout is never filled with a fabricated commit",
                    )
                }
                _ => {
                    return no(
                        "landed-commit",
                        Some("landed_commit"),
                        "the full landed commit (and no absence reason)",
                    )
                }
            }
            if release
                .reviewed_head
                .as_ref()
                .is_some_and(|h| !is_full_git_id(h))
            {
                return no("full-sha", Some("reviewed_head"), "the full reviewed head");
            }
            if let (Some(h), Some(r)) = (&release.reviewed_head, &g.review) {
                if *h != r.reviewed_sha {
                    return no(
                        "reviewed-head",
                        Some("reviewed_head"),
                        "the reviewed head is the SHA code review accepted",
                    );
                }
            }
            Ok(vec![Event::Released {
                release: release.clone(),
            }])
        }
        Command::Board {
            boundary,
            written_field,
            deployment,
            retro_trigger_fired,
            pair: submitted,
        } => {
            let pair = gates::board_pair(boundary, *retro_trigger_fired)
                .map_err(|m| reject(state, name, "board-boundary", Some("boundary"), &m))?;
            if let Some((st, su)) = submitted {
                if pair != Some((st.as_str(), su.as_str())) {
                    return no("board-pair", Some("pair"), &format!("`{st} / {su}` is not the pair `{boundary}` submits: only the table's pairs are allowed"));
                }
            }
            let Some((stage, status)) = pair else {
                // `review-accepted` submits nothing.
                return Ok(vec![]);
            };
            if boundary == "merge-and-deploy" {
                let merged = g
                    .units
                    .values()
                    .any(|u| u.merge_state == gates::MergeState::Merged)
                    || g.release
                        .as_ref()
                        .is_some_and(|r| r.landed_commit.is_some());
                if !merged {
                    return no(
                        "merged-first",
                        Some("boundary"),
                        "Verify only after the merge",
                    );
                }
                if !matches!(
                    deployment,
                    Some(gates::Deployment::Succeeded | gates::Deployment::NoDeployableSoftware)
                ) {
                    return no("deployed-first", Some("deployment"), "Verify only after the non-production deployment succeeded (or there is no deployable software)");
                }
            }
            let (stage, status) = (stage.to_owned(), status.to_owned());
            match written_field.as_str() {
                "Stage+Status" => Ok(vec![Event::BoardMoved {
                    boundary: boundary.clone(),
                    stage,
                    status,
                }]),
                "Status" | "Stage" => Ok(vec![Event::BoardHalfWrite {
                    boundary: boundary.clone(),
                    stage,
                    status,
                    written_field: written_field.clone(),
                }]),
                _ => no(
                    "board-record",
                    Some("written_field"),
                    "the lifecycle record's field: `Stage+Status` (or a half)",
                ),
            }
        }
        _ => no("gate-command", None, "not a gate command"),
    }
}

fn evolve_gate(g: &mut GateRecord, e: &Event) {
    match e {
        Event::DocReviewRecorded { review } => g.doc_review = Some(review.clone()),
        Event::ReviewRecorded { review } => {
            g.review = Some(review.clone());
            g.ready_for_pr = None;
        }
        Event::OverrideRecorded { r#override } => g.overrides.push(r#override.clone()),
        Event::ReadyForPr { reviewed_sha, .. } => g.ready_for_pr = Some(reviewed_sha.clone()),
        Event::DirectiveSet { directive } => {
            if *directive == gates::Directive::Continue {
                g.paused_at = None;
                g.directive = None;
            } else {
                g.directive = Some(directive.clone());
            }
        }
        Event::PausedAtBoundary { boundary } => g.paused_at = Some(boundary.clone()),
        Event::TurnTaken {
            unit,
            branch,
            merge_worktree,
            holder,
        } => {
            g.units.insert(
                unit.clone(),
                gates::UnitRow {
                    merge_state: gates::MergeState::Merging,
                    holder: Some(holder.clone()),
                    branch: branch.clone(),
                    merge_worktree: Some(merge_worktree.clone()),
                    merged_tip: None,
                },
            );
        }
        Event::TurnReleased { unit, evidence, .. } => {
            if let Some(r) = g.units.get_mut(unit) {
                r.holder = None;
                r.merge_state = if *evidence == gates::TurnEvidence::Merged {
                    gates::MergeState::Merged
                } else {
                    gates::MergeState::Ready
                };
            }
        }
        Event::UnitMerged { unit, merged_tip } => {
            if let Some(r) = g.units.get_mut(unit) {
                r.holder = None;
                r.merge_state = gates::MergeState::Merged;
                r.merged_tip = Some(merged_tip.clone());
            }
        }
        Event::Released { release } => g.release = Some(release.clone()),
        Event::BoardMoved {
            boundary,
            stage,
            status,
        } => g
            .board
            .push((boundary.clone(), stage.clone(), status.clone())),
        _ => {}
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
        Saga::state_name(state),
        Violation::new(predicate, field, message),
    )
}

/// `issue-<N>` or `task-<slug>` with `[a-z0-9-]` slugs.
pub fn valid_saga_id(id: &str) -> bool {
    let ok_slug = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    match (id.strip_prefix("issue-"), id.strip_prefix("task-")) {
        (Some(n), _) => !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
        (_, Some(slug)) => ok_slug(slug),
        _ => false,
    }
}

fn apply(prev: Option<&Thread>, saga_id: &str, s: &Save, verdicts: Vec<GateVerdict>) -> Thread {
    let carry = |new: &Option<String>, old: Option<&Option<String>>| match new {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(v.clone()),
        None => old.cloned().flatten(),
    };
    let list = |new: &Option<Vec<String>>, old: Option<&Vec<String>>| match new {
        Some(v) => v.iter().filter(|x| !x.is_empty()).cloned().collect(),
        None => old.cloned().unwrap_or_default(),
    };
    Thread {
        saga_id: saga_id.to_owned(),
        kind: s.kind.or(prev.map(|p| p.kind)).unwrap_or_default(),
        lifecycle_phase: s
            .lifecycle_phase
            .or(prev.map(|p| p.lifecycle_phase))
            .unwrap_or(Phase::Ideation),
        phase_status: s
            .phase_status
            .or(prev.map(|p| p.phase_status))
            .unwrap_or(PhaseStatus::Pending),
        status: s
            .status
            .or(prev.map(|p| p.status))
            .unwrap_or(Status::Active),
        phase: s.phase.or(prev.map(|p| p.phase)).unwrap_or(1),
        destination: carry(&s.destination, prev.map(|p| &p.destination)),
        issue_ref: carry(&s.issue_ref, prev.map(|p| &p.issue_ref)),
        plan_path: carry(&s.plan_path, prev.map(|p| &p.plan_path)),
        branch: carry(&s.branch, prev.map(|p| &p.branch)),
        head_sha: carry(&s.head_sha, prev.map(|p| &p.head_sha)),
        next_step: carry(&s.next_step, prev.map(|p| &p.next_step)),
        rounds_seen: match &s.rounds_seen {
            Some(r) => r.clone(),
            None => prev.map(|p| p.rounds_seen.clone()).unwrap_or_default(),
        },
        checks_run: list(&s.checks_run, prev.map(|p| &p.checks_run)),
        work_session_paths: list(&s.work_session_paths, prev.map(|p| &p.work_session_paths)),
        files_modified: list(&s.files_modified, prev.map(|p| &p.files_modified)),
        pr_refs: list(&s.pr_refs, prev.map(|p| &p.pr_refs)),
        review_paths: list(&s.review_paths, prev.map(|p| &p.review_paths)),
        gate_verdicts: if s.gate_verdicts.is_empty() {
            prev.map(|p| p.gate_verdicts.clone()).unwrap_or_default()
        } else {
            verdicts
        },
        ticks: prev.map_or(0, |p| p.ticks) + 1,
        qa: prev.map(|p| p.qa.clone()).unwrap_or_default(),
        gates: prev.map(|p| p.gates.clone()).unwrap_or_default(),
    }
}

impl Machine for Saga {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Empty
    }

    fn decide(state: &State, command: &Command, _ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let name = Self::command_name(command);
        let no = |predicate: &str, field: Option<&str>, message: &str| {
            Err(reject(state, name, predicate, field, message))
        };
        match command {
            Command::Save { saga_id, save } => {
                if !valid_saga_id(saga_id) {
                    return no(
                        "saga-id",
                        Some("id"),
                        "`issue-<N>` or `task-<slug>` ([a-z0-9-])",
                    );
                }
                if let Some(t) = state.thread() {
                    if &t.saga_id != saga_id {
                        return no("saga-id", Some("id"), "this stream is another thread's");
                    }
                }
                if save.next_round.is_some() {
                    return no(
                        "next-round-derived",
                        Some("next_round"),
                        "next_round is derived from rounds_seen (max + 1); set rounds_seen",
                    );
                }
                let mut verdicts = vec![];
                for v in &save.gate_verdicts {
                    verdicts.push(parse_gate_verdict(v).map_err(|m| {
                        reject(state, name, "gate-verdict", Some("gate_verdict"), &m)
                    })?);
                }
                if save.rounds_seen.as_ref().is_some_and(|r| r.contains(&0)) {
                    return no(
                        "round-number",
                        Some("rounds_seen"),
                        "rounds are numbered from 1",
                    );
                }
                let current = state.thread().map(|t| t.lifecycle_phase);
                // The doc-review gate: execution does not start over an unresolved P0/P1
                // finding; only a recorded doc-review override passes.
                if save.lifecycle_phase == Some(Phase::Work) && current != Some(Phase::Work) {
                    if let Some(t) = state.thread() {
                        if doc_review_blocks(&t.gates) {
                            return no("doc-review-gate", Some("lifecycle_phase"), "an unresolved P0/P1 plan-review finding blocks execution; only a recorded doc-review override passes");
                        }
                    }
                }
                match save.lifecycle_phase {
                    Some(Phase::Qa) if current != Some(Phase::Qa) => {
                        return no("phase-authority", Some("lifecycle_phase"), "the advance to `qa` is made only by a recorded QA PASS (`cairn saga qa`), never by a save")
                    }
                    Some(Phase::Retro) if !matches!(current, Some(Phase::Qa | Phase::Retro)) => {
                        return no("phase-authority", Some("lifecycle_phase"), "`retro` follows `qa`; this machine never moves past `work` by itself")
                    }
                    Some(p) if p < Phase::Qa && matches!(current, Some(Phase::Qa | Phase::Retro)) => {
                        return no("phase-authority", Some("lifecycle_phase"), "the thread already passed QA")
                    }
                    _ => {}
                }
                let thread = Box::new(apply(state.thread(), saga_id, save, verdicts));
                Ok(vec![if thread.lifecycle_phase == Phase::Retro {
                    Event::RetroTickSaved { thread }
                } else {
                    Event::TickSaved { thread }
                }])
            }
            Command::DocReview { .. }
            | Command::Review { .. }
            | Command::Override { .. }
            | Command::PrReady { .. }
            | Command::Adjust { .. }
            | Command::Boundary { .. }
            | Command::TakeTurn { .. }
            | Command::ReleaseTurn { .. }
            | Command::MarkMerged { .. }
            | Command::Release { .. }
            | Command::Board { .. } => {
                let Some(t) = state.thread() else {
                    return no("thread", None, "no thread is saved under this id");
                };
                decide_gate(state, name, t, command)
            }
            Command::Qa {
                scenarios,
                extension,
            } => {
                let Some(t) = state.thread() else {
                    return no("thread", None, "no thread is saved under this id");
                };
                if t.lifecycle_phase != Phase::Work {
                    return no(
                        "phase-work",
                        None,
                        "QA after merge runs while the thread is at `work`",
                    );
                }
                for (i, s) in scenarios.iter().enumerate() {
                    if s.name.trim().is_empty() {
                        return no(
                            "scenario-name",
                            Some(&format!("scenarios[{i}].name")),
                            "name the scenario",
                        );
                    }
                    if s.result == ScenarioResult::Blocked
                        && s.cause.as_deref().map_or(true, |c| c.trim().is_empty())
                    {
                        return no(
                            "blocked-cause",
                            Some(&format!("scenarios[{i}].cause")),
                            "a blocked scenario names its cause",
                        );
                    }
                }
                let mut events = vec![];
                let mut allowed = t.qa.allowed();
                if *extension {
                    if t.qa.extension_taken {
                        return no(
                            "one-extension",
                            Some("extension"),
                            "the one extension was already granted; it can never be granted twice",
                        );
                    }
                    if t.qa.post_merge_cycles < QA_STANDARD + QA_ESCALATED {
                        return no(
                            "allowance-left",
                            Some("extension"),
                            "the standard and escalated cycles are not spent",
                        );
                    }
                    events.push(Event::QaExtensionGranted);
                    allowed += 1;
                }
                if t.qa.post_merge_cycles >= allowed {
                    return no("qa-allowance", None, "the QA allowance is exhausted (3 standard + 2 escalated, then one extension)");
                }
                let outcome = qa_outcome(scenarios);
                events.push(Event::QaCycleRecorded {
                    cycle: t.qa.post_merge_cycles + 1,
                    scenarios: scenarios.clone(),
                    outcome,
                });
                if outcome == QaOutcome::Passed {
                    events.push(Event::AdvancedToQa);
                }
                Ok(events)
            }
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        match (state, event) {
            (_, Event::TickSaved { thread } | Event::RetroTickSaved { thread }) => State::Thread {
                thread: thread.clone(),
            },
            (State::Thread { mut thread }, Event::QaExtensionGranted) => {
                thread.qa.extension_taken = true;
                State::Thread { thread }
            }
            (State::Thread { mut thread }, Event::QaCycleRecorded { cycle, outcome, .. }) => {
                thread.qa.post_merge_cycles = *cycle;
                thread.qa.last_outcome = Some(*outcome);
                State::Thread { thread }
            }
            (State::Thread { mut thread }, Event::AdvancedToQa) => {
                thread.lifecycle_phase = Phase::Qa;
                State::Thread { thread }
            }
            (State::Thread { mut thread }, e) => {
                evolve_gate(&mut thread.gates, e);
                State::Thread { thread }
            }
            // Total: an event before any tick changes nothing.
            (State::Empty, _) => State::Empty,
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state.thread().map(|t| t.lifecycle_phase) {
            None => "empty",
            Some(Phase::Qa) => "qa",
            Some(Phase::Retro) => "retro",
            Some(_) => "before-qa",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::TickSaved { .. } => "tick-saved",
            Event::RetroTickSaved { .. } => "retro-tick-saved",
            Event::QaExtensionGranted => "qa-extension-granted",
            Event::QaCycleRecorded { .. } => "qa-cycle-recorded",
            Event::AdvancedToQa => "advanced-to-qa",
            Event::DocReviewRecorded { .. } => "doc-review-recorded",
            Event::ReviewRecorded { .. } => "review-recorded",
            Event::OverrideRecorded { .. } => "override-recorded",
            Event::ReadyForPr { .. } => "ready-for-pr",
            Event::DirectiveSet { .. } => "directive-set",
            Event::BoundaryCrossed { .. } => "boundary-crossed",
            Event::BoundaryHeld { .. } => "boundary-held",
            Event::PausedAtBoundary { .. } => "paused-at-boundary",
            Event::TurnTaken { .. } => "turn-taken",
            Event::TurnReleased { .. } => "turn-released",
            Event::UnitMerged { .. } => "unit-merged",
            Event::Released { .. } => "released",
            Event::BoardMoved { .. } => "board-moved",
            Event::BoardHalfWrite { .. } => "board-half-write",
        }
    }

    fn verdict(_state: &State, events: &[Event]) -> crate::Verdict {
        verdict::saga(events)
    }

    fn command_name(command: &Command) -> &'static str {
        match command {
            Command::Save { .. } => "save",
            Command::Qa { .. } => "qa",
            Command::DocReview { .. } => "doc-review",
            Command::Review { .. } => "review",
            Command::Override { .. } => "override",
            Command::PrReady { .. } => "pr-ready",
            Command::Adjust { .. } => "adjust",
            Command::Boundary { .. } => "boundary",
            Command::TakeTurn { .. } => "take-turn",
            Command::ReleaseTurn { .. } => "release-turn",
            Command::MarkMerged { .. } => "mark-merged",
            Command::Release { .. } => "release",
            Command::Board { .. } => "board",
        }
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name, terminal| StateSpec { name, terminal };
        GraphSpec {
            machine: NAME,
            initial: "empty",
            states: vec![
                s("empty", false),
                s("before-qa", false),
                s("qa", false),
                s("retro", false),
            ],
            edges: vec![
                e("empty", "tick-saved", "before-qa"),
                e("before-qa", "tick-saved", "before-qa"),
                e("before-qa", "qa-extension-granted", "before-qa"),
                e("before-qa", "qa-cycle-recorded", "before-qa"),
                e("before-qa", "advanced-to-qa", "qa"),
                e("qa", "tick-saved", "qa"),
                e("qa", "retro-tick-saved", "retro"),
                e("retro", "retro-tick-saved", "retro"),
            ]
            .into_iter()
            .chain(
                ["before-qa", "qa", "retro"]
                    .into_iter()
                    .flat_map(|from| GATE_EVENTS.iter().map(move |ev| e(from, ev, from))),
            )
            .collect(),
        }
    }
}
