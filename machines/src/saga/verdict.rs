//! Which recorded saga transitions are "not green yet": a QA cycle that is not a
//! PASS, a boundary held or paused, a half-written board move. Each is recorded,
//! never a refusal.

use super::{Event, QaOutcome};
use crate::Verdict;

/// The saga thread's verdict on the events one transition appended.
pub(super) fn saga(events: &[Event]) -> Verdict {
    let stopped = events.iter().any(|e| match e {
        Event::QaCycleRecorded { outcome, .. } => match outcome {
            QaOutcome::Passed => false,
            QaOutcome::PassedWithProofDebt
            | QaOutcome::Blocked
            | QaOutcome::ReEntersTheBuildLoop
            | QaOutcome::Exhausted => true,
        },
        Event::BoundaryHeld { .. } | Event::PausedAtBoundary { .. } => true,
        Event::BoardHalfWrite { .. } => true,
        Event::TickSaved { .. }
        | Event::RetroTickSaved { .. }
        | Event::QaExtensionGranted
        | Event::AdvancedToQa
        | Event::DocReviewRecorded { .. }
        | Event::ReviewRecorded { .. }
        | Event::OverrideRecorded { .. }
        | Event::ReadyForPr { .. }
        | Event::DirectiveSet { .. }
        | Event::BoundaryCrossed { .. }
        | Event::TurnTaken { .. }
        | Event::TurnReleased { .. }
        | Event::UnitMerged { .. }
        | Event::Released { .. }
        | Event::BoardMoved { .. } => false,
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
    fn only_a_stop_is_not_green() {
        let qa = |outcome| Event::QaCycleRecorded {
            cycle: 1,
            scenarios: vec![],
            outcome,
            limits: None,
        };
        assert_eq!(
            saga(&[qa(QaOutcome::Passed), Event::AdvancedToQa]),
            Verdict::Green
        );
        for o in [
            QaOutcome::PassedWithProofDebt,
            QaOutcome::Blocked,
            QaOutcome::ReEntersTheBuildLoop,
            QaOutcome::Exhausted,
        ] {
            assert_eq!(saga(&[qa(o)]), Verdict::NotGreen, "{o:?}");
        }
        let held = Event::PausedAtBoundary {
            boundary: "phase-2".into(),
        };
        assert_eq!(saga(&[held]), Verdict::NotGreen);
        assert_eq!(
            saga(&[Event::BoundaryCrossed {
                boundary: "b".into()
            }]),
            Verdict::Green
        );
        assert_eq!(saga(&[]), Verdict::Green);
    }
}
