//! Property tests of the ship machine over generated event sequences (every
//! combination of git facts, fed through the plans' exact argv). Seeds in
//! proptest-regressions/ship.txt.

use cairn::machines::ship::{
    preflight::Preflight, recovery::OpClass, Event, Mutation, Ship, Stage, State,
};
use cairn::{Context, Machine, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use crate::support::ship::{command, happy, step, world, Step, World};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/ship.txt"
        )))),
        ..Config::default()
    }
}

/// A happy prefix of random length, then random steps in random worlds.
pub fn sequence() -> impl Strategy<Value = Vec<(Step, World)>> {
    (
        0usize..=7,
        proptest::collection::vec((step(), world()), 0..24),
    )
        .prop_map(|(n, rest)| happy()[..n].iter().cloned().chain(rest).collect::<Vec<_>>())
}

fn ctx() -> Context {
    Context {
        now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses"),
        fresh_ids: vec![],
        session: None,
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

proptest! {
    #![proptest_config(config(2048))]

    /// `git worktree add` is never recorded unless the preflight said `clean`; never
    /// more than one ff-merge retry per session; resume always picks the phase the
    /// tip implies; `shipped` only after every gate of every phase.
    #[test]
    fn ship_keeps_its_lifecycle_invariants(seq in sequence()) {
        let graph = Ship::graph();
        let mut state = Ship::initial_state();
        let mut attempts_this_session = 0u32;
        let (mut refined, mut merged, mut verified, mut checked) = (false, false, false, false);
        for (step, w) in &seq {
            let c = command(&state, step, w);
            let Ok(events) = Ship::decide(&state, &c, &ctx()) else { continue };
            for e in &events {
                // A git mutation's result is recorded only after the step was announced.
                let begun = state.run().and_then(|r| r.begun.as_ref().map(|f| f.step));
                let needs = match e {
                    Event::WorktreeCreated { .. } | Event::WorktreeCreationFailed { .. } => Some(vec![Mutation::Create]),
                    Event::MergeAccepted { .. } | Event::MergeRejected { .. } | Event::MergeStopped { .. }
                    | Event::MergeBlocked { .. } | Event::MergeTipMoved { .. } => Some(vec![Mutation::Merge]),
                    Event::TornDown { .. } | Event::TeardownPartial { .. } | Event::MergeLost { .. } => Some(vec![Mutation::Teardown]),
                    Event::ResumeBlocked { .. } | Event::ResumedPhase1(_) | Event::ResumedPhase2(_) | Event::ResumedPhase3(_) | Event::ResumedTeardown(_) => {
                        Some(vec![Mutation::Resume, Mutation::Create, Mutation::Merge, Mutation::Teardown])
                    }
                    _ => None,
                };
                if let Some(allowed) = needs {
                    prop_assert!(begun.is_some_and(|b| allowed.contains(&b)), "{} without its begin ({:?})", Ship::event_name(e), begun);
                }
                match e {
                    // A step in flight is taken over only from the owner it names.
                    Event::StepBegun { taken_from, .. } => {
                        let owner = state.run().and_then(|r| r.begun.as_ref()).and_then(|f| f.owner.clone());
                        prop_assert_eq!(taken_from, &owner, "a take-over names the owner shown gone");
                    }
                    Event::WorktreeCreated { .. } => prop_assert!(
                        matches!(state.stage(), Some(Stage::Preflighted { outcome: Preflight::Clean })),
                        "worktree-created from {:?}", state.stage()
                    ),
                    Event::MergeAccepted { .. } | Event::MergeRejected { .. } | Event::MergeStopped { .. } => {
                        // Only the tip the pre-merge checks bound is ever merged.
                        if let Event::MergeAccepted { merged_sha, .. } = e {
                            let bound = match state.stage() {
                                Some(Stage::MergeReady { tip } | Stage::MergeRejected { tip }) => tip.clone(),
                                _ => None,
                            };
                            prop_assert_eq!(bound.as_deref(), Some(merged_sha.as_str()), "merged a tip nobody checked");
                        }
                        attempts_this_session += 1;
                        prop_assert!(attempts_this_session <= 2, "a second ff-merge retry");
                        merged |= matches!(e, Event::MergeAccepted { .. });
                    }
                    // Teardown found the merge gone from TARGET_BRANCH: nothing was
                    // removed, and the run is no longer merged (a resume redoes phase 3).
                    Event::MergeLost { .. } => {
                        merged = false;
                    }
                    Event::ResumedPhase1(r) | Event::ResumedPhase2(r) | Event::ResumedPhase3(r) | Event::ResumedTeardown(r) => {
                        let phase = e.resumption().map(|(_, p)| p);
                        let want = if merged || refined { 3 } else if r.commits_ahead == 0 { 1 } else { 2 };
                        prop_assert_eq!(phase, Some(want));
                        prop_assert_eq!(matches!(e, Event::ResumedTeardown(_)), merged, "teardown resumes only after the merge");
                        attempts_this_session = 0;
                    }
                    Event::ExternalOpRecorded { class: OpClass::DaemonManagement, .. } => {
                        let failed = state.run().is_some_and(|r| r.denials.iter().any(|(c, n)| *c != OpClass::DaemonManagement && *n > 0));
                        prop_assert!(failed, "a daemon start before any normal command failed");
                    }
                    Event::Abandoned { .. } => prop_assert!(
                        !state.stage().is_some_and(Stage::has_worktree),
                        "abandoned with the worktree left behind"
                    ),
                    Event::Refined { .. } => refined = true,
                    Event::Phase1Verified { .. } => verified = true,
                    Event::ScopeProceeded { .. } => verified = true,
                    Event::PreMergeChecked { .. } => checked = true,
                    _ => {}
                }
                let from = Ship::state_name(&state);
                state = Ship::evolve(state, e);
                prop_assert!(
                    graph.has_edge(from, Ship::event_name(e), Ship::state_name(&state)),
                    "`{}` from `{}` to `{}` is not an edge", Ship::event_name(e), from, Ship::state_name(&state)
                );
                if matches!(state.stage(), Some(Stage::Shipped)) {
                    prop_assert!(verified && refined && checked && merged, "shipped without every gate");
                }
            }
        }
    }
}

#[test]
fn only_clean_admits_creation() {
    use cairn::machines::ship::{admits, Verb};
    let run = match Ship::evolve(
        State::Idle,
        &match command(&State::Idle, &Step::Open(true), &World::happy()) {
            cairn::machines::ship::Command::Open { params, anchor, .. } => Event::Opened {
                params,
                repo_root: cairn::machines::evidence::AbsPath::parse(crate::support::ship::ROOT)
                    .expect("a fixed absolute root"),
                anchor,
                acts_for: None,
                repository: None,
            },
            _ => unreachable!("an open step makes an open command"),
        },
    ) {
        State::Active { run, .. } => run,
        State::Idle => unreachable!("opened makes a run"),
    };
    let outcomes = [
        Preflight::WrongRepo("/x".into()),
        Preflight::RepoAnchorDrift,
        Preflight::PrimaryDirty,
        Preflight::PrimaryOffBranch,
        Preflight::WorktreeLive("b".into()),
        Preflight::DeadLock("b".into()),
        Preflight::BranchOnly("b".into()),
        Preflight::PathOnly("/p".into()),
        Preflight::Unreadable("x".into()),
        Preflight::ReviewStatus(cairn::Outcome::Unknown),
        Preflight::Clean,
    ];
    for o in outcomes {
        let s = State::Active {
            run: run.clone(),
            stage: Stage::Preflighted { outcome: o.clone() },
        };
        assert_eq!(
            admits(&s, Verb::Begin(Mutation::Create)).is_ok(),
            o == Preflight::Clean,
            "{o:?}"
        );
        assert!(admits(&s, Verb::Create).is_err(), "never without its begin");
    }
}

/// The generated worlds can reach the end: the happy prefix ships (so the
/// properties above are exercised on deep sequences, not only refusals).
#[test]
fn the_happy_world_ships() {
    let mut state = Ship::initial_state();
    for (step, w) in happy() {
        let c = command(&state, &step, &w);
        let events = Ship::decide(&state, &c, &ctx()).unwrap_or_else(|r| panic!("{step:?}: {r:?}"));
        state = events.iter().fold(state, Ship::evolve);
    }
    assert_eq!(Ship::state_name(&state), "shipped");
}
