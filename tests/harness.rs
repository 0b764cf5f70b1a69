//! The built-in machines through cairn's generic harness (`cairn::testing`): the
//! universal invariants on the real journal. Machine-specific invariants stay in
//! their own modules. Seeds: proptest-regressions/<machine>-harness.txt.

use cairn::machines::build_loop::{
    BuildLoop, CheckRun, Command as IterateCommand, ExitCriterion, Part, Preview,
};
use cairn::machines::claim::{Claim, ClaimId, Command as ClaimCommand, Owner, Token, Ttl};
use cairn::machines::evidence::FullCommit;
use cairn::machines::park::Park;
use cairn::machines::pr_loop::PrLoop;
use cairn::machines::saga::Saga;
use cairn::machines::ship::Ship;
use cairn::machines::work::node::WorkNode;
use cairn::testing::{check, Config};
use proptest::prelude::*;

use crate::support::pr::STATES;

use crate::park_properties::{current_attempt, park_command, step};
use crate::pr_properties::pr_command;

#[test]
fn park_keeps_the_universal_invariants() {
    let happy = [
        crate::park_properties::Step::Prepare {
            other_intent: false,
        },
        crate::park_properties::Step::Evaluate {
            obs: 1,
            stale: false,
        },
        crate::park_properties::Step::Evaluate {
            obs: 0,
            stale: false,
        },
        crate::park_properties::Step::Validate {
            good: true,
            stale: false,
        },
        crate::park_properties::Step::Confirm {
            comments: 0,
            other_bytes: false,
            stale: false,
        },
    ];
    let steps = (0usize..=5, proptest::collection::vec(step(), 0..10))
        .prop_map(move |(n, rest)| happy[..n].iter().cloned().chain(rest).collect::<Vec<_>>());
    check::<Park, _, _>(
        &Config {
            cases: 48,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/park-harness.txt"
            )),
            session: None,
        },
        steps,
        |state, s| park_command(&current_attempt(state), s).0,
    );
}

#[test]
fn pr_loop_keeps_the_universal_invariants() {
    let kinds = (0u8..12, proptest::sample::select(&STATES[..]));
    let steps = (0usize..=3, proptest::collection::vec(kinds, 0..16)).prop_map(|(n, rest)| {
        [
            (0u8, "approved-fresh"),
            (5, "approved-fresh"),
            (7, "approved-fresh"),
        ][..n]
            .iter()
            .cloned()
            .chain(rest)
            .collect::<Vec<_>>()
    });
    check::<PrLoop, _, _>(
        &Config {
            cases: 48,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/pr-loop-harness.txt"
            )),
            session: None,
        },
        steps,
        |_state, (kind, pr_state)| pr_command(*kind, pr_state),
    );
}

#[test]
fn ship_keeps_the_universal_invariants() {
    check::<Ship, _, _>(
        &Config {
            cases: 48,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/ship-harness.txt"
            )),
            session: None,
        },
        crate::ship_properties::sequence(),
        |state, (step, world)| crate::support::ship::command(state, step, world),
    );
}

#[test]
fn work_node_keeps_the_universal_invariants() {
    check::<WorkNode, _, _>(
        &Config {
            cases: 48,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/work-node-harness.txt"
            )),
            session: Some("s1"),
        },
        crate::work_properties::sequence()
            .prop_map(|seq| seq.into_iter().map(|(s, _)| s).collect::<Vec<_>>()),
        crate::support::work::command,
    );
}

#[test]
fn saga_keeps_the_universal_invariants() {
    check::<Saga, _, _>(
        &Config {
            cases: 48,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/saga-harness.txt"
            )),
            session: None,
        },
        crate::saga_properties::sequence(),
        |_state, step| crate::saga_properties::command(step),
    );
}

#[test]
fn build_loop_keeps_the_universal_invariants() {
    let at = cairn::Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
    let run = move |exit: Option<i32>| cairn::machines::evidence::CommandRun {
        argv: vec!["true".into()],
        env: None,
        exit_status: exit,
        stdout: "ok\n".into(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at.clone(),
    };
    let steps = proptest::collection::vec(
        (proptest::option::of(0i32..3), any::<bool>(), any::<bool>()),
        0..8,
    );
    check::<BuildLoop, _, _>(
        &Config {
            cases: 32,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/build-loop-harness.txt"
            )),
            session: None,
        },
        steps,
        move |_state, (exit, timed_out, full)| {
            let criterion = ExitCriterion {
                baseline: vec!["true".into()],
                functional_checks: vec![],
                scenario_smoke: vec![],
                preview: Preview {
                    declared: false,
                    command: None,
                },
            };
            let at = cairn::Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
            IterateCommand::Iterate {
                unit: "U1".into(),
                // Not green-able when not 40 hex digits (a 64-hex id: a short id
                // cannot be built).
                revision: FullCommit::parse(&if *full {
                    "1".repeat(40)
                } else {
                    "1".repeat(64)
                })
                .expect("a full id"),
                criterion,
                checks: vec![CheckRun {
                    part: Part::Baseline,
                    name: "true".into(),
                    command: "true".into(),
                    argv: Some(vec!["true".into()]),
                    run: Some(run(*exit)),
                    timed_out: *timed_out,
                    signal: None,
                }],
                started_at: at.clone(),
                finished_at: at,
            }
        },
    );
}

#[test]
fn claim_keeps_the_universal_invariants() {
    // (verb, client, ttl in seconds, whether the current token is presented). Steps
    // are a minute apart, so a ttl under 60 s has expired by the next step.
    let steps = proptest::collection::vec((0u8..3, 0u64..3, 1u64..150, any::<bool>()), 0..16);
    check::<Claim, _, _>(
        &Config {
            cases: 32,
            regressions: Some(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../proptest-regressions/claim-harness.txt"
            )),
            session: None,
        },
        steps,
        |state, (verb, client, ttl, current)| {
            // Generated values are within every bound: `c0`…`c2`, tokens from 1, ttl 1..150.
            let claim_id = ClaimId::parse(&format!("c{client}")).expect("a valid claim id");
            let token = match state.last_token() {
                Some(t) if *current => t,
                _ => Token::new(client + 1).expect("a positive token"),
            };
            let ttl_seconds = Ttl::from_seconds(*ttl).expect("a ttl in bounds");
            match verb {
                0 => ClaimCommand::Acquire {
                    owner: Owner::parse(&format!("agent-{client}")).expect("a valid owner"),
                    claim_id,
                    ttl_seconds,
                },
                1 => ClaimCommand::Renew {
                    claim_id,
                    token,
                    ttl_seconds,
                },
                _ => ClaimCommand::Release { claim_id, token },
            }
        },
    );
}
