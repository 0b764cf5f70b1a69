//! The build loop's events: an iteration that is green (the revision goes to code
//! review) or not green yet (a loop iteration, not a refusal).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::FullCommit;

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    /// Not green yet: a loop iteration, not a refusal.
    IterationNotGreen { unit: String, iteration: Value },
    /// Green: the revision goes to code review.
    IterationGreen {
        unit: String,
        iteration: Value,
        handed_to_code_review: FullCommit,
    },
}

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    match event {
        Event::IterationNotGreen { .. } => "iteration-not-green",
        Event::IterationGreen { .. } => "iteration-green",
    }
}
