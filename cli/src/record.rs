//! Recording a transition from the CLI: the one path every recording verb takes.
//!
//! A verb builds its command (and, where it observes something first, the
//! caller's [`Request`]), and [`Recorder::record`] does the rest: one context
//! (one reading of the journal's clock, the fresh ids — [`Recorder::context`] is
//! the only place the CLI mints them), the idempotency key, one `decide` through
//! the engine, the verb's side effect if it has one (a file the transition
//! describes, undone if the append fails), the append, the stderr report line, and the machine's verdict as an
//! [`Outcome`]. Exit codes come from the outcome in one place
//! (`failure::exit_code`).
//!
//! # Idempotency keys
//!
//! `--idempotency-key KEY` exists on every verb that records (and on no other).
//! The same key with the same input returns the first recorded result and writes
//! nothing; with another input it is refused (exit 2). What "the same input" means:
//!
//! * a verb whose command is exactly its input (park, most pr, saga and work
//!   verbs) keys the command ([`Key::Command`]);
//! * a verb whose command also carries what cairn observed while serving it (git
//!   runs, criterion runs, the spec file as found, the run record) keys the
//!   caller's [`Request`] — its flags and stdin document — and looks the key up
//!   with [`Recorder::recall`] *before* it runs or writes anything: a retry runs
//!   no git, no criterion and writes no file.
//!
//! # Fencing tokens
//!
//! `--fencing-token N` exists on the same verbs: the token of the caller's claim on
//! the stream the verb acts on (`cairn claim acquire --resource <stream>`). It goes
//! into the context's `fencing_token`, and the engine fences the decision by the
//! stream's lease (`cairn_machines::reads::fence`) and appends only if the lease has
//! not moved. A verb that changes the world before it records (runs git or
//! criteria) asks [`Recorder::fence`] first, so a stale holder touches nothing. A
//! refusal is exit 3 (`claim-held`, `stale-claim`, `claim-expired`) naming the
//! holder and the expiry, with the claim's readback; nothing is written.

use cairn::journal::{Error as JournalError, Journal, Location, Options};
use cairn::machines::claim::Token;
use cairn::machines::reads::is_fence_refusal;
use cairn::{
    AnyDecision, Context, Decision, Engine, Executed, Key, Machine, Pending, Registry, StreamId,
    Timestamp,
};
use serde_json::Value;

use crate::failure::{input, Failure, Violation};

/// Where the journal is, if a location could be resolved.
pub type Db = Result<Location, NoJournalLocation>;

/// No journal location could be resolved.
#[derive(Debug, Clone)]
pub enum NoJournalLocation {
    /// No `--db`, `CAIRN_DB`, `XDG_STATE_HOME` or `HOME`.
    Unresolved,
    /// A URL whose scheme is not PostgreSQL's (`postgress://…`), or a location
    /// that looks like a mistyped URL (`postgres:/x`, ` x.db`): it would otherwise
    /// name an SQLite file in a directory called `postgress:`. Holds what is named.
    UnknownScheme(String),
}

impl NoJournalLocation {
    /// The input error, naming the flag `field` that gave the location.
    pub fn at(self, field: &str) -> Failure {
        match self {
            NoJournalLocation::Unresolved => input(
                field,
                "journal-location",
                "no journal location: pass --db, or set CAIRN_DB, XDG_STATE_HOME or HOME",
            ),
            // Echoed without a password it may carry (helper-63).
            NoJournalLocation::UnknownScheme(scheme) => input(
                field,
                "journal-location",
                &format!(
                    "`{}` is not a journal's location: a journal is an SQLite file's path or a postgres:// or postgresql:// URL",
                    cairn::journal::redact_url(&scheme)
                ),
            ),
        }
    }
}

pub use crate::recorded::{Outcome, Recorded, RecordedAny};

/// The caller's input to a verb whose command also carries what cairn observed
/// while serving it: what the idempotency key stands for (see the module docs).
#[derive(Clone)]
pub struct Request {
    verb: String,
    text: String,
}

impl Request {
    /// The verb's name and its input (flags and documents), as JSON.
    pub fn new(verb: &str, input: Value) -> Self {
        Request {
            verb: verb.to_owned(),
            text: serde_json::json!({ "verb": verb, "input": input }).to_string(),
        }
    }

    /// The verb's name (`ship merge`).
    pub fn verb(&self) -> &str {
        &self.verb
    }
}

type Apply<'a, M> = Box<dyn FnOnce(&[<M as Machine>::Event]) -> Result<(), Failure> + 'a>;
type Undo<'a> = Box<dyn FnOnce() + 'a>;

/// One transition to record: the stream, the command, and what is particular to
/// the verb (a context it read earlier, the request its key stands for, a side
/// effect between the decision and the append).
pub struct Step<'a, M: Machine> {
    stream: &'a StreamId,
    command: &'a M::Command,
    context: Option<Context>,
    ids: Option<Vec<uuid::Uuid>>, // handed out already (`Step::with_ids`)
    request: Option<Request>,
    effect: Option<(Apply<'a, M>, Undo<'a>)>,
}

impl<'a, M: Machine> Step<'a, M> {
    pub fn new(stream: &'a StreamId, command: &'a M::Command) -> Self {
        Self {
            stream,
            command,
            context: None,
            ids: None,
            request: None,
            effect: None,
        }
    }

    /// Decide with these fresh ids ([`Recorder::fresh_ids`], handed out already)
    /// and the clock read as the step records, on the session it appends on.
    pub fn with_ids(mut self, ids: Vec<uuid::Uuid>) -> Self {
        self.ids = Some(ids);
        self
    }

    /// Decide with this context (the verb read it already: its time or ids are in
    /// its input or its side effect) instead of a fresh one.
    pub fn at(mut self, context: Context) -> Self {
        self.context = Some(context);
        self
    }

    /// The key stands for this request, not the command.
    pub fn request(mut self, request: Request) -> Self {
        self.request = Some(request);
        self
    }

    /// After `decide` accepted with events and before they are appended, `apply`
    /// runs with them; if it fails nothing is appended, if the append fails `undo`
    /// runs. Neither runs for a refusal, a decision with no events or a replay.
    pub fn effect(
        mut self,
        apply: impl FnOnce(&[M::Event]) -> Result<(), Failure> + 'a,
        undo: impl FnOnce() + 'a,
    ) -> Self {
        self.effect = Some((Box::new(apply), Box::new(undo)));
        self
    }
}

/// The longest `--idempotency-key`, in bytes.
pub const MAX_KEY: usize = 256;

/// The journal a verb records on, and the idempotency key and fencing token it
/// was given.
#[derive(Clone)]
pub struct Recorder<'a> {
    db: &'a Db,
    options: &'a Options,
    key: Option<&'a str>,
    /// The machines the engine serves (the built-ins unless told otherwise).
    registry: Registry,
    fencing_token: Option<u64>,
}

/// A recording verb's `--fencing-token` read, and every broken rule of it and
/// of its `--idempotency-key` (the CLI contract: every violation at once).
pub fn flag_violations(key: Option<&str>, token: Option<&str>) -> (Option<u64>, Vec<Violation>) {
    let mut broken: Vec<Violation> = key.and_then(key_violation).into_iter().collect();
    let token = token.and_then(|t| match Token::parse(t) {
        Ok(t) => Some(t.get()),
        Err(e) => {
            broken.push(Violation::new("fencing_token", e.rule, e.message));
            None
        }
    });
    (token, broken)
}

/// What is wrong with an `--idempotency-key`, if anything: a key is one
/// printable ASCII word (helper-70: newlines, bidi characters and 100 kB keys
/// were taken; helper-72: NFC and NFD spellings of one visible key, or one with
/// a trailing space, were three keys, and a lone combining mark showed as
/// nothing).
fn key_violation(k: &str) -> Option<Violation> {
    let (rule, message) = if k.trim().is_empty() {
        ("nonempty-string", "--idempotency-key is empty".to_owned())
    } else if let Some((i, c)) = k.chars().enumerate().find(|(_, c)| !c.is_ascii_graphic()) {
        (
            "key-characters",
            format!(
                "--idempotency-key's character {i} is U+{:04X}: a key is printable ASCII without spaces",
                u32::from(c)
            ),
        )
    } else if k.len() > MAX_KEY {
        (
            "length",
            format!("--idempotency-key is {} bytes, at most {MAX_KEY}", k.len()),
        )
    } else {
        return None;
    };
    Some(Violation::new("idempotency_key", rule, message))
}

impl<'a> Recorder<'a> {
    /// A recorder for one verb, with its `--idempotency-key` (an empty key is
    /// refused) and `--fencing-token` (a positive integer).
    pub fn new(
        db: &'a Db,
        options: &'a Options,
        flags: &'a crate::args::Key,
    ) -> Result<Self, Failure> {
        let key = flags.get();
        let (fencing_token, broken) = flag_violations(key, flags.fencing_token.as_deref());
        if !broken.is_empty() {
            return Err(Failure::Input(broken));
        }
        Ok(Self {
            db,
            options,
            key,
            registry: Registry::builtin(),
            fencing_token,
        })
    }

    /// This recorder with `registry`'s machines (a team's own binary's).
    pub fn with_registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Whether the verb was given an idempotency key.
    pub fn keyed(&self) -> bool {
        self.key.is_some()
    }

    /// This recorder without its key (its fencing token kept): for a transition
    /// the key does not stand for (ship's announcement of a git mutation before
    /// the step it announces).
    pub fn without_key(&self) -> Recorder<'a> {
        Self {
            key: None,
            registry: self.registry.clone(),
            ..*self
        }
    }

    /// A recorder that only reads (a verb with no key and no token).
    pub fn reader(db: &'a Db, options: &'a Options) -> Self {
        Self {
            db,
            options,
            key: None,
            registry: Registry::builtin(),
            fencing_token: None,
        }
    }

    /// The journal's clock now (`Engine::clock`: this host's for a SQLite file,
    /// the server's on PostgreSQL, whether or not the journal exists yet): the only
    /// clock the CLI decides transitions and judges leases by.
    pub fn now(&self) -> Result<Timestamp, Failure> {
        Ok(Engine::clock(self.db.clone()?, self.options)?)
    }

    /// [`Recorder::now`], read on `engine`'s session when the journal is open
    /// already: the same clock, without a connection of its own on PostgreSQL
    /// (a whole server process started for one reading). Only an engine opened
    /// for the step at hand: one opened early and kept (tried) held a writer
    /// idle through a verb's git reads, beside its read sessions, and migrated
    /// an older journal for a verb that then recorded nothing (helper-57).
    fn now_on(&self, engine: Option<&Engine>) -> Result<Timestamp, Failure> {
        match engine {
            Some(e) => Ok(e.now()?),
            None => self.now(),
        }
    }

    /// The journal's location as typed, its form refused (none, a mistyped URL),
    /// unopened: for a verb that may end without touching the journal.
    pub fn location(&self) -> Result<Location, Failure> {
        Ok(self.db.clone()?)
    }

    /// `n` random ids: the only place the CLI mints ids.
    fn mint(n: usize) -> Vec<uuid::Uuid> {
        (0..n).map(|_| uuid::Uuid::new_v4()).collect()
    }

    /// `M::FRESH_IDS` random ids, handed out before they are recorded (`Step::with_ids`).
    pub fn fresh_ids<M: Machine>(&self) -> Vec<uuid::Uuid> {
        Self::mint(M::FRESH_IDS)
    }

    /// A fresh decision context: the journal's clock now ([`Recorder::now`]) and
    /// `M::FRESH_IDS` random ids ([`Recorder::mint`]).
    pub fn context<M: Machine>(&self) -> Result<Context, Failure> {
        self.context_with(M::FRESH_IDS, None)
    }

    /// [`Recorder::context`] with `fresh_ids` random ids (a registry machine's),
    /// the clock read on `engine` when it is open ([`Recorder::now_on`]).
    fn context_with(&self, fresh_ids: usize, engine: Option<&Engine>) -> Result<Context, Failure> {
        Ok(Context {
            now: self.now_on(engine)?,
            fresh_ids: Self::mint(fresh_ids),
            session: None,
            reads: Vec::new(),
            scans: Vec::new(),
            fencing_token: None,
        })
    }

    /// Whether an act `act` on `stream` passes the stream's fence now with this
    /// verb's `--fencing-token` (see the module's "Fencing tokens"): asked before
    /// a verb changes the world, so a stale holder runs nothing. Writes nothing;
    /// answers the clock reading it judged by.
    pub fn fence<M: Machine>(&self, stream: &StreamId, act: &str) -> Result<Timestamp, Failure> {
        let engine = self.existing_engine()?;
        let now = self.now_on(engine.as_ref())?;
        let checked = match engine {
            Some(engine) => engine.fence::<M>(stream, act, self.fencing_token, &now),
            // No journal: nothing was ever claimed.
            None => cairn::machines::reads::fence(None, self.fencing_token, &now).map_err(|r| {
                cairn::Error::Rejected(r.rejection(
                    M::NAME,
                    act,
                    M::state_name(&M::initial_state()),
                ))
            }),
        };
        checked.map_err(|e| self.refused(stream, e))?;
        Ok(now)
    }

    /// An error of an act on `stream`: a fence's refusal becomes exit 3 with the
    /// claim's readback; anything else is as it was.
    fn refused(&self, stream: &StreamId, e: cairn::Error) -> Failure {
        match e {
            cairn::Error::Rejected(r) if is_fence_refusal(&r) => {
                crate::claim::fenced(&Self::reader(self.db, self.options), stream, r)
            }
            other => other.into(),
        }
    }

    /// The engine over the journal if one exists: reads never create a journal
    /// (no file, or a PostgreSQL schema without cairn's tables, is no journal yet).
    pub fn existing_engine(&self) -> Result<Option<Engine>, Failure> {
        let db = self.db.clone()?;
        match Journal::open_read_only(&db, self.options) {
            Ok(j) => Ok(Some(Engine::new(j, self.registry.clone()))),
            Err(JournalError::Missing { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The engine over the journal, refused (`no-journal`, exit 2) when there is
    /// none: for a read that names what it reads, where no journal at all is
    /// more likely a mistyped `--db` than an empty one.
    pub fn engine(&self) -> Result<Engine, Failure> {
        let db = self.db.clone()?;
        let journal = Journal::open_read_only(&db, self.options)?;
        Ok(Engine::new(journal, self.registry.clone()))
    }

    /// The engine for writing if the journal exists, without creating it.
    fn existing_writer(&self, db: &Location) -> Result<Option<Engine>, Failure> {
        let options = Options {
            create: false,
            ..self.options.clone()
        };
        match Journal::open(db, &options) {
            Ok(j) => Ok(Some(Engine::new(j, self.registry.clone()))),
            Err(JournalError::Missing { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The state of `stream` (the initial state when there is no journal yet).
    pub fn current<M: Machine>(&self, stream: &StreamId) -> Result<M::State, Failure> {
        match self.existing_engine()? {
            None => Ok(M::initial_state()),
            Some(e) => Ok(e.load::<M>(stream)?.0),
        }
    }

    /// The stream's fence ([`Recorder::fence`]), then the result first recorded
    /// under this verb's key for `request`, both before the verb observes or runs
    /// anything: exit 3 when another holds the stream's lease; `None` without a key
    /// or when the key is not recorded on `stream`; exit 2 when it was recorded for
    /// another request. A hit prints its stderr line.
    pub fn recall<M: Machine>(
        &self,
        stream: &StreamId,
        request: &Request,
    ) -> Result<Option<Recorded<M>>, Failure> {
        // The fence first, key or not: a stale holder runs nothing (no git, no
        // criterion), and a retry is answered only to whoever may act on the
        // stream now — a holder that lost its lease learns it lost.
        let now = self.fence::<M>(stream, request.verb())?;
        let Some(key) = self.key else {
            return Ok(None);
        };
        let Some(engine) = self.existing_engine()? else {
            return Ok(None);
        };
        let found = engine.recall::<M>(stream, key, &request.text)?;
        Ok(found.map(|done| self.finish(done, now)))
    }

    /// Decides and appends one transition. When no journal exists yet the command
    /// is decided against the initial state, so a refusal or a command with no
    /// events creates no file: bad input changes nothing, not even the disk.
    pub fn record<M: Machine>(&self, step: Step<'_, M>) -> Result<Recorded<M>, Failure> {
        let Step {
            stream,
            command,
            context: given,
            ids,
            request,
            effect,
        } = step;
        let db = self.db.clone()?;
        let existing = self.existing_writer(&db)?;
        let mut ctx = match given {
            Some(ctx) => ctx,
            None => {
                let mut ctx = self.context_with(0, existing.as_ref())?;
                ctx.fresh_ids = ids.unwrap_or_else(|| Self::mint(M::FRESH_IDS));
                ctx
            }
        };
        ctx.fencing_token = self.fencing_token;
        let key = match (self.key, &request) {
            (None, _) => None,
            (Some(key), None) => Some(Key::Command(key)),
            (Some(key), Some(r)) => Some(Key::Request {
                key,
                request: &r.text,
            }),
        };
        let (engine, pending) = match existing {
            None => {
                let state = M::initial_state();
                (ctx.reads, ctx.scans) = self
                    .registry
                    .read_fresh::<M>(stream, &state, command)
                    .map_err(|e| self.refused(stream, e))?;
                let p = Pending::<M>::decide(stream, state, 0, command, &ctx, key)
                    .map_err(|e| self.refused(stream, e))?;
                (None, p)
            }
            Some(engine) => match engine
                .decide::<M>(stream, command, &ctx, key)
                .map_err(|e| self.refused(stream, e))?
            {
                Decision::Replayed(done) => return Ok(self.finish(done, ctx.now)),
                Decision::Pending(p) => (Some(engine), p),
            },
        };
        let pending = match pending.unchanged() {
            Ok(done) => return Ok(self.finish(done, ctx.now)),
            Err(pending) => pending,
        };
        let undo = match effect {
            Some((apply, undo)) => {
                apply(&pending.events)?;
                Some(undo)
            }
            None => None,
        };
        let appended = match engine {
            Some(mut e) => e.append(pending),
            None => Journal::open(&db, self.options)
                .map_err(cairn::Error::from)
                .and_then(|j| Engine::new(j, self.registry.clone()).append(pending)),
        };
        match appended {
            Ok(done) => Ok(self.finish(done, ctx.now)),
            Err(e) => {
                if let Some(undo) = undo {
                    undo();
                }
                Err(e.into())
            }
        }
    }

    /// [`Recorder::record`] for a command given as JSON, of any machine of the
    /// registry (`cairn exec`): the same one context, idempotency key (standing
    /// for the command), one decision and append, stderr line and outcome. A
    /// command only a cairn verb may record is refused before anything is read.
    pub fn record_any(
        &self,
        stream: &StreamId,
        command: &Value,
        fresh_ids: usize,
    ) -> Result<RecordedAny, Failure> {
        let db = self.db.clone()?;
        let existing = self.existing_writer(&db)?;
        let mut ctx = self.context_with(fresh_ids, existing.as_ref())?;
        ctx.fencing_token = self.fencing_token;
        let key = self.key.map(Key::Command);
        let (engine, decision) = match existing {
            None => {
                let d = self
                    .registry
                    .decide_any_fresh(stream, command, &ctx, key)
                    .map_err(|e| self.refused(stream, e))?;
                (None, d)
            }
            Some(engine) => {
                let d = engine
                    .decide_any(stream, command, &ctx, key)
                    .map_err(|e| self.refused(stream, e))?;
                (Some(engine), d)
            }
        };
        let pending = match decision {
            AnyDecision::Replayed(done) => return Ok(RecordedAny::from(done)),
            AnyDecision::Pending(p) => p,
        };
        let pending = match pending.unchanged() {
            Ok(done) => return Ok(RecordedAny::from(done)),
            Err(pending) => pending,
        };
        let mut engine = match engine {
            Some(e) => e,
            None => Engine::new(Journal::open(&db, self.options)?, self.registry.clone()),
        };
        Ok(RecordedAny::from(engine.append_any(pending)?))
    }

    fn finish<M: Machine>(&self, done: Executed<M>, at: Timestamp) -> Recorded<M> {
        let r = Recorded::from(done, at);
        r.report();
        r
    }
}
