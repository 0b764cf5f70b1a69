//! The build loop's events: an iteration that is green (the revision goes to code
//! review) or not green yet (a loop iteration, not a refusal).

use crate::Names;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::FullCommit;

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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
        /// The repository the checks ran in (rules 3): its common dir and identity.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repository: Option<String>,
    },
}

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    event.variant_name()
}
