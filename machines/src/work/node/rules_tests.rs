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

fn done_in_s1() -> Vec<Event> {
    core_after(
        2,
        &[
            verify(LANE, C_LANE, vec![c1(quiet())], None),
            merge(C_MAIN, C_MAIN, 0),
            verify(MAIN, C_MAIN, vec![c1(quiet())], None),
            Command::Done {
                spec: SPEC.into(),
                deps_done: vec![],
                draft: None,
            },
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
        Command::Done {
            spec: SPEC.into(),
            deps_done: vec![],
            draft: None,
        },
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

/// The failures a judged verification of `node` reports for these observations.
fn judged(node: usize, seen: &Observed<'_>) -> Vec<String> {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses");
    let commit = FullCommit::parse(&seen.tree.expected_commit).expect("a full commit");
    let v = judge(&spec.nodes[node], seen, "s1", false, &commit, at);
    assert_eq!(v.passed, v.failures.is_empty());
    v.failures
}

#[test]
fn the_judge_fails_a_changed_or_unwatched_tree_and_no_criterion() {
    let clean = tree(LANE, C_LANE, C_LANE, "");
    let seen = |runs: &'static [CriterionRun], after: Option<&'static TreeReading>| Observed {
        tree: Box::leak(Box::new(clean.clone())),
        after,
        runs,
        checklist: &[],
        used_challenges: &[],
    };
    let leak = |r: CriterionRun| -> &'static [CriterionRun] { Box::leak(Box::new([r])) };
    let after = |head: &str, status: &str| -> Option<&'static TreeReading> {
        Some(Box::leak(Box::new(tree(LANE, C_LANE, head, status))))
    };
    let watched = |changed: &[&str], ignored: &str| {
        let changed: Vec<String> = changed.iter().map(|s| (*s).to_owned()).collect();
        Some(TreeWatch {
            method: "inotify".into(),
            ignored: super::ignore_plan(LANE, &changed)
                .map(|argv| ran(argv, if ignored.is_empty() { 1 } else { 0 }, ignored)),
            changed,
            overflow: false,
        })
    };
    let ok = after(C_LANE, "");
    assert_eq!(
        judged(0, &seen(leak(c1(quiet())), ok)),
        Vec::<String>::new()
    );
    assert_eq!(
        judged(
            0,
            &seen(
                leak(c1(watched(
                    &["target"],
                    "target
"
                ))),
                ok
            )
        ),
        Vec::<String>::new(),
        "an ignored path does not count"
    );
    for (runs, after, failure) in [
        (leak(c1(None)), ok, "C1: tree-unwatched"),
        (
            leak(c1(watched(&["src/a.rs"], ""))),
            ok,
            "C1: tree-changed (src/a.rs)",
        ),
        (
            leak(c1(watched(
                &["src/a.rs", "target"],
                "target
",
            ))),
            ok,
            "C1: tree-changed (src/a.rs)",
        ),
        (
            leak(c1(Some(TreeWatch {
                method: "inotify".into(),
                changed: vec![],
                overflow: true,
                ignored: None,
            }))),
            ok,
            "C1: tree-unwatched",
        ),
        (leak(c1(quiet())), None, "tree-unwatched"),
        (
            leak(c1(quiet())),
            after(C_LATER, ""),
            "tree-changed: after the criteria, HEAD is",
        ),
        (
            leak(c1(quiet())),
            after(
                C_LANE,
                "?? leftover
",
            ),
            "tree-changed: after the criteria, the tree has",
        ),
    ] {
        let failures = judged(0, &seen(runs, after));
        assert!(
            failures.iter().any(|f| f.starts_with(failure)),
            "{failure}: {failures:?}"
        );
    }
    // A composite with no criterion is never green.
    let epic = "title: t
description: d
intent: i
work:
  - id: epic
    task: t
    work:
      - {id: leaf, task: t, acceptance: [{id: A, statement: s, evidence: {kind: user, prompt: p}}]}
";
    let spec = validate(epic).spec.expect("valid");
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses");
    let commit = FullCommit::parse(C_LANE).expect("a full commit");
    let v = judge(&spec.nodes[0], &seen(&[], ok), "s1", false, &commit, at);
    assert!(!v.passed);
    assert!(
        v.failures[0].starts_with("no-execution-evidence"),
        "{:?}",
        v.failures
    );
}

#[test]
fn a_user_criterion_passes_only_on_the_terminals_confirmation_of_a_fresh_challenge() {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let c2 = &spec.nodes[1].acceptance[0];
    let run = |challenge: Option<&str>, channel: Option<&str>, words: Option<&str>| CriterionRun {
        criterion_id: "C2".into(),
        contract_hash: contract_hash(c2),
        run: None,
        timed_out: false,
        containment: None,
        confirmation: words.map(str::to_owned),
        challenge: challenge.map(str::to_owned),
        channel: channel.map(str::to_owned),
        watch: None,
    };
    let tty = Some(CONTROLLING_TERMINAL);
    let quoted = format!("I confirm {CHALLENGE}");
    let clean = tree(LANE, C_LANE, C_LANE, "");
    let used = [CHALLENGE.to_owned()];
    for (r, used, failure) in [
        (
            run(None, tty, Some("yes")),
            &[][..],
            "user-confirmation-missing",
        ),
        (
            run(Some("short"), tty, Some("I confirm short")),
            &[],
            "user-confirmation-missing",
        ),
        (
            run(Some(CHALLENGE), None, Some(&quoted)),
            &[],
            "user-confirmation-unavailable",
        ),
        (
            run(Some(CHALLENGE), Some("command-line"), Some(&quoted)),
            &[],
            "user-confirmation-unavailable",
        ),
        (
            run(Some(CHALLENGE), tty, Some("yes")),
            &[],
            "user-confirmation-mismatch",
        ),
        (
            run(Some(CHALLENGE), tty, None),
            &[],
            "user-confirmation-missing",
        ),
        (
            run(Some(CHALLENGE), tty, Some(&quoted)),
            &used[..],
            "challenge-reused",
        ),
    ] {
        let runs = [r];
        let failures = judged(
            1,
            &Observed {
                tree: &clean,
                after: Some(&clean),
                runs: &runs,
                checklist: &[],
                used_challenges: used,
            },
        );
        assert_eq!(failures, [format!("C2: {failure}")], "{failure}");
    }
    let runs = [run(
        Some(CHALLENGE),
        tty,
        Some(&format!(
            "{quoted}
"
        )),
    )];
    let failures = judged(
        1,
        &Observed {
            tree: &clean,
            after: Some(&clean),
            runs: &runs,
            checklist: &[],
            used_challenges: &[],
        },
    );
    assert!(failures.is_empty(), "{failures:?}");
}
