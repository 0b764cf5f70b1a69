//! Testing any machine without IO: given/when/then over `decide` ([`Scenario`]),
//! names pinned to serde's tags ([`assert_serde_names`]), graph coverage
//! ([`Coverage`]) and the graph-driven exploration that finds a
//! step sequence for every declared state and edge ([`Explorer`]). The
//! journal-backed harness that runs those sequences through the real engine is
//! `cairn::testing` (feature `testing`).

#[deny(missing_docs)]
pub mod coverage;
#[deny(missing_docs)]
pub mod explore;
#[deny(missing_docs)]
pub mod names;
#[deny(missing_docs)]
pub mod scenario;

pub use coverage::{Coverage, Edge, Unreachable};
pub use explore::{context, Exploration, Explorer, Failure, Property};
pub use names::assert_serde_names;
pub use scenario::{Decided, Scenario};

/// `run` as cairn's observer records it: a `git -C DIR status …` reading is
/// taken against HEAD itself, so its environment names the observer's own index
/// and attributes from the empty tree
/// ([`against_head`](crate::evidence::git::against_head)); any other run is
/// returned as it is. For fixtures that write runs by hand.
pub fn as_observed(mut run: crate::evidence::CommandRun) -> crate::evidence::CommandRun {
    if matches!(run.argv.as_slice(), [git, c, _, status, ..] if git == "git" && c == "-C" && status == "status")
    {
        let env = run.env.get_or_insert_with(Default::default);
        env.insert("GIT_INDEX_FILE".into(), "/tmp/cairn-index-fixture".into());
        env.insert(
            "GIT_ATTR_SOURCE".into(),
            crate::evidence::git::EMPTY_TREE.into(),
        );
    }
    run
}
