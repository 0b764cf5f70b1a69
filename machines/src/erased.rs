//! Machines behind a JSON face, so one registry, one audit and one CLI serve
//! every machine, built-in or user-defined.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Context, Error, GraphSpec, Machine, Rejection};

/// An event as the journal stores it: type name, schema version, JSON payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RawEvent {
    /// The event's type name (its edge label in the graph).
    pub event_type: String,
    /// The schema version the payload was written with.
    pub schema_version: u32,
    /// The event as JSON.
    pub payload: Value,
}

impl RawEvent {
    /// Encodes a typed event of machine `M`.
    pub fn encode<M: Machine>(event: &M::Event) -> Result<Self, Error> {
        let payload = serde_json::to_value(event).map_err(|e| Error::Upcast {
            machine: M::NAME,
            event_type: M::event_name(event).to_owned(),
            schema_version: M::event_schema_version(event),
            reason: format!("cannot encode: {e}"),
        })?;
        Ok(Self {
            event_type: M::event_name(event).to_owned(),
            schema_version: M::event_schema_version(event),
            payload,
        })
    }

    /// Decodes into a typed event of machine `M`, upcasting older versions.
    pub fn decode<M: Machine>(&self) -> Result<M::Event, Error> {
        M::upcast(&self.event_type, self.schema_version, self.payload.clone())
    }
}

/// What applying one event did, for the audit's edge check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The state the event was applied in.
    pub from: &'static str,
    /// The state it led to.
    pub to: &'static str,
    /// True when `from --event--> to` is an edge of the machine's graph.
    pub is_edge: bool,
}

/// Why a JSON command could not be decided.
#[derive(Debug, Clone, PartialEq)]
pub enum DecideFailure {
    /// The command is not a valid command of this machine.
    Command(String),
    /// The guards refused it.
    Rejected(Rejection),
    /// An event could not be encoded.
    Encode(Error),
}

/// A replay in progress, type-erased.
pub trait DynFold {
    /// Applies one recorded event.
    fn apply(&mut self, event: &RawEvent) -> Result<Step, Error>;
    /// Applies one stored event from its JSON text (the replay fast path).
    fn apply_stored(
        &mut self,
        event_type: &str,
        schema_version: u32,
        payload: &str,
    ) -> Result<Step, Error>;
    /// The current state's graph node.
    fn state_name(&self) -> &'static str;
    /// The current state as JSON.
    fn state_json(&self) -> Value;
    /// [`Machine::fact`] of the current state.
    fn fact(&self) -> Option<crate::reads::Fact>;
    /// Decides a JSON command against the current state.
    fn decide(&self, command: &Value, context: &Context) -> Result<Vec<RawEvent>, DecideFailure>;
    /// [`Machine::scans`] of a JSON command in the current state (none for a
    /// command that does not read as the machine's).
    fn scans(&self, command: &Value) -> Vec<crate::reads::Sieve>;
}

/// A machine, type-erased.
pub trait DynMachine: Send + Sync {
    /// [`Machine::NAME`].
    fn name(&self) -> &'static str;
    /// [`Machine::RULES_VERSION`].
    fn rules_version(&self) -> u32;
    /// [`Machine::RETIRED_RULES`].
    fn retired_rules(&self) -> &'static [u32];
    /// [`Machine::FRESH_IDS`].
    fn fresh_ids(&self) -> usize;
    /// [`Machine::graph`].
    fn graph(&self) -> GraphSpec;
    /// A fold at the initial state.
    fn start(&self) -> Box<dyn DynFold>;
}

/// Wraps a [`Machine`] as a [`DynMachine`].
pub struct Erased<M>(PhantomData<fn() -> M>);

impl<M: Machine> Erased<M> {
    /// Wraps `M`.
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<M: Machine> Default for Erased<M> {
    fn default() -> Self {
        Self::new()
    }
}

struct Fold<M: Machine> {
    state: M::State,
    graph: GraphSpec,
}

impl<M: Machine> Fold<M> {
    fn step(&mut self, typed: &M::Event) -> Step {
        let from = M::state_name(&self.state);
        let state = std::mem::replace(&mut self.state, M::initial_state());
        self.state = M::evolve(state, typed);
        let to = M::state_name(&self.state);
        Step {
            from,
            to,
            is_edge: self.graph.has_edge(from, M::event_name(typed), to),
        }
    }
}

impl<M: Machine> DynFold for Fold<M> {
    fn apply(&mut self, event: &RawEvent) -> Result<Step, Error> {
        let typed = event.decode::<M>()?;
        Ok(self.step(&typed))
    }

    fn apply_stored(
        &mut self,
        event_type: &str,
        schema_version: u32,
        payload: &str,
    ) -> Result<Step, Error> {
        let typed = M::decode_stored(event_type, schema_version, payload)?;
        Ok(self.step(&typed))
    }

    fn state_name(&self) -> &'static str {
        M::state_name(&self.state)
    }

    fn state_json(&self) -> Value {
        // A state that cannot be shown as JSON is shown as the encoding error:
        // the derives used by machines cannot fail, and this is display only.
        serde_json::to_value(&self.state)
            .unwrap_or_else(|e| Value::String(format!("unencodable state: {e}")))
    }

    fn fact(&self) -> Option<crate::reads::Fact> {
        M::fact(&self.state)
    }

    fn scans(&self, command: &Value) -> Vec<crate::reads::Sieve> {
        // Read straight from the borrowed value: no copy of the command.
        M::Command::deserialize(command)
            .map(|c| M::scans(&self.state, &c))
            .unwrap_or_default()
    }

    fn decide(&self, command: &Value, context: &Context) -> Result<Vec<RawEvent>, DecideFailure> {
        let command =
            M::Command::deserialize(command).map_err(|e| DecideFailure::Command(e.to_string()))?;
        let events = M::decide(&self.state, &command, context).map_err(DecideFailure::Rejected)?;
        events
            .iter()
            .map(RawEvent::encode::<M>)
            .collect::<Result<_, _>>()
            .map_err(DecideFailure::Encode)
    }
}

impl<M: Machine> DynMachine for Erased<M> {
    fn name(&self) -> &'static str {
        M::NAME
    }
    fn rules_version(&self) -> u32 {
        M::RULES_VERSION
    }
    fn retired_rules(&self) -> &'static [u32] {
        M::RETIRED_RULES
    }
    fn fresh_ids(&self) -> usize {
        M::FRESH_IDS
    }
    fn graph(&self) -> GraphSpec {
        M::graph()
    }
    fn start(&self) -> Box<dyn DynFold> {
        Box::new(Fold::<M> {
            state: M::initial_state(),
            graph: M::graph(),
        })
    }
}
