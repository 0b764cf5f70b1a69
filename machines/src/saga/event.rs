//! The saga's events: full tick snapshots, the QA cycle and its PASS, and one
//! event per recorded gate, boundary, turn, release or board move.

use serde::{Deserialize, Serialize};

use super::command::Scenario;
use super::gates;
use super::state::{QaLimits, QaOutcome, Thread};
use crate::evidence::{CommandRun, FullCommit};
use crate::Names;

/// Events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Names)]
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
    /// One QA cycle; `cycle` is the failure count after it (rules v1: every cycle).
    QaCycleRecorded {
        cycle: u32,
        scenarios: Vec<Scenario>,
        outcome: QaOutcome,
        /// The run record's limits this cycle was judged under (v2), when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limits: Option<QaLimits>,
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
    /// PR-ready passed for `reviewed_sha`. Rules v2 record the freshness `runs`
    /// (`evidence::fresh`); v1 recorded one `rev-list` run as `count`.
    ReadyForPr {
        reviewed_sha: FullCommit,
        /// The unit whose green iteration handed `reviewed_sha` to code review (v2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        commits_since_review: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<CommandRun>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        runs: Vec<CommandRun>,
        /// The repository the review was read fresh in (rules 9).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
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
    /// Branch and worktree stay strings: rules v1 recorded them unchecked (an
    /// option-like branch, a relative worktree), and a stored event must decode.
    TurnTaken {
        unit: String,
        branch: String,
        merge_worktree: String,
        holder: String,
        /// The commit PR-ready passed for when the turn was taken: the unit's
        /// merge must carry it (absent in turns taken under rules before 6).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reviewed: Option<FullCommit>,
        /// The repository PR-ready read the review fresh in (rules 9).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
    },
    TurnReleased {
        unit: String,
        evidence: gates::TurnEvidence,
        ancestor: CommandRun,
        merge_head: Option<CommandRun>,
    },
    /// A unit merged; v2 records the readings that showed it (`runs`).
    UnitMerged {
        unit: String,
        merged_tip: FullCommit,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        runs: Vec<CommandRun>,
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

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    event.variant_name()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Events written under rules v1 still decode: a journal replays and audits
    /// (with a `rules-changed` notice) after the v2 fields were added.
    #[test]
    fn v1_payloads_still_decode() {
        let run = json!({"argv": ["git"], "exit_status": 0, "stdout": "0\n", "stderr": "",
            "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:00:00Z"});
        let ready: Event = serde_json::from_value(json!({"type": "ready-for-pr",
            "reviewed_sha": "a".repeat(40), "commits_since_review": 0, "count": run}))
        .unwrap();
        assert!(
            matches!(ready, Event::ReadyForPr { count: Some(_), ref runs, unit: None, .. } if runs.is_empty())
        );
        let merged: Event = serde_json::from_value(
            json!({"type": "unit-merged", "unit": "U1", "merged_tip": "1".repeat(40)}),
        )
        .unwrap();
        assert!(matches!(merged, Event::UnitMerged { ref runs, .. } if runs.is_empty()));
        let qa: Event = serde_json::from_value(json!({"type": "qa-cycle-recorded", "cycle": 1,
            "scenarios": [], "outcome": "re-enters-the-build-loop"}))
        .unwrap();
        assert!(matches!(qa, Event::QaCycleRecorded { limits: None, .. }));
        let tick: Event = serde_json::from_value(json!({"type": "tick-saved", "thread": {
            "saga_id": "issue-1", "kind": "issue", "lifecycle_phase": "work",
            "phase_status": "pending", "status": "active", "phase": 1, "destination": null,
            "issue_ref": null, "plan_path": null, "branch": null, "head_sha": null,
            "next_step": null, "rounds_seen": [], "checks_run": [], "work_session_paths": [],
            "files_modified": [], "pr_refs": [], "review_paths": [], "gate_verdicts": [],
            "ticks": 1, "qa": {"post_merge_cycles": 0, "extension_taken": false,
            "last_outcome": null}}}))
        .unwrap();
        let Event::TickSaved { thread } = tick else {
            panic!("a tick")
        };
        assert_eq!((thread.orchestration_mode, thread.qa.limits), (None, None));
    }
}
