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
//!
//! Layout: `state` (the thread and its gate record), `command`, `event`, `decide`
//! (one function per command), `evolve`, `graph`; `gates` holds the gates and
//! boundaries as data and pure rules.

pub mod gates;
pub mod tick;
mod verdict;

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod state;

pub use command::{Command, Save, Scenario, ScenarioResult};
pub use decide::{doc_review_blocks, doc_review_passed, qa_outcome};
pub use event::Event;
pub use state::{
    parse_gate_verdict, GateRecord, GateState, GateVerdict, Kind, Phase, PhaseStatus, QaAllowance,
    QaLimits, QaOutcome, State, Status, Thread, GATE_STATES, QA_ESCALATED, QA_STANDARD,
};
pub use tick::{derive_saga_id, valid_saga_id};

pub use crate::evidence::next_round;

use crate::{Context, GraphSpec, Machine, Rejection};

/// The machine's name.
pub const NAME: &str = "saga";

/// The machine.
pub struct Saga;

impl Machine for Saga {
    const NAME: &'static str = NAME;
    // 2: freshness is `evidence::fresh` (ancestry + count; only `Fresh` passes);
    // caller values never reach git as options (refused, and every argv ends
    // options first); the downstream gates of issue #17.
    // 3 (#21): a release records a landed commit only as cairn's own reading shows
    // it on the branch it landed on, and a merge or release that names its ship
    // run agrees with it; a unit takes no branch another unit has.
    // 4 (#21): the merge turn is taken only after PR-ready passed.
    // 5 (#21): a save takes the thread's rounds from the PR loops that follow it
    // (a typed list they contradict is refused); a unit's merge into its own
    // branch is refused (`branch-is-target`).
    // 6 (#21): a turn keeps the commit PR-ready passed for, and a merge recorded
    // from git shows that commit in the merged tip; a turn whose branch a ship run
    // acting for the thread merged is not released (`merged-by-run`).
    // 7: what a save, an adjust or a boundary types is read as its readers take
    // it (helper-75): a typed branch git takes, a typed HEAD a full commit, one
    // line of visible text, a boundary label a person reads; rounds unique and
    // below u32::MAX; one verdict a gate in a save.
    // 8: the other commands' typed values too (helper-76): an override's operator
    // and rationale, a doc review's source, a release's reason, units, holders,
    // scenarios; a boundary and a gate are printable ASCII, names in NFC.
    // 9: PR-ready reads which repository the review was read fresh in (its
    // common dir and that directory's identity on disk); a turn taken on it
    // keeps it, and the merge, a dead turn's release and a release's landed
    // commit are read in that repository or refused (helper-79: a merge made in
    // a clone was recorded, released and QA'd while the repository's main never
    // moved).
    // 10: a release's landed commit follows a unit's merge through the turn, and
    // lands on no unit's own branch (helper-80: `--target <the unit's branch>`
    // recorded a landed commit with no turn taken, and QA began).
    // 11: a dead turn's release frees only a turn that merged nothing (a merge
    // git shows is recorded by `merged`, whose readings check what merged), and
    // the thread keeps the repository its first PR-ready read (helper-81).
    const RULES_VERSION: u32 = 11;
    const RETIRED_RULES: &'static [u32] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Empty
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command, ctx)
    }

    fn evolve(state: State, event: &Event) -> State {
        evolve::evolve(state, event)
    }

    fn state_name(state: &State) -> &'static str {
        state::state_name(state)
    }

    fn event_name(event: &Event) -> &'static str {
        event::event_name(event)
    }

    fn verdict(_state: &State, events: &[Event]) -> crate::Verdict {
        verdict::saga(events)
    }

    fn command_name(command: &Command) -> &'static str {
        command::command_name(command)
    }

    fn recorded_by(command: &Command) -> Option<&'static str> {
        match command {
            // The capture of the branch and HEAD, the run record's QA limits, and
            // git's readings of freshness and of the merge turn.
            Command::Save { .. } => Some("saga save"),
            Command::Qa { .. } => Some("saga qa"),
            Command::PrReady { .. } => Some("saga pr-ready"),
            Command::ReleaseTurn { .. } => Some("saga merge-turn release"),
            Command::MarkMerged { .. } => Some("saga merge-turn merged"),
            // cairn's ancestry reading of the landed commit (found: a release sent
            // through `cairn exec` carried a forged `exit_status: 0`).
            Command::Release { .. } => Some("saga release"),
            Command::DocReview { .. }
            | Command::Review { .. }
            | Command::Override { .. }
            | Command::Adjust { .. }
            | Command::Boundary { .. }
            | Command::TakeTurn { .. }
            | Command::Board { .. } => None,
        }
    }

    fn fact(state: &State) -> Option<crate::reads::Fact> {
        // The merge authority: the unit holding the turn (a ship run acting for
        // the thread merges only under it, `ship merge`).
        let t = state.thread()?;
        let turn = t
            .gates
            .units
            .iter()
            .find(|(_, row)| row.merge_state == gates::MergeState::Merging)
            .map(|(unit, row)| crate::reads::Turn {
                unit: unit.clone(),
                branch: row.branch.clone(),
                holder: row.holder.clone().unwrap_or_default(),
            });
        let phase = serde_json::to_value(t.lifecycle_phase)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Some(crate::reads::Fact::Saga {
            phase,
            turn,
            merged: t
                .gates
                .units
                .values()
                .filter_map(|row| row.merged_tip.clone())
                .collect(),
            released: t.gates.release.is_some(),
            ready: t
                .gates
                .review
                .as_ref()
                .is_some_and(|r| t.gates.ready_for_pr.as_ref() == Some(&r.reviewed_sha)),
            reviewed: t.gates.review.as_ref().map(|r| r.reviewed_sha.clone()),
            rounds_seen: t.rounds_seen.clone(),
            repository: t.gates.repository.clone(),
        })
    }

    fn scans(_state: &State, command: &Command) -> Vec<crate::reads::Sieve> {
        // A turn is released as dead only while no ship run is merging for it
        // (`decide::turn`): git's "not merged yet" is no death certificate then.
        match command {
            // Nor is one released as not merged when a run acting for the thread
            // merged its branch (`Sieve::ThreadMerges`).
            Command::ReleaseTurn { .. } => vec![
                crate::reads::Sieve::MergeInFlight,
                crate::reads::Sieve::ThreadMerges,
            ],
            // The thread's review rounds are counted by the PR loops that follow
            // it (`decide::save`): a save reads them, never a retyped list.
            Command::Save { .. } => vec![crate::reads::Sieve::ThreadLoops],
            _ => Vec::new(),
        }
    }

    fn reads(_state: &State, command: &Command) -> Vec<String> {
        // A merge that names the ship run it came from: the run's word on what it
        // merged is checked against this one (`decide::turn`).
        match command {
            Command::MarkMerged {
                from: Some(ship), ..
            }
            | Command::Release {
                from: Some(ship), ..
            } if crate::reads::is_ship_stream(ship) => vec![ship.clone()],
            Command::Review {
                from: Some(build_loop),
                ..
            } if crate::reads::build_loop_thread(build_loop).is_some() => {
                vec![build_loop.clone()]
            }
            _ => Vec::new(),
        }
    }

    fn stream_of(command: &Command) -> Option<String> {
        // A thread's stream is `saga/<saga id>` (the verbs' stream); only a save
        // names its thread.
        match command {
            Command::Save { saga_id, .. } => Some(format!("{NAME}/{saga_id}")),
            Command::Qa { .. }
            | Command::PrReady { .. }
            | Command::ReleaseTurn { .. }
            | Command::MarkMerged { .. }
            | Command::DocReview { .. }
            | Command::Review { .. }
            | Command::Override { .. }
            | Command::Adjust { .. }
            | Command::Boundary { .. }
            | Command::TakeTurn { .. }
            | Command::Release { .. }
            | Command::Board { .. } => None,
        }
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}
