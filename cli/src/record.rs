//! Recording a transition from the CLI: one path for every recording verb.

use std::path::PathBuf;

use cairn::journal::Options;
use cairn::{Context, Engine, Executed, Machine, Registry, StreamId, Timestamp};

use crate::failure::{Failure, NoJournalLocation};

/// A fresh decision context: the time now and `M::FRESH_IDS` random ids.
pub fn context<M: Machine>() -> Context {
    Context {
        now: Timestamp::from_instant(chrono::Utc::now().fixed_offset()),
        fresh_ids: (0..M::FRESH_IDS).map(|_| uuid::Uuid::new_v4()).collect(),
        session: None,
    }
}

/// The engine over the journal if one exists: reads never create a journal.
pub fn existing_engine(
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
) -> Result<Option<Engine>, Failure> {
    let db = db.clone()?;
    if std::fs::symlink_metadata(&db).is_err() {
        return Ok(None);
    }
    Ok(Some(Engine::open_read_only(
        &db,
        options,
        Registry::builtin(),
    )?))
}

/// The state of `stream` (the initial state when there is no journal yet).
pub fn current<M: Machine>(
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
    stream: &StreamId,
) -> Result<M::State, Failure> {
    match existing_engine(db, options)? {
        None => Ok(M::initial_state()),
        Some(e) => Ok(e.load::<M>(stream)?.0),
    }
}

/// Decides and appends `command` on `stream`. When no journal exists yet, the
/// command is decided against the initial state first, so a refusal or a command
/// with no events creates no file: bad input changes nothing, not even the disk.
pub fn execute<M: Machine>(
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
    stream: &StreamId,
    command: &M::Command,
    ctx: &Context,
    key: Option<&str>,
) -> Result<Executed<M>, Failure> {
    let db = db.clone()?;
    if std::fs::symlink_metadata(&db).is_err() {
        let initial = M::initial_state();
        let events = M::decide(&initial, command, ctx).map_err(cairn::Error::Rejected)?;
        if events.is_empty() {
            return Ok(Executed {
                stream: stream.clone(),
                events,
                state: initial,
                version: 0,
                receipt: None,
                replayed: false,
            });
        }
    }
    let mut engine = Engine::open(&db, options, Registry::builtin())?;
    Ok(engine.execute_with_context::<M>(stream, command, ctx, key)?)
}
