//! Scans: a decision that reads *every* stream of one machine through a sieve
//! (see [`crate::reads`]), for a contradiction the caller never names.

use serde::{Deserialize, Serialize};

use crate::reads::{Fact, Read, PR_LOOP_MACHINE, SHIP_MACHINE, WORK_NODE_MACHINE};

/// A read of *every* stream of one machine, keeping those the sieve names: what a
/// decision needs when the journal may hold a contradicting stream the caller did
/// not name (a work node dispatched in the repository a park episode binds). The
/// kept streams are recorded as [`Read`]s; the [`Scan`] records the machine's last
/// transition id when read, and the append commits only if no stream of the
/// machine has had a transition since, a new stream included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sieve {
    /// Work nodes dispatched to a worker (stage `dispatched`): a worker may be
    /// writing in its tree.
    LiveDispatch,
    /// Ship runs with a merge announced and not yet recorded: git may be merging
    /// a branch now.
    MergeInFlight,
    /// PR continuation loops that follow a saga thread: where the thread's
    /// review rounds are counted.
    ThreadLoops,
    /// Ship runs acting for a saga thread that merged or are merging: what the
    /// thread's merge turn has already been used for.
    ThreadMerges,
    /// Work nodes ever dispatched to a tree (`Fact::WorkNode.tree`): whose work
    /// a ship run from that tree ships.
    PlacedNodes,
}

impl Sieve {
    /// The machine whose streams it reads.
    pub fn machine(self) -> &'static str {
        match self {
            Sieve::LiveDispatch => WORK_NODE_MACHINE,
            Sieve::MergeInFlight => SHIP_MACHINE,
            Sieve::ThreadLoops => PR_LOOP_MACHINE,
            Sieve::ThreadMerges => SHIP_MACHINE,
            Sieve::PlacedNodes => WORK_NODE_MACHINE,
        }
    }

    /// Whether a stream of the machine, as read, is one the decision keeps. By the
    /// machine's name only, never the instance's shape: a stream the journal
    /// holds is kept whatever its name (found: a node with id `.` recorded
    /// `work-node/<key>:.`, which the shape check of names a caller types
    /// refuses, and slipped past the scan).
    pub fn keeps(self, read: &Read) -> bool {
        match self {
            Sieve::LiveDispatch => {
                read.stream.starts_with(&format!("{WORK_NODE_MACHINE}/"))
                    && read.state == "dispatched"
            }
            Sieve::MergeInFlight => {
                read.stream.starts_with(&format!("{SHIP_MACHINE}/"))
                    && matches!(read.fact, Some(Fact::Ship { merging: true, .. }))
            }
            Sieve::ThreadMerges => {
                read.stream.starts_with(&format!("{SHIP_MACHINE}/"))
                    && matches!(&read.fact, Some(Fact::Ship { acts_for: Some(_), merging, merged, .. })
                        if *merging || merged.is_some())
            }
            Sieve::PlacedNodes => {
                read.stream.starts_with(&format!("{WORK_NODE_MACHINE}/"))
                    && matches!(read.fact, Some(Fact::WorkNode { tree: Some(_), .. }))
            }
            Sieve::ThreadLoops => {
                read.stream.starts_with(&format!("{PR_LOOP_MACHINE}/"))
                    && matches!(
                        read.fact,
                        Some(Fact::PrLoop {
                            thread: Some(_),
                            ..
                        })
                    )
            }
        }
    }
}

/// One [`Sieve`] as a decision applied it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scan {
    /// What was kept.
    pub sieve: Sieve,
    /// The id of the last transition on any stream of the machine when read (0:
    /// none). The kept streams are recorded in [`Context::reads`](crate::Context).
    pub through: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_dispatch_is_kept_whatever_its_instance_is_called() {
        let read = |stream: &str, state: &str| Read {
            stream: stream.into(),
            version: 2,
            state: state.into(),
            fact: None,
            rules: None,
        };
        for stream in [
            "work-node/abc:core",
            "work-node/abc:.",
            "work-node/abc:..",
            "work-node/x",
        ] {
            assert!(
                Sieve::LiveDispatch.keeps(&read(stream, "dispatched")),
                "{stream}"
            );
            assert!(
                !Sieve::LiveDispatch.keeps(&read(stream, "verified")),
                "{stream}"
            );
        }
        // Another machine's stream in a state of the same name is not a dispatch.
        for stream in ["work-nodes/abc:core", "ship/dispatched", "work-node"] {
            assert!(
                !Sieve::LiveDispatch.keeps(&read(stream, "dispatched")),
                "{stream}"
            );
        }
    }
}
