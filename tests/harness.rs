//! The built-in machines through cairn's graph-driven harness (`cairn::testing`):
//! every declared state and edge reached through the real journal, with the
//! universal invariants. park and build-loop here (the distinct steps of their
//! strategies cover their graphs); pr-loop, ship, work-node and saga, which need
//! steps their property tests do not generate, in `harness_<machine>.rs`.
//! Machine-specific invariants stay in their own modules. Seeds:
//! proptest-regressions/<machine>-harness.txt.

use cairn::machines::build_loop::{
    BuildLoop, CheckRun, Command as IterateCommand, ExitCriterion, Part, Preview,
};
use cairn::machines::claim::{Claim, ClaimId, Command as ClaimCommand, Owner, Token, Ttl};
use cairn::machines::evidence::FullCommit;
use cairn::machines::park::Park;
use cairn::testing::{check, Config};
use proptest::prelude::*;

use crate::park_properties::{current_attempt, park_command, step};

#[test]
fn park_covers_its_graph() {
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
fn build_loop_covers_its_graph() {
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
        (
            proptest::option::of(0i32..3),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        0..8,
    );
    // The tree read before and after the checks: at the revision, clean only when
    // `held` (an edit after the checks otherwise).
    let tree = move |revision: &str, held: bool| {
        let plan = cairn::machines::evidence::git::tree_plan("/r");
        let pinned: std::collections::BTreeMap<String, String> = [
            ("GIT_INDEX_FILE", "/tmp/cairn-index-1"),
            (
                "GIT_ATTR_SOURCE",
                cairn::machines::evidence::git::EMPTY_TREE,
            ),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let read = |argv: &Vec<String>, stdout: &str| cairn::machines::evidence::CommandRun {
            argv: argv.clone(),
            env: Some(pinned.clone()),
            exit_status: Some(0),
            stdout: stdout.to_owned(),
            stderr: String::new(),
            started_at: cairn::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            finished_at: cairn::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
        };
        let head = format!("{revision}\n");
        cairn::machines::build_loop::TreeHeld {
            repo: "/r".into(),
            record: None,
            repository: vec![],
            watch: Some(cairn::machines::work::node::TreeWatch {
                method: "inotify".into(),
                changed: vec![],
                overflow: false,
                ignored: None,
            }),
            before: vec![
                read(&plan[0], "/r\n"),
                read(&plan[1], &head),
                read(&plan[2], ""),
            ],
            after: vec![
                read(&plan[0], "/r\n"),
                read(&plan[1], &head),
                read(&plan[2], if held { "" } else { " M a.txt\n" }),
            ],
        }
    };
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
        move |_state, (exit, timed_out, full, held)| {
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
            // Not green-able when not 40 hex digits (a 64-hex id: a short id
            // cannot be built).
            let revision = if *full {
                "1".repeat(40)
            } else {
                "1".repeat(64)
            };
            IterateCommand::Iterate {
                unit: "U1".into(),
                revision: FullCommit::parse(&revision).expect("a full id"),
                tree: Some(Box::new(tree(&revision, *held))),
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
