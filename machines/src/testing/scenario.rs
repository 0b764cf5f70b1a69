//! Given / when / then for a machine's `decide`: a rule table tests the pure
//! machine, with no journal, engine or process per case (the cqrs-es
//! `TestFramework` idea).
//!
//! [`Scenario::given`] folds past events through [`Machine::evolve`] from
//! [`Machine::initial_state`]; [`Scenario::when`] decides one command in that state
//! with the [`Context`] you give it; then [`Decided::then`] asserts exactly the
//! events produced, or [`Decided::then_rejected_with`] asserts exactly the failed
//! predicates, in the order `decide` checked them. Failures panic with the state,
//! the command and what `decide` answered, at the caller's line.
//!
//! Pure: no IO, no clock (the time and fresh ids are the context you pass).
//!
//! ```
//! use cairn_machines::testing::Scenario;
//! use cairn_machines::work::node::{Command, Event, PlanReceipt, WorkNode};
//! use cairn_machines::{Context, Timestamp};
//!
//! let ctx = Context {
//!     now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses"),
//!     fresh_ids: vec![],
//!     session: Some("s1".into()),
//!     reads: Vec::new(),
//!     scans: Vec::new(),
//!     fencing_token: None,
//! };
//! let plan = PlanReceipt {
//!     brief_path: "/srv/.work/.cache/briefs/core.md".into(),
//!     brief_sha256: "a".repeat(64),
//!     writable_roots: vec!["src/".into()],
//!     confine_writes: true,
//!     escalation: "off".into(),
//!     worktree: false,
//!     overlaps: vec![],
//! };
//! let planned = Event::Planned { address: vec!["core".into()], receipt: plan.clone() };
//! let not_dispatched = Command::Dispatch {
//!     run_id: None,
//!     worktree_path: String::new(),
//!     expected_commit: String::new(),
//!     budget: None,
//!     finding: Some("delegate-client-unavailable".into()),
//!     repository: None,
//!     identity: None,
//! };
//!
//! // Accepted: exactly these events (`then` returns the state they lead to).
//! let state = Scenario::<WorkNode>::given([planned.clone()])
//!     .when(not_dispatched, &ctx)
//!     .then([Event::NotDispatched { finding: "delegate-client-unavailable".into(), plan }]);
//! assert!(matches!(state, cairn_machines::work::node::State::Planned { .. }));
//!
//! // Refused: exactly these predicates, in the order `decide` checked them.
//! let escalate = Command::Escalate { reason: "budget spent".into() };
//! Scenario::<WorkNode>::given([planned]).when(escalate, &ctx).then_rejected_with(&["rejected"]);
//! ```

use crate::{Context, Machine, Rejection};

/// A machine's state, rebuilt from past events: the *given* of a scenario.
pub struct Scenario<M: Machine> {
    state: M::State,
}

impl<M: Machine> Scenario<M> {
    /// The state after `events`, folded through [`Machine::evolve`] from
    /// [`Machine::initial_state`] (as replay does).
    pub fn given(events: impl IntoIterator<Item = M::Event>) -> Self {
        let state = events
            .into_iter()
            .fold(M::initial_state(), |s, e| M::evolve(s, &e));
        Scenario { state }
    }

    /// The initial state: a stream with no events.
    pub fn given_no_events() -> Self {
        Scenario {
            state: M::initial_state(),
        }
    }

    /// The state the command will meet.
    pub fn state(&self) -> &M::State {
        &self.state
    }

    /// Decides `command` in the given state with `context`.
    pub fn when(self, command: M::Command, context: &Context) -> Decided<M> {
        let result = M::decide(&self.state, &command, context);
        Decided {
            state: self.state,
            command,
            result,
        }
    }
}

/// What `decide` answered: the *then* of a scenario asserts on it.
pub struct Decided<M: Machine> {
    state: M::State,
    command: M::Command,
    result: Result<Vec<M::Event>, Rejection>,
}

impl<M: Machine> Decided<M> {
    /// Asserts that `decide` accepted the command with exactly `expected`, and
    /// returns the state those events lead to.
    ///
    /// # Panics
    ///
    /// When `decide` refused the command or produced other events.
    #[track_caller]
    pub fn then(self, expected: impl IntoIterator<Item = M::Event>) -> M::State {
        let expected: Vec<M::Event> = expected.into_iter().collect();
        let events = match self.result {
            Ok(events) => events,
            Err(rejection) => panic!(
                "{}: expected {expected:?}, but decide refused: {rejection}",
                describe::<M>(&self.state, &self.command)
            ),
        };
        assert_eq!(
            events,
            expected,
            "{}: the events decide produced",
            describe::<M>(&self.state, &self.command)
        );
        events.iter().fold(self.state, |s, e| M::evolve(s, e))
    }

    /// Asserts that `decide` refused the command naming exactly `predicates`, in
    /// order, and that the rejection names this machine, command and state; returns
    /// the rejection for further checks (fields, messages).
    ///
    /// # Panics
    ///
    /// When `decide` accepted the command, or refused it with other predicates or
    /// under other names.
    #[track_caller]
    pub fn then_rejected_with(self, predicates: &[&str]) -> Rejection {
        let what = describe::<M>(&self.state, &self.command);
        let rejection = match self.result {
            Err(rejection) => rejection,
            Ok(events) => panic!("{what}: expected a refusal naming {predicates:?}, but decide accepted it with {events:?}"),
        };
        let failed: Vec<&str> = rejection
            .violations
            .iter()
            .map(|v| v.predicate.as_str())
            .collect();
        assert_eq!(
            failed, predicates,
            "{what}: the failed predicates ({rejection})"
        );
        assert_eq!(
            (
                rejection.machine.as_str(),
                rejection.command.as_str(),
                rejection.state.as_str()
            ),
            (
                M::NAME,
                M::command_name(&self.command),
                M::state_name(&self.state)
            ),
            "{what}: the rejection names the machine, the command and the state"
        );
        rejection
    }

    /// The answer itself, for assertions the two above do not make.
    pub fn into_result(self) -> Result<Vec<M::Event>, Rejection> {
        self.result
    }
}

/// The headline of a failure message, `work-node: plan in state planned`, with
/// the command itself so a table's failing row can be found.
fn describe<M: Machine>(state: &M::State, command: &M::Command) -> String {
    format!(
        "{}: `{}` in state `{}` (command: {command:?})",
        M::NAME,
        M::command_name(command),
        M::state_name(state)
    )
}

#[cfg(test)]
mod tests {
    //! The helper must be able to fail: each assertion panics on the answer it
    //! does not expect.

    use std::panic::{catch_unwind, AssertUnwindSafe};

    use super::Scenario;
    use crate::work::node::{Command, Event, PlanReceipt, State, WorkNode};
    use crate::{Context, Timestamp};

    fn ctx() -> Context {
        Context {
            now: Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses"),
            fresh_ids: vec![],
            session: Some("s1".into()),
            reads: Vec::new(),
            scans: Vec::new(),
            fencing_token: None,
        }
    }

    fn escalate() -> Command {
        Command::Escalate {
            reason: "spent".into(),
        }
    }

    fn panics(f: impl FnOnce()) -> bool {
        catch_unwind(AssertUnwindSafe(f)).is_err()
    }

    #[test]
    fn then_rejected_with_holds_only_for_exactly_the_failed_predicates() {
        let refused = || Scenario::<WorkNode>::given_no_events().when(escalate(), &ctx());
        let rejection = refused().then_rejected_with(&["rejected"]);
        assert_eq!(rejection.command, "escalate");
        assert!(panics(|| {
            refused().then_rejected_with(&["budget-spent"]);
        }));
        assert!(panics(|| {
            refused().then_rejected_with(&["rejected", "budget-spent"]);
        }));
        assert!(panics(|| {
            refused().then([]);
        }));
    }

    #[test]
    fn then_holds_only_for_exactly_the_events_produced() {
        let plan = PlanReceipt {
            brief_path: "/srv/.work/.cache/briefs/core.md".into(),
            brief_sha256: "a".repeat(64),
            writable_roots: vec!["src/".into()],
            confine_writes: true,
            escalation: "off".into(),
            worktree: false,
            overlaps: vec![],
        };
        let planned = Event::Planned {
            address: vec!["core".into()],
            receipt: plan.clone(),
        };
        let accepted = || {
            Scenario::<WorkNode>::given([planned.clone()]).when(
                Command::Dispatch {
                    run_id: None,
                    worktree_path: String::new(),
                    expected_commit: String::new(),
                    budget: None,
                    finding: Some("offline".into()),
                    repository: None,
                    identity: None,
                },
                &ctx(),
            )
        };
        let not_dispatched = Event::NotDispatched {
            finding: "offline".into(),
            plan,
        };
        let state = accepted().then([not_dispatched.clone()]);
        assert!(matches!(state, State::Planned { .. }), "{state:?}");
        assert!(panics(|| {
            accepted().then([]);
        }));
        assert!(panics(|| {
            accepted().then([not_dispatched.clone(), not_dispatched]);
        }));
        assert!(panics(|| {
            accepted().then_rejected_with(&["planned"]);
        }));
    }
}
