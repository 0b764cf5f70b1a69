//! The work-node's rules as tables on the pure machine (issue #16): budgets,
//! redispatch, re-verification of a done node, a merge read back from git, and the
//! judge's failures (no criterion, a changed or unwatched tree, a user's challenge).

use uuid::Uuid;

use super::{
    contains_plan, contract_hash, judge, merge_plan, satisfies_dependents, tree_plan, Command,
    Containment, CriterionRun, Event, Observed, PlanReceipt, ReviewVerdict, State, TreeReading,
    TreeWatch, WorkNode, CONTROLLING_TERMINAL,
};
use crate::evidence::{AbsPath, CommandRun, FullCommit};
use crate::testing::Scenario;
use crate::work::spec::validate;
use crate::{Context, Machine, Timestamp};

const SPEC: &str = r#"title: t
description: d
intent: i
work:
  - id: core
    task: Implement
    touches: [src/]
    acceptance:
      - id: C1
        statement: hits skip the backend
        evidence: { kind: command, run: make test, expect: { exit: 0, output_includes: "ok" } }
  - id: docs
    task: Document
    acceptance:
      - { id: C2, statement: docs approved, evidence: { kind: user, prompt: Approve? } }
"#;
const LANE: &str = "/srv/lane";
const MAIN: &str = "/srv/main";
const C_LANE: &str = "1111111111111111111111111111111111111111";
const C_MAIN: &str = "2222222222222222222222222222222222222222";
const C_LATER: &str = "3333333333333333333333333333333333333333";
const CHALLENGE: &str = "0123456789abcdef0123456789abcdef";

fn ctx(session: &str) -> Context {
    Context {
        now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses"),
        fresh_ids: vec![Uuid::from_u128(7)],
        session: Some(session.into()),
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn ran(argv: Vec<String>, exit: i32, stdout: &str) -> CommandRun {
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses");
    crate::testing::as_observed(CommandRun {
        argv,
        env: None,
        exit_status: Some(exit),
        stdout: stdout.into(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at,
    })
}

/// The tree at `path`, HEAD `head`, `status` its porcelain status.
fn tree(path: &str, commit: &str, head: &str, status: &str) -> TreeReading {
    let [t, h, s] = tree_plan(path);
    TreeReading {
        worktree_path: path.into(),
        expected_commit: commit.into(),
        toplevel: ran(t, 0, &format!("{path}\n")),
        head: ran(h, 0, &format!("{head}\n")),
        status: ran(s, 0, status),
        flags: None,
        repository: None,
        identity: None,
        branch: Some(ran(super::branch_plan(path), 0, "main\n")),
    }
}

fn quiet() -> Option<TreeWatch> {
    Some(TreeWatch {
        method: "inotify".into(),
        changed: vec![],
        overflow: false,
        ignored: None,
    })
}

/// C1's run: exit 0 printing its floor, watched by `watch`.
fn c1(watch: Option<TreeWatch>) -> CriterionRun {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let c = &spec.nodes[0].acceptance[0];
    let argv = ["sh", "-c", "make test"].map(String::from).to_vec();
    CriterionRun {
        criterion_id: "C1".into(),
        contract_hash: contract_hash(c),
        run: Some(ran(argv, 0, "ok\n")),
        timed_out: false,
        containment: Some(Containment::ProcessGroup),
        confirmation: None,
        challenge: None,
        channel: None,
        watch,
    }
}

fn verify(path: &str, commit: &str, runs: Vec<CriterionRun>, contains: Option<bool>) -> Command {
    let t = tree(path, commit, commit, "");
    Command::Verify {
        spec: SPEC.into(),
        tree: Box::new(t.clone()),
        runs,
        checklist: vec![],
        draft: None,
        after: Some(Box::new(t)),
        contains: contains.map(|yes| ran(contains_plan(path, C_MAIN, commit), i32::from(!yes), "")),
    }
}

fn merge(commit: &str, head: &str, contains: i32) -> Command {
    let [t, h, c, r, b, l] = merge_plan(MAIN, C_LANE, commit);
    Command::Merge {
        merged_tree: MAIN.into(),
        commit: commit.into(),
        spec: SPEC.into(),
        draft: None,
        reading: Some(vec![
            ran(t, 0, &format!("{MAIN}\n")),
            ran(h, 0, &format!("{head}\n")),
            ran(c, contains, ""),
            ran(r, 0, &format!("{MAIN}\n{MAIN}/.git\n")),
            ran(b, 0, "main\n"),
            ran(
                l,
                0,
                &format!("worktree {MAIN}\0HEAD {commit}\0branch refs/heads/main\0\0"),
            ),
        ]),
        identity: None,
    }
}

/// The events `command` produces in `state` (accepted).
fn events(state: &State, command: &Command, session: &str) -> Vec<Event> {
    WorkNode::decide(state, command, &ctx(session)).expect("decide accepts it")
}

/// The events of `core` planned, dispatched into the lane with `budget`, then
/// `steps` (each decided, in session s1, in the state the earlier ones led to).
fn core_after(budget: u32, steps: &[Command]) -> Vec<Event> {
    let receipt = PlanReceipt {
        brief_path: "/srv/.work/.cache/briefs/core.md".into(),
        brief_sha256: "a".repeat(64),
        writable_roots: vec!["src/".into()],
        confine_writes: true,
        escalation: "off".into(),
        worktree: false,
        overlaps: vec![],
    };
    let mut log = vec![
        Event::Planned {
            address: vec!["core".into()],
            receipt,
        },
        Event::Dispatched {
            run_id: "r-1".into(),
            worktree_path: AbsPath::parse(LANE).expect("absolute"),
            expected_commit: FullCommit::parse(C_LANE).expect("a full commit"),
            budget,
            session: Some("s1".into()),
            repository: None,
            identity: None,
        },
    ];
    for c in steps {
        let state = Scenario::<WorkNode>::given(log.clone()).state().clone();
        log.extend(events(&state, c, "s1"));
    }
    log
}

fn state_of(log: &[Event]) -> State {
    Scenario::<WorkNode>::given(log.to_vec()).state().clone()
}

fn reject() -> Command {
    Command::Review {
        verdict: ReviewVerdict::Reject,
        failed_criteria: vec!["C1".into()],
        concerns: vec![],
    }
}

fn remediate() -> Command {
    Command::Remediate {
        run_id: "r-2".into(),
        worktree_path: LANE.into(),
    }
}

/// `done`, the merge's branch read holding the merged commit.
fn done() -> Command {
    let holds = ran(contains_plan(MAIN, C_MAIN, "refs/heads/main"), 0, "");
    let (spec, deps_done, draft) = (SPEC.into(), vec![], None);
    Command::Done {
        spec,
        deps_done,
        draft,
        holds: Some(holds),
        tree: None,
    }
}

fn done_in_s1() -> Vec<Event> {
    core_after(
        2,
        &[
            verify(LANE, C_LANE, vec![c1(quiet())], None),
            merge(C_MAIN, C_MAIN, 0),
            verify(MAIN, C_MAIN, vec![c1(quiet())], None),
            done(),
        ],
    )
}

#[test]
fn a_spent_budget_leaves_escalation_as_the_only_way_on() {
    let spent = core_after(1, &[reject(), remediate(), reject()]);
    assert!(matches!(state_of(&spent), State::Rejected { .. }));
    for command in [
        verify(LANE, C_LATER, vec![c1(quiet())], None),
        remediate(),
        merge(C_MAIN, C_MAIN, 0),
        Command::RaiseScope {
            target: "t".into(),
            add_touches: vec!["docs".into()],
            change: "c".into(),
            rationale: "r".into(),
        },
        done(),
    ] {
        Scenario::<WorkNode>::given(spent.clone())
            .when(command, &ctx("s1"))
            .then_rejected_with(&["budget"]);
    }
    let state = Scenario::<WorkNode>::given(spent)
        .when(
            Command::Escalate {
                reason: "spent".into(),
            },
            &ctx("s1"),
        )
        .then([Event::Escalated {
            reason: "spent".into(),
        }]);
    assert!(matches!(state, State::Escalated { .. }), "{state:?}");
}

#[test]
fn a_rejected_node_is_redispatched_before_it_is_verified_again() {
    let rejected = core_after(2, &[reject()]);
    Scenario::<WorkNode>::given(rejected.clone())
        .when(verify(LANE, C_LATER, vec![c1(quiet())], None), &ctx("s1"))
        .then_rejected_with(&["remediate-first"]);
    let again = core_after(2, &[reject(), remediate()]);
    let state = state_of(&again);
    let out = events(
        &state,
        &verify(LANE, C_LATER, vec![c1(quiet())], None),
        "s1",
    );
    assert!(matches!(out[..], [Event::Verified { .. }]), "{out:?}");
}

#[test]
fn a_done_node_admits_only_a_re_verification_in_a_tree_holding_its_merge() {
    let done = done_in_s1();
    let state = state_of(&done);
    assert!(matches!(state, State::Done { .. }), "{state:?}");
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let core = &spec.nodes[0];
    assert!(satisfies_dependents(&state, core, "s1"));
    assert!(
        !satisfies_dependents(&state, core, "s2"),
        "another session's done"
    );
    for (command, predicate) in [
        (
            verify(MAIN, C_LATER, vec![c1(quiet())], None),
            "contains-merge",
        ),
        (
            verify(MAIN, C_LATER, vec![c1(quiet())], Some(false)),
            "contains-merge",
        ),
        (merge(C_MAIN, C_MAIN, 0), "node-open"),
        (remediate(), "node-open"),
        (Command::Escalate { reason: "r".into() }, "node-open"),
    ] {
        Scenario::<WorkNode>::given(done.clone())
            .when(command, &ctx("s2"))
            .then_rejected_with(&[predicate]);
    }
    // Session s2 re-verifies at a later commit that contains the merge: the
    // lifecycle stays done, the provenance is s2's, and it satisfies dependents in s2.
    let out = events(
        &state,
        &verify(MAIN, C_LATER, vec![c1(quiet())], Some(true)),
        "s2",
    );
    let after = out.iter().fold(state.clone(), WorkNode::evolve);
    assert!(matches!(after, State::Done { .. }), "{after:?}");
    assert!(satisfies_dependents(&after, core, "s2"));
    assert!(
        !satisfies_dependents(&after, core, "s1"),
        "the last verification is s2's"
    );
    // A failing re-verification leaves it done, and satisfies nothing.
    let mut dirty = c1(quiet());
    dirty.run = Some(ran(
        vec!["sh".into(), "-c".into(), "make test".into()],
        1,
        "",
    ));
    let out = events(
        &state,
        &verify(MAIN, C_LATER, vec![dirty], Some(true)),
        "s2",
    );
    assert!(
        matches!(out[..], [Event::VerificationFailed { .. }]),
        "{out:?}"
    );
    let after = out.iter().fold(state, WorkNode::evolve);
    assert!(matches!(after, State::Done { .. }));
    assert!(!satisfies_dependents(&after, core, "s2"));
}

#[test]
fn a_merge_is_read_back_from_git() {
    let verified = core_after(2, &[verify(LANE, C_LANE, vec![c1(quiet())], None)]);
    let mut unplanned = merge(C_MAIN, C_MAIN, 0);
    if let Command::Merge { reading, .. } = &mut unplanned {
        if let Some(r) = reading.as_mut() {
            r[2].argv = merge_plan(MAIN, C_MAIN, C_MAIN)[2].clone();
        }
    }
    let mut elsewhere = merge(C_MAIN, C_MAIN, 0);
    if let Command::Merge { reading, .. } = &mut elsewhere {
        if let Some(r) = reading.as_mut() {
            r[0].stdout = "/srv/other
"
            .into();
        }
    }
    let mut detached = merge(C_MAIN, C_MAIN, 0);
    if let Command::Merge { reading, .. } = &mut detached {
        if let Some(r) = reading.as_mut() {
            r[4].stdout = "\n".into();
        }
    }
    let unread = Command::Merge {
        merged_tree: MAIN.into(),
        commit: C_MAIN.into(),
        spec: SPEC.into(),
        draft: None,
        reading: None,
        identity: None,
    };
    for (command, predicate) in [
        (merge(C_MAIN, C_MAIN, 1), "contains-worker-commit"),
        (merge(C_MAIN, C_MAIN, 128), "contains-worker-commit"),
        (unplanned, "contains-worker-commit"),
        (merge(C_MAIN, C_LATER, 0), "merged-head"),
        (elsewhere, "merged-tree"),
        (detached, "merged-branch"),
        (unread, "merge-reading"),
    ] {
        Scenario::<WorkNode>::given(verified.clone())
            .when(command, &ctx("s1"))
            .then_rejected_with(&[predicate]);
    }
    Scenario::<WorkNode>::given(verified)
        .when(merge(C_MAIN, C_MAIN, 0), &ctx("s1"))
        .then([Event::Merged {
            merged_tree: AbsPath::parse(MAIN).expect("absolute"),
            commit: FullCommit::parse(C_MAIN).expect("a full commit"),
            branch: Some("main".into()),
        }]);
}

/// The judge's failures, on the fixtures above.
#[path = "judge_tests.rs"]
mod judge_tests;
