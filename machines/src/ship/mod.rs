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
//!
//! The folder, in reading order: `state.rs` (the parameters, the run, its stage),
//! `command.rs` and `event.rs`, `decide/` ([`admits`], then one function per
//! command), `evolve.rs`, `graph.rs`, and the pure vocabulary they use:
//! [`preflight`], [`gates`], [`recovery`], [`report`].

mod command;
mod decide;
mod event;
mod evolve;
pub mod gates;
mod graph;
pub mod history;
pub mod names;
pub mod next;
pub mod owner;
mod params;
pub mod preflight;
pub mod recovery;
pub mod report;
mod state;
mod verdict;

pub use command::{Command, ScopeAnswer, Verb};
pub use decide::{admits, resume_phase};
pub use event::{Event, Resumption};
pub use graph::JOURNAL_NAMES;
pub use params::Broken;
pub use state::{is_terminal, InFlight, Mutation, Params, ReviewStatus, Run, Stage, State};

use crate::reads::Fact;
use crate::{Context, GraphSpec, Machine, Rejection};

/// The machine's name.
pub const NAME: &str = "ship";

/// The machine.
pub struct Ship;

impl Machine for Ship {
    const NAME: &'static str = NAME;
    // 2: every caller-derived argv operand follows `--end-of-options` (ranges end in
    // `--`), listings with paths are read with `-z`, option-like parameters are refused.
    // 3 (issue 15): names a person cannot see, names git refuses, lengths past git's
    // and the filesystem's limits and any worktree path but the seed's are refused;
    // `merged` only on cairn's own readings that TARGET_BRANCH holds exactly the tip
    // pre-merge checked, with the primary on it and clean; an in-flight step belongs
    // to the process that announced it; every stop has a way on.
    // 4 (#21): the squash post-check reads its patch with `--no-ext-diff
    // --no-textconv` (it could only ever read `unknown` before); a pre-merge may
    // name the work nodes whose verified commit it ships.
    // 5 (#21): a run acting for a saga thread merges only while that thread's unit
    // on the run's branch holds the merge turn (the thread's merge authority).
    // 6 (#21): one merge at a time per thread, and a reviewed commit merges once:
    // a run's merge scans the runs acting for the thread (`Sieve::ThreadMerges`);
    // the work nodes dispatched to the run's worktree must vouch for the commit
    // shipped, named or not (`Sieve::PlacedNodes`, at pre-merge and the merge).
    // 7 (#21): a merge into the base of a PR the thread's loop follows waits for
    // the operator's confirmation of that PR's merge (`Sieve::ThreadLoops`).
    // 8 (#21): the commit shipped holds no work a node outside the run failed on
    // or stands unvouched on (`failed-work-absent`: pre-merge reads the
    // ancestries, the merge re-applies the rule on them; `history`).
    // 9: a phase report holds its own fields, the wire format's, the run's
    // INTENT_FIELD and the consumer fields declared at open, nothing else (a
    // `tiebreaker` list kept unread let a stop tiebreaker pass as `passed`;
    // `report::consumer_fields`).
    // 10: the target is read as `refs/heads/TARGET` in every revision (a tag
    // named like it hid an out-of-scope commit from the scope gate; the
    // upstream is read by its full name); every clean reading (the primary, the
    // worktree) also reads the index's marks (`ls-files -v`): an entry marked
    // skip-worktree or assume-unchanged hid an edit from `status`.
    // 11: a clean reading (the primary, the worktree) is a silent status taken
    // against HEAD itself (its recorded `GIT_INDEX_FILE` and `GIT_ATTR_SOURCE`);
    // the index's marks are no longer read: that status sees every edit they hid.
    // 12: the review detail is one line of visible text, and a consumer field
    // is declared once (helper-75).
    // 13: a consumer field is not the intent field (helper-76).
    // 14: the merge and the teardown after it read which repository REPO_ROOT is
    // (its git dir and common dir both `REPO_ROOT/.git`): a `.git` swapped for a
    // clone's, or a `commondir` file, had the merge land elsewhere (helper-77).
    // 15: open's preflight reads the repository's identity on disk (the device
    // and inode of `REPO_ROOT/.git` and its refs), and the merge and teardown
    // hold it unchanged: another clone's `.git` moved into REPO_ROOT, or its refs
    // made a link to a copy, passed every path check (helper-78).
    // 16: create's verifications read the same repository and identity: a
    // `commondir` file at create had the worktree made in a bare clone, and every
    // phase passed there until the merge stopped it (helper-78).
    // 17: open's preflight reads the same git dir and common dir, and a primary
    // whose git data is kept elsewhere (a `.git` link, a gitfile, a `commondir`
    // file) stops there with `wrong-repo` (helper-78 F5: a `.git` link was opened
    // and refused only at create, as "not the repository the run was opened in").
    // 18: a step's owner is read with its state (`ps -o stat= -o lstart=`): a
    // zombie is gone (helper-79: a killed `ship merge` held its step in flight
    // until its parent reaped it).
    // 19: a run acting for a thread merges only in the thread's repository
    // (its first PR-ready's reading, carried by the thread's read fact): a run
    // opened in a clone merged there, and only the thread's credit refused it
    // (helper-80).
    // 20: the intent and consumer field names are at most 255 bytes, like
    // every other name a run carries (helper-93: 100,000 characters were taken).
    const RULES_VERSION: u32 = 20;
    const RETIRED_RULES: &'static [u32] = &[
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ];
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Idle
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command, ctx)
    }

    fn scans(state: &State, command: &Command) -> Vec<crate::reads::Sieve> {
        // A run acting for a thread merges once per reviewed commit, one run at a
        // time (`decide::begin`): the runs that merged or merge for it are read.
        // The nodes that worked in the run's worktree ship with it, named or not
        // (`decide::pre_merge`): pre-merge and the merge read every placed node.
        use crate::reads::Sieve;
        match command {
            Command::Begin {
                step: Mutation::Merge,
                ..
            } if state.run().is_some_and(|r| r.acts_for.is_some()) => {
                vec![Sieve::PlacedNodes, Sieve::ThreadMerges, Sieve::ThreadLoops]
            }
            Command::Begin {
                step: Mutation::Merge,
                ..
            }
            | Command::PreMerge { .. } => vec![Sieve::PlacedNodes],
            _ => Vec::new(),
        }
    }

    fn reads(state: &State, command: &Command) -> Vec<String> {
        // The work nodes a pre-merge names: each must vouch for the commit shipped;
        // and again when the merge is announced (a node that withdrew its
        // verification since stops it before git runs).
        // A merge also reads the thread the run acts for: its merge turn is the
        // authority the merge runs under.
        let kept = state.run().map_or(&[][..], |r| r.work_nodes.as_slice());
        let (nodes, thread) = match command {
            Command::PreMerge { work_nodes, .. } => (history::kept_nodes(kept, work_nodes), None),
            Command::Begin {
                step: Mutation::Merge,
                ..
            } => (kept.to_vec(), state.run().and_then(|r| r.acts_for.clone())),
            _ => (Vec::new(), None),
        };
        nodes
            .iter()
            .filter(|s| crate::reads::is_work_node_stream(s))
            .cloned()
            .chain(thread.filter(|t| crate::reads::is_saga_stream(t)))
            .collect()
    }

    fn evolve(state: State, event: &Event) -> State {
        evolve::evolve(state, event)
    }

    fn state_name(state: &State) -> &'static str {
        graph::state_name(state)
    }

    fn event_name(event: &Event) -> &'static str {
        graph::event_name(event)
    }

    fn verdict(state: &State, events: &[Event]) -> crate::Verdict {
        verdict::verdict(state, events)
    }

    fn command_name(command: &Command) -> &'static str {
        command.variant_name()
    }

    fn fact(state: &State) -> Option<Fact> {
        // What another lifecycle may rely on: where the run was opened and the
        // commit cairn's own readings saw land (`merged_sha`, set only by an
        // accepted merge).
        state.run().map(|run| Fact::Ship {
            repo: run.repo_root.to_string(),
            branch: run.params.branch.clone(),
            target: run.params.target_branch.clone(),
            merged: run.merged_sha.clone(),
            acts_for: run.acts_for.clone(),
            merging: run
                .begun
                .as_ref()
                .is_some_and(|b| b.step == Mutation::Merge),
            shipped: run.shipped.clone(),
        })
    }

    fn recorded_by(command: &Command) -> Option<&'static str> {
        match command {
            // The step's announcement names this process as read by `ps` (the verb
            // that runs the step announces it); every gate is derived from git
            // runs cairn made.
            Command::Begin { step, .. } => Some(match step {
                Mutation::Create => "ship create",
                Mutation::Merge => "ship merge",
                Mutation::Teardown => "ship teardown",
                Mutation::Resume => "ship resume",
            }),
            Command::Open { .. } => Some("ship open"),
            Command::Preflight { .. } => Some("ship preflight"),
            Command::Create { .. } => Some("ship create"),
            Command::Verify { .. } => Some("ship verify"),
            Command::Refine { .. } => Some("ship refine"),
            Command::PreMerge { .. } => Some("ship pre-merge"),
            Command::Merge { .. } => Some("ship merge"),
            Command::Teardown { .. } => Some("ship teardown"),
            Command::Resume { .. } => Some("ship resume"),
            Command::AnswerScope { .. }
            | Command::AnswerTiebreaker { .. }
            | Command::ExternalOp { .. }
            | Command::Abandon { .. } => None,
        }
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }
}
