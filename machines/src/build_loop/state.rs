//! The build loop's state: how many iterations were recorded, whether the last was
//! green, and the revision handed to code review.

use serde::{Deserialize, Serialize};

use crate::evidence::FullCommit;

/// A unit's loop: iterations recorded, and the revision handed to code review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LoopState {
    /// Iterations recorded.
    pub iterations: u32,
    /// The last iteration was green.
    pub green: bool,
    /// The full revision the criterion last passed at.
    pub handed_to_code_review: Option<FullCommit>,
    /// The repository it passed in (rules 3; `None` before, or unread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handed_repository: Option<String>,
}

/// The state's name in the graph: `not-run`, `green` or `not-green`.
pub(super) fn state_name(state: &LoopState) -> &'static str {
    match (state.iterations, state.green) {
        (0, _) => "not-run",
        (_, true) => "green",
        (_, false) => "not-green",
    }
}
