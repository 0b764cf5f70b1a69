//! Testing any machine without IO: given/when/then over `decide` ([`Scenario`]),
//! graph coverage ([`Coverage`]) and the graph-driven exploration that finds a
//! step sequence for every declared state and edge ([`Explorer`]). The
//! journal-backed harness that runs those sequences through the real engine is
//! `cairn::testing` (feature `testing`).

#[deny(missing_docs)]
pub mod coverage;
#[deny(missing_docs)]
pub mod explore;
#[deny(missing_docs)]
pub mod scenario;

pub use coverage::{Coverage, Edge, Unreachable};
pub use explore::{context, Exploration, Explorer, Failure, Property};
pub use scenario::{Decided, Scenario};
