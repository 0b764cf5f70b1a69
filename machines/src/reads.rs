//! Reads across lifecycles: what a decision saw of *other* streams, recorded with it.
//!
//! A guard that depends on another lifecycle (a lease that fences an act, a
//! verified commit a ship must carry) cannot read the journal: `decide` is pure.
//! The engine reads the other streams for it, puts what it read into the
//! [`Context`](crate::Context) as [`Read`]s — the stream, the version read, the
//! state's name and the [`Fact`] its machine states about it — and appends the
//! transition only if none of those streams has moved since (a multi-stream
//! optimistic-concurrency check inside the append's transaction). The audit folds
//! each read stream again to the recorded version and requires the same state and
//! fact, so a forged read fails the audit as a forged command does.
//!
//! Fencing is the first user: an act on stream `S` reads `claim/S`, and
//! [`fence`] decides whether the caller's token may act under the lease found there.

use serde::{Deserialize, Serialize};

pub use crate::stream_names::{
    build_loop_thread, is_saga_id, is_saga_stream, is_ship_stream, is_short_id, is_work_node_stream,
};

pub use crate::fence::{
    check_fence, fence, is_fence_refusal, FenceRefusal, CURRENT_TOKEN, FENCING_TOKEN, HELD,
    HELD_BY_ANOTHER, LEASE_LIVE,
};
pub use crate::scan::{Scan, Sieve};

use crate::evidence::FullCommit;
use crate::Timestamp;

/// The machine whose streams hold leases ([`claim_stream`]).
pub const CLAIM_MACHINE: &str = "claim";

/// Whether a command of `machine` named `command` can grant or extend a lease:
/// every claim command but `release` (which only ends one). Such a command is
/// decided no earlier than the claimed stream's last act, and its append
/// requires that stream unmoved.
pub fn extends_lease(machine: &str, command: &str) -> bool {
    machine == CLAIM_MACHINE && command != "release"
}

/// The machine whose streams are work nodes (`work-node/<spec>:<address>`,
/// [`Fact::WorkNode`]).
pub const WORK_NODE_MACHINE: &str = "work-node";

/// The machine whose streams are ship runs (`ship/<SHORT_ID>`, [`Fact::Ship`]).
pub const SHIP_MACHINE: &str = "ship";

/// The machine whose streams are a unit's build loop (`build-loop/<saga id>:<unit>`).
pub const BUILD_LOOP_MACHINE: &str = "build-loop";

/// The machine whose streams are saga threads (`saga/<saga id>`).
pub const SAGA_MACHINE: &str = "saga";

/// The machine whose streams are PR continuation loops (`pr-loop/<PR>`,
/// [`Fact::PrLoop`]).
pub const PR_LOOP_MACHINE: &str = crate::evidence::pr::LOOP_MACHINE;

/// The predicate of a caller's value (or claim) that a stream the decision read
/// contradicts: where the journal knows better, the journal wins.
pub const JOURNAL_AGREES: &str = "journal-agrees";

/// The work-node stages in which a node's verification still stands: verified and
/// not rejected since, merged, or done.
pub const VOUCHING_STAGES: [&str; 3] = ["verified", "merged", "done"];

/// What a decision relied on that the stream's machine has withdrawn since: `then`
/// is the fact read into the decision, `now` the stream's fact today. A work node
/// that no longer vouches for a commit it vouched for (a later verification of it
/// failed) or whose verification no longer stands (rejected since); a ship run or
/// PR loop that no longer states the merge it stated; a build loop that has handed
/// another revision to code review since. `None`: nothing relied on
/// was withdrawn (a fact that only grew, or one that never spoke for anything).
pub fn withdrawn(then: &Fact, now: Option<&Fact>) -> Option<String> {
    match (then, now?) {
        (
            Fact::WorkNode {
                stage: was,
                verified: vouched,
                ..
            },
            Fact::WorkNode {
                stage, verified, ..
            },
        ) => {
            let lost: Vec<&str> = vouched
                .iter()
                .filter(|c| !verified.contains(c))
                .map(|c| c.as_str())
                .collect();
            if !lost.is_empty() {
                Some(format!("it no longer vouches for {}", lost.join(", ")))
            } else if VOUCHING_STAGES.contains(&was.as_str())
                && !VOUCHING_STAGES.contains(&stage.as_str())
            {
                Some(format!(
                    "it is at `{stage}`: its verification no longer stands"
                ))
            } else {
                None
            }
        }
        (
            Fact::Ship {
                merged: Some(c), ..
            },
            Fact::Ship { merged, .. },
        ) if merged.as_ref() != Some(c) => Some(format!("it no longer states the merge of {c}")),
        (Fact::PrLoop { merged: true, .. }, Fact::PrLoop { merged: false, .. }) => {
            Some("it no longer states the PR merged".to_owned())
        }
        // A review of what the loop handed is of an older revision once the loop
        // has handed another.
        (Fact::BuildLoop { handed: Some(was) }, Fact::BuildLoop { handed })
            if handed.as_ref() != Some(was) =>
        {
            Some(match handed {
                Some(now) => format!("it has handed {now} to code review since, not {was}"),
                None => format!("it no longer hands {was} to code review"),
            })
        }
        _ => None,
    }
}

/// The lease stream for a resource: `claim/<resource stream>`.
pub fn claim_stream(resource: &str) -> String {
    format!("{CLAIM_MACHINE}/{resource}")
}

/// One other stream as a decision read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    /// The stream read.
    pub stream: String,
    /// Its version when read (0: the stream did not exist). The append commits only
    /// if the stream is still at this version.
    pub version: u64,
    /// The name of its state at that version.
    pub state: String,
    /// What its machine states about that state, when it states anything
    /// ([`Machine::fact`](crate::Machine::fact)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<Fact>,
    /// The read machine's rules version when read: the rules its fact was stated
    /// under (absent in reads recorded before cairn kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<u32>,
}

/// How a recorded [`Read`] stands against the same stream read again at the
/// recorded version ([`Read::against`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reread {
    /// The same version, state and fact.
    Same,
    /// The same version and state; the fact was stated under other rules of the
    /// read machine than today's, and has only grown since: every field it stated
    /// holds today (a machine's fact gains fields as its rules grow).
    Grown,
    /// Something the decision relied on is not what the stream holds.
    Differs,
}

impl Read {
    /// This recorded read against `now`, the stream read again at this version.
    pub fn against(&self, now: &Read) -> Reread {
        if self.stream != now.stream || self.version != now.version || self.state != now.state {
            return Reread::Differs;
        }
        if self.fact == now.fact {
            return Reread::Same;
        }
        let fields = |f: &Option<Fact>| match f.as_ref().map(serde_json::to_value) {
            Some(Ok(serde_json::Value::Object(m))) => Some(m),
            _ => None,
        };
        match (fields(&self.fact), fields(&now.fact)) {
            (Some(then), Some(today))
                if self.rules != now.rules && then.iter().all(|(k, v)| today.get(k) == Some(v)) =>
            {
                Reread::Grown
            }
            _ => Reread::Differs,
        }
    }
}

/// What a machine states about one of its streams for other lifecycles to rely on.
/// Machines never read each other's types: they read facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fact {
    /// A resource's lease: who holds it (if anyone ever did and has not released)
    /// and the greatest fencing token ever granted for it.
    Lease {
        /// The grant in force or last in force; `None` once released (or never granted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        holder: Option<Lease>,
        /// The greatest token granted so far (0: none).
        last_token: u64,
    },
    /// A PR continuation loop's word on its PR's merge (`pr-loop/<PR>`).
    PrLoop {
        /// The loop saw the PR merged (`complete`: its own merge, or one it observed).
        merged: bool,
        /// The loop still speaks for the PR (not `abandoned`).
        live: bool,
        /// The saga thread the loop follows (`saga/<saga id>`), if an observation
        /// named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<String>,
        /// The review rounds the loop has seen: the rounds are counted here, once;
        /// the thread it follows takes them from it (`saga save`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rounds_seen: Vec<u32>,
        /// The branch the PR merges into, as cairn's own gh reading named it
        /// (`baseRefName`); none while only a reading on stdin named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<String>,
    },
    /// A unit's build loop's word (`build-loop/<saga id>:<unit>`): the revision it
    /// last handed to code review (its last green iteration's), if any.
    BuildLoop {
        /// The handed revision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handed: Option<FullCommit>,
    },
    /// A work node's word on what it verified (`work-node/<spec>:<address>`).
    WorkNode {
        /// The node's stage (`verified`, `rejected`, `done`, …).
        stage: String,
        /// Every commit whose latest verification passed, in the order first
        /// verified: the commits the node vouches for.
        verified: Vec<FullCommit>,
        /// While dispatched: the worker tree and the repository cairn saw it in
        /// at dispatch (none for a dispatch cairn did not observe).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<Worker>,
        /// The tree of the node's last dispatch, whatever its stage since: the
        /// worktree its work is in (a ship run from that worktree ships it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// That tree's repository (git common dir) as cairn read it at the
        /// dispatch, whatever the stage since.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
        /// Every commit whose latest verification failed, in the order first
        /// verified: work the node does not vouch for (a ship run whose commit
        /// holds one stops, unless it holds the node's later verified work too).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        failed: Vec<FullCommit>,
        /// The commit of the node's latest verification, passed or failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latest: Option<FullCommit>,
    },
    /// A saga thread's word (`saga/<saga id>`): its merge authority — the unit
    /// holding the merge turn, if one does, and its branch (exactly one worker
    /// merges at a time; a ship run acting for the thread merges only under it)
    /// — and what it records of what landed, for the audit's invariants.
    Saga {
        /// The thread's lifecycle phase (`work`, `qa`, …).
        phase: String,
        /// The turn held (`merging`), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<Turn>,
        /// The merged tip of every unit recorded merged.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        merged: Vec<FullCommit>,
        /// A release is recorded (a landed commit, or an absence with its reason).
        released: bool,
        /// PR-ready stands for the thread's current code review.
        ready: bool,
        /// The SHA the thread's recorded code review reviewed, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reviewed: Option<FullCommit>,
        /// The thread's `rounds_seen`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rounds_seen: Vec<u32>,
        /// The thread's repository, as its first PR-ready read it (the common
        /// dir and that directory's identity on disk:
        /// `evidence::git::repository_of`): a run acting for the thread merges
        /// there only. None before its first PR-ready.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
    },
    /// A ship run's word on what it merged (`ship/<SHORT_ID>`): the repository,
    /// branch and target it was opened for, and the commit cairn saw TARGET_BRANCH
    /// hold after its own `merge --ff-only` (none until then).
    Ship {
        /// `REPO_ROOT`, as git showed it at open.
        repo: String,
        /// The worktree branch.
        branch: String,
        /// `TARGET_BRANCH`.
        target: String,
        /// The merged commit, once cairn observed the merge.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        merged: Option<FullCommit>,
        /// The saga thread the run acts for (`saga/<saga id>`), named at open.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acts_for: Option<String>,
        /// A merge is announced and its result not yet recorded: git may be
        /// merging now.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        merging: bool,
        /// The commit the run ships, once pre-merge bound it: the pre-squash
        /// commit after a squash, else the tip. After a squash `merged` is the
        /// squash commit, so "this reviewed commit merged" is read here.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shipped: Option<FullCommit>,
    },
}

/// A saga thread's merge turn ([`Fact::Saga`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The unit holding it.
    pub unit: String,
    /// The unit's branch.
    pub branch: String,
    /// Who holds it.
    pub holder: String,
}

/// Where a dispatched work node's worker writes ([`Fact::WorkNode`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Worker {
    /// The persistent worker tree.
    pub tree: String,
    /// Its repository: the git common dir cairn read at dispatch
    /// (`git -C TREE rev-parse --path-format=absolute --git-common-dir`).
    pub repository: String,
}

/// One grant of a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lease {
    /// The caller-stable claim id.
    pub claim_id: String,
    /// Who holds it.
    pub owner: String,
    /// The fencing token of this grant.
    pub token: u64,
    /// When it lapses unless renewed (judged against the journal's clock).
    pub expires_at: Timestamp,
}

impl Lease {
    /// True while the grant is in force at `now`.
    pub fn live_at(&self, now: &Timestamp) -> bool {
        now < &self.expires_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_node_withdraws_what_it_no_longer_vouches_for() {
        let c = |ch: char| FullCommit::parse(&ch.to_string().repeat(40)).expect("40 hex digits");
        let node = |stage: &str, verified: &[char]| Fact::WorkNode {
            stage: stage.into(),
            verified: verified.iter().map(|ch| c(*ch)).collect(),
            worker: None,
            tree: None,
            repository: None,
            failed: vec![],
            latest: None,
        };
        let then = node("verified", &['a']);
        // Grown or moved on in a standing stage: nothing withdrawn.
        assert_eq!(withdrawn(&then, Some(&node("verified", &['a', 'b']))), None);
        assert_eq!(withdrawn(&then, Some(&node("done", &['a']))), None);
        // A later failure on the commit, or a rejection since: withdrawn.
        assert!(withdrawn(&then, Some(&node("rejected", &[]))).is_some());
        assert!(withdrawn(&then, Some(&node("rejected", &['a']))).is_some());
        // A build loop that handed another revision since.
        let handed = |ch: Option<char>| Fact::BuildLoop { handed: ch.map(c) };
        assert_eq!(
            withdrawn(&handed(Some('a')), Some(&handed(Some('a')))),
            None
        );
        assert!(withdrawn(&handed(Some('a')), Some(&handed(Some('b')))).is_some());
        assert_eq!(withdrawn(&handed(None), Some(&handed(Some('b')))), None);
        // A node that vouched for nothing in a non-standing stage withdrew nothing.
        assert_eq!(
            withdrawn(&node("dispatched", &[]), Some(&node("rejected", &[]))),
            None
        );
    }

    #[test]
    fn reads_serialise_without_an_absent_fact() {
        let r = Read {
            stream: "ship/x".into(),
            version: 3,
            state: "open".into(),
            fact: None,
            rules: None,
        };
        assert_eq!(
            serde_json::to_string(&r).expect("plain struct serialises"),
            r#"{"stream":"ship/x","version":3,"state":"open"}"#
        );
    }

    #[test]
    fn a_fact_stated_under_older_rules_may_only_have_grown() {
        let read = |rules: Option<u32>, merged: bool, thread: Option<&str>| Read {
            stream: "pr-loop/x".into(),
            version: 3,
            state: "observing".into(),
            fact: Some(Fact::PrLoop {
                merged,
                live: true,
                thread: thread.map(str::to_owned),
                rounds_seen: vec![],
                base: None,
            }),
            rules,
        };
        let today = read(Some(5), false, Some("saga/issue-1"));
        assert_eq!(today.against(&today), Reread::Same);
        // Recorded before the fact named the thread: grown, every field holds.
        assert_eq!(read(Some(3), false, None).against(&today), Reread::Grown);
        assert_eq!(read(None, false, None).against(&today), Reread::Grown);
        // Under today's rules the fact is compared whole.
        assert_eq!(read(Some(5), false, None).against(&today), Reread::Differs);
        // A field it stated that no longer holds is no growth, whatever the rules.
        assert_eq!(read(Some(3), true, None).against(&today), Reread::Differs);
        let mut moved = read(Some(3), false, None);
        moved.version = 2;
        assert_eq!(moved.against(&today), Reread::Differs);
    }
}
