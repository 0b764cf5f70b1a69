//! What both benchmarks share: a bench-only machine and its rows.

#![allow(dead_code)] // each bench binary uses its own subset

use cairn::journal::{Append, NewEvent, TransitionRecord};
use cairn::machines::{EdgeSpec, GraphSpec, StateSpec};
use cairn::{Context, Machine, Rejection};
use serde::{Deserialize, Serialize};

/// A bench-only machine: a counter whose events carry a ~300-byte payload.
pub struct Counter;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub n: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bump {
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Bumped {
    Bumped { note: String },
}

impl Machine for Counter {
    const NAME: &'static str = "counter";
    const RULES_VERSION: u32 = 1;
    type State = Tally;
    type Command = Bump;
    type Event = Bumped;
    fn initial_state() -> Tally {
        Tally { n: 0, bytes: 0 }
    }
    fn decide(_: &Tally, c: &Bump, _: &Context) -> Result<Vec<Bumped>, Rejection> {
        Ok(vec![Bumped::Bumped {
            note: c.note.clone(),
        }])
    }
    fn evolve(s: Tally, e: &Bumped) -> Tally {
        let Bumped::Bumped { note } = e;
        Tally {
            n: s.n + 1,
            bytes: s.bytes + note.len() as u64,
        }
    }
    fn state_name(_: &Tally) -> &'static str {
        "counting"
    }
    fn event_name(_: &Bumped) -> &'static str {
        "bumped"
    }
    fn command_name(_: &Bump) -> &'static str {
        "bump"
    }
    fn graph() -> GraphSpec {
        GraphSpec {
            machine: "counter",
            initial: "counting",
            states: vec![StateSpec {
                name: "counting",
                terminal: false,
            }],
            edges: vec![EdgeSpec {
                from: "counting",
                event: "bumped",
                to: "counting",
            }],
        }
    }
}

pub fn note(i: u64) -> String {
    format!("{i:08} {}", "evidence ".repeat(32))
}

pub fn event(i: u64) -> NewEvent {
    NewEvent {
        event_type: "bumped".into(),
        schema_version: 1,
        payload: serde_json::to_string(&Bumped::Bumped { note: note(i) }).unwrap_or_default(),
    }
}

pub fn append(stream: &str, expected: u64, events: Vec<NewEvent>) -> Append {
    Append {
        stream: stream.into(),
        machine: "counter".into(),
        expected_version: expected,
        events,
        transition: TransitionRecord {
            command_name: "bump".into(),
            command: "{\"note\":\"bench\"}".into(),
            context: "{\"now\":\"2026-11-30T00:00:00Z\",\"fresh_ids\":[]}".into(),
            rules_version: 1,
        },
        idempotency: None,
        recorded_at: cairn::journal::now_rfc3339(),
        reads: Vec::new(),
        scans: Vec::new(),
    }
}

/// One transition of one event whose recorded command re-decides to exactly that
/// event, as the engine would have written it (so `journal audit` passes).
pub fn decided(stream: &str, version: u64) -> Append {
    let mut a = append(stream, version, vec![event(version)]);
    a.transition.command = serde_json::to_string(&Bump {
        note: note(version),
    })
    .unwrap_or_default();
    a
}
