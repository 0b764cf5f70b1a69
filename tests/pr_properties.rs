//! Property tests of the PR loop; seeds in proptest-regressions/pr-loop.txt.

use cairn::machines::pr_loop::classify::{self, Freshness, PrState, Review};
use cairn::machines::pr_loop::escalation::{self, Step, Tiers};
use cairn::machines::pr_loop::{
    self, Command, Decision, Disposition, Event, MergeEvidence, Mode, ObserveInput, Observed,
    Offer, PrLoop, State,
};
use cairn::Machine;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{json, Value};

use crate::support::pr::*;

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/pr-loop.txt"
        )))),
        ..Config::default()
    }
}

/// A field value: valid enum values, plus missing, null and unknown ones.
fn field(values: &'static [&'static str]) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        8 => proptest::sample::select(values).prop_map(|v| Some(json!(v))),
        1 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!("SOMETHING_NEW"))),
    ]
}

fn rollup() -> impl Strategy<Value = Option<Value>> {
    let entry = prop_oneof![
        (
            proptest::sample::select(&["COMPLETED", "IN_PROGRESS", "QUEUED", "WEIRD"][..]),
            proptest::sample::select(
                &[
                    "SUCCESS",
                    "FAILURE",
                    "NEUTRAL",
                    "SKIPPED",
                    "TIMED_OUT",
                    "",
                    "ODD"
                ][..]
            )
        )
            .prop_map(|(s, c)| check_run("t", s, c)),
        proptest::sample::select(&["SUCCESS", "PENDING", "FAILURE", "ERROR", "ODD"][..])
            .prop_map(|s| status_context("c", s)),
    ];
    prop_oneof![8 => proptest::collection::vec(entry, 0..4).prop_map(|v| Some(Value::Array(v))), 1 => Just(None), 1 => Just(Some(Value::Null))]
}

/// A reading: generated field by field (mostly refused), or one of the nine
/// fixtures (so every row, and an approved clean PR, is reached).
fn reading() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => generated_reading(),
        1 => proptest::sample::select(&STATES[..]).prop_map(crate::support::pr::reading),
    ]
}

fn generated_reading() -> impl Strategy<Value = Value> {
    (
        field(&["OPEN", "CLOSED", "MERGED"]),
        field(&["APPROVED", "CHANGES_REQUESTED", "REVIEW_REQUIRED", ""]),
        field(&["MERGEABLE", "CONFLICTING", "UNKNOWN"]),
        field(&["BEHIND", "BLOCKED", "CLEAN", "DIRTY", "DRAFT", "HAS_HOOKS", "UNKNOWN", "UNSTABLE"]),
        rollup(),
        prop_oneof![8 => any::<bool>().prop_map(|b| Some(json!(b))), 1 => Just(None), 1 => Just(Some(json!("yes")))],
        prop_oneof![4 => Just(Some(Value::Null)), 3 => Just(Some(json!("2026-11-30T05:00:00Z"))), 1 => Just(None), 1 => Just(Some(json!("soon")))],
    )
        .prop_map(|(state, decision, mergeable, mss, rollup, draft, merged_at)| {
            let mut m = serde_json::Map::new();
            for (k, v) in [("state", state), ("reviewDecision", decision), ("mergeable", mergeable), ("mergeStateStatus", mss), ("statusCheckRollup", rollup), ("isDraft", draft), ("mergedAt", merged_at)] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

fn input(
    reading: Value,
    commits: Option<u64>,
    threads: Option<u64>,
    destination: &str,
) -> ObserveInput {
    serde_json::from_value(json!({"pr": PR, "reading": reading, "reviewed_sha": SHA, "commits_since_review": commits, "unresolved_threads": threads, "destination": destination})).unwrap()
}

/// What cairn observed, as generated: nothing, or its freshness runs (the ancestry
/// exit status and the count) — fresh, stale, or `HEAD` behind the reviewed commit.
fn cairn_freshness() -> impl Strategy<Value = Option<(i32, u64)>> {
    prop_oneof![
        2 => Just(None),
        2 => Just(Some((0, 0))),
        1 => (1u64..3).prop_map(|n| Some((0, n))),
        1 => Just(Some((1, 0))),
    ]
}

/// The review the model expects: stale if anyone shows it stale, fresh only on
/// cairn's own runs showing it fresh, else unknown.
fn model_review(commits: Option<u64>, cairn: Option<(i32, u64)>) -> Review {
    match (commits, cairn) {
        (Some(n), _) if n > 0 => Review::Stale,
        (_, None) => Review::Unknown,
        (_, Some((0, 0))) => Review::Fresh,
        (_, Some(_)) => Review::Stale,
    }
}

/// The pr-loop command a generated step stands for. An approved-fresh reading
/// comes with cairn's freshness runs showing it fresh; a merge is recorded from
/// cairn's gh reading of the merged, reviewed head.
pub fn pr_command(kind: u8, pr_state: &str) -> Command {
    match kind {
        0..=4 => {
            let mut d = doc(pr_state, if kind % 2 == 0 { "merge" } else { "pr" });
            d["failure_shape"] = json!("depth");
            d["tiers"] = json!({"ladder": ["a", "b", "c"], "current": "a", "ceiling": "c"});
            let observed = if pr_state == "approved-fresh" {
                d.as_object_mut().unwrap().remove("commits_since_review");
                freshness_runs(0, 0)
            } else {
                Observed::default()
            };
            Command::Observe {
                input: Box::new(serde_json::from_value(d).unwrap()),
                observed: Box::new(observed),
                from: None,
            }
        }
        5 => Command::Confirm {
            what: Offer::Merge,
            operator: "op".into(),
        },
        6 => Command::Confirm {
            what: Offer::Ready,
            operator: "op".into(),
        },
        7 => {
            let mut merged = crate::support::pr::reading("merged");
            merged["headRefOid"] = json!(SHA);
            Command::RecordMerge {
                merged_at: None,
                evidence: Some(Box::new(MergeEvidence::Gh {
                    run: gh_run(&merged),
                })),
            }
        }
        8 => Command::OfferReviewRequest,
        9 => Command::ResolveEscalation {
            mode: Mode::Attended,
            decision: Decision::Apply,
            approval_token: None,
        },
        10 => Command::ResolveEscalation {
            mode: Mode::Unattended,
            decision: Decision::Apply,
            approval_token: None,
        },
        _ => Command::Dispose {
            disposition: Disposition::Paused,
            reason: "r".into(),
            operator: "op".into(),
        },
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Totality and exclusivity: every reading yields exactly one state or a typed
    /// error. A reading the parser refuses (an unknown value, a missing field, a
    /// contradiction) is refused with the parser's error; a parsed reading matches at
    /// most one row, and is refused only as an approved, clean PR whose freshness
    /// nobody observed. A merge is offered only on cairn's own fresh observation.
    #[test]
    fn classification_is_total_and_exclusive(r in reading(), commits in proptest::option::of(0u64..3), threads in proptest::option::of(0u64..2), dest in proptest::sample::select(&["plan-only", "pr", "merge", "nonprod-deploy"][..]), cairn in cairn_freshness()) {
        let doc = input(r.clone(), commits, threads, dest);
        let observed = cairn.map_or_else(Observed::default, |(a, n)| freshness_runs(a, n));
        let result = pr_loop::classify_input(&doc, &observed).map(|p| p.classification);
        let parsed = match classify::parse_reading(&r, "reading") {
            Ok(parsed) => parsed,
            Err(e) => {
                prop_assert!(e.field.starts_with("reading") && !e.rule.is_empty(), "{:?}", e);
                prop_assert_eq!(result.err(), Some(e));
                return Ok(());
            }
        };
        let review = model_review(commits, cairn);
        let f = Freshness { review, unresolved_threads: threads.unwrap_or(0) };
        let rows: Vec<PrState> = classify::guards(&parsed, &f).iter().filter(|(_, g)| *g).map(|(s, _)| *s).collect();
        prop_assert!(rows.len() <= 1, "more than one row matched: {:?}", rows);
        match &result {
            Ok(c) => {
                prop_assert_eq!(&rows, &vec![c.state]);
                // mergedAt set ⇒ merged.
                if parsed.merged_at.is_some() { prop_assert_eq!(c.state, PrState::Merged); }
                // A draft never yields a review request.
                if c.state == PrState::Draft { prop_assert!(!c.request_review); }
                // A merge is offered only for an approved PR cairn itself observed fresh.
                if c.merge_offer {
                    prop_assert_eq!(c.state, PrState::ApprovedFresh);
                    prop_assert_eq!(cairn, Some((0, 0)));
                    prop_assert!(commits.map_or(true, |n| n == 0));
                }
            }
            Err(e) => {
                // Only an approved, clean PR whose freshness is unknown falls through the table.
                prop_assert!(rows.is_empty() && review == Review::Unknown, "{:?} refused: {:?}", rows, e);
                prop_assert_eq!((e.field.as_str(), e.rule), ("repo", "review-freshness-unknown"));
            }
        }
        if review != Review::Unknown {
            prop_assert!(result.is_ok(), "a valid reading with known freshness refused: {:?}", result);
        }
    }

    /// The proposed escalation is exactly one rung and never past the ceiling.
    #[test]
    fn escalation_is_one_rung_within_the_ceiling(n in 1usize..6, current in 0usize..6, ceiling in 0usize..6) {
        let ladder: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let t = Tiers { ladder: ladder.clone(), current: format!("t{current}"), ceiling: format!("t{ceiling}") };
        match escalation::propose(&t) {
            Err(_) => prop_assert!(current >= n || ceiling >= n),
            Ok(Step::Clamped(c)) => prop_assert!(current >= ceiling || current + 1 == n, "{:?}", c),
            Ok(Step::Propose(p)) => {
                let from = ladder.iter().position(|r| *r == p.from).unwrap();
                let to = ladder.iter().position(|r| *r == p.to).unwrap();
                prop_assert_eq!(to, from + 1);
                prop_assert!(to <= ceiling);
                prop_assert_eq!(p.cost_delta, 1);
            }
        }
    }

    /// No command sequence merges without a confirmation of the offered merge; rounds
    /// go through rounds_seen only and next_round = max + 1.
    #[test]
    fn merges_need_confirmation_and_rounds_derive(prefix in 0usize..=3, rest in proptest::collection::vec((0u8..12, proptest::sample::select(&STATES[..])), 1..24)) {
        // A prefix of the merge path (observe approved-fresh, confirm, record), then anything.
        let happy = [(0u8, "approved-fresh"), (5, "approved-fresh"), (7, "approved-fresh")];
        let steps: Vec<(u8, &str)> = happy[..prefix].iter().cloned().chain(rest).collect();
        let mut merged = false;
        let ctx = crate::support::ctx(1);
        let mut state = PrLoop::initial_state();
        let mut last_confirmed = false;
        let mut rounds: Vec<u32> = Vec::new();
        for (kind, pr_state) in steps {
            let command = pr_command(kind, pr_state);
            let Ok(events) = PrLoop::decide(&state, &command, &ctx) else { continue };
            for e in &events {
                match e {
                    Event::MergeConfirmed { .. } => {
                        prop_assert!(matches!(state, State::MergeOffered { .. }), "confirmed outside merge-offered: {:?}", state);
                        last_confirmed = true;
                    }
                    Event::MergedByLoop { .. } => {
                        prop_assert!(last_confirmed && matches!(state, State::MergeConfirmed { .. }), "merged without confirmation: {:?}", state);
                        merged = true;
                    }
                    Event::Observed { .. } => last_confirmed = false,
                    Event::RoundStarted { round, .. } => {
                        prop_assert_eq!(*round, pr_loop::next_round(&rounds));
                        rounds.push(*round);
                    }
                    Event::EscalationApplied { .. } => prop_assert!(false, "applied without an approval token"),
                    _ => {}
                }
            }
            state = events.iter().fold(state, PrLoop::evolve);
            if let Some(l) = state.looped() {
                prop_assert_eq!(&l.rounds_seen, &rounds);
                prop_assert_eq!(l.next_round(), rounds.iter().max().map_or(1, |m| m + 1));
            }
        }
        // The full prefix must reach the merge: the property is not vacuous.
        if prefix == 3 {
            prop_assert!(merged);
        }
    }
}

/// The generated readings reach every branch of the totality property: of 1,000
/// (classified without any freshness observation), some are refused by the parser
/// (among them contradictions), some are classified, some are refused as an
/// approved clean PR of unknown freshness.
#[test]
fn generated_readings_reach_every_branch() {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in crate::support::sample(reading(), 1000) {
        let branch = match classify::parse_reading(&r, "reading") {
            Err(e) if e.rule == "contradictory-reading" || e.rule == "merged-without-time" => {
                e.rule
            }
            Err(_) => "parser",
            Ok(_) => {
                match pr_loop::classify_input(&input(r, None, None, "merge"), &Observed::default())
                {
                    Ok(_) => "classified",
                    Err(e) => e.rule,
                }
            }
        };
        *counts.entry(branch).or_default() += 1;
    }
    eprintln!("{counts:?}");
    let n = |k: &str| counts.get(k).copied().unwrap_or(0);
    assert!(n("parser") >= 100 && n("classified") >= 100, "{counts:?}");
    assert!(
        n("merged-without-time") >= 5
            && n("contradictory-reading") >= 5
            && n("review-freshness-unknown") >= 5,
        "{counts:?}"
    );
    assert_eq!(
        counts.len(),
        5,
        "a refusal the property does not expect: {counts:?}"
    );
}
