//! `observe`: one classified reading of the PR. It must follow this stream's PR,
//! agree with the journal's tier and the saga thread's rounds (at adoption; a loop
//! that follows its thread counts the rounds itself), and show a merge
//! only on cairn's own `gh` reading. A round-starting row starts a round only on a
//! new head or a new verdict (and, on a failure row with a depth-shaped failure,
//! proposes one escalation rung or records the clamp); a draft offers ready, a
//! fresh approval may offer the merge, merged or closed end or pause the loop.

use super::super::classify::PrState;
use super::super::escalation::{self, Step};
use super::super::event::Event;
use super::super::identity::canonical_pr;
use super::super::input::{classify_input, FailureShape, ObserveInput, Observed, ReadingSource};
use super::super::state::RoundBasis;
use super::{tiers, Refuse};
use crate::evidence::next_round;
use crate::reads::Fact;
use crate::{Context, Rejection, Violation};

/// `observe`: the input classifies and follows this stream's PR; the events are the
/// observation, then the round, the escalation and the offer or ending it implies.
pub(super) fn decide_observe(
    r: &Refuse,
    input: &ObserveInput,
    observed: &Observed,
    from: Option<&str>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let placed = classify_input(input, observed).map_err(|e| r.input(e))?;
    let l = r.state.looped();
    let c = &placed.classification;
    let mut v = from.map_or_else(Vec::new, |thread| thread_agrees(input, thread, ctx));
    // A loop that follows a thread is observed against it every time (found: a
    // later observation without `from` took any typed reviewed SHA).
    if let Some(followed) = l.and_then(|l| l.thread.as_deref()) {
        if from != Some(followed) {
            v.push(Violation::new(
                "from-thread",
                Some("from"),
                format!("this loop follows `{followed}`: observe it with `--from {followed}`"),
            ));
        }
    }
    if let Some(l) = l {
        // Loops recorded under rules v1 kept the URL as given: compare identities.
        if canonical_pr(&l.pr).map_or(true, |pr| pr != placed.pr) {
            v.push(Violation::new(
                "same-pr",
                Some("pr"),
                format!("this stream follows {}", l.pr),
            ));
        }
    }
    // A new loop (or one with no rounds yet) adopts the saga thread's rounds; a later
    // observation's must be the loop's own, unless the loop follows the thread:
    // then the loop counts the rounds and the thread takes them at its next save
    // (`saga save`), so a thread that has not saved since only lags.
    let adopt = l.map_or(true, |l| l.rounds_seen.is_empty());
    let follows = from.is_some() || l.is_some_and(|l| l.thread.is_some());
    let rounds_before = match (l, &input.saga_rounds_seen) {
        (Some(l), Some(_)) if !adopt && follows => l.rounds_seen.clone(),
        (Some(l), Some(saga)) if !adopt => {
            let (mut a, mut b) = (saga.clone(), l.rounds_seen.clone());
            a.sort_unstable();
            b.sort_unstable();
            if a != b {
                v.push(Violation::new(
                    "rounds-consistent",
                    Some("saga_rounds_seen"),
                    format!(
                        "the saga thread's rounds {saga:?} are not the loop's {:?}: save the loop's into the thread (`saga save --rounds-seen`)",
                        l.rounds_seen
                    ),
                ));
            }
            l.rounds_seen.clone()
        }
        (Some(l), None) if !adopt => l.rounds_seen.clone(),
        (_, saga) => saga.clone().unwrap_or_default(),
    };
    // The rounds are the thread's: every loop that follows it counts into one
    // sequence (found: two loops following one thread each began at round 1, and
    // the thread's save merged the two into one round).
    let rounds_before = match from {
        Some(thread) => sibling_rounds(thread, rounds_before, ctx),
        None => rounds_before,
    };
    if let Some(t) = &input.tiers {
        tiers::check(l, t, &mut v);
    }
    // The branch the PR merges into, as cairn's own reading showed it, outranks a
    // reading on stdin (found by a hostile pass: a stdin reading naming another
    // base lifted a ship run's hold on the real one).
    if let (Some(l), Some(b), ReadingSource::Stdin) =
        (l, placed.reading.base.as_deref(), placed.source)
    {
        if l.base_observed && l.base.as_deref() != Some(b) {
            v.push(Violation::new(
                crate::reads::JOURNAL_AGREES,
                Some("reading.baseRefName"),
                format!(
                    "cairn's gh reading showed the PR merging into `{}`, not `{b}`",
                    l.base.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    if c.state == PrState::Merged && placed.source != ReadingSource::Gh {
        v.push(Violation::new(
            "merge-unobserved",
            Some("reading"),
            "a merge is recorded from cairn's own reading: `cairn pr observe --pr URL` (gh), or `cairn pr record-merge` after a confirmed merge",
        ));
    }
    r.all(v)?;
    let mut events = vec![Event::Observed {
        pr: placed.pr.clone(),
        classification: c.clone(),
        at: ctx.now.clone(),
        source: Some(placed.source),
        freshness: placed.freshness.clone().map(Box::new),
        tiers: input.tiers.clone(),
        saga_rounds_seen: if adopt {
            input
                .saga_rounds_seen
                .as_ref()
                .map(|_| rounds_before.clone())
        } else {
            None
        },
        thread: from
            .filter(|t| l.and_then(|l| l.thread.as_deref()) != Some(*t))
            .map(Box::from),
        base: placed
            .reading
            .base
            .as_deref()
            // Stated when it changes what the loop knows: cairn's own reading
            // names a base it had not read, or a reading on stdin one no reading
            // of cairn's named (one that contradicts cairn's was refused above).
            .filter(|b| match l {
                None => true,
                Some(l) => {
                    let other = l.base.as_deref() != Some(*b);
                    if placed.source == ReadingSource::Gh {
                        other || !l.base_observed
                    } else {
                        other && !l.base_observed
                    }
                }
            })
            .map(Box::from),
    }];
    let basis = RoundBasis {
        head: placed.reading.head.clone(),
        on: c.state,
    };
    if c.state.starts_round(c.checks) && basis.is_new(l.and_then(|l| l.round_basis.as_ref())) {
        events.push(Event::RoundStarted {
            round: next_round(&rounds_before),
            basis: Some(basis),
        });
        let depth = input.failure_shape == Some(FailureShape::Depth);
        if let (true, true, Some(t)) = (c.state.is_failure_row(c.checks), depth, &input.tiers) {
            match escalation::propose(t).map_err(|e| r.input(e))? {
                Step::Propose(mut proposal) => {
                    let id = ctx.fresh_id(0).ok_or_else(|| {
                        r.rejection(
                            "fresh-id",
                            None,
                            "a proposal's approval token is minted from the context's fresh id",
                        )
                    })?;
                    proposal.token = Some(escalation::token(id));
                    events.push(Event::EscalationProposed { proposal });
                }
                Step::Clamped(clamp) => events.push(Event::EscalationClamped { clamp }),
            }
        }
    }
    match c.state {
        PrState::Draft => events.push(Event::ReadyOffered),
        PrState::ApprovedFresh if c.merge_offer => events.push(Event::MergeOffered),
        PrState::Merged => events.push(Event::MergeObserved {
            merged_at: placed.reading.merged_at.clone(),
        }),
        PrState::Closed => events.push(Event::ClosedObserved),
        PrState::AwaitReview
        | PrState::ChangesRequested
        | PrState::PendingOrFailingChecks
        | PrState::Conflicting
        | PrState::ApprovedStale
        | PrState::ApprovedFresh => {}
    }
    Ok(events)
}

/// `own` with the rounds of every loop the engine scanned that follows `thread`
/// (`Sieve::ThreadLoops`; this loop among them), sorted and once each.
fn sibling_rounds(thread: &str, mut own: Vec<u32>, ctx: &Context) -> Vec<u32> {
    for read in ctx.scanned(crate::reads::Sieve::ThreadLoops) {
        if let Some(Fact::PrLoop {
            thread: Some(t),
            rounds_seen,
            ..
        }) = &read.fact
        {
            if t == thread {
                own.extend(rounds_seen);
            }
        }
    }
    own.sort_unstable();
    own.dedup();
    own
}

/// Where the observation names its saga thread, the thread's word outranks the
/// document's: the reviewed SHA is the one its recorded code review reviewed, and
/// the saga rounds are its own (`journal-agrees`, naming the thread). A thread not
/// in the journal, or one with no review, gives no reviewed SHA to carry.
fn thread_agrees(input: &ObserveInput, thread: &str, ctx: &Context) -> Vec<Violation> {
    let agrees = crate::reads::JOURNAL_AGREES;
    if !crate::reads::is_saga_stream(thread) {
        return vec![Violation::new(
            "saga-stream",
            Some("from"),
            format!("`{thread}` is not a saga thread's stream: `saga/<saga id>`"),
        )];
    }
    let fact = ctx
        .read(thread)
        .filter(|r| r.version > 0)
        .and_then(|r| r.fact.as_ref());
    let Some(Fact::Saga {
        reviewed,
        rounds_seen,
        ..
    }) = fact
    else {
        return vec![Violation::new(
            agrees,
            Some("from"),
            format!("`{thread}` is not in the journal"),
        )];
    };
    let mut v = vec![];
    match (reviewed, input.reviewed_sha.as_deref()) {
        (Some(want), Some(got)) if want.as_str() == got => {}
        (Some(want), got) => v.push(Violation::new(
            agrees,
            Some("reviewed_sha"),
            format!(
                "`{thread}`'s code review reviewed {want}, not {}",
                got.unwrap_or("nothing")
            ),
        )),
        (None, _) => v.push(Violation::new(
            agrees,
            Some("reviewed_sha"),
            format!("`{thread}` records no code review: nothing was reviewed to observe"),
        )),
    }
    let mut got = input.saga_rounds_seen.clone().unwrap_or_default();
    let mut want = rounds_seen.clone();
    // As sets: a thread's save may repeat a round.
    got.sort_unstable();
    got.dedup();
    want.sort_unstable();
    want.dedup();
    if got != want {
        v.push(Violation::new(
            agrees,
            Some("saga_rounds_seen"),
            format!("`{thread}`'s rounds are {want:?}, not {got:?}"),
        ));
    }
    v
}
