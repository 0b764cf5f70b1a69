//! `observe`: one classified reading of the PR; a row that re-executes units starts
//! a round (and, for a depth-shaped failure, proposes one escalation rung); a draft
//! offers ready, a fresh approval may offer the merge, merged or closed end or pause
//! the loop.

use super::super::classify::{self, PrState};
use super::super::escalation;
use super::super::event::Event;
use super::super::input::{classify_input, FailureShape, ObserveInput};
use super::Refuse;
use crate::evidence::next_round;
use crate::{Context, Rejection};

/// `observe`: the input classifies and follows this stream's PR; the events are the
/// observation, then the round, the escalation and the offer or ending it implies.
pub(super) fn decide_observe(
    r: &Refuse,
    input: &ObserveInput,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let state = r.state;
    let c = classify_input(input).map_err(|e| r.input(e))?;
    if let Some(l) = state.looped() {
        if l.pr != input.pr {
            return Err(r.rejection("same-pr", Some("pr"), "this stream follows another PR"));
        }
    }
    let rounds_seen = state
        .looped()
        .map(|l| l.rounds_seen.clone())
        .unwrap_or_default();
    let merged_at = classify::parse_reading(&input.reading, "reading")
        .ok()
        .and_then(|reading| reading.merged_at);
    let mut events = vec![Event::Observed {
        pr: input.pr.clone(),
        classification: c.clone(),
        at: ctx.now.clone(),
    }];
    if c.state.starts_round(c.checks) {
        events.push(Event::RoundStarted {
            round: next_round(&rounds_seen),
        });
        if input.failure_shape == Some(FailureShape::Depth)
            && c.state == PrState::PendingOrFailingChecks
        {
            if let Some(t) = &input.tiers {
                match escalation::propose(t).map_err(|e| r.input(e))? {
                    Ok(proposal) => events.push(Event::EscalationProposed { proposal }),
                    Err(_clamped) => {}
                }
            }
        }
    }
    match c.state {
        PrState::Draft => events.push(Event::ReadyOffered),
        PrState::ApprovedFresh if c.merge_offer => events.push(Event::MergeOffered),
        PrState::Merged => events.push(Event::MergeObserved { merged_at }),
        PrState::Closed => events.push(Event::ClosedObserved),
        _ => {}
    }
    Ok(events)
}
