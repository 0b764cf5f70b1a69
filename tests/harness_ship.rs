//! ship through the graph-driven harness: every step of the property tests in each
//! of the git worlds that matter (clean, created, ahead by 0/1/2, detached from its
//! worktree, a failed operation, a missing anchor, a dirty or off-target root, a
//! change out of scope), so every stage's way on — resumes, tiebreakers, stops and
//! teardowns included — is taken through the engine. Seeds:
//! proptest-regressions/ship-harness.txt.

use cairn::machines::ship::{gates, Command, Mutation, Params, Ship, Stage, State};
use cairn::testing::{Config, Harness};
use proptest::prelude::*;
use serde_json::json;

use crate::support::ship::{command, params, Step, World, ROOT};

/// The property tests' steps, and three facts their world does not express: a
/// conflicted phase-3 re-rebase, a branch tip that moved after pre-merge, and a
/// worktree removal that fails while the branch deletion succeeds.
#[derive(Debug, Clone)]
pub enum ShipStep {
    Base(Step),
    PreMergeConflict,
    MergeTipMoved,
    TeardownRemoveFails,
}

fn ship_command(state: &State, step: &ShipStep, w: &World) -> Command {
    let p: Params = state.run().map_or_else(params, |r| r.params.clone());
    match step {
        ShipStep::Base(s) => command(state, s, w),
        ShipStep::PreMergeConflict => Command::PreMerge {
            report: json!({"rebase_outcome_3_2": "conflict", "tests_pass": true, "lint_clean": true, "squash": "n/a", "open_review_jobs": 0}),
            runs: vec![],
            work_nodes: vec![],
        },
        ShipStep::MergeTipMoved => {
            let mut before = w.runs(&gates::merge_before_plan(&p, ROOT));
            if let Some(tip) = before.get_mut(2) {
                tip.stdout = format!("{}\n", "4".repeat(40));
            }
            Command::Merge {
                anchor: w.run(gates::anchor_argv(ROOT)),
                before,
                merge: None,
                after: vec![],
            }
        }
        ShipStep::TeardownRemoveFails => {
            let mut c = command(state, &Step::Teardown, w);
            if let Command::Teardown {
                remove: Some(r), ..
            } = &mut c
            {
                r.exit_status = Some(128);
            }
            c
        }
    }
}

fn worlds() -> Vec<World> {
    let happy = World::happy();
    vec![
        happy.clone(),
        World {
            branch_exists: false,
            listed: false,
            path_exists: false,
            ..happy.clone()
        },
        World {
            branch_exists: false,
            listed: true,
            path_exists: false,
            ..happy.clone()
        },
        World {
            ahead: 0,
            ..happy.clone()
        },
        World {
            ahead: 2,
            ..happy.clone()
        },
        World {
            listed: false,
            ..happy.clone()
        },
        World {
            op_ok: false,
            ..happy.clone()
        },
        World {
            anchor_ok: false,
            ..happy.clone()
        },
        World {
            dirty: true,
            ..happy.clone()
        },
        World {
            on_target: false,
            ..happy.clone()
        },
        World {
            out_of_scope: true,
            ..happy
        },
    ]
}

fn steps() -> Vec<ShipStep> {
    let mut out: Vec<Step> = [
        Mutation::Create,
        Mutation::Merge,
        Mutation::Teardown,
        Mutation::Resume,
    ]
    .into_iter()
    .map(Step::Begin)
    .collect();
    out.extend([
        Step::Open(true),
        Step::Open(false),
        Step::Preflight(true),
        Step::Preflight(false),
        Step::Create,
        Step::AnswerScope(true),
        Step::AnswerScope(false),
        Step::PreMerge(true),
        Step::PreMerge(false),
        Step::Merge,
        Step::Teardown,
        Step::Resume,
        Step::AnswerTiebreaker,
        Step::ExternalOp(true),
        Step::ExternalOp(false),
        Step::Abandon,
    ]);
    out.extend((0..4).map(Step::Verify));
    out.extend((0..6).map(Step::Refine));
    let mut out: Vec<ShipStep> = out.into_iter().map(ShipStep::Base).collect();
    out.extend([
        ShipStep::PreMergeConflict,
        ShipStep::MergeTipMoved,
        ShipStep::TeardownRemoveFails,
    ]);
    out
}

#[test]
fn ship_covers_its_graph() {
    let after_refine = "a stage entered only after `refined` (phase-3, merge-ready, merge-rejected) keeps `refine_passed`, so a resume there picks phase 3";
    let before_refine = "phase-1, phase-2 and scope-tripped come before `refined` and hold no merged commit, so a resume there picks phase 1 or 2";
    let no_merged_commit = "resumed-teardown needs the merged commit, recorded only on entering `merged` (and kept into `stopped` by a partial teardown): no stage before the merge carries one";
    let merged =
        "`merged` always holds its merged commit, so a resume there is always resumed-teardown";
    let alphabet: Vec<(ShipStep, World)> = steps()
        .into_iter()
        .flat_map(|s| worlds().into_iter().map(move |w| (s.clone(), w)))
        .collect();
    let mut harness = Harness::<Ship, (ShipStep, World)>::new(&Config {
        cases: 24,
        regressions: Some(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/ship-harness.txt"
        )),
        session: None,
    })
    .alphabet(alphabet)
    .unreachable_edge(
        "stopped",
        "abandoned",
        "abandoned",
        "a stopped run always has its worktree: abandoning it is abandoned-for-teardown",
    )
    // What ship admits next turns on the stage, the step in flight, the session,
    // the run's flags and counters — not on the recorded runs' text.
    .state_key(|s: &State| match s.run() {
        None => String::new(),
        Some(r) => format!(
            "{:?} {:?} {} {} {} {} {} {:?} {}",
            s.stage(),
            r.begun.as_ref().map(|f| f.step),
            r.session.min(2),
            r.rebase_done,
            r.refine_passed,
            r.merge_attempts,
            r.merged_sha.is_some(),
            r.denials,
            r.in_scope_paths.is_some(),
        ),
    })
    .final_property("shipped only after a merge", |s: &State| {
        match (s.stage(), s.run()) {
            (Some(Stage::Shipped), Some(run)) if run.merged_sha.is_none() => {
                Err("shipped with no merged commit".into())
            }
            _ => Ok(()),
        }
    });
    for from in ["phase-3", "merge-ready", "merge-rejected"] {
        harness = harness
            .unreachable_edge(from, "resumed-phase-1", "phase-1", after_refine)
            .unreachable_edge(from, "resumed-phase-2", "phase-1", after_refine);
    }
    for from in ["phase-1", "phase-2", "scope-tripped"] {
        harness = harness.unreachable_edge(from, "resumed-phase-3", "phase-3", before_refine);
    }
    for from in [
        "phase-1",
        "phase-2",
        "phase-3",
        "scope-tripped",
        "merge-ready",
        "merge-rejected",
        "tiebreaker-pending",
    ] {
        harness = harness.unreachable_edge(from, "resumed-teardown", "merged", no_merged_commit);
    }
    harness
        .unreachable_edge("merged", "resumed-phase-1", "phase-1", merged)
        .unreachable_edge("merged", "resumed-phase-2", "phase-1", merged)
        .unreachable_edge("merged", "resumed-phase-3", "phase-3", merged)
        .run(
            crate::ship_properties::sequence().prop_map(|seq| {
                seq.into_iter()
                    .map(|(s, w)| (ShipStep::Base(s), w))
                    .collect::<Vec<_>>()
            }),
            |state, (step, world)| ship_command(state, step, world),
        );
}
