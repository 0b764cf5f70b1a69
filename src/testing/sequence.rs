//! One command sequence through the real journal-backed engine, checking every
//! universal invariant, the test's properties, and counting what it covered.

use std::path::PathBuf;

use cairn_journal::{Journal, Options};
use cairn_machines::testing::explore::{catch, check_properties};
use cairn_machines::testing::{context, Coverage, Failure, Property};
use cairn_machines::Machine;

use super::RunStats;
use crate::{Engine, Error, Registry, StreamId};

/// A journal file in a fresh temp directory, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Drives one sequence and checks every invariant; `Err` names the first broken one.
pub fn run_sequence<M: Machine, P: std::fmt::Debug>(
    steps: &[P],
    to_command: &impl Fn(&M::State, &P) -> M::Command,
) -> Result<RunStats, String> {
    run_sequence_in::<M, P>(steps, to_command, None)
}

/// [`run_sequence`] with every context in `session`.
pub fn run_sequence_in<M: Machine, P: std::fmt::Debug>(
    steps: &[P],
    to_command: &impl Fn(&M::State, &P) -> M::Command,
    session: Option<&str>,
) -> Result<RunStats, String> {
    let mut coverage = Coverage::new(&M::graph());
    let checks = Checks::<M, P> {
        to_command,
        session,
        every: &[],
        last: &[],
    };
    checks.run(steps, &mut coverage).map_err(|f| f.to_string())
}

/// What a sequence is checked with.
pub(super) struct Checks<'a, M: Machine, P> {
    pub to_command: &'a dyn Fn(&M::State, &P) -> M::Command,
    pub session: Option<&'a str>,
    /// Properties of every state.
    pub every: &'a [Property<M::State>],
    /// Properties of the final state.
    pub last: &'a [Property<M::State>],
}

fn io(e: impl std::fmt::Display) -> Failure {
    Failure::Invariant(format!("the journal failed: {e}"))
}

impl<M: Machine, P: std::fmt::Debug> Checks<'_, M, P> {
    /// Runs `steps` on a fresh journal, adding what it reached to `coverage`.
    pub fn run(&self, steps: &[P], coverage: &mut Coverage) -> Result<RunStats, Failure> {
        let dir =
            Scratch(std::env::temp_dir().join(format!("cairn-harness-{}", uuid::Uuid::new_v4())));
        let mut registry = Registry::builtin();
        registry.register::<M>();
        let mut engine =
            Engine::open(&dir.0.join("journal.db"), &Options::default(), registry).map_err(io)?;
        // A claim's stream names the resource it leases (`claim/<stream>`).
        let instance = if M::NAME == cairn_machines::reads::CLAIM_MACHINE {
            "harness/resource"
        } else {
            "harness"
        };
        let mut stream = StreamId::new(M::NAME, instance).map_err(io)?;
        let graph = M::graph();
        let mut model = M::initial_state();
        coverage.state(M::state_name(&model));
        check_properties::<M>(self.every, &model, || "the initial state".into())?;
        let mut out = RunStats::default();
        let broken = |i: usize, m: String| Failure::Invariant(format!("step {i}: {m}"));
        for (i, step) in steps.iter().enumerate() {
            let place = || format!("step {i} ({step:?})");
            let command = catch(|| (self.to_command)(&model, step)).map_err(|message| {
                Failure::UserPanic {
                    what: "to_command".into(),
                    place: format!("{}, state `{}`", place(), M::state_name(&model)),
                    message,
                }
            })?;
            // A command that names its own stream (a park episode, a saga id) is
            // run on that stream, as the engine requires.
            if let Some(own) = M::stream_of(&command) {
                stream = StreamId::parse(&own).map_err(io)?;
            }
            let context = context(i, M::FRESH_IDS, self.session);
            let version_before = engine
                .journal()
                .stream_version(stream.as_str())
                .map_err(io)?;
            let head_before = engine.journal().head().map_err(io)?;
            let executed =
                catch(|| engine.execute_with_context::<M>(&stream, &command, &context, None))
                    .map_err(|m| broken(i, format!("decide panicked on {command:?}: {m}")))?;
            match executed {
                Ok(done) if done.events.is_empty() => {
                    out.unchanged += 1;
                    if engine.journal().head().map_err(io)? != head_before {
                        return Err(broken(
                            i,
                            "a command with no events changed the journal".into(),
                        ));
                    }
                }
                Ok(done) => {
                    out.accepted += 1;
                    for e in &done.events {
                        let from = M::state_name(&model);
                        model = M::evolve(model, e);
                        let to = M::state_name(&model);
                        let event = M::event_name(e);
                        if !graph.has_edge(from, event, to) {
                            return Err(broken(
                                i,
                                format!(
                                    "`{event}` from `{from}` to `{to}` is not an edge of the graph"
                                ),
                            ));
                        }
                        coverage.edge(from, event, to);
                        check_properties::<M>(self.every, &model, place)?;
                    }
                    out.events += done.events.len() as u64;
                    if done.version != version_before + done.events.len() as u64 {
                        return Err(broken(
                            i,
                            format!(
                                "version {} after {} events on version {version_before}",
                                done.version,
                                done.events.len()
                            ),
                        ));
                    }
                    if done.state != model {
                        return Err(broken(
                            i,
                            "the engine's state differs from the fold of the accepted events"
                                .into(),
                        ));
                    }
                }
                Err(Error::Rejected(r)) => {
                    out.rejected += 1;
                    for v in &r.violations {
                        coverage.rejection(&r.command, &v.predicate);
                    }
                    let version = engine
                        .journal()
                        .stream_version(stream.as_str())
                        .map_err(io)?;
                    if version != version_before
                        || engine.journal().head().map_err(io)? != head_before
                    {
                        return Err(broken(i, "a rejected command appended something".into()));
                    }
                }
                Err(other) => return Err(broken(i, other.to_string())),
            }
        }
        check_properties::<M>(self.last, &model, || {
            format!("the final state after {} steps", steps.len())
        })?;
        let (replayed, version) = engine.load::<M>(&stream).map_err(io)?;
        if replayed != model || version != out.events {
            return Err(Failure::Invariant(
                "replaying the journal differs from folding the accepted events".into(),
            ));
        }
        let verify = Journal::verify(engine.journal()).map_err(io)?;
        if !verify.ok {
            return Err(Failure::Invariant(format!("verify: {:?}", verify.problems)));
        }
        let audit = engine.audit(None).map_err(io)?;
        if !audit.ok || audit.redecided != out.accepted as u64 {
            return Err(Failure::Invariant(format!(
                "audit re-decided {} of {} transitions: {:?}",
                audit.redecided, out.accepted, audit.findings
            )));
        }
        Ok(out)
    }
}
