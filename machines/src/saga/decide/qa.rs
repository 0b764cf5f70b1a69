//! `qa`: one QA cycle after merge, inside the allowance (three standard, two
//! escalated, then exactly one extension). Only an all-passed cycle advances the
//! thread to `qa`; an unrun scenario is never a pass.

use super::super::command::{Scenario, ScenarioResult};
use super::super::event::Event;
use super::super::state::{Phase, QaOutcome, Thread, QA_ESCALATED, QA_STANDARD};
use super::Refuse;
use crate::Rejection;

/// `qa`: refused unless the thread is at `work` and merged, every scenario is named, every
/// blocked one names its cause, and the allowance (with the one extension) is not spent.
pub(super) fn decide_qa(
    r: &Refuse,
    t: &Thread,
    scenarios: &[Scenario],
    extension: bool,
) -> Result<Vec<Event>, Rejection> {
    if t.lifecycle_phase != Phase::Work {
        return r.no(
            "phase-work",
            None,
            "QA after merge runs while the thread is at `work`",
        );
    }
    if !t.gates.landed() {
        return r.no(
            "merged-first",
            None,
            "QA runs on a merged thread: no unit's merge and no landed release is recorded",
        );
    }
    for (i, s) in scenarios.iter().enumerate() {
        if s.name.trim().is_empty() {
            return r.no(
                "scenario-name",
                Some(&format!("scenarios[{i}].name")),
                "name the scenario",
            );
        }
        if s.result == ScenarioResult::Blocked
            && s.cause.as_deref().map_or(true, |c| c.trim().is_empty())
        {
            return r.no(
                "blocked-cause",
                Some(&format!("scenarios[{i}].cause")),
                "a blocked scenario names its cause",
            );
        }
    }
    let mut events = vec![];
    let mut allowed = t.qa.allowed();
    if extension {
        if t.qa.extension_taken {
            return r.no(
                "one-extension",
                Some("extension"),
                "the one extension was already granted; it can never be granted twice",
            );
        }
        if t.qa.post_merge_cycles < QA_STANDARD + QA_ESCALATED {
            return r.no(
                "allowance-left",
                Some("extension"),
                "the standard and escalated cycles are not spent",
            );
        }
        events.push(Event::QaExtensionGranted);
        allowed += 1;
    }
    if t.qa.post_merge_cycles >= allowed {
        return r.no(
            "qa-allowance",
            None,
            "the QA allowance is exhausted (3 standard + 2 escalated, then one extension)",
        );
    }
    let outcome = qa_outcome(scenarios);
    events.push(Event::QaCycleRecorded {
        cycle: t.qa.post_merge_cycles + 1,
        scenarios: scenarios.to_vec(),
        outcome,
    });
    if outcome == QaOutcome::Passed {
        events.push(Event::AdvancedToQa);
    }
    Ok(events)
}

/// The outcome the scenarios imply.
pub fn qa_outcome(scenarios: &[Scenario]) -> QaOutcome {
    if scenarios.iter().any(|s| s.result == ScenarioResult::Failed) {
        QaOutcome::ReEntersTheBuildLoop
    } else if scenarios
        .iter()
        .any(|s| s.result == ScenarioResult::Blocked)
    {
        QaOutcome::Blocked
    } else if scenarios.is_empty() || scenarios.iter().any(|s| s.result == ScenarioResult::NotRun) {
        QaOutcome::PassedWithProofDebt
    } else {
        QaOutcome::Passed
    }
}
