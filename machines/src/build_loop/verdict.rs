//! The build loop's verdict: an iteration that is not green is recorded, and not
//! green yet (exit 4), never a refusal.

use super::Event;
use crate::Verdict;

/// The build loop's verdict: an iteration that is not green is not green yet.
pub(super) fn verdict(events: &[Event]) -> Verdict {
    let stopped = events.iter().any(|e| match e {
        Event::IterationNotGreen { .. } => true,
        Event::IterationGreen { .. } => false,
    });
    if stopped {
        Verdict::NotGreen
    } else {
        Verdict::Green
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_green_iteration_is_green() {
        let it = |green: bool| {
            if green {
                Event::IterationGreen {
                    unit: "U1".into(),
                    iteration: json!({}),
                    handed_to_code_review: crate::evidence::FullCommit::parse(&"a".repeat(40))
                        .expect("40 hex digits"),
                    repository: None,
                }
            } else {
                Event::IterationNotGreen {
                    unit: "U1".into(),
                    iteration: json!({}),
                }
            }
        };
        assert_eq!(verdict(&[it(true)]), Verdict::Green);
        assert_eq!(verdict(&[it(false)]), Verdict::NotGreen);
    }
}
