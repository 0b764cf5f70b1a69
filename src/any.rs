//! Any registered machine driven by a JSON command, for a caller that knows the
//! machine only by name (`cairn exec`): the JSON is read into the machine's own
//! command type (every error a field and a rule), refused when only one of
//! cairn's verbs may record it ([`Machine::recorded_by`]: its evidence is what
//! cairn observes itself, so a caller's JSON could forge it), then decided and
//! appended through the typed engine path ([`Engine::decide`], [`Engine::append`])
//! — the same idempotency, version check and transition record as every verb.

use std::marker::PhantomData;

use cairn_journal::Receipt;
use cairn_machines::{Context, Machine, RawEvent, Verdict};
use serde_json::Value;

use crate::engine::{Decision, Executed, Key, Pending};
use crate::{Engine, Error, StreamId};

/// A transition recorded (or replayed, or decided with no event) from JSON.
#[derive(Debug, Clone)]
pub struct AnyExecuted {
    /// The stream.
    pub stream: StreamId,
    /// The events of this transition, as the journal stores them.
    pub events: Vec<RawEvent>,
    /// The stream's state after them, as JSON.
    pub state: Value,
    /// The state's name in the graph.
    pub state_name: &'static str,
    /// The stream's version after them.
    pub version: u64,
    /// Where they were written; `None` when nothing was written.
    pub receipt: Option<Receipt>,
    /// True when an idempotency key matched an earlier identical request.
    pub replayed: bool,
    /// The machine's verdict on the transition ([`Machine::verdict`]).
    pub verdict: Verdict,
}

/// [`Engine::decide_any`]'s answer.
pub enum AnyDecision {
    /// The key matched an earlier identical request: its recorded result.
    Replayed(AnyExecuted),
    /// Decided, not yet appended.
    Pending(AnyPending),
}

/// A transition decided from JSON, not yet appended ([`Engine::append_any`]).
pub struct AnyPending {
    inner: Box<dyn ErasedPending>,
    events: Vec<RawEvent>,
}

impl AnyPending {
    /// The events `decide` returned.
    pub fn events(&self) -> &[RawEvent] {
        &self.events
    }

    /// A decision with no events is complete (`Ok`: nothing to write); one with
    /// events comes back as it was (`Err`).
    pub fn unchanged(self) -> Result<AnyExecuted, Self> {
        let events = self.events;
        self.inner
            .unchanged()
            .map_err(|inner| AnyPending { inner, events })
    }
}

trait ErasedPending {
    fn unchanged(self: Box<Self>) -> Result<AnyExecuted, Box<dyn ErasedPending>>;
    fn append(self: Box<Self>, engine: &mut Engine) -> Result<AnyExecuted, Error>;
}

impl<M: Machine> ErasedPending for Pending<M> {
    fn unchanged(self: Box<Self>) -> Result<AnyExecuted, Box<dyn ErasedPending>> {
        match (*self).unchanged() {
            // No events: nothing to encode can fail.
            Ok(done) => Ok(any(done).unwrap_or_else(|_| unreachable!("no event to encode"))),
            Err(pending) => Err(Box::new(pending)),
        }
    }

    fn append(self: Box<Self>, engine: &mut Engine) -> Result<AnyExecuted, Error> {
        any(engine.append(*self)?)
    }
}

fn any<M: Machine>(done: Executed<M>) -> Result<AnyExecuted, Error> {
    let events = done
        .events
        .iter()
        .map(RawEvent::encode::<M>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Stored(e.to_string()))?;
    Ok(AnyExecuted {
        verdict: M::verdict(&done.state, &done.events),
        state_name: M::state_name(&done.state),
        state: serde_json::to_value(&done.state)
            .unwrap_or_else(|e| Value::String(format!("unencodable state: {e}"))),
        stream: done.stream,
        events,
        version: done.version,
        receipt: done.receipt,
        replayed: done.replayed,
    })
}

/// A machine's typed face behind a name: the registry keeps one per machine.
pub(crate) trait Face: Send + Sync {
    /// Decides the JSON `command` on `stream` (against the initial state when
    /// there is no journal yet).
    fn decide(
        &self,
        engine: Result<&Engine, &crate::Registry>,
        stream: &StreamId,
        command: &Value,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<AnyDecision, Error>;
}

pub(crate) struct Typed<M>(PhantomData<fn() -> M>);

impl<M> Typed<M> {
    pub(crate) fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<M: Machine> Face for Typed<M> {
    fn decide(
        &self,
        engine: Result<&Engine, &crate::Registry>,
        stream: &StreamId,
        command: &Value,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<AnyDecision, Error> {
        let command: M::Command = read_command(command)?;
        if let Some(verb) = M::recorded_by(&command) {
            return Err(Error::RecordedByCairn {
                machine: M::NAME,
                command: M::command_name(&command),
                verb,
            });
        }
        let pending = match engine {
            Ok(engine) => match engine.decide::<M>(stream, &command, context, key)? {
                Decision::Replayed(done) => return Ok(AnyDecision::Replayed(any(done)?)),
                Decision::Pending(p) => p,
            },
            Err(registry) => {
                let state = M::initial_state();
                let mut context = context.clone();
                (context.reads, context.scans) =
                    registry.read_fresh::<M>(stream, &state, &command)?;
                Pending::<M>::decide(stream, state, 0, &command, &context, key)?
            }
        };
        let events = pending
            .events
            .iter()
            .map(RawEvent::encode::<M>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Stored(e.to_string()))?;
        Ok(AnyDecision::Pending(AnyPending {
            inner: Box::new(pending),
            events,
        }))
    }
}

/// Reads `M`'s command from JSON; an error names the field (as a path from the
/// document: `review.outcome`, `runs[2].argv`) and the rule it broke.
///
/// serde reads a tagged enum's fields through a buffer that keeps no path, so
/// the field is found by asking the decoder itself (`command_path`); a missing field
/// is the one serde's message names.
fn read_command<T: serde::de::DeserializeOwned + serde::Serialize>(
    command: &Value,
) -> Result<T, Error> {
    // serde reads a struct or a tagged enum from an array too, by position: `[]`
    // was "missing field `command`" and `["x"]` an unknown variant at `[0]`, a
    // field no command has. A command is an object, said at the document.
    if !command.is_object() {
        return Err(Error::BadCommand {
            field: "$".to_owned(),
            rule: "type",
            message: "expected a JSON object with a `command` field".to_owned(),
        });
    }
    let read = read_strict::<T>(command)?;
    let written = serde_json::to_value(&read).map_err(|e| Error::Stored(e.to_string()))?;
    if let Some(field) = cairn_machines::evidence::wire::positional(command, &written, "") {
        return Err(Error::BadCommand {
            field,
            rule: "type",
            message: "expected a JSON object: an array is not read by position".to_owned(),
        });
    }
    match crate::command_path::ignored::<T>(command, &read) {
        Some(field) => Err(Error::BadCommand {
            message: format!(
                "unknown field `{}`: the command has no such field here",
                field.rsplit('.').next().unwrap_or(&field)
            ),
            field,
            rule: "unknown-field",
        }),
        None => Ok(read),
    }
}

fn read_strict<T: serde::de::DeserializeOwned>(command: &Value) -> Result<T, Error> {
    serde_json::from_value(command.clone()).map_err(|e| {
        let raw = e.to_string();
        let located = match raw.strip_prefix("missing field `") {
            Some(rest) => rest
                .split('`')
                .next()
                .and_then(|k| crate::command_path::locate_missing::<T>(command, &raw, k)),
            None => crate::command_path::locate::<T>(command, &raw),
        };
        let mut message = crate::command_path::plain(&raw);
        // serde names the Rust type of a tagged command (`internally tagged enum
        // Command`): say what the document must be instead.
        if let Some(at) = message.find("internally tagged enum") {
            message.truncate(at);
            message.push_str("an object with a `command` field");
        }
        let named = || {
            message
                .split('`')
                .nth(1)
                .map_or_else(|| "$".to_owned(), str::to_owned)
        };
        let (field, rule) = if message.starts_with("missing field") {
            (located.unwrap_or_else(named), "required")
        } else if message.starts_with("unknown field") {
            (located.unwrap_or_else(named), "unknown-field")
        } else if message.starts_with("unknown variant") {
            // An unknown command names the tag; another enum's value, its place.
            let tag = command.get("command").and_then(Value::as_str);
            let field = if tag.is_some() && tag == message.split('`').nth(1) {
                "command".to_owned()
            } else {
                located.unwrap_or_else(|| "$".to_owned())
            };
            (field, "unknown-variant")
        } else {
            (located.unwrap_or_else(|| "$".to_owned()), "type")
        };
        Error::BadCommand {
            field,
            rule,
            message,
        }
    })
}

impl Engine {
    /// Decides a JSON `command` of the stream's machine, writing nothing: the
    /// machine's own command type read from the JSON ([`Error::BadCommand`] names
    /// the field and rule), refused when only a cairn verb may record it
    /// ([`Error::RecordedByCairn`]), then exactly [`Engine::decide`].
    pub fn decide_any(
        &self,
        stream: &StreamId,
        command: &Value,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<AnyDecision, Error> {
        self.registry()
            .face(stream.machine())?
            .decide(Ok(self), stream, command, context, key)
    }

    /// Appends a transition decided from JSON, as [`Engine::append`] does.
    pub fn append_any(&mut self, pending: AnyPending) -> Result<AnyExecuted, Error> {
        pending.inner.append(self)
    }
}

impl crate::Registry {
    /// [`Engine::decide_any`] against the initial state at version 0, for a
    /// caller with no journal yet (a refusal then creates no file).
    pub fn decide_any_fresh(
        &self,
        stream: &StreamId,
        command: &Value,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<AnyDecision, Error> {
        self.face(stream.machine())?
            .decide(Err(self), stream, command, context, key)
    }
}
