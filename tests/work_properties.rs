//! Property tests of the work-node lifecycle and the workspec; seeds in
//! proptest-regressions/work-node.txt.

use std::collections::BTreeSet;

use cairn::machines::work::node::{Event, WorkNode};
use cairn::machines::work::ready::ready_set;
use cairn::machines::work::spec::validate;
use cairn::{Context, Machine, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use crate::support::work::{command, happy, step, Step, C_LANE, C_MERGED, MERGED};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/work-node.txt"
        )))),
        ..Config::default()
    }
}

fn ctx(session: &str) -> Context {
    Context {
        now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses"),
        fresh_ids: vec![],
        session: Some(session.to_owned()),
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

/// A happy prefix, then random steps, each in session s1 or s2.
pub fn sequence() -> impl Strategy<Value = Vec<(Step, bool)>> {
    (
        0usize..=6,
        proptest::collection::vec((step(), prop::bool::weighted(0.8)), 0..20),
    )
        .prop_map(|(n, rest)| {
            happy()[..n]
                .iter()
                .cloned()
                .map(|s| (s, true))
                .chain(rest)
                .collect()
        })
}

/// A flat spec over `n` nodes with `deps[j]` ⊆ earlier nodes, and open decisions.
fn dag_spec(n: usize, deps: &[Vec<usize>], decisions: bool) -> String {
    let mut s = String::from("title: t\ndescription: d\nintent: i\nwork:\n");
    for (j, dj) in deps.iter().enumerate().take(n) {
        let d: Vec<String> = dj.iter().map(|i| format!("n{i}")).collect();
        s.push_str(&format!(
            "  - id: n{j}\n    task: t\n    depends_on: [{}]\n    acceptance: [{{id: C{j}, statement: s, evidence: {{kind: user, prompt: p}}}}]\n",
            d.join(", ")
        ));
    }
    if decisions {
        s.push_str("open_decisions: [{id: D1, decides: n0}]\n");
    }
    s
}

fn dag() -> impl Strategy<Value = (usize, Vec<Vec<usize>>, Vec<bool>)> {
    (1usize..9).prop_flat_map(|n| {
        let deps = (0..n)
            .map(|j| proptest::sample::subsequence((0..j).collect::<Vec<_>>(), 0..=j))
            .collect::<Vec<_>>();
        (Just(n), deps, proptest::collection::vec(any::<bool>(), n))
    })
}

proptest! {
    #![proptest_config(config(512))]

    /// `done` ⇒ the whole checklist was reported in a passing worker-tree verification
    /// ∧ integration evidence passed in the merged tree after the last merge ∧ both in
    /// the session that records `done` (no cached or other-session evidence); and
    /// remediation rounds never exceed the budget.
    #[test]
    fn done_needs_every_terminal_truth_item(seq in sequence()) {
        let mut state = WorkNode::initial_state();
        let mut log: Vec<(Event, String)> = vec![];
        for (step, first) in &seq {
            let session = if *first { "s1" } else { "s2" };
            let c = command(&state, step);
            let Ok(events) = WorkNode::decide(&state, &c, &ctx(session)) else { continue };
            for e in events {
                state = WorkNode::evolve(state, &e);
                log.push((e.clone(), session.to_owned()));
                if let Event::Done { session: s } = &e {
                    let last_merge = log.iter().rposition(|(e, _)| matches!(e, Event::Merged { .. }));
                    prop_assert!(last_merge.is_some(), "done without a merge");
                    let m = last_merge.unwrap();
                    // The worker tree is the one the last dispatch before the merge named
                    // (the generator dispatches LANE or another tree).
                    let worker = log[..m].iter().rev().find_map(|(e, _)| match e {
                        Event::Dispatched { worktree_path, .. } => Some(worktree_path.as_str().to_owned()),
                        _ => None,
                    });
                    prop_assert!(worker.is_some(), "done without a dispatch");
                    let worker = worker.unwrap();
                    let pre = log[..m].iter().any(|(e, sess)| matches!(e, Event::Verified { verification: v } if !v.integration && v.checklist_ok && v.worktree_path == worker && v.commit == C_LANE && sess == s));
                    let integ = log[m..].iter().any(|(e, sess)| matches!(e, Event::Verified { verification: v } if v.integration && v.worktree_path == MERGED && v.commit == C_MERGED && sess == s));
                    prop_assert!(pre, "done without a passing worker-tree verification this session");
                    prop_assert!(integ, "done without integration evidence after the last merge this session");
                }
                if let Some(run) = state.run() {
                    prop_assert!(run.remediation_rounds <= run.budget, "{} rounds > budget {}", run.remediation_rounds, run.budget);
                }
            }
        }
    }

    /// The ready set equals a brute-force reading of the generated DAG: a node is
    /// ready when it is not done, there is no open decision, and every dependency
    /// is satisfied *this session* (done and re-verified here: a subset of done).
    #[test]
    fn the_ready_set_is_the_brute_force_one(
        (n, deps, done) in dag(),
        reverified in proptest::collection::vec(any::<bool>(), 9),
        decisions in prop::bool::weighted(0.2),
    ) {
        let text = dag_spec(n, &deps, decisions);
        let v = validate(&text);
        prop_assert!(v.valid(), "{:?}", v.findings);
        let spec = v.spec.unwrap();
        let satisfied = |j: usize| done[j] && reverified[j];
        let set = |keep: &dyn Fn(usize) -> bool| -> BTreeSet<Vec<String>> {
            (0..n).filter(|j| keep(*j)).map(|j| vec![format!("n{j}")]).collect()
        };
        let mut want: Vec<Vec<String>> = (0..n)
            .filter(|j| !decisions && !done[*j] && deps[*j].iter().all(|i| satisfied(*i)))
            .map(|j| vec![format!("n{j}")])
            .collect();
        want.sort();
        prop_assert_eq!(ready_set(&spec, &set(&|j| done[j]), &set(&satisfied)), want);
    }

    /// Any spec with a dependency cycle is refused, naming the cycle.
    #[test]
    fn a_cycle_is_always_refused((n, mut deps, _) in dag(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        prop_assume!(n >= 2);
        let (i, j) = (a.index(n), b.index(n));
        prop_assume!(i != j);
        let (lo, hi) = (i.min(j), i.max(j));
        // hi depends on lo, and lo on hi: a cycle.
        if !deps[hi].contains(&lo) {
            deps[hi].push(lo);
        }
        deps[lo].push(hi);
        let v = validate(&dag_spec(n, &deps, false));
        prop_assert!(!v.valid());
        let cycle = v.findings.iter().find(|f| f.code == "dependency-cycle");
        prop_assert!(cycle.is_some(), "{:?}", v.findings);
        prop_assert!(cycle.unwrap().message.starts_with("dependency cycle: "));
    }
}

/// The generated sequences reach `done` (so the property above is not only about
/// refusals): of 500, some record it.
#[test]
fn generated_work_nodes_reach_done() {
    let mut done = 0;
    for seq in crate::support::sample(sequence(), 500) {
        let mut state = WorkNode::initial_state();
        let mut reached = false;
        for (step, first) in &seq {
            let session = if *first { "s1" } else { "s2" };
            let Ok(events) = WorkNode::decide(&state, &command(&state, step), &ctx(session)) else {
                continue;
            };
            reached |= events.iter().any(|e| matches!(e, Event::Done { .. }));
            state = events.iter().fold(state, WorkNode::evolve);
        }
        done += usize::from(reached);
    }
    eprintln!("{done} of 500 reach done");
    assert!(
        done >= 20,
        "only {done} of 500 generated sequences reach done"
    );
}
