//! A graph-driven harness for any [`Machine`] (feature `testing`).
//!
//! Give it a proptest strategy of *steps* and a function that turns a step into a
//! command given the current state (so a generated sequence can refer to "the
//! current attempt" or "the offered merge"). The harness then
//!
//! 1. **aims at the graph**: it tries every step of an alphabet (yours, or the
//!    distinct steps your strategy generates) in every state it reaches, breadth
//!    first over the pure `decide` (`cairn_machines::testing::Explorer`), and keeps
//!    the shortest sequence to every declared state and edge — the XState
//!    model-based-testing idea over the real guards;
//! 2. runs each of those sequences, and `cases` random ones from your strategy,
//!    through the real journal-backed [`Engine`](crate::Engine) on a real SQLite file, checking
//!    the universal invariants every cairn machine must keep:
//!    * the machine's graph has no defects;
//!    * `decide` never panics;
//!    * a rejected command appends nothing (stream version and chain head unchanged);
//!    * every appended event is an edge of the graph from the state it was applied in;
//!    * the engine's state equals the in-memory fold of the accepted events, and
//!      replaying the journal gives the same state and version;
//!    * `journal verify` passes and `journal audit` re-decides every transition to
//!      its recorded events;
//! 3. checks your domain properties ([`Harness::property`] on every state a
//!    sequence reaches, [`Harness::final_property`] on each sequence's last);
//! 4. reports [`Coverage`] — states reached and edges taken by the sequences run
//!    through the engine, refusals per `(command, predicate)` over the exploration
//!    and the runs — and **fails when a declared state or edge was never reached**,
//!    unless the test names it unreachable by design, with a reason
//!    ([`Harness::unreachable_edge`], [`Harness::unreachable_state`]). A name that
//!    turns out reachable fails too, so the list stays true.
//!
//! A panic in the test's own code (`to_command`, a property, the strategy) is
//! reported as that — the test's panic, with the step and state it met — never as
//! a broken cairn invariant.
//!
//! ```
//! use cairn::testing::{Config, Harness};
//! # use cairn::machines::{EdgeSpec, GraphSpec, StateSpec};
//! # use cairn::{Context, Machine, Rejection, Violation};
//! # struct Counter;
//! # impl Machine for Counter {
//! #     const NAME: &'static str = "counter";
//! #     const RULES_VERSION: u32 = 1;
//! #     type State = u32;
//! #     type Command = u32;
//! #     type Event = u32;
//! #     fn initial_state() -> u32 { 0 }
//! #     fn decide(s: &u32, c: &u32, _: &Context) -> Result<Vec<u32>, Rejection> {
//! #         if *c == 0 { return Err(Rejection::refuse::<Counter>(s, c, Violation::new("positive", None, "add at least 1"))) }
//! #         Ok(vec![*s + c])
//! #     }
//! #     fn evolve(_: u32, e: &u32) -> u32 { *e }
//! #     fn state_name(_: &u32) -> &'static str { "counting" }
//! #     fn event_name(_: &u32) -> &'static str { "added" }
//! #     fn command_name(_: &u32) -> &'static str { "add" }
//! #     fn graph() -> GraphSpec {
//! #         GraphSpec { machine: "counter", initial: "counting",
//! #             states: vec![StateSpec { name: "counting", terminal: false }],
//! #             edges: vec![EdgeSpec { from: "counting", event: "added", to: "counting" }] }
//! #     }
//! # }
//! // Steps are the commands themselves here; 0 is always refused.
//! let coverage = Harness::<Counter, u32>::new(&Config { cases: 8, regressions: None, session: None })
//!     .property("never shrinks", |n| if *n < 1_000_000 { Ok(()) } else { Err(format!("{n}")) })
//!     .run(proptest::collection::vec(0u32..4, 1..10), |_state, step| *step);
//! assert!(coverage.is_complete());
//! assert_eq!(coverage.edges[&("counting", "added", "counting")] > 0, true);
//! assert!(coverage.rejections[&("add".to_owned(), "positive".to_owned())] > 0);
//! ```

mod sequence;

use std::cell::RefCell;
use std::fmt::Debug;
use std::marker::PhantomData;

use cairn_machines::testing::explore::catch;
use cairn_machines::testing::{Explorer, Failure, Property, Unreachable};
use cairn_machines::Machine;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{
    Config as RunnerConfig, FileFailurePersistence, TestCaseError, TestError, TestRunner,
};

pub use cairn_machines::testing::Coverage;
pub use sequence::{run_sequence, run_sequence_in};

/// How many sequences to try, and where failing seeds are kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// Random sequences per run (beside the sequences aimed at the graph).
    pub cases: u32,
    /// A file for failing seeds (e.g. `proptest-regressions/park-harness.txt`), or none.
    pub regressions: Option<&'static str>,
    /// The session every generated context carries (machines that bind evidence to
    /// a session need one), or none.
    pub session: Option<&'static str>,
}

/// What one sequence did (statistics of a run; not to be confused with
/// [`crate::Outcome`], the evidence outcome `pass | fail | unknown`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Commands that appended events.
    pub accepted: usize,
    /// Commands the guards refused.
    pub rejected: usize,
    /// Commands accepted with no events.
    pub unchanged: usize,
    /// Events appended.
    pub events: u64,
}

/// The old name of [`RunStats`].
#[deprecated(note = "renamed RunStats: `cairn::Outcome` is the evidence outcome")]
pub type Outcome = RunStats;

/// Runs the harness with no properties and nothing named unreachable: every
/// declared state and edge must be reached. Panics with the minimal failing
/// sequence when an invariant breaks, or with the coverage report when the graph
/// was not covered. Returns the coverage.
pub fn check<M, P, S>(
    config: &Config,
    steps: S,
    to_command: impl Fn(&M::State, &P) -> M::Command,
) -> Coverage
where
    M: Machine,
    P: Debug + Clone,
    S: Strategy<Value = Vec<P>>,
{
    Harness::<M, P>::new(config).run(steps, to_command)
}

/// The harness for machine `M` driven by steps `P`: configure, then [`Harness::run`].
pub struct Harness<M: Machine, P> {
    config: Config,
    unreachable: Vec<Unreachable>,
    every: Vec<Property<M::State>>,
    last: Vec<Property<M::State>>,
    alphabet: Option<Vec<P>>,
    max_states: usize,
    key: Option<Box<cairn_machines::testing::explore::Key<M::State>>>,
    _machine: PhantomData<fn() -> M>,
}

impl<M: Machine, P: Debug + Clone> Harness<M, P> {
    /// A harness with `config`, no properties, nothing named unreachable, and an
    /// exploration budget of 2000 distinct states.
    pub fn new(config: &Config) -> Self {
        Self {
            config: config.clone(),
            unreachable: vec![],
            every: vec![],
            last: vec![],
            alphabet: None,
            max_states: 2000,
            key: None,
            _machine: PhantomData,
        }
    }

    /// Names the declared edge `from --event--> to` unreachable by design.
    pub fn unreachable_edge(
        mut self,
        from: &'static str,
        event: &'static str,
        to: &'static str,
        reason: &str,
    ) -> Self {
        self.unreachable.push(Unreachable::Edge {
            edge: (from, event, to),
            reason: reason.to_owned(),
        });
        self
    }

    /// Names the declared state `name` unreachable by design (its edges in and out
    /// must be named too).
    pub fn unreachable_state(mut self, name: &'static str, reason: &str) -> Self {
        self.unreachable.push(Unreachable::State {
            name,
            reason: reason.to_owned(),
        });
        self
    }

    /// A domain property every state a sequence reaches must keep (the initial
    /// state and the state after every appended event).
    pub fn property(
        mut self,
        name: &str,
        check: impl Fn(&M::State) -> Result<(), String> + 'static,
    ) -> Self {
        self.every.push(Property::new(name, check));
        self
    }

    /// A domain property the final state of every sequence must keep.
    pub fn final_property(
        mut self,
        name: &str,
        check: impl Fn(&M::State) -> Result<(), String> + 'static,
    ) -> Self {
        self.last.push(Property::new(name, check));
        self
    }

    /// The steps the exploration tries in every state. Without one, the distinct
    /// steps of 64 sequences drawn from the strategy (deterministically) are used.
    pub fn alphabet(mut self, steps: Vec<P>) -> Self {
        self.alphabet = Some(steps);
        self
    }

    /// How the exploration tells states apart: states with the same key (and
    /// name) are expanded once. Give one when a state carries data that grows
    /// without changing what the machine admits (counters, histories), so the
    /// search spends its budget on what matters; by default the state's JSON, with
    /// the contexts' times and fresh ids blanked.
    pub fn state_key(mut self, key: impl Fn(&M::State) -> String + 'static) -> Self {
        self.key = Some(Box::new(key));
        self
    }

    /// At most `n` distinct states are expanded by the exploration.
    pub fn max_states(mut self, n: usize) -> Self {
        self.max_states = n;
        self
    }

    /// Explores, runs the sequences found and `cases` random ones through the
    /// engine, and checks coverage. Panics on the first failure (the test's own
    /// panic, a broken invariant or property, a state or edge not covered);
    /// returns the coverage otherwise.
    pub fn run<S>(self, steps: S, to_command: impl Fn(&M::State, &P) -> M::Command) -> Coverage
    where
        S: Strategy<Value = Vec<P>>,
    {
        let defects = M::graph().defects();
        assert!(
            defects.is_empty(),
            "the `{}` graph has defects: {defects:?}",
            M::NAME
        );
        let fail = |f: Failure| -> ! { panic!("`{}` {f}", M::NAME) };
        let alphabet = match &self.alphabet {
            Some(a) => a.clone(),
            None => sample(&steps).unwrap_or_else(|f| fail(f)),
        };
        let checks = sequence::Checks::<M, P> {
            to_command: &to_command,
            session: self.config.session,
            every: &self.every,
            last: &self.last,
        };
        let named: Vec<_> = self
            .unreachable
            .iter()
            .filter_map(|u| match u {
                Unreachable::Edge { edge, .. } => Some(*edge),
                Unreachable::State { .. } => None,
            })
            .collect();
        let explored = Explorer::<M, P> {
            alphabet: &alphabet,
            to_command: &to_command,
            properties: &self.every,
            session: self.config.session,
            max_states: self.max_states,
            unreachable: &named,
            key: self.key.as_deref(),
        }
        .run()
        .unwrap_or_else(|f| fail(f));
        let mut coverage = Coverage::new(&M::graph());
        for path in &explored.paths {
            let seq: Vec<P> = path.iter().map(|k| alphabet[*k].clone()).collect();
            if let Err(f) = checks.run(&seq, &mut coverage) {
                panic!("`{}` {f}\nthe sequence: {seq:#?}", M::NAME);
            }
        }
        let walked = RefCell::new(Coverage::new(&M::graph()));
        let mut runner = TestRunner::new(RunnerConfig {
            cases: self.config.cases,
            failure_persistence: self.config.regressions.map(|p| {
                Box::new(FileFailurePersistence::Direct(p))
                    as Box<dyn proptest::test_runner::FailurePersistence>
            }),
            ..RunnerConfig::default()
        });
        let result = catch(|| {
            runner.run(&steps, |seq| {
                checks
                    .run(&seq, &mut walked.borrow_mut())
                    .map(|_| ())
                    .map_err(|f| TestCaseError::fail(f.to_string()))
            })
        })
        .unwrap_or_else(|message| {
            fail(Failure::UserPanic {
                what: "step strategy".into(),
                place: "generating a sequence".into(),
                message,
            })
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(reason, seq)) => {
                panic!("`{}` {reason}\nminimal failing sequence: {seq:#?}", M::NAME)
            }
            Err(TestError::Abort(reason)) => panic!("`{}`: the run aborted: {reason}", M::NAME),
        }
        coverage.merge(&walked.into_inner());
        // Refusals count over the exploration too (the same `decide`); states and
        // edges only over what ran through the engine.
        for (k, n) in &explored.coverage.rejections {
            *coverage.rejections.entry(k.clone()).or_insert(0) += n;
        }
        coverage.unreachable = self.unreachable;
        eprintln!(
            "cairn harness: explored {} states ({}), ran {} aimed sequences; coverage of {}",
            explored.expanded,
            if explored.exhaustive {
                "all it found"
            } else {
                "the budget"
            },
            explored.paths.len(),
            coverage.summary()
        );
        if !coverage.is_complete() {
            panic!(
                "`{}` left its graph uncovered{}: states never reached {:?}; edges never taken [{}]; wrongly named unreachable {:?}\n(name what is unreachable by design with Harness::unreachable_edge / unreachable_state, with the reason)\n{coverage}",
                M::NAME,
                if explored.exhaustive {
                    String::new()
                } else {
                    format!(" (the exploration stopped at its budget of {} states: raise max_states or give an alphabet)", self.max_states)
                },
                coverage.missing_states(),
                coverage
                    .missing_edges()
                    .iter()
                    .map(cairn_machines::testing::coverage::show)
                    .collect::<Vec<_>>()
                    .join(", "),
                coverage.misnamed(),
            );
        }
        coverage
    }
}

/// The distinct steps (by their `Debug` text, first seen first) of 64 sequences
/// drawn from `steps` by a deterministic runner.
fn sample<P: Debug + Clone, S: Strategy<Value = Vec<P>>>(steps: &S) -> Result<Vec<P>, Failure> {
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::HashSet::new();
    let mut out = vec![];
    for _ in 0..64 {
        let tree = catch(|| steps.new_tree(&mut runner))
            .map_err(|message| Failure::UserPanic {
                what: "step strategy".into(),
                place: "drawing the alphabet".into(),
                message,
            })?
            .map_err(|reason| Failure::UserPanic {
                what: "step strategy".into(),
                place: "drawing the alphabet".into(),
                message: format!("it generated no value: {reason}"),
            })?;
        for step in tree.current() {
            if seen.insert(format!("{step:?}")) {
                out.push(step);
            }
        }
    }
    Ok(out)
}
