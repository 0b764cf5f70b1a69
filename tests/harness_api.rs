//! The graph-driven harness itself, on the test-only `ticket` machine: it reports
//! coverage and refusals, fails on an edge never taken unless the test names it
//! unreachable (and on a wrong name), and tells the test's own panics and broken
//! properties apart from a broken cairn invariant. Each failure is asserted on the
//! panic's message, so each check is seen failing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cairn::machines::GraphSpec;
use cairn::testing::{Config, Coverage, Harness};
use cairn::{Context, Machine, Outcome, Rejection};
use proptest::prelude::*;

use crate::support::ticket::{close, Command, State, Ticket};

#[derive(Debug, Clone)]
enum Step {
    Open(bool),
    Comment,
    Close(Outcome),
}

fn to_command(_: &State, step: &Step) -> Command {
    match step {
        Step::Open(titled) => Command::Open {
            title: if *titled { "t" } else { " " }.into(),
        },
        Step::Comment => Command::Comment { text: "c".into() },
        Step::Close(Outcome::Pass) => close(Outcome::Pass, Some(0)),
        Step::Close(o) => close(*o, Some(1)),
    }
}

const CONFIG: Config = Config {
    cases: 4,
    regressions: None,
    session: None,
};

fn all() -> Vec<Step> {
    vec![
        Step::Open(false),
        Step::Open(true),
        Step::Comment,
        Step::Close(Outcome::Fail),
        Step::Close(Outcome::Pass),
    ]
}

/// Never closes.
fn no_close() -> Vec<Step> {
    vec![Step::Open(true), Step::Comment]
}

fn walks(steps: Vec<Step>) -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(proptest::sample::select(steps), 0..6)
}

/// The message the harness panicked with.
fn failure(run: impl FnOnce() -> Coverage) -> String {
    let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("the harness must fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

#[test]
fn the_harness_reports_coverage_and_refusals() {
    let c = Harness::<Ticket, Step>::new(&CONFIG)
        .alphabet(all())
        .run(walks(all()), to_command);
    assert!(c.is_complete(), "{c}");
    assert!(c.edges[&("open", "closed", "closed")] > 0, "{c}");
    assert!(c.states["closed"] > 0, "{c}");
    let refused = |cmd: &str, p: &str| c.rejections.get(&(cmd.to_owned(), p.to_owned()));
    assert!(refused("close", "check-passes").is_some(), "{c}");
    assert!(refused("open", "non-empty-title").is_some(), "{c}");
    assert!(c.to_string().contains("3/3 states, 3/3 edges"), "{c}");
}

#[test]
fn an_edge_never_taken_fails_unless_named_unreachable() {
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(no_close())
            .run(walks(no_close()), to_command)
    });
    assert!(message.contains("left its graph uncovered"), "{message}");
    assert!(message.contains("`open --closed--> closed`"), "{message}");
    assert!(message.contains("[\"closed\"]"), "{message}");
    let c = Harness::<Ticket, Step>::new(&CONFIG)
        .alphabet(no_close())
        .unreachable_edge("open", "closed", "closed", "this test never closes")
        .unreachable_state("closed", "this test never closes")
        .run(walks(no_close()), to_command);
    assert!(c.is_complete(), "{c}");
    assert!(c.to_string().contains("this test never closes"), "{c}");
}

#[test]
fn a_wrong_unreachable_name_fails() {
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .unreachable_edge("open", "closed", "closed", "wrongly")
            .run(walks(all()), to_command)
    });
    assert!(
        message.contains("`open --closed--> closed` is named unreachable but was taken"),
        "{message}"
    );
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .unreachable_edge("open", "reopened", "open", "no such edge")
            .run(walks(all()), to_command)
    });
    assert!(
        message.contains("is not declared by the graph"),
        "{message}"
    );
}

#[test]
fn a_panic_in_the_tests_own_code_is_reported_as_its_own() {
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .run(walks(all()), |state, step| match step {
                Step::Comment => panic!("my fixture has no comment"),
                _ => to_command(state, step),
            })
    });
    assert!(
        message.contains("the test's own to_command panicked"),
        "{message}"
    );
    assert!(message.contains("my fixture has no comment"), "{message}");
    assert!(message.contains("(Comment), state `new`"), "{message}");
    assert!(!message.contains("universal invariant"), "{message}");
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .property("counts", |_| panic!("my property cannot count"))
            .run(walks(all()), to_command)
    });
    assert!(
        message.contains("the test's own property `counts` panicked"),
        "{message}"
    );
    assert!(!message.contains("universal invariant"), "{message}");
}

#[test]
fn a_domain_property_is_checked_on_every_state_and_the_last() {
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .property("no comment", |s| match s {
                State::Open { comments, .. } if *comments > 0 => {
                    Err(format!("{comments} comment(s)"))
                }
                _ => Ok(()),
            })
            .run(walks(all()), to_command)
    });
    assert!(
        message.contains("broke the property `no comment`"),
        "{message}"
    );
    assert!(message.contains("1 comment(s)"), "{message}");
    let message = failure(|| {
        Harness::<Ticket, Step>::new(&CONFIG)
            .alphabet(all())
            .final_property("ends closed", |s| match s {
                State::Closed { .. } => Ok(()),
                _ => Err("not closed".into()),
            })
            .run(walks(all()), to_command)
    });
    assert!(
        message.contains("broke the property `ends closed`"),
        "{message}"
    );
    assert!(message.contains("the final state"), "{message}");
}

/// `ticket` whose `decide` panics on a comment: a machine bug.
struct Panicky;

impl Machine for Panicky {
    const NAME: &'static str = "ticket";
    const RULES_VERSION: u32 = Ticket::RULES_VERSION;
    const RETIRED_RULES: &'static [u32] = Ticket::RETIRED_RULES;
    const FRESH_IDS: usize = Ticket::FRESH_IDS;
    type State = State;
    type Command = Command;
    type Event = <Ticket as Machine>::Event;
    fn initial_state() -> State {
        Ticket::initial_state()
    }
    fn decide(s: &State, c: &Command, ctx: &Context) -> Result<Vec<Self::Event>, Rejection> {
        if matches!(c, Command::Comment { .. }) {
            panic!("an index out of bounds in decide");
        }
        Ticket::decide(s, c, ctx)
    }
    fn evolve(s: State, e: &Self::Event) -> State {
        Ticket::evolve(s, e)
    }
    fn state_name(s: &State) -> &'static str {
        Ticket::state_name(s)
    }
    fn event_name(e: &Self::Event) -> &'static str {
        Ticket::event_name(e)
    }
    fn command_name(c: &Command) -> &'static str {
        Ticket::command_name(c)
    }
    fn graph() -> GraphSpec {
        Ticket::graph()
    }
}

#[test]
fn a_panicking_decide_is_a_broken_invariant() {
    let message = failure(|| {
        Harness::<Panicky, Step>::new(&CONFIG)
            .alphabet(all())
            .run(walks(all()), to_command)
    });
    assert!(message.contains("broke a universal invariant"), "{message}");
    assert!(message.contains("decide panicked"), "{message}");
    assert!(!message.contains("the test's own"), "{message}");
}
