//! The decide/evolve contract every lifecycle machine implements.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::reads::{Fact, Read};
use crate::{Error, GraphSpec, Rejection, Timestamp};

/// Everything `decide` may know beyond the state and the command: the time and
/// fresh ids, minted outside by the engine and recorded with the transition, so
/// re-deciding the transition later yields exactly the same events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// The time the command was decided.
    pub now: Timestamp,
    /// Fresh random ids for the command to use, in order (as many as the machine's
    /// [`Machine::FRESH_IDS`]).
    pub fresh_ids: Vec<Uuid>,
    /// The calling session, when the caller names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// What the engine read of other streams for this decision (see
    /// [`crate::reads`]); the append commits only if none of them moved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<Read>,
    /// The machines whose every stream the engine read for this decision, through
    /// which transition ([`crate::reads::Scan`]); the streams kept are in `reads`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scans: Vec<crate::reads::Scan>,
    /// The fencing token the caller presented for the stream's lease
    /// ([`crate::reads::fence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing_token: Option<u64>,
}

impl Context {
    /// The `i`-th fresh id, if the engine minted that many.
    pub fn fresh_id(&self, i: usize) -> Option<Uuid> {
        self.fresh_ids.get(i).copied()
    }

    /// A context with no session, no reads and no fencing token.
    pub fn new(now: Timestamp, fresh_ids: Vec<Uuid>) -> Self {
        Self {
            now,
            fresh_ids,
            session: None,
            reads: Vec::new(),
            scans: Vec::new(),
            fencing_token: None,
        }
    }

    /// What was read of `stream` for this decision, if it was read.
    pub fn read(&self, stream: &str) -> Option<&Read> {
        self.reads.iter().find(|r| r.stream == stream)
    }

    /// The streams read for this decision that `sieve` keeps: what a scan the
    /// machine named found ([`Machine::scans`]).
    pub fn scanned(&self, sieve: crate::reads::Sieve) -> impl Iterator<Item = &Read> {
        self.reads.iter().filter(move |r| sieve.keeps(r))
    }
}

/// What an accepted transition means for the lifecycle, as its machine judges it.
///
/// A transition that records a stop — a gate that held, an iteration that is not
/// green, a half-written board move — is not a refusal: it is accepted and
/// recorded, and the lifecycle did not advance. The CLI maps
/// [`Verdict::NotGreen`] to exit 4 ("not green yet"); nothing else does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The lifecycle advanced (or the transition stopped nothing).
    Green,
    /// Recorded, but a gate stopped the lifecycle: not green yet.
    NotGreen,
}

/// A lifecycle as an explicit state machine.
///
/// * [`Machine::decide`] holds every guard: it checks the command and its
///   evidence against the state and either refuses with a [`Rejection`] naming
///   every failed predicate, or returns the events that record the transition.
///   It is pure: same state, command and context, same answer.
/// * [`Machine::evolve`] is total and validates nothing: replay is
///   `events.fold(initial_state(), evolve)`.
/// * [`Machine::graph`] declares the transition graph; every event `evolve`
///   applies must be one of its edges (the audit checks this on every journal).
pub trait Machine: 'static {
    /// The machine's name, also the first segment of its stream ids (`park/…`).
    const NAME: &'static str;
    /// The version of the rules in `decide`. Bump it whenever a guard changes, so
    /// an audit tells "the rules changed since" apart from a forged record.
    const RULES_VERSION: u32;
    /// Every earlier rules version this machine has had and no longer keeps. An
    /// audit reports a transition decided under one of these as `rules-changed`
    /// (naming it) and fails on any version that is neither this list nor
    /// [`Machine::RULES_VERSION`] — so a forged `rules_version` cannot skip the
    /// re-decision. Append a version here whenever you bump `RULES_VERSION`.
    const RETIRED_RULES: &'static [u32] = &[];
    /// How many fresh ids a command may need from the [`Context`].
    const FRESH_IDS: usize = 0;

    /// The state, rebuilt by replay.
    type State: Clone + Debug + PartialEq + Serialize + DeserializeOwned;
    /// A command, carrying its evidence.
    type Command: Debug + Serialize + DeserializeOwned;
    /// A past-tense fact.
    type Event: Clone + Debug + PartialEq + Serialize + DeserializeOwned;

    /// The state of a stream with no events.
    fn initial_state() -> Self::State;
    /// Guards: the events this command produces in this state, or why not.
    fn decide(
        state: &Self::State,
        command: &Self::Command,
        context: &Context,
    ) -> Result<Vec<Self::Event>, Rejection>;
    /// Applies one event. Total; no validation.
    fn evolve(state: Self::State, event: &Self::Event) -> Self::State;

    /// The name of the state's node in [`Machine::graph`].
    fn state_name(state: &Self::State) -> &'static str;
    /// The event's type name: its edge label in the graph and its journal `event_type`.
    fn event_name(event: &Self::Event) -> &'static str;
    /// The command's name, for rejections and the journal's transition record.
    fn command_name(command: &Self::Command) -> &'static str;
    /// The transition graph.
    fn graph() -> GraphSpec;

    /// The cairn verb that alone records `command`, when the command carries what
    /// cairn observes itself (git, gh or `ps` readings, criterion runs, the spec
    /// or run record as found on disk, the journal's other streams) or acts on the
    /// decision (a file the transition describes). `cairn exec` and
    /// `Engine::decide_any`, which take a caller's JSON, refuse such a command and
    /// name the verb: a caller could otherwise forge the observation. The default,
    /// `None`: every command is exactly the caller's input (a machine that observes
    /// nothing).
    fn recorded_by(_command: &Self::Command) -> Option<&'static str> {
        None
    }

    /// Whether the transition that appended `events` and left the stream in
    /// `state` advanced the lifecycle. Pure, a function of the recorded events and
    /// the state after them, so a replayed (idempotent) result has the verdict the
    /// first one had. The default: every accepted transition is green.
    fn verdict(_state: &Self::State, _events: &[Self::Event]) -> Verdict {
        Verdict::Green
    }

    /// What this machine states about `state` for other lifecycles to rely on
    /// (read into their decisions by the engine, see [`crate::reads`]). The
    /// default states nothing beyond the state's name.
    fn fact(_state: &Self::State) -> Option<Fact> {
        None
    }

    /// The stream `command` names itself (`<machine>/<instance>`: a park command's
    /// episode, a saga save's id), when it names one: the engine decides it on
    /// that stream only, so one episode's command is never recorded on another
    /// episode's stream (`cairn exec` takes the stream and the command apart).
    /// The default names none.
    fn stream_of(_command: &Self::Command) -> Option<String> {
        None
    }

    /// The other streams whose state `command` depends on in `state` (their ids,
    /// `<machine>/<instance>`): the engine reads each into the context's
    /// [`Context::reads`] before deciding and appends only if none moved. The
    /// default reads nothing.
    fn reads(_state: &Self::State, _command: &Self::Command) -> Vec<String> {
        Vec::new()
    }

    /// The machines whose *every* stream `command` depends on in `state`, each
    /// with the sieve that keeps the streams that matter
    /// ([`crate::reads::Sieve`]): the engine reads them all, records the kept ones
    /// in [`Context::reads`] and the scan in [`Context::scans`], and appends only
    /// if no stream of the machine moved (or appeared). The default scans nothing.
    fn scans(_state: &Self::State, _command: &Self::Command) -> Vec<crate::reads::Sieve> {
        Vec::new()
    }

    /// The schema version this build writes for `event`.
    fn event_schema_version(_event: &Self::Event) -> u32 {
        1
    }

    /// Reads a recorded event back, upcasting older schema versions. The default
    /// reads payloads written by this build only; a machine that changes an event's
    /// shape bumps its schema version and converts the old payload here.
    fn upcast(
        event_type: &str,
        schema_version: u32,
        payload: serde_json::Value,
    ) -> Result<Self::Event, Error> {
        let fail = |reason: String| Error::Upcast {
            machine: Self::NAME,
            event_type: event_type.to_owned(),
            schema_version,
            reason,
        };
        let event: Self::Event =
            serde_json::from_value(payload).map_err(|e| fail(e.to_string()))?;
        if Self::event_name(&event) != event_type {
            return Err(fail(format!(
                "payload is a `{}` event",
                Self::event_name(&event)
            )));
        }
        if Self::event_schema_version(&event) != schema_version {
            return Err(fail(format!(
                "this build reads `{event_type}` at schema version {}",
                Self::event_schema_version(&event)
            )));
        }
        Ok(event)
    }

    /// Reads a stored event from its JSON text. The fast path decodes the text
    /// straight into the typed event when it is of the current schema version; any
    /// other version goes through [`Machine::upcast`]. Not meant to be overridden.
    fn decode_stored(
        event_type: &str,
        schema_version: u32,
        payload: &str,
    ) -> Result<Self::Event, Error> {
        if let Ok(event) = serde_json::from_str::<Self::Event>(payload) {
            if Self::event_name(&event) == event_type
                && Self::event_schema_version(&event) == schema_version
            {
                return Ok(event);
            }
        }
        let value: serde_json::Value =
            serde_json::from_str(payload).map_err(|e| Error::Upcast {
                machine: Self::NAME,
                event_type: event_type.to_owned(),
                schema_version,
                reason: format!("payload is not JSON: {e}"),
            })?;
        Self::upcast(event_type, schema_version, value)
    }

    /// Replays events from the initial state.
    fn replay<'a, I: IntoIterator<Item = &'a Self::Event>>(events: I) -> Self::State {
        events
            .into_iter()
            .fold(Self::initial_state(), |s, e| Self::evolve(s, e))
    }
}
