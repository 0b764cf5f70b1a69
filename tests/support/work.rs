//! work-node commands for property tests: one spec, steps that carry the facts a
//! verification would observe, and runs built for the node's criteria.

use cairn::machines::evidence::CommandRun;
use cairn::machines::testing::as_observed;
use cairn::machines::work::node::{
    contains_plan, contract_hash, merge_plan, tree_plan, ChecklistReport, Command, Containment,
    CriterionRun, PlanReceipt, ReviewVerdict, State, TreeReading, TreeWatch,
};
use cairn::machines::work::spec::validate;
use cairn::Timestamp;
use proptest::prelude::*;

pub const SPEC: &str = r#"title: t
description: d
intent: i
work:
  - id: core
    task: Implement
    touches: [src/]
    checklist: [describe eviction]
    acceptance:
      - id: C1
        statement: hits skip the backend
        evidence: { kind: command, run: make test, expect: { exit: 0, output_includes: "ok" } }
"#;

pub const LANE: &str = "/srv/lane";
pub const MERGED: &str = "/srv/main";
pub const C_LANE: &str = "1111111111111111111111111111111111111111";
pub const C_MERGED: &str = "2222222222222222222222222222222222222222";

/// One generated step.
#[derive(Debug, Clone)]
pub enum Step {
    Plan,
    Dispatch {
        other_tree: bool,
        budget: u32,
    },
    NotDispatched,
    /// `tree`: 0 the worker tree, 1 the merged tree, 2 another tree.
    Verify {
        tree: u8,
        pass: bool,
        checklist: bool,
    },
    Review {
        approve: bool,
    },
    Remediate {
        other_tree: bool,
    },
    Escalate,
    Merge,
    Done,
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => Just(Step::Plan),
        2 => (prop::bool::weighted(0.1), 0u32..4).prop_map(|(other_tree, budget)| Step::Dispatch { other_tree, budget }),
        1 => Just(Step::NotDispatched),
        4 => (0u8..3, prop::bool::weighted(0.7), prop::bool::weighted(0.8)).prop_map(|(tree, pass, checklist)| Step::Verify { tree, pass, checklist }),
        1 => any::<bool>().prop_map(|approve| Step::Review { approve }),
        2 => prop::bool::weighted(0.1).prop_map(|other_tree| Step::Remediate { other_tree }),
        1 => Just(Step::Escalate),
        2 => Just(Step::Merge),
        2 => Just(Step::Done),
    ]
}

/// The happy path.
pub fn happy() -> Vec<Step> {
    vec![
        Step::Plan,
        Step::Dispatch {
            other_tree: false,
            budget: 2,
        },
        Step::Verify {
            tree: 0,
            pass: true,
            checklist: true,
        },
        Step::Merge,
        Step::Verify {
            tree: 1,
            pass: true,
            checklist: true,
        },
        Step::Done,
    ]
}

fn run(argv: &[&str], exit: i32, stdout: &str) -> CommandRun {
    let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
    run_argv(&argv, exit, stdout)
}

fn run_argv(argv: &[String], exit: i32, stdout: &str) -> CommandRun {
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
    as_observed(CommandRun {
        argv: argv.to_vec(),
        env: None,
        exit_status: Some(exit),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at,
    })
}

pub fn command(state: &State, step: &Step) -> Command {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let node = spec
        .node(&["core".to_owned()])
        .expect("core exists")
        .clone();
    match step {
        Step::Plan => Command::Plan {
            spec: SPEC.into(),
            address: vec!["core".into()],
            receipt: PlanReceipt {
                brief_path: "/srv/.work/.cache/briefs/x.md".into(),
                brief_sha256: "a".repeat(64),
                writable_roots: vec!["src/".into()],
                confine_writes: true,
                escalation: "off".into(),
                worktree: false,
                overlaps: vec![],
            },
            draft: None,
        },
        Step::Dispatch { other_tree, budget } => Command::Dispatch {
            run_id: Some("r-1".into()),
            worktree_path: if *other_tree {
                "/srv/other".into()
            } else {
                LANE.into()
            },
            expected_commit: C_LANE.into(),
            budget: Some(*budget),
            finding: None,
            repository: None,
            identity: None,
        },
        Step::NotDispatched => Command::Dispatch {
            run_id: None,
            worktree_path: String::new(),
            expected_commit: String::new(),
            budget: None,
            finding: Some("delegate-client-unavailable".into()),
            repository: None,
            identity: None,
        },
        Step::Verify {
            tree,
            pass,
            checklist,
        } => {
            let (path, commit) = match tree {
                0 => (LANE, C_LANE),
                1 => (MERGED, C_MERGED),
                _ => ("/srv/other", C_LANE),
            };
            let c = &node.acceptance[0];
            let [toplevel, head, status] = tree_plan(path);
            let tree = TreeReading {
                worktree_path: path.into(),
                expected_commit: commit.into(),
                toplevel: run_argv(&toplevel, 0, &format!("{path}\n")),
                head: run_argv(&head, 0, &format!("{commit}\n")),
                status: run_argv(&status, 0, ""),
                flags: None,
                repository: None,
                identity: None,
                // The merged tree has the merge's branch checked out.
                branch: Some(run_argv(
                    &cairn::machines::work::node::branch_plan(path),
                    0,
                    "main\n",
                )),
            };
            // A done node is re-verified in a tree that contains its merged commit.
            let contains = matches!(state, State::Done { .. })
                .then(|| run_argv(&contains_plan(path, C_MERGED, commit), 0, ""));
            Command::Verify {
                spec: SPEC.into(),
                tree: Box::new(tree.clone()),
                runs: vec![CriterionRun {
                    criterion_id: c.id.clone(),
                    contract_hash: contract_hash(c),
                    run: Some(run(
                        &["sh", "-c", "make test"],
                        if *pass { 0 } else { 1 },
                        "ok\n",
                    )),
                    timed_out: false,
                    containment: Some(Containment::ProcessGroup),
                    confirmation: None,
                    challenge: None,
                    channel: None,
                    watch: Some(TreeWatch {
                        method: "inotify".into(),
                        changed: vec![],
                        overflow: false,
                        ignored: None,
                    }),
                }],
                checklist: if *checklist {
                    vec![ChecklistReport {
                        index: 0,
                        done: true,
                    }]
                } else {
                    vec![]
                },
                draft: None,
                after: Some(Box::new(tree)),
                contains,
            }
        }
        Step::Review { approve } => Command::Review {
            verdict: if *approve {
                ReviewVerdict::Approve
            } else {
                ReviewVerdict::Reject
            },
            failed_criteria: if *approve { vec![] } else { vec!["C1".into()] },
            concerns: vec![],
        },
        Step::Remediate { other_tree } => Command::Remediate {
            run_id: "r-2".into(),
            worktree_path: if *other_tree {
                "/srv/other".into()
            } else {
                LANE.into()
            },
        },
        Step::Escalate => Command::Escalate {
            reason: "budget spent".into(),
        },
        Step::Merge => {
            let [toplevel, head, contains, repository, branch, worktrees] =
                merge_plan(MERGED, C_LANE, C_MERGED);
            Command::Merge {
                merged_tree: MERGED.into(),
                commit: C_MERGED.into(),
                spec: SPEC.into(),
                draft: None,
                reading: Some(vec![
                    run_argv(&toplevel, 0, &format!("{MERGED}\n")),
                    run_argv(&head, 0, &format!("{C_MERGED}\n")),
                    run_argv(&contains, 0, ""),
                    run_argv(&repository, 0, &format!("{MERGED}\n{MERGED}/.git\n")),
                    run_argv(&branch, 0, "main\n"),
                    run_argv(
                        &worktrees,
                        0,
                        &format!("worktree {MERGED}\0HEAD {C_MERGED}\0branch refs/heads/main\0\0"),
                    ),
                ]),
                identity: None,
            }
        }
        // The merge's branch read holding the merged commit.
        Step::Done => Command::Done {
            spec: SPEC.into(),
            deps_done: vec![],
            draft: None,
            holds: cairn::machines::work::node::done_plan(state).map(|argv| run_argv(&argv, 0, "")),
            tree: None,
        },
    }
}
