//! The journal's read verbs: `journal log` (paged, never truncated silently),
//! `journal streams`, `journal show` and `journal audit`.

use cairn::journal::{Journal, Location, Options, StoredEvent, StoredTransition};
use cairn::{Registry, StreamId};
use schemars::JsonSchema;
use serde::Serialize;

use crate::args::{AuditFormat, LogFormat};
use crate::failure::{Done, Failure};
use crate::output::{self, visible};
use crate::progress::Progress;
use crate::suggest;
use crate::verbs::{reader, recorded};

/// `cairn journal log [--stream S] [--since SEQ] [--limit N] [--format F]`: at most
/// `limit` events after `since`. When more exist the JSON carries `next_since`, the
/// cursor to pass back as `--since`, and stderr says so (a table gets the note too).
pub fn log(
    db: &Location,
    options: &Options,
    stream: Option<&str>,
    since: i64,
    limit: u64,
    format: LogFormat,
) -> Result<Done, Failure> {
    if let Some(s) = stream {
        StreamId::parse(s)?;
    }
    let journal = Journal::open_read_only(db, options)?;
    if let Some(s) = stream {
        recorded(&journal, "stream", s).map_err(|e| suggest::stream(e, &journal))?;
    }
    // One event past the page says whether another page exists.
    let mut events = journal.read_after(since, stream, limit.saturating_add(1))?;
    let more = events.len() as u64 > limit;
    events.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let next_since = more.then(|| events.last().map_or(since, |e| e.seq));
    match format {
        LogFormat::Json => {
            // Payloads are JSON text in the journal: show them as JSON values
            // (a payload that is not JSON stays a string; `journal verify` reports it).
            let events = events
                .iter()
                .map(|e| LoggedEvent::of(e, json_or_text))
                .collect();
            output::json(&LogPage { events, next_since })
        }
        LogFormat::Table => output::human(&log_table(&events)),
    }
    if let Some(n) = next_since {
        crate::output::stderr_line(format_args!(
            "cairn: {} shown, more after seq {n}: the next page is `--since {n}`{}",
            match events.len() {
                1 => "1 event".to_owned(),
                k => format!("{k} events"),
            },
            if limit == crate::args::LOG_LIMIT {
                " (or a larger --limit)"
            } else {
                ""
            }
        ));
    }
    Ok(Done::Ok)
}

/// One stream in `journal streams`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StreamRow {
    /// The stream id, `<machine>/<instance>`.
    pub stream: String,
    pub machine: String,
    /// Its last version (its number of events).
    pub version: u64,
    /// The event type of its last version.
    pub last_event: String,
    /// When its last version was recorded (RFC 3339).
    pub last_event_at: String,
}

/// `journal streams`' answer: every stream, by name.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Streams {
    pub streams: Vec<StreamRow>,
}

/// `cairn journal streams [--format json|table]`: every stream with its machine,
/// version, last event and its time.
pub fn streams(db: &Location, options: &Options, format: LogFormat) -> Result<Done, Failure> {
    let journal = Journal::open_read_only(db, options)?;
    let streams: Vec<StreamRow> = journal
        .streams()?
        .into_iter()
        .map(|s| StreamRow {
            stream: s.stream,
            machine: s.machine,
            version: s.version,
            last_event: s.last_event_type,
            last_event_at: s.last_event_at,
        })
        .collect();
    match format {
        LogFormat::Json => output::json(&Streams { streams }),
        LogFormat::Table => {
            let mut rows = vec![[
                "STREAM".to_owned(),
                "MACHINE".to_owned(),
                "VER".to_owned(),
                "LAST EVENT".to_owned(),
                "AT".to_owned(),
            ]];
            for s in &streams {
                rows.push([
                    s.stream.clone(),
                    s.machine.clone(),
                    s.version.to_string(),
                    s.last_event.clone(),
                    s.last_event_at.clone(),
                ]);
            }
            let mut out = table(&rows);
            if streams.is_empty() {
                out.push_str("(no streams)\n");
            }
            output::human(&out)
        }
    }
    Ok(Done::Ok)
}

/// A page of `journal log --format json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LogPage {
    pub events: Vec<LoggedEvent>,
    /// The cursor to pass back as `--since` for the next page; only when more
    /// events exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_since: Option<i64>,
}

/// An event as stored, its payload shown as JSON (a payload that is not JSON
/// stays a string; `journal verify` reports it).
#[derive(Debug, Serialize, JsonSchema)]
pub struct LoggedEvent {
    pub seq: i64,
    pub stream: String,
    pub version: u64,
    pub machine: String,
    pub event_type: String,
    pub schema_version: u32,
    /// The payload, as JSON.
    pub payload: serde_json::Value,
    pub recorded_at: String,
    pub transition_id: i64,
    pub hash: String,
}

impl LoggedEvent {
    fn of(e: &StoredEvent, read: fn(&str) -> serde_json::Value) -> Self {
        Self {
            seq: e.seq,
            stream: e.stream.clone(),
            version: e.version,
            machine: e.machine.clone(),
            event_type: e.event_type.clone(),
            schema_version: e.schema_version,
            payload: read(&e.payload),
            recorded_at: e.recorded_at.clone(),
            transition_id: e.transition_id,
            hash: e.hash.clone(),
        }
    }
}

/// `journal show --format json`: the transition record and its events.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Shown {
    pub transition: ShownTransition,
    pub events: Vec<LoggedEvent>,
}

/// A transition record, its command and context shown as JSON.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ShownTransition {
    pub id: i64,
    pub stream: String,
    pub machine: String,
    pub rules_version: u32,
    pub command_name: String,
    /// The recorded command (its evidence inside), as JSON.
    pub command: serde_json::Value,
    /// The recorded context (time, fresh ids, reads), as JSON.
    pub context: serde_json::Value,
    pub idempotency_key: Option<String>,
    pub fingerprint: Option<String>,
    pub first_version: u64,
    pub last_version: u64,
    pub recorded_at: String,
}

impl ShownTransition {
    fn of(t: &StoredTransition) -> Self {
        Self {
            id: t.id,
            stream: t.stream.clone(),
            machine: t.machine.clone(),
            rules_version: t.rules_version,
            command_name: t.command_name.clone(),
            command: json_or_text(&t.command),
            context: json_or_text(&t.context),
            idempotency_key: t.idempotency_key.clone(),
            fingerprint: t.fingerprint.clone(),
            first_version: t.first_version,
            last_version: t.last_version,
            recorded_at: t.recorded_at.clone(),
        }
    }
}

/// Text that holds JSON as that JSON; any other text as a JSON string.
fn json_or_text(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|_| serde_json::Value::String(s.to_owned()))
}

/// `cairn journal show TRANSITION`: one transition record and its events.
pub fn show(
    db: &Location,
    options: &Options,
    transition: i64,
    format: LogFormat,
) -> Result<Done, Failure> {
    let journal = Journal::open_read_only(db, options)?;
    let (record, events) = journal.transition_by_id(transition)?.ok_or_else(|| {
        crate::failure::input(
            "transition",
            "transition-exists",
            &format!("no transition {transition} in this journal"),
        )
    })?;
    match format {
        LogFormat::Json => output::json(&Shown {
            transition: ShownTransition::of(&record),
            events: events
                .iter()
                .map(|e| LoggedEvent::of(e, json_or_text))
                .collect(),
        }),
        LogFormat::Table => output::human(&format!(
            "transition {}  {}  {}@{}..={}  rules v{}  recorded {}{}\ncommand: {}\ncontext: {}\n{}",
            record.id,
            visible(&record.command_name),
            visible(&record.stream),
            record.first_version,
            record.last_version,
            record.rules_version,
            visible(&record.recorded_at),
            record
                .idempotency_key
                .as_ref()
                .map(|k| format!("  key {}", visible(k)))
                .unwrap_or_default(),
            visible(&record.command),
            visible(&record.context),
            log_table(&events)
        )),
    }
    Ok(Done::Ok)
}

/// `cairn journal audit [--stream S] [--format json|md|html]`: the report on
/// stdout, exit 5 on a failing finding; progress on stderr when it is a terminal.
pub fn audit(
    db: &Location,
    options: &Options,
    registry: Registry,
    stream: Option<&str>,
    format: AuditFormat,
) -> Result<Done, Failure> {
    if let Some(s) = stream {
        StreamId::parse(s)?;
    }
    let engine = reader(db, options, registry)?;
    if let Some(s) = stream {
        recorded(engine.journal(), "stream", s)
            .map_err(|e| suggest::stream(e, engine.journal()))?;
    }
    let total = match stream {
        Some(s) => engine.journal().stream_version(s)?,
        // Only the progress bar's total: damage there is the audit's to report.
        None => engine
            .journal()
            .head()
            .ok()
            .flatten()
            .map_or(0, |(seq, _)| u64::try_from(seq).unwrap_or(0)),
    };
    let progress = Progress::new("audit", total);
    let report = engine.audit_with(stream, &mut |n| progress.set(n));
    progress.clear();
    let report = report?;
    match format {
        AuditFormat::Json => output::json(&report),
        AuditFormat::Md => output::human(&crate::audit_report::markdown(&report)),
        AuditFormat::Html => output::human(&crate::audit_report::html(&report)),
    }
    let failures = report
        .findings
        .iter()
        .filter(|f| f.kind.is_failure())
        .count();
    if failures == 0 {
        crate::output::stderr_line(format_args!(
            "cairn: audit passed: {} re-decided in {}",
            output::count(report.redecided, "transition"),
            output::count(report.streams, "stream")
        ));
        Ok(Done::Ok)
    } else {
        Err(Failure::Integrity(format!(
            "journal audit found {}",
            output::count(failures, "failing finding")
        )))
    }
}

fn log_table(events: &[StoredEvent]) -> String {
    let mut rows = vec![[
        "SEQ".to_owned(),
        "STREAM".to_owned(),
        "VER".to_owned(),
        "EVENT".to_owned(),
        "RECORDED AT".to_owned(),
    ]];
    for e in events {
        rows.push([
            e.seq.to_string(),
            e.stream.clone(),
            e.version.to_string(),
            format!("{} v{}", e.event_type, e.schema_version),
            e.recorded_at.clone(),
        ]);
    }
    let mut out = table(&rows);
    if events.is_empty() {
        out.push_str("(no events)\n");
    }
    out
}

/// Rows as left-aligned columns two spaces apart, the first row the header
/// (comfy-table, no borders; no line ends in spaces). Each cell is shown
/// [`visible`]: a line break in a name read from the journal cannot start a
/// row of its own.
pub(crate) fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING);
    let shown = |r: &[String; N]| {
        r.iter()
            .map(|c| visible(c).into_owned())
            .collect::<Vec<_>>()
    };
    let mut rows = rows.iter();
    if let Some(header) = rows.next() {
        t.set_header(shown(header));
    }
    for r in rows {
        t.add_row(shown(r));
    }
    for column in t.column_iter_mut() {
        column.set_padding((0, 2));
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
