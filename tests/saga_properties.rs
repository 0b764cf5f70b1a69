//! Property tests of the saga thread; seeds in proptest-regressions/saga.txt.

use cairn::machines::evidence::{AbsPath, CommandRun, FullCommit, RefName};
use cairn::machines::saga::{
    next_round, Command, Event, Phase, QaOutcome, Saga, Save, Scenario, ScenarioResult,
};
use cairn::{Context, Machine, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/saga.txt"
        )))),
        ..Config::default()
    }
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

fn verdict() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (proptest::sample::select(&["tests", "lint", "review"][..]), proptest::sample::select(&["done", "in-progress", "blocked", "failed", "halted", "not-reached"][..]), "[a-z:#0-9]{0,6}")
            .prop_map(|(g, s, r)| format!("{g}:{s}:{r}")),
        1 => "[a-z:]{0,10}",
        1 => Just("tests:green:x".to_owned()),
    ]
}

fn phase() -> impl Strategy<Value = Option<Phase>> {
    proptest::option::of(proptest::sample::select(
        &[Phase::Plan, Phase::Work, Phase::Qa, Phase::Retro][..],
    ))
}

fn result() -> impl Strategy<Value = ScenarioResult> {
    // Failures weigh most: only they count against the allowance, and the
    // extension is reached only past five of them.
    prop_oneof![
        2 => Just(ScenarioResult::Passed),
        5 => Just(ScenarioResult::Failed),
        1 => Just(ScenarioResult::Blocked),
        1 => Just(ScenarioResult::NotRun),
    ]
}

/// A generated step: a save or a QA cycle (and, to open QA, the merge of `U1`).
#[derive(Debug, Clone)]
pub enum Step {
    /// Given: PR-ready passed for the thread's review (its event, not a
    /// command: the gate's git readings are not what these properties are about).
    Ready,
    /// `U1` takes the merge turn.
    Take,
    /// `U1`'s holder records its merge.
    Merged,
    Save {
        phase: Option<Phase>,
        rounds: Option<Vec<u32>>,
        verdicts: Vec<String>,
        next_round: Option<u32>,
    },
    Qa {
        results: Vec<ScenarioResult>,
        extension: bool,
    },
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (
            phase(),
            proptest::option::of(proptest::collection::vec(0u32..6, 0..4)),
            proptest::collection::vec(verdict(), 0..3),
            proptest::option::weighted(0.05, 1u32..9)
        )
            .prop_map(|(phase, rounds, verdicts, next_round)| Step::Save {
                phase,
                rounds,
                verdicts,
                next_round
            }),
        (
            proptest::collection::vec(result(), 0..3),
            prop::bool::weighted(0.2)
        )
            .prop_map(|(results, extension)| Step::Qa { results, extension }),
    ]
}

/// The event PR-ready records for a review of `2222…`.
pub fn ready_for_pr() -> Event {
    serde_json::from_value(serde_json::json!({"type": "ready-for-pr",
        "reviewed_sha": "2".repeat(40), "commits_since_review": 0}))
    .expect("a PR-ready event")
}

/// The events `step` yields in `state`: [`Step::Ready`]'s given event, else
/// what `decide` accepts of its command.
pub fn events_of(
    state: &<Saga as Machine>::State,
    step: &Step,
) -> Result<Vec<Event>, cairn::Rejection> {
    match step {
        Step::Ready => Ok(vec![ready_for_pr()]),
        other => Saga::decide(state, &command(other), &ctx()),
    }
}

pub fn command(step: &Step) -> Command {
    match step {
        Step::Ready => unreachable!("Step::Ready is a given event, not a command"),
        Step::Take => take("U1"),
        Step::Merged => mark_merged("U1"),
        Step::Save {
            phase,
            rounds,
            verdicts,
            next_round,
        } => Command::Save {
            saga_id: "issue-1".into(),
            save: Box::new(Save {
                lifecycle_phase: *phase,
                rounds_seen: rounds.clone(),
                gate_verdicts: verdicts.clone(),
                next_round: *next_round,
                ..Save::default()
            }),
        },
        Step::Qa { results, extension } => Command::Qa {
            scenarios: results
                .iter()
                .enumerate()
                .map(|(i, r)| Scenario {
                    name: format!("s{i}"),
                    result: *r,
                    cause: (*r == ScenarioResult::Blocked).then(|| "env".to_owned()),
                    evidence: None,
                })
                .collect(),
            extension: *extension,
            limits: None,
        },
    }
}

pub fn sequence() -> impl Strategy<Value = Vec<Step>> {
    let work = Step::Save {
        phase: Some(Phase::Work),
        rounds: Some(vec![1]),
        verdicts: vec![],
        next_round: None,
    };
    // QA runs on merged threads only: the thread is minted at `work` and `U1` merged.
    proptest::collection::vec(step(), 0..40).prop_map(move |rest| {
        [work.clone(), Step::Ready, Step::Take, Step::Merged]
            .into_iter()
            .chain(rest)
            .collect()
    })
}

proptest! {
    #![proptest_config(config(512))]

    /// `next_round` = max(rounds_seen)+1; no sequence reaches `qa` without an
    /// all-passed QA cycle; the QA allowance is never exceeded and the extension is
    /// granted at most once; a save with an invalid verdict writes nothing.
    #[test]
    fn saga_invariants(seq in sequence()) {
        let mut state = Saga::initial_state();
        let mut extensions = 0;
        for step in &seq {
            let decided = events_of(&state, step);
            if let Step::Save { verdicts, next_round, .. } = step {
                let bad = verdicts.iter().any(|v| cairn::machines::saga::parse_gate_verdict(v).is_err());
                if bad || next_round.is_some() {
                    prop_assert!(decided.is_err(), "an invalid save was accepted");
                }
            }
            let Ok(events) = decided else { continue };
            for e in &events {
                let before = state.thread().map(|t| t.lifecycle_phase);
                if let Event::QaExtensionGranted = e { extensions += 1; }
                if let Event::AdvancedToQa = e {
                    let last = events.iter().find_map(|x| match x { Event::QaCycleRecorded { scenarios, outcome, .. } => Some((scenarios.clone(), *outcome)), _ => None });
                    let (scenarios, outcome) = last.expect("a QA advance comes with its cycle");
                    prop_assert_eq!(outcome, QaOutcome::Passed);
                    prop_assert!(!scenarios.is_empty() && scenarios.iter().all(|s| s.result == ScenarioResult::Passed));
                }
                // Only a failure counts against the allowance, and only inside it.
                if let (Event::QaCycleRecorded { cycle, outcome, scenarios, .. }, Some(t)) = (e, state.thread()) {
                    let before_cycles = t.qa.post_merge_cycles;
                    match outcome {
                        QaOutcome::ReEntersTheBuildLoop => {
                            prop_assert_eq!(*cycle, before_cycles + 1);
                            prop_assert!(scenarios.iter().any(|s| s.result == ScenarioResult::Failed));
                            prop_assert!(!scenarios.iter().any(|s| s.result == ScenarioResult::Blocked));
                        }
                        _ => prop_assert_eq!(*cycle, before_cycles, "{:?} counted a cycle", outcome),
                    }
                }
                state = Saga::evolve(state, e);
                let after = state.thread().map(|t| t.lifecycle_phase);
                if after == Some(Phase::Qa) && before != Some(Phase::Qa) {
                    prop_assert!(matches!(e, Event::AdvancedToQa), "reached qa through {:?}", e);
                }
            }
            if let Some(t) = state.thread() {
                prop_assert_eq!(t.next_round(), next_round(&t.rounds_seen));
                prop_assert_eq!(t.next_round(), t.rounds_seen.iter().max().map_or(1, |m| m + 1));
                prop_assert!(t.qa.post_merge_cycles <= 6);
                prop_assert!(t.qa.post_merge_cycles <= t.qa.allowed());
                prop_assert!(extensions <= 1);
            }
        }
    }
}

/// `unit`'s holder records its merge, with the readings git gave (both ancestry
/// checks exit 0: the branch is in the tip, the tip on `main`).
fn mark_merged(unit: &str) -> Command {
    let tip = FullCommit::parse(&"1".repeat(40)).expect("40 hex digits");
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
    let runs = cairn::machines::saga::gates::merged_plan(
        "/repo",
        Some(&format!("work/{unit}")),
        Some(&"2".repeat(40)),
        &tip,
        "main",
    )
    .into_iter()
    .map(|argv| CommandRun {
        argv,
        env: None,
        exit_status: Some(0),
        stdout: String::new(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at.clone(),
    })
    .collect();
    Command::MarkMerged {
        unit: unit.into(),
        holder: unit.into(),
        merged_tip: tip,
        repo: AbsPath::parse("/repo").expect("absolute"),
        target: RefName::parse("main").expect("not option-like"),
        runs,
        from: None,
        repository: vec![],
    }
}

fn take(unit: &str) -> Command {
    Command::TakeTurn {
        unit: unit.into(),
        branch: RefName::parse(&format!("work/{unit}")).expect("not option-like"),
        merge_worktree: AbsPath::parse("/wt").expect("absolute"),
        holder: unit.into(),
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Two writers, any interleaving of read and append with the journal's
    /// optimistic concurrency (an append at a stale version is refused): at most
    /// one unit is ever `merging`.
    #[test]
    fn at_most_one_unit_merging_under_two_writers(schedule in proptest::collection::vec((0usize..2, any::<bool>(), 0usize..3, any::<bool>()), 0..40)) {
        let most = two_writers(&schedule);
        prop_assert!(most <= 1, "{} units merging", most);
    }
}

/// Runs a two-writer schedule: the most units ever `merging` at once.
fn two_writers(schedule: &[(usize, bool, usize, bool)]) -> usize {
    use cairn::machines::saga::gates::MergeState;
    let units = ["U1", "U2", "U3"];
    let mut log: Vec<Event> = vec![];
    let fold = |log: &[Event]| log.iter().fold(Saga::initial_state(), Saga::evolve);
    // Mint the thread.
    let minted = Saga::decide(
        &Saga::initial_state(),
        &command(&Step::Save {
            phase: Some(Phase::Work),
            rounds: None,
            verdicts: vec![],
            next_round: None,
        }),
        &ctx(),
    )
    .expect("a work-phase save mints the thread");
    log.extend(minted);
    log.push(ready_for_pr());
    let mut snapshot: [Option<usize>; 2] = [None, None];
    let mut most = 0;
    for &(w, read, u, merged) in schedule {
        let Some(v) = snapshot[w].take().filter(|_| !read) else {
            snapshot[w] = Some(log.len());
            continue;
        };
        let seen = fold(&log[..v]);
        let cmd = if merged {
            mark_merged(units[u])
        } else {
            take(units[u])
        };
        if let Ok(events) = Saga::decide(&seen, &cmd, &ctx()) {
            if v == log.len() {
                log.extend(events);
            }
        }
        let now = fold(&log);
        let merging = now.thread().map_or(0, |t| {
            t.gates
                .units
                .values()
                .filter(|r| r.merge_state == MergeState::Merging)
                .count()
        });
        most = most.max(merging);
    }
    most
}

/// The generated sequences reach what the invariants are about: of 500, some
/// advance to qa and some are granted the QA extension; of 500 two-writer
/// schedules, some get a unit `merging`.
#[test]
fn generated_sagas_reach_qa_and_merging() {
    let (mut qa, mut extended) = (0, 0);
    for seq in crate::support::sample(sequence(), 500) {
        let mut state = Saga::initial_state();
        let (mut reached, mut granted) = (false, false);
        for step in &seq {
            let Ok(events) = events_of(&state, step) else {
                continue;
            };
            reached |= events.iter().any(|e| matches!(e, Event::AdvancedToQa));
            granted |= events
                .iter()
                .any(|e| matches!(e, Event::QaExtensionGranted));
            state = events.iter().fold(state, Saga::evolve);
        }
        qa += usize::from(reached);
        extended += usize::from(granted);
    }
    let schedules =
        proptest::collection::vec((0usize..2, any::<bool>(), 0usize..3, any::<bool>()), 0..40);
    let merging = crate::support::sample(schedules, 500)
        .iter()
        .filter(|s| two_writers(s) == 1)
        .count();
    eprintln!("of 500: {qa} reach qa, {extended} extended; {merging} schedules merge a unit");
    assert!(
        qa >= 10 && extended >= 5 && merging >= 50,
        "of 500: {qa} reach qa, {extended} extended; {merging} schedules merge a unit"
    );
}
