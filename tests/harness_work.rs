//! work-node through the graph-driven harness: the property tests' steps plus the
//! scope amendment (raise, pass up, resolve by root or user, re-plan on the
//! approved touches) and the criterion amendment, so every declared edge is taken
//! — save the two that rules v2 retired. Seeds: proptest-regressions/work-node-harness.txt.

use cairn::machines::work::amend::AmendRequest;
use cairn::machines::work::node::{Command, PlanReceipt, State, WorkNode};
use cairn::testing::{Config, Harness};
use proptest::prelude::*;

use crate::support::work::{self as w, SPEC};

/// SPEC with the touches an approved scope amendment adds.
const AMENDED: &str = r#"title: t
description: d
intent: i
work:
  - id: core
    task: Implement
    touches: [src/, reports/published]
    checklist: [describe eviction]
    acceptance:
      - id: C1
        statement: hits skip the backend
        evidence: { kind: command, run: make test, expect: { exit: 0, output_includes: "ok" } }
"#;

#[derive(Debug, Clone)]
pub enum Step {
    Base(w::Step),
    Raise,
    PassUp,
    /// The option chosen, and whether the user chose it.
    Resolve(usize, bool),
    PlanAmended,
    Amend,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => w::step().prop_map(Step::Base),
        1 => Just(Step::Raise),
        1 => Just(Step::PassUp),
        1 => (prop_oneof![Just(0usize), Just(2)], any::<bool>()).prop_map(|(o, u)| Step::Resolve(o, u)),
        1 => Just(Step::PlanAmended),
        1 => Just(Step::Amend),
    ]
}

/// Every step kind once, with the facts that matter: the exploration's alphabet.
fn alphabet() -> Vec<Step> {
    let mut out: Vec<Step> = w::happy().into_iter().map(Step::Base).collect();
    out.extend(
        [
            w::Step::Dispatch {
                other_tree: false,
                budget: 0,
            },
            w::Step::NotDispatched,
            w::Step::Verify {
                tree: 0,
                pass: false,
                checklist: true,
            },
            w::Step::Verify {
                tree: 1,
                pass: false,
                checklist: true,
            },
            w::Step::Review { approve: true },
            w::Step::Review { approve: false },
            w::Step::Remediate { other_tree: false },
            w::Step::Escalate,
        ]
        .map(Step::Base),
    );
    out.extend([
        Step::Raise,
        Step::PassUp,
        Step::Resolve(0, false),
        Step::Resolve(0, true),
        Step::Resolve(2, false),
        Step::Resolve(2, true),
        Step::PlanAmended,
        Step::Amend,
    ]);
    out
}

fn pending(state: &State) -> String {
    state
        .run()
        .and_then(|r| r.scope.as_ref())
        .map_or_else(|| "amend-none".to_owned(), |s| s.request_id.clone())
}

pub fn command(state: &State, step: &Step) -> Command {
    match step {
        Step::Base(s) => w::command(state, s),
        Step::Raise => Command::RaiseScope {
            target: "lane".into(),
            add_touches: vec!["reports/published".into()],
            change: "Add reports/published to touches".into(),
            rationale: "the publication step writes there".into(),
        },
        Step::PassUp => Command::PassUp {
            request_id: pending(state),
            context: "held at the boundary".into(),
            recommendation: "approve the literal directory".into(),
        },
        Step::Resolve(option, user) => Command::ResolveScope {
            request_id: pending(state),
            selected: vec![*option],
            note: "the artifact is this node's".into(),
            custom_instruction: None,
            on_behalf_of_user: *user,
            operator: "ana".into(),
        },
        Step::PlanAmended => Command::Plan {
            spec: AMENDED.into(),
            address: vec!["core".into()],
            receipt: PlanReceipt {
                brief_path: "/srv/.work/.cache/briefs/x.md".into(),
                brief_sha256: "a".repeat(64),
                writable_roots: vec!["src/".into(), "reports/published".into()],
                confine_writes: true,
                escalation: "off".into(),
                worktree: false,
                overlaps: vec![],
            },
            draft: None,
        },
        Step::Amend => Command::AmendCriterion {
            spec: SPEC.into(),
            draft: Some("# Criteria <!-- work:criteria -->\n- C1: hits skip the backend\n".into()),
            request: AmendRequest {
                criterion_id: "C1".into(),
                before: "hits skip the backend".into(),
                after: "hits never reach the backend".into(),
                reason: "the cache serves every read".into(),
                authority: "ADR-7".into(),
            },
        },
    }
}

#[test]
fn work_node_covers_its_graph() {
    let v2 = "rules v2: a rejected node is redispatched (`remediate`) before its tree is verified again; the edge stays for journals recorded under rules v1";
    Harness::<WorkNode, Step>::new(&Config {
        cases: 24,
        regressions: Some(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/work-node-harness.txt"
        )),
        session: Some("s1"),
    })
    .alphabet(alphabet())
    .unreachable_edge("rejected", "verified", "verified", v2)
    .unreachable_edge("rejected", "verification-failed", "rejected", v2)
    .property("a spent budget leaves only escalation", |s| match s {
        State::Escalated { run } if run.remediation_rounds < run.budget => Err(format!(
            "escalated with {} of {} rounds used",
            run.remediation_rounds, run.budget
        )),
        _ => Ok(()),
    })
    .run(proptest::collection::vec(step(), 0..16), command);
}
