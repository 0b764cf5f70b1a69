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
