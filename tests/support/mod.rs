//! Test fixtures: temp journals, a fixed decision context, and `ticket`, a small
//! machine that exists only in the tests (it is not shipped).

pub mod backend;
pub mod fixtures;
pub mod gate;
pub mod git;
pub mod park;
pub mod park_helper;
pub mod pg;
pub mod pr;
pub mod saga;
pub mod ship;
pub mod ship_repo;
pub mod ticket;
pub mod work;
pub mod work_repo;

use std::path::{Path, PathBuf};

use cairn::journal::{Journal, Options};
use cairn::{Context, Engine, Registry, Timestamp};
use uuid::Uuid;

/// The variable the test build of `cairn` (the `testing` feature, which `cargo
/// test` unifies into the binary it builds) reads for its observer's PATH; a
/// `cargo build` binary ignores it and finds git on the system's directories.
pub const OBSERVER_PATH_VAR: &str = "CAIRN_TESTING_OBSERVER_PATH";

/// `cairn claim acquire` of a park episode by `me`: the smallest write a test
/// can ask of the CLI (it makes or migrates the journal first).
pub const ACQUIRE: &[&str] = &[
    "claim",
    "acquire",
    "--resource",
    "park/ep-a8d24925-429e-4c77-80cf-ef49fc098f9d",
    "--owner",
    "me",
    "--claim-id",
    "c1",
    "--ttl",
    "60",
];

/// The observer's PATH with `first` before the system's own directories.
pub fn observer_path_with(first: &Path) -> String {
    format!(
        "{}:{}",
        first.display(),
        cairn::machines::evidence::git::OBSERVER_PATH
    )
}

/// An error document's `kind`, `field` and `rule` (`""` where one is absent): what
/// a caller that reads only those acts on.
pub fn kind_field_rule(v: &serde_json::Value) -> [&str; 3] {
    ["kind", "field", "rule"].map(|k| v["error"][k].as_str().unwrap_or(""))
}

/// `n` values drawn from `strategy`, the same ones every run: for tests that count
/// how many generated inputs reach the code under test.
pub fn sample<S: proptest::strategy::Strategy>(strategy: S, n: usize) -> Vec<S::Value> {
    use proptest::strategy::ValueTree as _;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..n)
        .map(|_| {
            // A plain strategy (no filter that could reject every value) always generates.
            strategy
                .new_tree(&mut runner)
                .expect("the strategy generates")
                .current()
        })
        .collect()
}

/// One named change to a JSON document, for table tests.
pub type Mutation = Box<dyn Fn(&mut serde_json::Value)>;

/// A temp dir holding `journal.db`; removed on drop. Or, made with
/// [`TempJournal::at`], another location (a PostgreSQL URL) that `path` returns.
pub struct TempJournal {
    pub dir: tempfile::TempDir,
    at: Option<PathBuf>,
}

impl TempJournal {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temp dir can be made"),
            at: None,
        }
    }
    /// A journal at `location` (what `--db` takes), with a scratch dir beside it.
    pub fn at(location: PathBuf) -> Self {
        Self {
            at: Some(location),
            ..Self::new()
        }
    }
    pub fn path(&self) -> PathBuf {
        self.at
            .clone()
            .unwrap_or_else(|| self.dir.path().join("journal.db"))
    }
    pub fn journal(&self) -> Journal {
        Journal::open(&self.path(), &Options::default()).expect("journal opens")
    }
    pub fn engine(&self) -> Engine {
        let mut r = Registry::new();
        r.register::<ticket::Ticket>();
        r.register::<gate::Gate>();
        Engine::open(&self.path(), &Options::default(), r).expect("engine opens")
    }
    /// Every byte of the journal (after a checkpoint, so the main file is the whole truth).
    pub fn bytes(&self) -> Vec<u8> {
        checkpoint(&self.path());
        std::fs::read(self.path()).unwrap_or_default()
    }
    /// Every transition's command as recorded, in order (read through the
    /// journal: the store may keep it packed).
    pub fn commands(&self) -> Vec<String> {
        let j = cairn::journal::Journal::open_read_only(&self.path(), &Options::default())
            .expect("the journal opens");
        (1..)
            .map_while(|id| j.transition(id).expect("a transition reads"))
            .map(|t| t.command)
            .collect()
    }
    /// A raw SQLite connection for tampering.
    pub fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path()).expect("raw open")
    }
}

/// Folds the WAL into the main file.
pub fn checkpoint(path: &Path) {
    if let Ok(c) = rusqlite::Connection::open(path) {
        let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
}

/// A deterministic context: a fixed time (minute `n`) and fresh ids derived from `n`.
pub fn ctx(n: u32) -> Context {
    Context {
        now: Timestamp::parse(&format!(
            "2026-11-30T{:02}:{:02}:00Z",
            (n / 60) % 24,
            n % 60
        ))
        .unwrap(),
        fresh_ids: vec![Uuid::from_u128(
            0x0b1e_6f5e_3c1a_4b7e_9d2a_0000_0000_0000 + u128::from(n),
        )],
        session: Some("test-session".into()),
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

/// Tampers with a journal as an attacker would: drop the append-only triggers, run SQL.
pub fn tamper(conn: &rusqlite::Connection, sql: &str) {
    conn.execute_batch(
        "DROP TRIGGER IF EXISTS events_append_only_update;
         DROP TRIGGER IF EXISTS events_append_only_delete;
         DROP TRIGGER IF EXISTS transitions_append_only_update;
         DROP TRIGGER IF EXISTS transitions_append_only_delete;",
    )
    .expect("drop triggers");
    conn.execute_batch(sql).expect("tamper sql");
}

/// Copies every transition of `stream` in the journal at `from` into the journal
/// at `to` as stream `into`, raw (reading nothing, deciding nothing), each
/// context passed through `edit`: how a test writes what an older build or a
/// forger would have, around the engine.
pub fn copy_raw(
    from: &Path,
    to: &Path,
    stream: &str,
    into: &str,
    edit: impl Fn(&mut serde_json::Value),
) {
    copy_raw_events(from, to, stream, into, edit, |_, _| {});
}

/// [`copy_raw`], each event's payload passed through `edit_event` with its type.
pub fn copy_raw_events(
    from: &Path,
    to: &Path,
    stream: &str,
    into: &str,
    edit: impl Fn(&mut serde_json::Value),
    edit_event: impl Fn(&str, &mut serde_json::Value),
) {
    use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
    let src = Journal::open_read_only(from, &Options::default()).expect("the source opens");
    let mut dst = Journal::open(to, &Options::default()).expect("the target opens");
    let events = src.read_stream(stream, None).expect("the stream reads");
    for t in src.transitions(stream).expect("its transitions read") {
        let mut context: serde_json::Value =
            serde_json::from_str(&t.context).expect("a recorded context is JSON");
        edit(&mut context);
        dst.append(&Append {
            stream: into.to_owned(),
            machine: t.machine.clone(),
            expected_version: t.first_version - 1,
            events: events
                .iter()
                .filter(|e| (t.first_version..=t.last_version).contains(&e.version))
                .map(|e| {
                    let stored: serde_json::Value =
                        serde_json::from_str(&e.payload).expect("a stored payload is JSON");
                    let mut payload = stored.clone();
                    edit_event(&e.event_type, &mut payload);
                    NewEvent {
                        event_type: e.event_type.clone(),
                        schema_version: e.schema_version,
                        // Byte for byte unless edited.
                        payload: if payload == stored {
                            e.payload.clone()
                        } else {
                            payload.to_string()
                        },
                    }
                })
                .collect(),
            transition: TransitionRecord {
                command_name: t.command_name.clone(),
                command: t.command.clone(),
                context: context.to_string(),
                rules_version: t.rules_version,
            },
            idempotency: None,
            recorded_at: t.recorded_at.clone(),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .expect("the copy appends");
    }
}

/// Copies transition `index` of `stream` (its record and its events) from
/// `from` into `to`, raw, at the version it holds there, recorded at `at` when
/// given (else when it was): a transition appended around the engine, as an
/// older build or a forger would have, on either backend.
pub fn copy_transition(
    from: &cairn::journal::Journal,
    to: &mut cairn::journal::Journal,
    stream: &str,
    index: usize,
    at: Option<String>,
) {
    use cairn::journal::{Append, NewEvent, TransitionRecord};
    let t = from
        .transitions(stream)
        .expect("its transitions read")
        .remove(index);
    let events = from
        .read_stream(stream, Some(t.last_version))
        .expect("the stream reads")
        .into_iter()
        .filter(|e| e.version >= t.first_version)
        .map(|e| NewEvent {
            event_type: e.event_type,
            schema_version: e.schema_version,
            payload: e.payload,
        })
        .collect();
    to.append(&Append {
        stream: stream.to_owned(),
        machine: t.machine,
        expected_version: t.first_version - 1,
        events,
        transition: TransitionRecord {
            command_name: t.command_name,
            command: t.command,
            context: t.context,
            rules_version: t.rules_version,
        },
        idempotency: None,
        recorded_at: at.unwrap_or(t.recorded_at),
        reads: Vec::new(),
        scans: Vec::new(),
    })
    .expect("the copy appends");
}
