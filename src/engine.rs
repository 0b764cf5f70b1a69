//! The engine: binds a machine to the journal. Load, replay, decide, append.

use std::path::Path;

use cairn_journal::{
    sha256_hex, Append, AppendOutcome, Idempotency, Journal, NewEvent, Options, Receipt,
    StoredEvent, TransitionRecord,
};
use cairn_machines::reads::{check_fence, extends_lease, CLAIM_MACHINE};
use cairn_machines::{Context, Machine, RawEvent};

use crate::{Error, Registry, StreamId};

/// What the caller adds to a command beyond the command itself.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The calling session, recorded in the context.
    pub session: Option<String>,
    /// A retry-safe key: the same key and command again returns the original result.
    pub idempotency_key: Option<String>,
    /// The fencing token of the caller's lease on the stream, when it holds one
    /// (see [`cairn_machines::reads::fence`]).
    pub fencing_token: Option<u64>,
}

/// An executed command.
#[derive(Clone)]
pub struct Executed<M: Machine> {
    /// The stream written (or read, for a replayed request).
    pub stream: StreamId,
    /// The events of this transition (empty when `decide` accepted with no change).
    pub events: Vec<M::Event>,
    /// The stream's state after them.
    pub state: M::State,
    /// The stream version after them.
    pub version: u64,
    /// Where they were written; `None` when nothing was written.
    pub receipt: Option<Receipt>,
    /// True when an idempotency key matched an earlier identical request: the
    /// events and state are that request's, and nothing new was written.
    pub replayed: bool,
}

impl<M: Machine> std::fmt::Debug for Executed<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executed")
            .field("stream", &self.stream)
            .field("events", &self.events)
            .field("state", &self.state)
            .field("version", &self.version)
            .field("receipt", &self.receipt)
            .field("replayed", &self.replayed)
            .finish()
    }
}

pub use crate::view::{MidTransition, StateView};

/// A journal with the machines that may write to it.
pub struct Engine {
    journal: Journal,
    registry: Registry,
}

impl Engine {
    /// Opens the journal at `path`.
    pub fn open(path: &Path, options: &Options, registry: Registry) -> Result<Self, Error> {
        Ok(Self {
            journal: Journal::open(path, options)?,
            registry,
        })
    }

    /// Opens the journal at `path` for reading only (`Journal::open_read_only`):
    /// nothing is created, migrated, converted or checkpointed. Replay, state, log,
    /// verify and audit all work on it; an append is refused by SQLite.
    pub fn open_read_only(
        path: &Path,
        options: &Options,
        registry: Registry,
    ) -> Result<Self, Error> {
        Ok(Self {
            journal: Journal::open_read_only(path, options)?,
            registry,
        })
    }

    /// Wraps an open journal.
    pub fn new(journal: Journal, registry: Registry) -> Self {
        Self { journal, registry }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The journal, for raw appends (tests, imports).
    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }

    /// The machines this engine serves.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Loads a stream of `M` and replays it: its state and version.
    pub fn load<M: Machine>(&self, stream: &StreamId) -> Result<(M::State, u64), Error> {
        stream.check_machine::<M>()?;
        self.fold::<M>(stream, None)
    }

    /// The state of a stream of `M` after `version` events (time travel); `None` is now.
    pub fn state_at<M: Machine>(
        &self,
        stream: &StreamId,
        version: Option<u64>,
    ) -> Result<M::State, Error> {
        stream.check_machine::<M>()?;
        let current = self.journal.stream_version(stream.as_str())?;
        stream.check_version(version, current)?;
        Ok(self.fold::<M>(stream, version)?.0)
    }

    /// Decides `command` against the stream's current state and appends the
    /// events, with the time read now and fresh ids minted now.
    pub fn execute<M: Machine>(
        &mut self,
        stream: &StreamId,
        command: &M::Command,
        request: &Request,
    ) -> Result<Executed<M>, Error> {
        let context = Context {
            now: self.now()?,
            fresh_ids: (0..M::FRESH_IDS).map(|_| uuid::Uuid::new_v4()).collect(),
            session: request.session.clone(),
            reads: Vec::new(),
            scans: Vec::new(),
            fencing_token: request.fencing_token,
        };
        self.execute_with_context::<M>(
            stream,
            command,
            &context,
            request.idempotency_key.as_deref(),
        )
    }

    /// [`Engine::execute`] with an explicit context (tests, replays of a
    /// recorded decision).
    pub fn execute_with_context<M: Machine>(
        &mut self,
        stream: &StreamId,
        command: &M::Command,
        context: &Context,
        idempotency_key: Option<&str>,
    ) -> Result<Executed<M>, Error> {
        let key = idempotency_key.map(Key::Command);
        match self.decide::<M>(stream, command, context, key)? {
            Decision::Replayed(done) => Ok(done),
            Decision::Pending(pending) => self.append(pending),
        }
    }

    /// The result first recorded under `key` on `stream`, looked up before the
    /// caller observes or decides anything: `None` when the key is not recorded
    /// there; [`cairn_journal::Error::IdempotencyMismatch`] when it was recorded for
    /// another request.
    pub fn recall<M: Machine>(
        &self,
        stream: &StreamId,
        key: &str,
        request: &str,
    ) -> Result<Option<Executed<M>>, Error> {
        stream.check_machine::<M>()?;
        let idem = Idempotency {
            key: key.to_owned(),
            fingerprint: request_fingerprint(M::NAME, request),
        };
        self.recorded_under::<M>(stream, &idem)
    }

    /// Decides `command` against the stream's current state, writing nothing. With
    /// a key recorded for the same request, the recorded result
    /// ([`Decision::Replayed`]); with a key recorded for another request,
    /// [`cairn_journal::Error::IdempotencyMismatch`]. Otherwise the events to
    /// append ([`Decision::Pending`]), which [`Engine::append`] writes if the stream
    /// has not moved meanwhile: a caller can act on the decision (write the file it
    /// describes) between the two, and `decide` runs exactly once.
    pub fn decide<M: Machine>(
        &self,
        stream: &StreamId,
        command: &M::Command,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<Decision<M>, Error> {
        stream.check_command::<M>(command)?;
        // A stream this engine's audit could not check is never written.
        if self.registry.get(M::NAME).is_none() {
            return Err(Error::UnknownMachine {
                name: M::NAME.to_owned(),
            });
        }
        let command_json = serde_json::to_string(command)
            .map_err(|e| Error::Stored(format!("cannot encode the command: {e}")))?;
        let idempotency = key.map(|k| k.idempotency(M::NAME, &command_json));
        if let Some(idem) = &idempotency {
            // A retry is fenced like the act (before its key is even looked up):
            // a lost holder learns it lost.
            let (act, token) = (M::command_name(command), context.fencing_token);
            self.fence::<M>(stream, act, token, &context.now)?;
            if let Some(done) = self.recorded_under::<M>(stream, idem)? {
                return Ok(Decision::Replayed(done));
            }
        }
        let (state, version) = self.fold::<M>(stream, None)?;
        // What the decision reads of other streams is the engine's reading, never
        // the caller's: any reads the given context carries are replaced.
        let mut context = context.clone();
        (context.reads, context.scans) = self.read_for::<M>(stream, &state, command)?;
        let mut pending = Pending::decide_encoded(
            stream,
            state,
            version,
            command,
            command_json,
            &context,
            idempotency,
        )?;
        if pending.append.is_some() {
            self.order_guard::<M>(stream, version, &context)?;
        }
        // A grant or renewal that writes: only at an instant no act on the
        // resource was decided after, and only while the resource stands there.
        if let (Some(append), true) = (
            pending.append.as_mut(),
            extends_lease(M::NAME, M::command_name(command)),
        ) {
            let (resource, at) = self.resource_guard(stream, version, &context.now)?;
            for read in append.reads.iter_mut().filter(|r| r.0 == resource) {
                read.1 = at;
            }
        }
        Ok(Decision::Pending(pending))
    }

    /// Appends a decided transition at the version it was decided against (a
    /// stream that moved meanwhile is a [`cairn_journal::Error::Conflict`], and
    /// nothing is written). A decision with no events writes nothing.
    pub fn append<M: Machine>(&mut self, pending: Pending<M>) -> Result<Executed<M>, Error> {
        let Pending {
            stream,
            events,
            state,
            version,
            append,
        } = pending;
        let Some(append) = append else {
            return Ok(Executed {
                stream,
                events,
                state,
                version,
                receipt: None,
                replayed: false,
            });
        };
        match self.journal.append(&append)? {
            AppendOutcome::Appended(receipt) => Ok(Executed {
                stream,
                events,
                state,
                version: receipt.last_version,
                receipt: Some(receipt),
                replayed: false,
            }),
            // Another process recorded the same request between our check and our append.
            AppendOutcome::Duplicate(receipt) => {
                let (first, last) = (receipt.first_version, receipt.last_version);
                self.recorded::<M>(&stream, first, last, Some(receipt))
            }
        }
    }

    /// The state of any registered machine's stream, as JSON.
    pub fn state_view(&self, stream: &StreamId, at: Option<u64>) -> Result<StateView, Error> {
        let machine = self
            .registry
            .get(stream.machine())
            .ok_or_else(|| Error::UnknownMachine {
                name: stream.machine().to_owned(),
            })?;
        let current = self.journal.stream_version(stream.as_str())?;
        if current == 0 {
            return Err(Error::NoSuchStream {
                stream: stream.to_string(),
            });
        }
        stream.check_version(at, current)?;
        let up_to = at.unwrap_or(current);
        let mut fold = machine.start();
        self.journal
            .replay_stream(stream.as_str(), up_to as i64, &mut |r| {
                fold.apply_stored(r.event_type, r.schema_version, r.payload)
                    .map(|_| ())
                    .map_err(|err| cairn_journal::Error::Corrupt {
                        seq: r.seq,
                        reason: err.to_string(),
                    })
            })?;
        let mid_transition = match self.journal.transition_at(stream.as_str(), up_to)? {
            Some((transition_id, first_version, last_version)) if last_version > up_to => {
                Some(MidTransition {
                    transition_id,
                    first_version,
                    last_version,
                })
            }
            _ => None,
        };
        Ok(StateView {
            stream: stream.to_string(),
            machine: machine.name().to_owned(),
            version: up_to,
            state_name: fold.state_name().to_owned(),
            state: fold.state_json(),
            mid_transition,
        })
    }

    pub(crate) fn fold<M: Machine>(
        &self,
        stream: &StreamId,
        up_to: Option<u64>,
    ) -> Result<(M::State, u64), Error> {
        let mut state = M::initial_state();
        let mut version = 0;
        let limit = up_to.map_or(i64::MAX, |v| v.min(i64::MAX as u64) as i64);
        self.journal
            .replay_stream(stream.as_str(), limit, &mut |r| {
                let event =
                    M::decode_stored(r.event_type, r.schema_version, r.payload).map_err(|err| {
                        cairn_journal::Error::Corrupt {
                            seq: r.seq,
                            reason: err.to_string(),
                        }
                    })?;
                state = M::evolve(std::mem::replace(&mut state, M::initial_state()), &event);
                version = r.version;
                Ok(())
            })?;
        Ok((state, version))
    }

    /// The result recorded under `idem.key` on `stream`, if its fingerprint matches.
    fn recorded_under<M: Machine>(
        &self,
        stream: &StreamId,
        idem: &Idempotency,
    ) -> Result<Option<Executed<M>>, Error> {
        let Some(t) = self.journal.transition_by_key(stream.as_str(), &idem.key)? else {
            return Ok(None);
        };
        if t.fingerprint.as_deref() != Some(idem.fingerprint.as_str()) {
            return Err(cairn_journal::Error::IdempotencyMismatch {
                stream: stream.to_string(),
                key: idem.key.clone(),
            }
            .into());
        }
        self.recorded::<M>(stream, t.first_version, t.last_version, None)
            .map(Some)
    }

    fn recorded<M: Machine>(
        &self,
        stream: &StreamId,
        first: u64,
        last: u64,
        receipt: Option<Receipt>,
    ) -> Result<Executed<M>, Error> {
        let (state, _) = self.fold::<M>(stream, Some(last))?;
        let events = self
            .journal
            .read_stream(stream.as_str(), Some(last))?
            .into_iter()
            .filter(|e| e.version >= first)
            .map(|e| {
                M::decode_stored(&e.event_type, e.schema_version, &e.payload)
                    .map_err(|err| Error::Stored(err.to_string()))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Executed {
            stream: stream.clone(),
            events,
            state,
            version: last,
            receipt,
            replayed: true,
        })
    }
}

/// What an idempotency key stands for: the same key for the same request returns
/// the first recorded result and writes nothing; for another request it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// The key stands for the command (its JSON, evidence included): right when the
    /// command is exactly the caller's input.
    Command(&'a str),
    /// The key stands for the caller's `request` (any stable text, e.g. its input
    /// as JSON): for commands that also carry what was observed while serving it
    /// (runs with their times, files as found), which a retry would observe anew.
    /// [`Engine::recall`] finds it before anything is observed again.
    Request {
        /// The key.
        key: &'a str,
        /// The request it stands for.
        request: &'a str,
    },
}

impl Key<'_> {
    fn idempotency(self, machine: &str, command_json: &str) -> Idempotency {
        match self {
            Key::Command(key) => Idempotency {
                key: key.to_owned(),
                fingerprint: fingerprint(machine, command_json),
            },
            Key::Request { key, request } => Idempotency {
                key: key.to_owned(),
                fingerprint: request_fingerprint(machine, request),
            },
        }
    }
}

/// [`Engine::decide`]'s answer.
pub enum Decision<M: Machine> {
    /// The key matched an earlier identical request: its recorded result.
    Replayed(Executed<M>),
    /// Decided, not yet appended.
    Pending(Pending<M>),
}

/// A transition decided against a stream at a version, not yet appended.
pub struct Pending<M: Machine> {
    /// The stream.
    pub stream: StreamId,
    /// The events `decide` returned (none: [`Engine::append`] writes nothing).
    pub events: Vec<M::Event>,
    /// The state after them.
    pub state: M::State,
    /// The version decided against: the append's expected version.
    pub version: u64,
    append: Option<Box<Append>>,
}

impl<M: Machine> Pending<M> {
    /// Decides `command` against `state` at `version` (pure: no journal is read;
    /// [`Engine::decide`] folds the stream first). A caller with no journal yet
    /// decides against the initial state at version 0.
    pub fn decide(
        stream: &StreamId,
        state: M::State,
        version: u64,
        command: &M::Command,
        context: &Context,
        key: Option<Key<'_>>,
    ) -> Result<Self, Error> {
        stream.check_command::<M>(command)?;
        let command_json = serde_json::to_string(command)
            .map_err(|e| Error::Stored(format!("cannot encode the command: {e}")))?;
        let idempotency = key.map(|k| k.idempotency(M::NAME, &command_json));
        Self::decide_encoded(
            stream,
            state,
            version,
            command,
            command_json,
            context,
            idempotency,
        )
    }

    /// A decision with no events is complete: nothing to append, nothing written
    /// (`Ok`). A decision with events comes back as it was (`Err`), for
    /// [`Engine::append`].
    pub fn unchanged(self) -> Result<Executed<M>, Self> {
        if self.append.is_some() {
            return Err(self);
        }
        Ok(Executed {
            stream: self.stream,
            events: self.events,
            state: self.state,
            version: self.version,
            receipt: None,
            replayed: false,
        })
    }

    fn decide_encoded(
        stream: &StreamId,
        state: M::State,
        version: u64,
        command: &M::Command,
        command_json: String,
        context: &Context,
        idempotency: Option<Idempotency>,
    ) -> Result<Self, Error> {
        if M::NAME == CLAIM_MACHINE {
            // A lease on a stream no act is fenced on would protect nothing.
            stream.claimed_resource()?;
        }
        check_fence(
            M::NAME,
            stream.as_str(),
            M::command_name(command),
            M::state_name(&state),
            context,
        )
        .map_err(Error::Rejected)?;
        let events = M::decide(&state, command, context).map_err(Error::Rejected)?;
        let append = if events.is_empty() {
            None
        } else {
            let new_events = events
                .iter()
                .map(|e| {
                    let raw = RawEvent::encode::<M>(e).map_err(|e| Error::Stored(e.to_string()))?;
                    Ok(NewEvent {
                        event_type: raw.event_type,
                        schema_version: raw.schema_version,
                        payload: raw.payload.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            let context_json = serde_json::to_string(context)
                .map_err(|e| Error::Stored(format!("cannot encode the context: {e}")))?;
            Some(Box::new(Append {
                stream: stream.to_string(),
                machine: M::NAME.to_owned(),
                expected_version: version,
                events: new_events,
                transition: TransitionRecord {
                    command_name: M::command_name(command).to_owned(),
                    command: command_json,
                    context: context_json,
                    rules_version: M::RULES_VERSION,
                },
                idempotency,
                recorded_at: context.now.to_string(),
                reads: crate::reads::occ_reads::<M>(stream, &state, command, context),
                scans: crate::reads::occ_scans::<M>(&state, command, context),
            }))
        };
        let state = events.iter().fold(state, |s, e| M::evolve(s, e));
        Ok(Self {
            stream: stream.clone(),
            events,
            state,
            version,
            append,
        })
    }
}

/// The fingerprint of a caller's request ([`Key::Request`]): its machine and the
/// request text, marked so it never equals a command's fingerprint.
pub fn request_fingerprint(machine: &str, request: &str) -> String {
    sha256_hex(format!("{machine}\nrequest\n{request}").as_bytes())
}

/// The fingerprint of a request: its machine and its command (with evidence),
/// not its context, so a retry at another time still matches.
pub fn fingerprint(machine: &str, command_json: &str) -> String {
    sha256_hex(format!("{machine}\n{command_json}").as_bytes())
}

/// A stored event as a [`RawEvent`].
pub(crate) fn raw(e: &StoredEvent) -> Result<RawEvent, cairn_journal::Error> {
    let payload =
        serde_json::from_str(&e.payload).map_err(|err| cairn_journal::Error::Corrupt {
            seq: e.seq,
            reason: format!("payload is not JSON: {err}"),
        })?;
    Ok(RawEvent {
        event_type: e.event_type.clone(),
        schema_version: e.schema_version,
        payload,
    })
}
