//! `qa`: one QA cycle after merge. Only a failure counts against the allowance
//! (three standard and two escalated cycles unless the run record says otherwise,
//! then exactly one extension, never two); a blocked scenario outranks a failure; a
//! failure past the allowance is recorded `exhausted`, never refused. Only an
//! all-passed cycle advances the thread to `qa`; an unrun scenario is never a pass.

use super::super::command::{Scenario, ScenarioResult};
use super::super::event::Event;
use super::super::state::{Phase, QaLimits, QaOutcome, Thread};
use super::Refuse;
use crate::Rejection;

/// `qa`: refused unless the thread is at `work` and merged, every scenario is
/// named, every blocked one names its cause, and an extension asked for is the
/// first and comes once the budget's failures are spent.
pub(super) fn decide_qa(
    r: &Refuse,
    t: &Thread,
    scenarios: &[Scenario],
    extension: bool,
    limits: Option<QaLimits>,
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
    // The allowance as this cycle sees it: the run record's limits when given.
    let mut qa = t.qa.clone();
    if limits.is_some() {
        qa.limits = limits;
    }
    let mut events = vec![];
    if extension {
        if qa.extension_taken {
            return r.no(
                "one-extension",
                Some("extension"),
                "the one extension was already granted; it can never be granted twice",
            );
        }
        if qa.post_merge_cycles < qa.budget() {
            return r.no(
                "allowance-left",
                Some("extension"),
                "the standard and escalated cycles are not spent",
            );
        }
        events.push(Event::QaExtensionGranted);
        qa.extension_taken = true;
    }
    let verdict = qa_outcome(scenarios);
    let (outcome, cycle) = match verdict {
        QaOutcome::ReEntersTheBuildLoop if qa.post_merge_cycles < qa.allowed() => {
            (verdict, qa.post_merge_cycles + 1)
        }
        QaOutcome::ReEntersTheBuildLoop => (QaOutcome::Exhausted, qa.post_merge_cycles),
        other => (other, qa.post_merge_cycles),
    };
    events.push(Event::QaCycleRecorded {
        cycle,
        scenarios: scenarios.to_vec(),
        outcome,
        limits,
    });
    if outcome == QaOutcome::Passed {
        events.push(Event::AdvancedToQa);
    }
    Ok(events)
}

/// The verdict the scenarios imply, before the allowance: a blocked scenario
/// outranks a failure (the build loop can repair a failure, never a block), a
/// failure re-enters the build loop, an unrun scenario (or none) is proof debt.
pub fn qa_outcome(scenarios: &[Scenario]) -> QaOutcome {
    let any = |r: ScenarioResult| scenarios.iter().any(|s| s.result == r);
    if any(ScenarioResult::Blocked) {
        QaOutcome::Blocked
    } else if any(ScenarioResult::Failed) {
        QaOutcome::ReEntersTheBuildLoop
    } else if scenarios.is_empty() || any(ScenarioResult::NotRun) {
        QaOutcome::PassedWithProofDebt
    } else {
        QaOutcome::Passed
    }
}
