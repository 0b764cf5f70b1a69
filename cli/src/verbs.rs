//! The verbs: each turns its arguments into domain values, calls the library
//! and prints the result.

use std::path::PathBuf;
use std::time::Duration;

use cairn::journal::{Journal, Options};
use cairn::{Engine, Registry, StreamId};
use serde_json::json;

use crate::args::{Cli, Command, GraphFormat, JournalCommand, LogFormat};
use crate::failure::{input, Done, Failure, NoJournalLocation};
use crate::output;

/// Runs one parsed command line; the exit code on success.
pub fn run(cli: Cli, registry: Registry) -> Result<Done, Failure> {
    let options = |create: bool| Options {
        busy_timeout: Duration::from_millis(cli.busy_timeout_ms),
        create,
        ..Options::default()
    };
    match &cli.command {
        Command::Machines => {
            let machines: Vec<_> = registry
                .iter()
                .map(|m| {
                    let g = m.graph();
                    json!({
                        "name": m.name(),
                        "rules_version": m.rules_version(),
                        "initial": g.initial,
                        "states": g.states,
                        "events": g.event_names(),
                    })
                })
                .collect();
            output::json(&json!({ "machines": machines }));
            Ok(Done::Ok)
        }
        Command::Graph { machine, format } => {
            let m = registry
                .get(machine)
                .ok_or_else(|| cairn::Error::UnknownMachine {
                    name: machine.clone(),
                })?;
            let g = m.graph();
            match format {
                GraphFormat::Dot => output::text(&g.to_dot()),
                GraphFormat::Mermaid => output::text(&g.to_mermaid()),
                GraphFormat::Json => output::json(&g),
            }
            Ok(Done::Ok)
        }
        Command::State { stream, at } => {
            let stream = StreamId::parse(stream)?;
            let engine = Engine::open_read_only(&db_path(&cli)?, &options(false), registry)?;
            output::json(&engine.state_view(&stream, *at)?);
            Ok(Done::Ok)
        }
        Command::Park(verb) => crate::park::run(verb, &db_path(&cli), &options(true)),
        Command::Ship(verb) => crate::ship::run_verb(verb, &db_path(&cli), &options(true)),
        Command::Pr(verb) => crate::pr::run(verb, &db_path(&cli), &options(true)),
        Command::Work(verb) => crate::work::run(verb, &db_path(&cli), &options(true)),
        Command::Saga(verb) => crate::saga::run(verb, &db_path(&cli), &options(true)),
        Command::BuildLoop(a) => crate::build::run(a, &db_path(&cli), &options(true)),
        Command::Journal(JournalCommand::Log {
            stream,
            since,
            limit,
            format,
        }) => {
            let journal = Journal::open_read_only(&db_path(&cli)?, &options(false))?;
            let events = journal.read_after(*since, stream.as_deref(), *limit)?;
            match format {
                LogFormat::Json => {
                    // Payloads are JSON text in the journal: show them as JSON values
                    // (a payload that is not JSON stays a string; `journal verify` reports it).
                    let events: Vec<serde_json::Value> = events
                        .iter()
                        .map(|e| {
                            let mut v = json!(e);
                            if let Ok(p) = serde_json::from_str::<serde_json::Value>(&e.payload) {
                                v["payload"] = p;
                            }
                            v
                        })
                        .collect();
                    output::json(&json!({ "events": events }))
                }
                LogFormat::Table => output::text(&log_table(&events)),
            }
            Ok(Done::Ok)
        }
        Command::Journal(JournalCommand::Verify { expect_head }) => {
            let expected = match expect_head {
                None => None,
                Some(text) => Some(parse_head(text)?),
            };
            let journal = Journal::open_read_only(&db_path(&cli)?, &options(false))?;
            let report = journal.verify_against(expected.as_ref())?;
            output::json(&report);
            match report.problems.first() {
                None => {
                    eprintln!(
                        "cairn: journal intact: {} events in {} streams, {} transitions{}",
                        report.events,
                        report.streams,
                        report.transitions,
                        match (&report.head, report.tail) {
                            (Some(h), "unanchored") => format!(
                                "; tail unanchored: keep --expect-head {}:{} to detect a truncated tail later",
                                h.seq, h.hash
                            ),
                            _ => String::new(),
                        }
                    );
                    Ok(Done::Ok)
                }
                Some(p) => Err(Failure::Integrity(format!(
                    "journal verify found {} problem(s); first: {} at seq {} ({}): {}",
                    report.problem_count,
                    serde_json::to_value(p.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    p.seq.map_or("-".into(), |s| s.to_string()),
                    p.stream.as_deref().unwrap_or("-"),
                    p.detail
                ))),
            }
        }
        Command::Journal(JournalCommand::Audit { stream }) => {
            if let Some(s) = stream {
                StreamId::parse(s)?;
            }
            let engine = Engine::open_read_only(&db_path(&cli)?, &options(false), registry)?;
            let report = engine.audit(stream.as_deref())?;
            output::json(&report);
            let failures = report
                .findings
                .iter()
                .filter(|f| f.kind.is_failure())
                .count();
            if failures == 0 {
                eprintln!(
                    "cairn: audit passed: {} transitions re-decided in {} streams",
                    report.redecided, report.streams
                );
                Ok(Done::Ok)
            } else {
                Err(Failure::Integrity(format!(
                    "journal audit found {failures} failing finding(s)"
                )))
            }
        }
    }
}

/// `SEQ:HASH` as printed in a verify report's `head`.
fn parse_head(text: &str) -> Result<cairn::journal::ChainHead, Failure> {
    let bad = || {
        input(
            "expect_head",
            "head-format",
            "expected SEQ:HASH (a sequence number and 64 hex digits)",
        )
    };
    let (seq, hash) = text.split_once(':').ok_or_else(bad)?;
    let seq: i64 = seq.parse().map_err(|_| bad())?;
    if seq < 1 || hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    Ok(cairn::journal::ChainHead {
        seq,
        hash: hash.to_ascii_lowercase(),
    })
}

/// `--db`, else `CAIRN_DB`, else `$XDG_STATE_HOME/cairn/journal.db`, else
/// `~/.local/state/cairn/journal.db`.
pub fn db_path(cli: &Cli) -> Result<PathBuf, NoJournalLocation> {
    if let Some(p) = &cli.db {
        return Ok(p.clone());
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = env("CAIRN_DB") {
        return Ok(p);
    }
    if let Some(p) = env("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Ok(p.join("cairn").join("journal.db"));
    }
    if let Some(home) = env("HOME") {
        return Ok(home.join(".local/state/cairn/journal.db"));
    }
    Err(NoJournalLocation)
}

fn log_table(events: &[cairn::journal::StoredEvent]) -> String {
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
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if events.is_empty() {
        out.push_str("(no events)\n");
    }
    out
}
