//! `cairn exec MACHINE STREAM`: one JSON command on stdin for any registered
//! machine — a built-in or a team's own, served by `main_with(registry)` —
//! recorded through the one recording path (`Recorder::record_any`), with the
//! same idempotency key, exit codes and stdout as every recording verb.
//!
//! # Output
//!
//! `{"stream", "version", "state_name", "state", "events": [{"event_type",
//! "schema_version", "payload"}], "outcome": "accepted" | "not-green" |
//! "unchanged" | "replayed"}` — the events are this transition's (the first
//! one's, when an idempotency key replays it).
//!
//! # What exec does not record
//!
//! A command whose evidence cairn observes itself (ship's git runs, `pr
//! observe`'s gh and freshness runs, `work verify`'s trees and criterion runs,
//! the spec or run record as found) is refused with exit 2 and the verb that
//! records it (`Machine::recorded_by`): from a caller's JSON, that evidence would
//! be whatever the caller wrote, so `shipped`, `verified` or `merged` could be
//! forged.

use cairn::journal::Options;
use cairn::{Registry, StreamId};
use schemars::JsonSchema;
use serde::Serialize;

use crate::args::Key;
use crate::failure::{Done, Failure};
use crate::output;
use crate::record::{Db, Outcome, Recorder};

/// Runs `cairn exec`.
pub fn run(
    machine: &str,
    stream: &str,
    key: &Key,
    db: &Db,
    options: &Options,
    registry: Registry,
) -> Result<Done, Failure> {
    let fresh_ids = registry
        .get(machine)
        .ok_or_else(|| cairn::Error::UnknownMachine {
            name: machine.to_owned(),
        })?
        .fresh_ids();
    let stream = StreamId::parse(stream)?;
    if stream.machine() != machine {
        return Err(cairn::Error::InvalidStream {
            stream: stream.to_string(),
            reason: format!("it is not a `{machine}` stream"),
        }
        .into());
    }
    // Only onto a stream the machine's verbs would use: another spelling would
    // sit beside the stream a lease fences.
    crate::claim::canonical("stream", &stream)?;
    let command = crate::input::document()?;
    let rec = Recorder::new(db, options, key)?.with_registry(registry);
    let done = rec.record_any(&stream, &command, fresh_ids)?;
    let outcome = done.outcome;
    output::json(&Executed {
        stream: done.stream.to_string(),
        version: done.version,
        state_name: done.state_name,
        state: done.state,
        events: done.events,
        outcome: match outcome {
            Outcome::Accepted => "accepted",
            Outcome::NotGreen => "not-green",
            Outcome::Unchanged => "unchanged",
            Outcome::Replayed(_) => "replayed",
        },
    });
    Ok(Done::Recorded(outcome))
}

/// `cairn exec`'s answer (see the module's "Output").
#[derive(Debug, Serialize, JsonSchema)]
pub struct Executed {
    pub stream: String,
    /// The stream's version after the transition.
    pub version: u64,
    /// The state's name in the machine's graph.
    pub state_name: &'static str,
    /// The machine's state, as its serde form.
    pub state: serde_json::Value,
    /// This transition's events (the first one's, when an idempotency key replays it).
    pub events: Vec<cairn::machines::RawEvent>,
    /// `accepted`, `not-green`, `unchanged` or `replayed`.
    pub outcome: &'static str,
}
