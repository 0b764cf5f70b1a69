//! The verbs: each turns its arguments into domain values, calls the library
//! and prints the result.

use std::path::PathBuf;
use std::time::Duration;

use cairn::journal::{Journal, Location, Options};
use cairn::{Engine, Registry, StreamId};
use serde_json::json;

use crate::args::{Cli, Command, GraphFormat, JournalCommand, LogFormat};
use crate::failure::{Done, Failure, NoJournalLocation};
use crate::output;

/// Runs one parsed command line; the exit code on success.
pub fn run(cli: Cli, registry: Registry) -> Result<Done, Failure> {
    let options = |create: bool| Options {
        busy_timeout: Duration::from_millis(cli.busy_timeout_ms),
        create,
        ..Options::default()
    };
    // Verbs that may record sign with this user's key (created on first use).
    let writing = || -> Result<Options, Failure> {
        Ok(Options {
            signing_key: Some(crate::trust::signing_key(&cli)?),
            ..options(true)
        })
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
                GraphFormat::Xstate => output::json(&g.to_xstate()),
            }
            Ok(Done::Ok)
        }
        Command::State { stream, at } => {
            let stream = StreamId::parse(stream)?;
            let engine = reader(&db_location(&cli)?, &options(false), registry)?;
            let view = engine.state_view(&stream, *at)?;
            output::json(&view);
            if let Some(m) = &view.mid_transition {
                crate::output::stderr_line(format_args!(
                    "cairn: version {} falls inside transition {} (versions {}..={}): no decision produced this state on its own; --at {} shows the whole transition",
                    view.version, m.transition_id, m.first_version, m.last_version, m.last_version
                ));
            }
            Ok(Done::Ok)
        }
        Command::Exec {
            machine,
            stream,
            key,
        } => crate::exec::run(
            machine,
            stream,
            key,
            &db_location(&cli),
            &writing()?,
            registry,
        ),
        Command::Schema { verb } => crate::schema::run(verb),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut crate::args::command(), "cairn", &mut out);
            output::text(&String::from_utf8_lossy(&out));
            Ok(Done::Ok)
        }
        Command::Man { verb } => man(verb),
        Command::Park(verb) => crate::park::run(verb, &db_location(&cli), &writing()?),
        Command::Ship(verb) => crate::ship::run_verb(verb, &db_location(&cli), &writing()?),
        Command::Pr(verb) => crate::pr::run(verb, &db_location(&cli), &writing()?),
        Command::Work(verb) => crate::work::run(verb, &db_location(&cli), &writing()?),
        Command::Saga(verb) => crate::saga::run(verb, &db_location(&cli), &writing()?),
        Command::BuildLoop(a) => crate::build::run(a, &db_location(&cli), &writing()?),
        Command::Claim(verb) => crate::claim::run(
            verb,
            &db_location(&cli),
            &writing,
            &options(false),
            &registry,
        ),
        Command::Journal(JournalCommand::Log {
            stream,
            since,
            limit,
            format,
        }) => {
            if let Some(s) = stream {
                StreamId::parse(s)?;
            }
            let journal = Journal::open_read_only(&db_location(&cli)?, &options(false))?;
            if let Some(s) = stream {
                recorded(&journal, "stream", s)?;
            }
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
        Command::Journal(JournalCommand::Verify {
            expect_head,
            trusted_key,
        }) => crate::trust::verify(
            &db_location(&cli)?,
            &options(false),
            expect_head.as_deref(),
            trusted_key.as_deref(),
        ),
        Command::Journal(JournalCommand::Anchor) => {
            crate::trust::anchor(&db_location(&cli)?, &options(false), &cli)
        }
        Command::Journal(JournalCommand::Key) => crate::trust::key(&cli),
        Command::Journal(JournalCommand::Show { transition, format }) => {
            let journal = Journal::open_read_only(&db_location(&cli)?, &options(false))?;
            let (record, events) = journal.transition_by_id(*transition)?.ok_or_else(|| {
                crate::failure::input(
                    "transition",
                    "transition-exists",
                    &format!("no transition {transition} in this journal"),
                )
            })?;
            let json_or_text =
                |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap_or_else(|_| json!(s));
            match format {
                LogFormat::Json => {
                    let mut t = json!(record);
                    t["command"] = json_or_text(&record.command);
                    t["context"] = json_or_text(&record.context);
                    let events: Vec<serde_json::Value> = events
                        .iter()
                        .map(|e| {
                            let mut v = json!(e);
                            v["payload"] = json_or_text(&e.payload);
                            v
                        })
                        .collect();
                    output::json(&json!({ "transition": t, "events": events }));
                }
                LogFormat::Table => output::text(&format!(
                    "transition {}  {}  {}@{}..={}  rules v{}  recorded {}{}\ncommand: {}\ncontext: {}\n{}",
                    record.id,
                    record.command_name,
                    record.stream,
                    record.first_version,
                    record.last_version,
                    record.rules_version,
                    record.recorded_at,
                    record
                        .idempotency_key
                        .as_ref()
                        .map(|k| format!("  key {k}"))
                        .unwrap_or_default(),
                    record.command,
                    record.context,
                    log_table(&events)
                )),
            }
            Ok(Done::Ok)
        }
        Command::Journal(JournalCommand::Copy { from, to }) => crate::trust::copy(
            &Location::parse(from.as_os_str()),
            &Location::parse(to.as_os_str()),
            &options(true),
        ),
        Command::Journal(JournalCommand::Audit { stream }) => {
            if let Some(s) = stream {
                StreamId::parse(s)?;
            }
            let engine = reader(&db_location(&cli)?, &options(false), registry)?;
            if let Some(s) = stream {
                recorded(engine.journal(), "stream", s)?;
            }
            let report = engine.audit(stream.as_deref())?;
            output::json(&report);
            let failures = report
                .findings
                .iter()
                .filter(|f| f.kind.is_failure())
                .count();
            if failures == 0 {
                crate::output::stderr_line(format_args!(
                    "cairn: audit passed: {} transitions re-decided in {} streams",
                    report.redecided, report.streams
                ));
                Ok(Done::Ok)
            } else {
                Err(Failure::Integrity(format!(
                    "journal audit found {failures} failing finding(s)"
                )))
            }
        }
    }
}

/// `cairn man [VERB…]`: the roff page of cairn or of one of its verbs.
fn man(words: &[String]) -> Result<Done, Failure> {
    let mut cmd = crate::args::command();
    let mut name = "cairn".to_owned();
    for w in words {
        let sub = cmd.find_subcommand(w).cloned().ok_or_else(|| {
            crate::failure::input(
                "verb",
                "known-verb",
                &format!("`{name} {w}` is not a verb: `{name} --help` lists them"),
            )
        })?;
        name = format!("{name}-{w}");
        cmd = sub
            .display_name(name.clone())
            .bin_name(name.replace('-', " "));
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| crate::failure::input("$", "stdout", &format!("cannot render: {e}")))?;
    output::text(&String::from_utf8_lossy(&out));
    Ok(Done::Ok)
}

/// The one not-found rule: a read verb asked about a stream with nothing recorded
/// fails with `no-such-stream` (exit 2), `field` naming the flag that named it.
pub fn recorded(journal: &Journal, field: &'static str, stream: &str) -> Result<(), Failure> {
    if journal.stream_version(stream)? == 0 {
        return Err(Failure::NoSuchStream {
            field,
            stream: stream.to_owned(),
        });
    }
    Ok(())
}

/// `--db`, else `CAIRN_DB`, else `$XDG_STATE_HOME/cairn/journal.db`, else
/// `~/.local/state/cairn/journal.db`; a `postgres://` or `postgresql://` URL is a
/// PostgreSQL database, anything else a SQLite path ([`Location::parse`]).
pub fn db_location(cli: &Cli) -> Result<Location, NoJournalLocation> {
    if let Some(p) = &cli.db {
        return Ok(Location::parse(p.as_os_str()));
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = env("CAIRN_DB") {
        return Ok(Location::parse(p.as_os_str()));
    }
    if let Some(p) = env("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Ok(Location::Sqlite(p.join("cairn").join("journal.db")));
    }
    if let Some(home) = env("HOME") {
        return Ok(Location::Sqlite(home.join(".local/state/cairn/journal.db")));
    }
    Err(NoJournalLocation)
}

/// The engine over the journal at `location`, opened read-only.
pub fn reader(
    location: &Location,
    options: &Options,
    registry: Registry,
) -> Result<Engine, Failure> {
    Ok(Engine::new(
        Journal::open_read_only(location, options)?,
        registry,
    ))
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
