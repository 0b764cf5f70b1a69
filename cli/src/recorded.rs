//! What a recording verb prints from: the outcome, and the transition recorded
//! (or replayed) with the state and version after it ([`crate::record`] makes
//! them).

use cairn::machines::RawEvent;
use cairn::{AnyExecuted, Executed, Machine, StreamId, Timestamp, Verdict};
use serde_json::Value;

/// How a recording ended (the verdict is the machine's, see `Machine::verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Appended; the lifecycle advanced.
    Accepted,
    /// Appended; a gate stopped the lifecycle (not a refusal): not green yet.
    NotGreen,
    /// `decide` accepted with no event: nothing to write, nothing written.
    Unchanged,
    /// The idempotency key matched the same earlier request: its recorded result,
    /// with the verdict it had; nothing written.
    Replayed(Verdict),
}

/// A recorded (or replayed) transition: what a verb prints from.
pub struct Recorded<M: Machine> {
    pub stream: StreamId,
    /// The events of this transition (of the first one, when replayed).
    pub events: Vec<M::Event>,
    /// The stream's state after them.
    pub state: M::State,
    /// The stream's version after them.
    pub version: u64,
    pub outcome: Outcome,
    /// The journal's clock as this call read it to decide (its context's `now`).
    pub at: Timestamp,
}

impl Outcome {
    /// How a transition ended: replayed, written (with the machine's verdict), or
    /// decided with nothing to write.
    pub(crate) fn of(replayed: bool, written: bool, verdict: Verdict) -> Self {
        match (replayed, written, verdict) {
            (true, _, v) => Outcome::Replayed(v),
            (false, false, _) => Outcome::Unchanged,
            (false, true, Verdict::Green) => Outcome::Accepted,
            (false, true, Verdict::NotGreen) => Outcome::NotGreen,
        }
    }
}

/// The stderr line every recording prints.
fn report(outcome: Outcome, stream: &StreamId, version: u64, names: &[&str]) {
    match outcome {
        Outcome::Replayed(_) => crate::output::stderr_line(format_args!(
            "cairn: idempotency key matched: returning the result recorded at version {version} of {stream}; nothing written"
        )),
        Outcome::Unchanged => crate::output::stderr_line(format_args!("cairn: nothing recorded on {stream} (no transition)")),
        Outcome::Accepted | Outcome::NotGreen => crate::output::stderr_line(format_args!(
            "cairn: recorded {} on {stream} (version {version})",
            names.join(", ")
        )),
    }
}

impl<M: Machine> Recorded<M> {
    pub(crate) fn from(done: Executed<M>, at: Timestamp) -> Self {
        let outcome = Outcome::of(
            done.replayed,
            done.receipt.is_some(),
            M::verdict(&done.state, &done.events),
        );
        Self {
            stream: done.stream,
            events: done.events,
            state: done.state,
            version: done.version,
            outcome,
            at,
        }
    }

    /// The event names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.events.iter().map(M::event_name).collect()
    }

    /// The stderr line every recording verb prints.
    pub(crate) fn report(&self) {
        report(self.outcome, &self.stream, self.version, &self.names());
    }
}

/// A transition recorded from a JSON command (`cairn exec`): what it prints from.
pub struct RecordedAny {
    pub stream: StreamId,
    /// The events of this transition, as the journal stores them.
    pub events: Vec<RawEvent>,
    /// The stream's state after them, and its name in the graph.
    pub state: Value,
    pub state_name: &'static str,
    pub version: u64,
    pub outcome: Outcome,
}

impl RecordedAny {
    pub(crate) fn from(done: AnyExecuted) -> Self {
        let r = Self {
            outcome: Outcome::of(done.replayed, done.receipt.is_some(), done.verdict),
            stream: done.stream,
            events: done.events,
            state: done.state,
            state_name: done.state_name,
            version: done.version,
        };
        let names: Vec<&str> = r.events.iter().map(|e| e.event_type.as_str()).collect();
        report(r.outcome, &r.stream, r.version, &names);
        r
    }
}
