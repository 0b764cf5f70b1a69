//! Which recorded work-node transitions are "not green yet": a verification that
//! failed is recorded evidence, not a refusal, and the node did not advance.

use super::node::Event;
use crate::Verdict;

/// The node's verdict on the events one transition appended.
pub(super) fn verdict(events: &[Event]) -> Verdict {
    let stopped = events.iter().any(|e| match e {
        Event::VerificationFailed { .. } => true,
        Event::CriterionAmended { .. }
        | Event::ScopeRaised { .. }
        | Event::ScopePassedUp { .. }
        | Event::ScopeApproved { .. }
        | Event::ScopeNotApproved { .. }
        | Event::Planned { .. }
        | Event::Dispatched { .. }
        | Event::NotDispatched { .. }
        | Event::Verified { .. }
        | Event::ReviewRecorded { .. }
        | Event::RemediationDispatched { .. }
        | Event::Escalated { .. }
        | Event::Merged { .. }
        | Event::Done { .. } => false,
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

    #[test]
    fn only_a_failed_verification_is_not_green() {
        assert_eq!(verdict(&[]), Verdict::Green);
        assert_eq!(
            verdict(&[Event::Escalated {
                reason: "budget spent".into()
            }]),
            Verdict::Green
        );
        assert_eq!(
            verdict(&[Event::Done {
                session: "s".into()
            }]),
            Verdict::Green
        );
        let v = |passed: bool| super::super::node::Verification {
            session: "s".into(),
            integration: false,
            worktree_path: "/w".into(),
            commit: crate::evidence::FullCommit::parse(&"a".repeat(40)).expect("40 hex digits"),
            criteria: vec![],
            checklist_ok: true,
            passed,
            failures: vec![],
            at: crate::Timestamp::parse("2026-11-30T10:00:00Z").expect("a valid time"),
        };
        assert_eq!(
            verdict(&[Event::Verified {
                verification: v(true)
            }]),
            Verdict::Green
        );
        assert_eq!(
            verdict(&[Event::VerificationFailed {
                verification: v(false)
            }]),
            Verdict::NotGreen
        );
    }
}
