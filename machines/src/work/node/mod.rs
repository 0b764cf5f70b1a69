//! The `work-node` machine: one stream per node of one workspec
//! (`work-node/<spec key>:<address>`). cairn records what the skill did and refuses
//! what the evidence does not support; it dispatches no agent itself.
//!
//! `plan → dispatch → verify → (review) → (remediation …) → merge → integration
//! verify → done`, with `escalated` when the remediation budget is spent. Two axes
//! are reported separately: lifecycle (from the spec and the current session's
//! `done` records, see [`super::ready`]) and verification provenance
//! ([`Provenance`]).
//!
//! Read it by file: [`State`] (`state.rs`), [`Command`] and the evidence it carries
//! (`command.rs`), [`Event`] (`event.rs`); `decide/` holds the guards, one
//! function per command (`decide_plan`, `decide_dispatch`, `decide_verify`, …) with
//! the shared guard helpers in `decide/guards.rs`; `evolve.rs` applies events;
//! `graph.rs` declares the edges; [`judge()`], [`provenance()`] and
//! [`terminal_truth()`] are the pure verdicts `decide` and the reports share.

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod judge;
mod provenance;
mod receipt;
#[cfg(test)]
mod rules_tests;
mod state;
mod terminal_truth;
#[cfg(test)]
mod tests;
mod tree;

pub use command::{
    ChecklistReport, Command, Containment, CriterionRun, PlanReceipt, ReviewVerdict, TreeWatch,
    CONTROLLING_TERMINAL,
};
pub use decide::{
    dispatch_plan, done_plan, identity_plan, merge_admits, reverify_plan, verified_worker_commit,
    verify_admits,
};
pub use event::{Event, REVIEW_NAMES};
pub use judge::{contract_hash, is_challenge, judge, CriterionResult, Observed, Verification};
pub use provenance::{provenance, satisfies_dependents, Provenance};
pub use receipt::{delegate_task, plan_receipt};
pub use state::{Holder, NodeRun, ScopeRequest, State, SCOPE_OPTIONS};
pub use terminal_truth::terminal_truth;
pub use tree::{
    branch_plan, contains_plan, ignore_plan, merge_plan, read_contains, tree_plan, watched_changes,
    TreeReading,
};

pub use crate::evidence::sha256_hex;

use crate::{Context, GraphSpec, Machine, Rejection};

/// The machine's name.
pub const NAME: &str = "work-node";

/// The default remediation budget (rounds per node), tunable per dispatch.
pub const DEFAULT_BUDGET: u32 = 2;

/// The stream instance for a node of the spec keyed `spec_key`.
pub fn stream_instance(spec_key: &str, address: &[String]) -> String {
    let enc: Vec<String> = address
        .iter()
        .map(|id| {
            id.bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("+{b:02X}")
                    }
                })
                .collect()
        })
        .collect();
    format!("{spec_key}:{}", enc.join("/"))
}

/// The machine.
pub struct WorkNode;

impl Machine for WorkNode {
    const NAME: &'static str = NAME;
    /// v2: a spent budget leaves only escalation; a rejected node is redispatched
    /// before it is verified again; a done node is re-verified in a later session;
    /// every gating verb validates lineage; zero criteria, a changed tree and an
    /// unwatched run are never green; a merge contains the verified worker
    /// commit; user criteria need the terminal's confirmation of a one-time
    /// challenge.
    /// v3: `work dispatch` reads the worker tree's repository (git common dir) and
    /// refuses a tree git cannot read. A transition decided under v1 or v2 is
    /// not re-decided by these rules: the audit names it (`rules-changed`).
    /// v4: the worker tree is named as git prints its top level
    /// (`worktree-toplevel`): a symlink or a directory inside it is refused, so
    /// every lifecycle compares one spelling.
    /// v5: the node's fact names the commits whose latest verification failed
    /// and the commit of its latest verification (a ship run reads whether the
    /// commit it ships holds a node's failed work); a verification refuses a
    /// criterion its last one ran whose contract changed, or which left the
    /// spec, without an amendment (`criteria-unchanged`).
    /// v6: a verified tree's index marks are read (`ls-files -v`): an entry
    /// marked skip-worktree or assume-unchanged hid a failing criterion's edit
    /// from `status`; and the merged tree is never the worker's own tree.
    /// v7: a verified tree is clean only by a status taken against HEAD itself
    /// (its recorded `GIT_INDEX_FILE` and `GIT_ATTR_SOURCE`: cairn's own index,
    /// attributes from the empty tree); the index's marks are no longer read,
    /// that status sees every edit they hid.
    /// v8: what a caller types is read as a person reads it (helper-75): the
    /// session, run ids, request ids and operators are visible names, reasons
    /// and rationales lines of visible text.
    /// v9: a scope request's target and touches, a review's failed criteria and
    /// an amendment's texts are checked too; names in NFC (helper-76).
    /// v10: dispatch reads the worker tree's repository's identity on disk (the
    /// device and inode of its common dir and refs), and a verification of the
    /// worker tree needs the same: another clone's `.git` moved into the
    /// repository's place kept every path (helper-78).
    /// v11: `merge` needs the same identity of the merged tree's repository.
    // 12: a merge keeps the branch it landed on, and the merged tree's
    // integration verification reads `branch --show-current` there: a tree at the
    // merged commit with HEAD detached, or on another branch, is not the merge
    // (helper-79: the target reset after the merge and the commit checked out
    // detached had the node verified and `done` while no branch held the work).
    // 13: `done` reads whether the merge's branch still holds the merged commit
    // (`merge-held`), and a done node's re-verification is on that branch too
    // (helper-80: `main` reset after the integration verification had `done`
    // recorded; the worker's branch or a detached tree re-verified a done node).
    // 14: `done` reads the merged tree's repository again, as `merge` read it
    // (helper-81: a clone holding the branch put at the merged tree's path had
    // `done` recorded while the repository held no branch with the work).
    const RULES_VERSION: u32 = 14;
    const RETIRED_RULES: &'static [u32] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];

    fn verdict(_state: &State, events: &[Event]) -> crate::Verdict {
        super::verdict::verdict(events)
    }
    /// The id of a raised scope-amendment request.
    const FRESH_IDS: usize = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Unplanned
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command, ctx)
    }

    fn evolve(state: State, event: &Event) -> State {
        evolve::evolve(state, event)
    }

    fn state_name(state: &State) -> &'static str {
        state.name()
    }

    fn event_name(event: &Event) -> &'static str {
        event.name()
    }

    fn command_name(command: &Command) -> &'static str {
        command.name()
    }

    fn fact(state: &State) -> Option<crate::reads::Fact> {
        // The commits this node vouches for: those whose latest verification
        // (pre-merge or integration) passed. A later failure on a commit withdraws it.
        let run = state.run()?;
        let mut latest: Vec<(&crate::evidence::FullCommit, bool)> = vec![];
        for v in &run.verifications {
            match latest.iter_mut().find(|(c, _)| **c == v.commit) {
                Some(entry) => entry.1 = v.passed,
                None => latest.push((&v.commit, v.passed)),
            }
        }
        Some(crate::reads::Fact::WorkNode {
            stage: state.name().to_owned(),
            verified: latest
                .iter()
                .filter(|(_, passed)| *passed)
                .map(|(c, _)| (*c).clone())
                .collect(),
            // Only a dispatch cairn observed names its repository (an older
            // record's fact is unchanged: no `worker`).
            worker: match (state, &run.worktree, &run.repository) {
                (State::Dispatched { .. }, Some(tree), Some(repository)) => {
                    Some(crate::reads::Worker {
                        tree: tree.to_string(),
                        repository: repository.to_string(),
                    })
                }
                _ => None,
            },
            tree: run.worktree.as_ref().map(|t| t.to_string()),
            repository: run.repository.as_ref().map(|r| r.to_string()),
            failed: latest
                .iter()
                .filter(|(_, passed)| !*passed)
                .map(|(c, _)| (*c).clone())
                .collect(),
            latest: run.verifications.last().map(|v| v.commit.clone()),
        })
    }

    fn recorded_by(command: &Command) -> Option<&'static str> {
        match command {
            // The spec and draft as read (and rewritten), the brief written, the
            // trees and criteria cairn reads and runs, the journal's done nodes.
            Command::AmendCriterion { .. } => Some("work amend-criterion"),
            Command::ResolveScope { .. } => Some("work resolve-scope"),
            Command::Plan { .. } => Some("work plan"),
            Command::Verify { .. } => Some("work verify"),
            Command::Merge { .. } => Some("work merge"),
            Command::Done { .. } => Some("work done"),
            // The worker tree's repository, read by cairn (a park episode's
            // journal check trusts it).
            Command::Dispatch { .. } => Some("work dispatch"),
            Command::RaiseScope { .. }
            | Command::PassUp { .. }
            | Command::Review { .. }
            | Command::Remediate { .. }
            | Command::Escalate { .. } => None,
        }
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}
