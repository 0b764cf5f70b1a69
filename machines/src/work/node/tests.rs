//! The work-node's rule tables, given / when / then on the pure machine
//! ([`crate::testing::Scenario`]): one row per guard, no journal and no process
//! per case. `tests/work_node.rs` keeps the end-to-end runs through the CLI.

use uuid::Uuid;

use super::{Command, Event, Holder, PlanReceipt, ReviewVerdict, ScopeRequest, State, WorkNode};
use crate::evidence::{AbsPath, FullCommit};
use crate::testing::Scenario;
use crate::{Context, Timestamp};

const SPEC: &str = r#"title: t
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
  - id: docs
    task: Document
    acceptance:
      - { id: C2, statement: docs approved, evidence: { kind: user, prompt: Approve? } }
"#;
const LANE: &str = "/srv/lane";
const C_LANE: &str = "1111111111111111111111111111111111111111";
const REQUEST: &str = "amend-00000000-0000-0000-0000-000000000007";

fn ctx() -> Context {
    Context {
        now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses"),
        fresh_ids: vec![Uuid::from_u128(7)],
        session: Some("s1".into()),
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn core() -> Vec<String> {
    vec!["core".into()]
}

fn receipt() -> PlanReceipt {
    PlanReceipt {
        brief_path: "/srv/.work/.cache/briefs/core.md".into(),
        brief_sha256: "a".repeat(64),
        writable_roots: vec!["src/".into()],
        confine_writes: true,
        escalation: "off".into(),
        worktree: false,
        overlaps: vec![],
    }
}

fn planned() -> Event {
    Event::Planned {
        address: core(),
        receipt: receipt(),
    }
}

fn dispatched(budget: u32) -> Event {
    Event::Dispatched {
        run_id: "r-1".into(),
        worktree_path: AbsPath::parse(LANE).expect("absolute"),
        expected_commit: FullCommit::parse(C_LANE).expect("a full commit"),
        budget,
        session: Some("s1".into()),
        repository: None,
        identity: None,
    }
}

fn raised() -> Event {
    Event::ScopeRaised {
        request: ScopeRequest {
            request_id: REQUEST.into(),
            target: "lane".into(),
            add_touches: vec!["reports/published".into()],
            change: "Add reports/published to touches".into(),
            rationale: "The publication step writes there".into(),
            holder: Holder::Root,
        },
    }
}

fn passed_up() -> Event {
    Event::ScopePassedUp {
        request_id: REQUEST.into(),
        context: "held at the boundary".into(),
        recommendation: "approve the literal directory".into(),
    }
}

fn review_rejected() -> Event {
    Event::ReviewRecorded {
        verdict: ReviewVerdict::Reject,
        failed_criteria: vec!["C1".into()],
        concerns: vec![],
    }
}

fn plan(address: &[&str], receipt: PlanReceipt) -> Command {
    Command::Plan {
        spec: SPEC.into(),
        address: address.iter().map(|s| (*s).to_owned()).collect(),
        receipt,
        draft: None,
    }
}

fn dispatch(run_id: Option<&str>, tree: &str, commit: &str, budget: Option<u32>) -> Command {
    Command::Dispatch {
        run_id: run_id.map(str::to_owned),
        worktree_path: tree.into(),
        expected_commit: commit.into(),
        budget,
        finding: None,
        repository: None,
        identity: None,
    }
}

fn resolve(selected: &[usize], custom: Option<&str>, on_behalf_of_user: bool) -> Command {
    Command::ResolveScope {
        request_id: REQUEST.into(),
        selected: selected.to_vec(),
        note: "the artifact is this node's".into(),
        custom_instruction: custom.map(str::to_owned),
        on_behalf_of_user,
        operator: "ana".into(),
    }
}

fn remediate(run_id: &str, tree: &str) -> Command {
    Command::Remediate {
        run_id: run_id.into(),
        worktree_path: tree.into(),
    }
}

fn escalate() -> Command {
    Command::Escalate {
        reason: "two rounds spent".into(),
    }
}

#[test]
fn plan_confines_writes_to_the_nodes_touches_before_its_dispatch() {
    let given = |events: Vec<Event>| Scenario::<WorkNode>::given(events);
    let other_roots = PlanReceipt {
        writable_roots: vec!["src/".into(), "docs/".into()],
        ..receipt()
    };
    let unconfined = PlanReceipt {
        confine_writes: false,
        ..receipt()
    };
    let escalating = PlanReceipt {
        escalation: "on".into(),
        ..receipt()
    };
    let short_hash = PlanReceipt {
        brief_sha256: "a".repeat(63),
        ..receipt()
    };
    let invalid = Command::Plan {
        spec: SPEC.replace("touches: [src/]", "touches: ['src/**']"),
        address: core(),
        receipt: receipt(),
        draft: None,
    };
    let profiled = Command::Plan {
        spec: SPEC.replace(
            "    touches: [src/]\n",
            "    touches: [src/]\n    worker: { profile: fast }\n",
        ),
        address: core(),
        receipt: receipt(),
        draft: None,
    };
    for (events, command, predicates) in [
        (vec![], profiled, &["worker-profile-unsupported"][..]),
        (vec![], plan(&["core"], other_roots), &["plan-contract"]),
        (vec![], plan(&["core"], unconfined), &["plan-contract"]),
        (vec![], plan(&["core"], escalating), &["plan-contract"]),
        (vec![], plan(&["core"], short_hash), &["brief-hash"]),
        (vec![], plan(&["nowhere"], receipt()), &["node-address"]),
        (vec![], invalid, &["spec-valid"]),
        (
            vec![planned()],
            plan(&["docs"], receipt()),
            &["node-address"],
        ),
        (
            vec![planned(), dispatched(2)],
            plan(&["core"], receipt()),
            &["plannable"],
        ),
    ] {
        given(events)
            .when(command, &ctx())
            .then_rejected_with(predicates);
    }
    let state = given(vec![])
        .when(plan(&["core"], receipt()), &ctx())
        .then([planned()]);
    assert!(matches!(state, State::Planned { .. }), "{state:?}");
    // A re-plan before the dispatch is allowed.
    given(vec![planned()])
        .when(plan(&["core"], receipt()), &ctx())
        .then([planned()]);
}

#[test]
fn dispatch_needs_a_plan_an_absolute_tree_a_full_commit_and_a_budget() {
    let planned_only = || Scenario::<WorkNode>::given([planned()]);
    let both = Command::Dispatch {
        run_id: Some("r-1".into()),
        worktree_path: LANE.into(),
        expected_commit: C_LANE.into(),
        budget: None,
        finding: Some("delegate-client-unavailable".into()),
        repository: None,
        identity: None,
    };
    for (given, command, predicates) in [
        (
            Scenario::<WorkNode>::given_no_events(),
            dispatch(Some("r-1"), LANE, C_LANE, None),
            &["planned"][..],
        ),
        (
            planned_only(),
            dispatch(Some("r-1"), "srv/lane", C_LANE, None),
            &["absolute-path"],
        ),
        (
            planned_only(),
            dispatch(Some("r-1"), LANE, "1111", None),
            &["full-commit"],
        ),
        (
            planned_only(),
            dispatch(Some("r-1"), LANE, C_LANE, Some(0)),
            &["budget"],
        ),
        (
            planned_only(),
            dispatch(Some(" "), LANE, C_LANE, None),
            &["dispatch-receipt"],
        ),
        (planned_only(), both, &["dispatch-receipt"]),
        (
            Scenario::<WorkNode>::given([
                planned(),
                dispatched(2),
                raised(),
                resolved(),
                planned(),
            ]),
            dispatch(Some("r-3"), "/srv/elsewhere", C_LANE, None),
            &["same-worktree"],
        ),
        (
            Scenario::<WorkNode>::given([
                planned(),
                dispatched(2),
                raised(),
                resolved(),
                planned(),
            ]),
            dispatch(Some("r-3"), LANE, C_LANE, Some(9)),
            &["budget"],
        ),
    ] {
        given.when(command, &ctx()).then_rejected_with(predicates);
    }
    let state = planned_only()
        .when(dispatch(Some("r-1"), LANE, C_LANE, None), &ctx())
        .then([dispatched(super::DEFAULT_BUDGET)]);
    assert!(matches!(state, State::Dispatched { .. }), "{state:?}");
}

/// The user-held request approved by the operator (option 0).
fn resolved() -> Event {
    Event::ScopeApproved {
        request_id: REQUEST.into(),
        selected: 0,
        add_touches: vec!["reports/published".into()],
        note: "the artifact is this node's".into(),
        operator: "ana".into(),
        on_behalf_of_user: true,
    }
}

#[test]
fn a_scope_amendment_is_resolved_only_by_one_explicit_existing_option_within_the_holders_authority()
{
    let none_pending = || Scenario::<WorkNode>::given([planned(), dispatched(2)]);
    let root_held = || Scenario::<WorkNode>::given([planned(), dispatched(2), raised()]);
    let user_held =
        || Scenario::<WorkNode>::given([planned(), dispatched(2), raised(), passed_up()]);
    let made_up = Command::ResolveScope {
        request_id: "amend-made-up".into(),
        selected: vec![0],
        note: String::new(),
        custom_instruction: None,
        on_behalf_of_user: false,
        operator: "root".into(),
    };
    let nobody = Command::ResolveScope {
        request_id: REQUEST.into(),
        selected: vec![2],
        note: String::new(),
        custom_instruction: None,
        on_behalf_of_user: false,
        operator: " ".into(),
    };
    for (given, command, predicates) in [
        (
            user_held(),
            resolve(&[0], None, false),
            &["on-behalf-of-user"][..],
        ),
        (
            user_held(),
            resolve(&[3], None, true),
            &["custom-instruction"],
        ),
        (
            user_held(),
            resolve(&[0, 3], Some("x"), true),
            &["custom-alone"],
        ),
        (user_held(), resolve(&[7], None, true), &["option-index"]),
        (user_held(), resolve(&[], None, true), &["explicit-choice"]),
        (
            user_held(),
            resolve(&[0, 1], None, true),
            &["single-select"],
        ),
        (
            user_held(),
            resolve(&[0], Some("x"), true),
            &["custom-instruction"],
        ),
        (
            root_held(),
            resolve(&[0], None, true),
            &["on-behalf-of-user"],
        ),
        (root_held(), nobody, &["nonempty-string"]),
        (root_held(), made_up.clone(), &["pending-request"]),
        (none_pending(), made_up, &["pending-request"]),
        (
            none_pending(),
            resolve(&[0], None, false),
            &["pending-request"],
        ),
    ] {
        given.when(command, &ctx()).then_rejected_with(predicates);
    }

    // Options 0 and 1 approve; the others change nothing.
    let state = user_held()
        .when(resolve(&[0], None, true), &ctx())
        .then([resolved()]);
    assert!(
        matches!(state, State::AmendmentApproved { .. }),
        "{state:?}"
    );
    let not_approved = |selected: usize, custom: Option<&str>| Event::ScopeNotApproved {
        request_id: REQUEST.into(),
        selected,
        note: "the artifact is this node's".into(),
        custom_instruction: custom.map(str::to_owned),
        operator: "ana".into(),
        on_behalf_of_user: false,
    };
    let state = root_held()
        .when(resolve(&[2], None, false), &ctx())
        .then([not_approved(2, None)]);
    assert!(matches!(state, State::Dispatched { .. }), "{state:?}");
    root_held()
        .when(resolve(&[3], Some("publish elsewhere"), false), &ctx())
        .then([not_approved(3, Some("publish elsewhere"))]);
}

#[test]
fn remediation_is_bounded_by_the_budget_and_then_only_escalation_remains() {
    // Rejected after `rounds` remediation rounds, with a budget of two.
    let rejected_after = |rounds: u32| {
        let mut events = vec![planned(), dispatched(2), review_rejected()];
        for round in 1..=rounds {
            events.push(Event::RemediationDispatched {
                round,
                run_id: format!("r-{}", round + 1),
                worktree_path: AbsPath::parse(LANE).expect("absolute"),
            });
            events.push(review_rejected());
        }
        Scenario::<WorkNode>::given(events)
    };
    let escalated = || {
        let mut events = vec![planned(), dispatched(1), review_rejected()];
        events.push(Event::RemediationDispatched {
            round: 1,
            run_id: "r-2".into(),
            worktree_path: AbsPath::parse(LANE).expect("absolute"),
        });
        events.extend([
            review_rejected(),
            Event::Escalated {
                reason: "spent".into(),
            },
        ]);
        Scenario::<WorkNode>::given(events)
    };
    for (given, command, predicates) in [
        (
            rejected_after(0),
            remediate("r-2", "/srv/elsewhere"),
            &["same-worktree"][..],
        ),
        (
            rejected_after(0),
            remediate(" ", LANE),
            &["dispatch-receipt"],
        ),
        (rejected_after(1), escalate(), &["budget-spent"]),
        (rejected_after(2), remediate("r-4", LANE), &["budget"]),
        (
            rejected_after(2),
            Command::Escalate { reason: " ".into() },
            &["nonempty-string"],
        ),
        (
            Scenario::<WorkNode>::given([planned(), dispatched(2)]),
            remediate("r-2", LANE),
            &["rejected"],
        ),
        (escalated(), remediate("r-3", LANE), &["node-open"]),
        (escalated(), plan(&["core"], receipt()), &["node-open"]),
    ] {
        given.when(command, &ctx()).then_rejected_with(predicates);
    }
    rejected_after(1)
        .when(remediate("r-3", LANE), &ctx())
        .then([Event::RemediationDispatched {
            round: 2,
            run_id: "r-3".into(),
            worktree_path: AbsPath::parse(LANE).expect("absolute"),
        }]);
    let state = rejected_after(2)
        .when(escalate(), &ctx())
        .then([Event::Escalated {
            reason: "two rounds spent".into(),
        }]);
    assert!(matches!(state, State::Escalated { .. }), "{state:?}");
}
