//! Issue #18's "done when" as a property over generated reading sequences: no tier
//! is ever reached without its approval event (the token cairn minted with that one
//! proposal), a reading that claims another tier than the journal's is refused, and
//! rounds increase only on a new head or a new verdict — and always on one. Seeds:
//! proptest-regressions/pr-loop-sequences.txt.

use cairn::machines::pr_loop::{self, Command, Decision, Event, Mode, ObserveInput, PrLoop, State};
use cairn::Machine;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::json;

use crate::support::pr::doc;

const LADDER: [&str; 4] = ["t0", "t1", "t2", "t3"];
/// The rows a generated reading is in: three start rounds, two do not.
const ROWS: [&str; 5] = [
    "changes-requested",
    "pending-or-failing-checks",
    "conflicting",
    "await-review",
    "approved-stale",
];

#[derive(Debug, Clone)]
enum Step {
    /// A reading: its row, its head (one of three, or unnamed), whether the failure
    /// is depth-shaped, the tier it claims (`Some(None)`: the journal's; an index:
    /// that rung) and the session ceiling.
    Observe {
        row: usize,
        head: Option<u8>,
        depth: bool,
        claim: Option<Option<usize>>,
        ceiling: usize,
    },
    /// The operator's answer: 0 the minted token, 1 another token, 2 none,
    /// 3 decline, 4 unattended.
    Resolve(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..ROWS.len(), proptest::option::of(0u8..3), any::<bool>(), proptest::option::weighted(0.8, proptest::option::weighted(0.3, 0..LADDER.len())), prop_oneof![2 => Just(LADDER.len() - 1), 1 => 0..LADDER.len()])
            .prop_map(|(row, head, depth, claim, ceiling)| Step::Observe { row, head, depth, claim, ceiling }),
        2 => prop_oneof![2 => Just(0u8), 1 => 1u8..5].prop_map(Step::Resolve),
    ]
}

/// The rung a claim names in `state`: the journal's tier (or the bottom rung), or its own.
fn claimed(claim: Option<Option<usize>>, state: &State) -> Option<usize> {
    let journal = state
        .looped()
        .and_then(|l| l.current_tier())
        .map_or(0, |t| LADDER.iter().position(|r| *r == t).unwrap());
    claim.map(|c| c.unwrap_or(journal))
}

fn observe(
    row: usize,
    head: Option<u8>,
    depth: bool,
    claim: Option<usize>,
    ceiling: usize,
) -> Command {
    let mut d = doc(ROWS[row], "merge");
    if let Some(h) = head {
        d["reading"]["headRefOid"] = json!(format!("{h:x}").repeat(40));
    }
    if depth {
        d["failure_shape"] = json!("depth");
    }
    if let Some(c) = claim {
        d["tiers"] = json!({"ladder": LADDER, "current": LADDER[c], "ceiling": LADDER[ceiling]});
    }
    let input: ObserveInput = serde_json::from_value(d).expect("a valid document");
    Command::Observe {
        input: Box::new(input),
        observed: Box::default(),
        from: None,
    }
}

fn resolve(answer: u8, state: &State) -> Command {
    let minted = match state {
        State::EscalationProposed { proposal, .. } => proposal.token.clone(),
        _ => None,
    };
    let (mode, decision, approval_token) = match answer {
        0 => (
            Mode::Attended,
            Decision::Apply,
            minted.or(Some("esc-none".into())),
        ),
        1 => (Mode::Attended, Decision::Apply, Some("esc-guessed".into())),
        2 => (Mode::Attended, Decision::Apply, None),
        3 => (Mode::Attended, Decision::Decline, None),
        _ => (Mode::Unattended, Decision::Apply, None),
    };
    Command::ResolveEscalation {
        mode,
        decision,
        approval_token,
    }
}

/// What a round began on, as the model sees it: the head and the row.
type Basis = (Option<u8>, usize);

/// A new head (both named and different) or a new row; anything, before any round.
fn is_new(last: Option<Basis>, now: Basis) -> bool {
    match last {
        None => true,
        Some((h, r)) => r != now.1 || matches!((h, now.0), (Some(a), Some(b)) if a != b),
    }
}

fn config() -> Config {
    Config {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/pr-loop-sequences.txt"
        )))),
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tiers_need_their_approval_and_rounds_need_a_new_head_or_verdict(steps in proptest::collection::vec(step(), 1..32)) {
        let mut state = PrLoop::initial_state();
        // The model: the tier the approvals reached, the rounds, what the last began on.
        let mut tier: Option<usize> = None;
        let mut rounds: Vec<u32> = vec![];
        let mut last: Option<Basis> = None;
        for (i, s) in steps.iter().enumerate() {
            let ctx = crate::support::ctx(i as u32);
            let (command, basis, claimed) = match s {
                Step::Observe { row, head, depth, claim, ceiling } => {
                    let c = claimed(*claim, &state);
                    (observe(*row, *head, *depth, c, *ceiling), Some((*head, *row)), c)
                }
                Step::Resolve(a) => (resolve(*a, &state), None, None),
            };
            let decided = PrLoop::decide(&state, &command, &ctx);
            // A reading claiming another tier than the journal's is refused.
            if let (Some(t), Some(c)) = (tier, claimed) {
                if t != c {
                    prop_assert!(decided.is_err(), "claimed t{} at t{}: {:?}", c, t, decided);
                }
            }
            let Ok(events) = decided else { continue };
            let mut started = false;
            for e in &events {
                match e {
                    Event::Observed { tiers: Some(t), .. } => {
                        let c = LADDER.iter().position(|r| *r == t.current).unwrap();
                        prop_assert!(tier.map_or(true, |t| t == c), "accepted a claim of t{} at {:?}", c, tier);
                        tier.get_or_insert(c);
                    }
                    Event::RoundStarted { round, .. } => {
                        let b = basis.expect("only an observation starts a round");
                        prop_assert!(is_new(last, b), "a round on the same head and verdict: {:?} after {:?}", b, last);
                        prop_assert_eq!(*round, pr_loop::next_round(&rounds));
                        rounds.push(*round);
                        last = Some(b);
                        started = true;
                    }
                    Event::EscalationApplied { to, approval_token } => {
                        let State::EscalationProposed { proposal, .. } = &state else {
                            return Err(TestCaseError::fail("applied with nothing proposed"));
                        };
                        prop_assert_eq!(proposal.token.as_deref(), Some(approval_token.as_str()));
                        let from = tier.expect("a proposal follows a tier context");
                        prop_assert_eq!((proposal.from.as_str(), to.as_str()), (LADDER[from], LADDER[from + 1]));
                        tier = Some(from + 1);
                    }
                    _ => {}
                }
            }
            // Every round-starting row on a new basis starts one.
            if let (Some(b), Step::Observe { row, .. }) = (basis, s) {
                if *row < 3 && is_new(last, b) {
                    prop_assert!(started, "row {} on a new basis {:?} started no round", ROWS[*row], b);
                }
            }
            state = events.iter().fold(state, PrLoop::evolve);
            let l = state.looped().expect("an accepted step leaves a loop");
            prop_assert_eq!(l.current_tier(), tier.map(|t| LADDER[t]));
            prop_assert_eq!(&l.rounds_seen, &rounds);
        }
    }
}

/// The generated sequences reach what the property guards: approvals, refused
/// claims and rounds both started and not started on a round-starting row.
#[test]
fn generated_sequences_reach_approvals_and_repeated_rows() {
    let (mut applied, mut refused_claims, mut repeats) = (0, 0, 0);
    for steps in crate::support::sample(proptest::collection::vec(step(), 1..32), 300) {
        let mut state = PrLoop::initial_state();
        for (i, s) in steps.iter().enumerate() {
            let command = match s {
                Step::Observe {
                    row,
                    head,
                    depth,
                    claim,
                    ceiling,
                } => observe(*row, *head, *depth, claimed(*claim, &state), *ceiling),
                Step::Resolve(a) => resolve(*a, &state),
            };
            match PrLoop::decide(&state, &command, &crate::support::ctx(i as u32)) {
                Ok(events) => {
                    let started = events
                        .iter()
                        .any(|e| matches!(e, Event::RoundStarted { .. }));
                    if matches!(s, Step::Observe { row, .. } if *row < 3) && !started {
                        repeats += 1;
                    }
                    applied += events
                        .iter()
                        .filter(|e| matches!(e, Event::EscalationApplied { .. }))
                        .count();
                    state = events.iter().fold(state, PrLoop::evolve);
                }
                Err(r)
                    if r.violations
                        .iter()
                        .any(|v| v.predicate == "tier-from-journal") =>
                {
                    refused_claims += 1
                }
                Err(_) => {}
            }
        }
    }
    assert!(
        applied >= 20 && refused_claims >= 20 && repeats >= 20,
        "applied {applied}, refused claims {refused_claims}, repeated rows {repeats}"
    );
}
