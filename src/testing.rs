//! A generic property harness for any [`Machine`] (feature `testing`).
//!
//! Give it a proptest strategy of *steps* and a function that turns a step into a
//! command given the current state (so a generated sequence can refer to "the
//! current attempt" or "the offered merge"); it drives each sequence through the
//! real journal-backed [`Engine`] on a real SQLite file and checks the universal
//! invariants every cairn machine must keep:
//!
//! 1. the machine's graph has no defects;
//! 2. `decide` never panics (a panic fails the case);
//! 3. a rejected command appends nothing (stream version and chain head unchanged);
//! 4. every appended event is an edge of the graph from the state it was applied in;
//! 5. the engine's state equals the in-memory fold of the accepted events, and
//!    replaying the journal gives the same state and version;
//! 6. `journal verify` passes and `journal audit` re-decides every transition to its
//!    recorded events.
//!
//! ```
//! use cairn::testing::{check, Config};
//! # use cairn::machines::{EdgeSpec, GraphSpec, StateSpec};
//! # use cairn::{Context, Machine, Rejection, Violation};
//! # use proptest::prelude::*;
//! # struct Counter;
//! # impl Machine for Counter {
//! #     const NAME: &'static str = "counter";
//! #     const RULES_VERSION: u32 = 1;
//! #     type State = u32;
//! #     type Command = u32;
//! #     type Event = u32;
//! #     fn initial_state() -> u32 { 0 }
//! #     fn decide(s: &u32, c: &u32, _: &Context) -> Result<Vec<u32>, Rejection> {
//! #         if *c == 0 { return Err(Rejection::single("counter", "add", "counting", Violation::new("positive", None, "add at least 1"))) }
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
//! // Steps are the commands themselves here; 0 is always rejected.
//! check::<Counter, u32, _>(
//!     &Config { cases: 8, regressions: None, session: None },
//!     proptest::collection::vec(0u32..4, 1..10),
//!     |_state, step| *step,
//! );
//! ```

use std::path::PathBuf;

use cairn_journal::{Journal, Options};
use cairn_machines::{Context, Machine, Timestamp};
use proptest::strategy::Strategy;
use proptest::test_runner::{
    Config as RunnerConfig, FileFailurePersistence, TestCaseError, TestRunner,
};

use crate::{Engine, Error, Registry, StreamId};

/// How many sequences to try, and where failing seeds are kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// Sequences per run.
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

/// Runs the harness; panics with the minimal failing sequence when an invariant breaks.
pub fn check<M, P, S>(config: &Config, steps: S, to_command: impl Fn(&M::State, &P) -> M::Command)
where
    M: Machine,
    P: std::fmt::Debug,
    S: Strategy<Value = Vec<P>>,
{
    let defects = M::graph().defects();
    assert!(
        defects.is_empty(),
        "the `{}` graph has defects: {defects:?}",
        M::NAME
    );
    let mut runner = TestRunner::new(RunnerConfig {
        cases: config.cases,
        failure_persistence: config.regressions.map(|p| {
            Box::new(FileFailurePersistence::Direct(p))
                as Box<dyn proptest::test_runner::FailurePersistence>
        }),
        ..RunnerConfig::default()
    });
    let result = runner.run(&steps, |seq| {
        run_sequence_in::<M, P>(&seq, &to_command, config.session)
            .map(|_| ())
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("`{}` broke a universal invariant: {e}", M::NAME);
    }
}

/// A journal file in a fresh temp directory, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Drives one sequence and checks every invariant; `Err` names the first broken one.
pub fn run_sequence<M: Machine, P>(
    steps: &[P],
    to_command: &impl Fn(&M::State, &P) -> M::Command,
) -> Result<RunStats, String> {
    run_sequence_in::<M, P>(steps, to_command, None)
}

/// [`run_sequence`] with every context in `session`.
pub fn run_sequence_in<M: Machine, P>(
    steps: &[P],
    to_command: &impl Fn(&M::State, &P) -> M::Command,
    session: Option<&str>,
) -> Result<RunStats, String> {
    let dir = Scratch(std::env::temp_dir().join(format!("cairn-harness-{}", uuid::Uuid::new_v4())));
    let mut registry = Registry::builtin();
    registry.register::<M>();
    let mut engine = Engine::open(&dir.0.join("journal.db"), &Options::default(), registry)
        .map_err(|e| e.to_string())?;
    let stream = StreamId::new(M::NAME, "harness").map_err(|e| e.to_string())?;
    let graph = M::graph();
    let mut model = M::initial_state();
    let mut out = RunStats::default();
    let base =
        chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").map_err(|e| e.to_string())?;
    for (i, step) in steps.iter().enumerate() {
        let command = to_command(&model, step);
        let context = Context {
            // Sub-microsecond clock readings, as a real clock gives: what the journal
            // stores must replay to exactly the state the engine returned.
            now: Timestamp::from_instant(
                base + chrono::Duration::minutes(i as i64)
                    + chrono::Duration::nanoseconds(123_456_789),
            ),
            fresh_ids: (0..M::FRESH_IDS)
                .map(|k| uuid::Uuid::from_u128(((i as u128) << 32) + k as u128 + 1))
                .collect(),
            session: session.map(str::to_owned),
            reads: Vec::new(),
            fencing_token: None,
        };
        let version_before = engine
            .journal()
            .stream_version(stream.as_str())
            .map_err(|e| e.to_string())?;
        let head_before = engine.journal().head().map_err(|e| e.to_string())?;
        match engine.execute_with_context::<M>(&stream, &command, &context, None) {
            Ok(done) if done.events.is_empty() => {
                out.unchanged += 1;
                let head = engine.journal().head().map_err(|e| e.to_string())?;
                if head != head_before {
                    return Err(format!(
                        "step {i}: a command with no events changed the journal"
                    ));
                }
            }
            Ok(done) => {
                out.accepted += 1;
                for e in &done.events {
                    let from = M::state_name(&model);
                    model = M::evolve(model, e);
                    let to = M::state_name(&model);
                    if !graph.has_edge(from, M::event_name(e), to) {
                        return Err(format!(
                            "step {i}: `{}` from `{from}` to `{to}` is not an edge of the graph",
                            M::event_name(e)
                        ));
                    }
                }
                out.events += done.events.len() as u64;
                if done.version != version_before + done.events.len() as u64 {
                    return Err(format!(
                        "step {i}: version {} after {} events on version {version_before}",
                        done.version,
                        done.events.len()
                    ));
                }
                if done.state != model {
                    return Err(format!(
                        "step {i}: the engine's state differs from the fold of the accepted events"
                    ));
                }
            }
            Err(Error::Rejected(_)) => {
                out.rejected += 1;
                let version = engine
                    .journal()
                    .stream_version(stream.as_str())
                    .map_err(|e| e.to_string())?;
                let head = engine.journal().head().map_err(|e| e.to_string())?;
                if version != version_before || head != head_before {
                    return Err(format!("step {i}: a rejected command appended something"));
                }
            }
            Err(other) => return Err(format!("step {i}: {other}")),
        }
    }
    let (replayed, version) = engine.load::<M>(&stream).map_err(|e| e.to_string())?;
    if replayed != model || version != out.events {
        return Err("replaying the journal differs from folding the accepted events".into());
    }
    let verify = Journal::verify(engine.journal()).map_err(|e| e.to_string())?;
    if !verify.ok {
        return Err(format!("verify: {:?}", verify.problems));
    }
    let audit = engine.audit(None).map_err(|e| e.to_string())?;
    if !audit.ok || audit.redecided != out.accepted as u64 {
        return Err(format!(
            "audit re-decided {} of {} transitions: {:?}",
            audit.redecided, out.accepted, audit.findings
        ));
    }
    Ok(out)
}
