//! The verbs: each turns its arguments into domain values, calls the library
//! and prints the result.

use std::time::Duration;

use cairn::journal::{Journal, Location, Options};
use cairn::{Engine, Registry, StreamId};
use schemars::JsonSchema;
use serde::Serialize;

use crate::args::{Cli, Command, GraphFormat, JournalCommand};
use crate::failure::{Done, Failure};
use crate::output;
use crate::record::NoJournalLocation;

/// Runs one parsed command line; the exit code on success. An unknown machine's
/// error names the registered ones nearest it.
pub fn run(cli: Cli, registry: Registry) -> Result<Done, Failure> {
    let machines: Vec<String> = registry.iter().map(|m| m.name().to_owned()).collect();
    run_verb(cli, registry).map_err(|e| crate::suggest::machine(e, &machines))
}

fn run_verb(cli: Cli, registry: Registry) -> Result<Done, Failure> {
    let options = |create: bool| Options {
        busy_timeout: Duration::from_millis(cli.busy_timeout_ms),
        create,
        ..Options::default()
    };
    // Verbs that may record sign with this user's key, which the journal loads (or
    // creates) at their first append: one that records nothing never touches it.
    let writing = || -> Result<Options, Failure> {
        Ok(Options {
            signing_key_at: Some(crate::trust::signing_key_path(&cli)?),
            ..options(true)
        })
    };
    match &cli.command {
        Command::Machines => {
            let machines: Vec<_> = registry
                .iter()
                .map(|m| {
                    let g = m.graph();
                    MachineView {
                        name: m.name(),
                        rules_version: m.rules_version(),
                        initial: g.initial,
                        events: g.event_names(),
                        states: g.states,
                    }
                })
                .collect();
            output::json(&Machines { machines });
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
                GraphFormat::Dot => output::human(&g.to_dot()),
                GraphFormat::Mermaid => output::human(&g.to_mermaid()),
                GraphFormat::Json => output::json(&g),
                GraphFormat::Xstate => output::json(&g.to_xstate()),
            }
            Ok(Done::Ok)
        }
        Command::State { stream, at } => {
            let stream = StreamId::parse(stream)?;
            let engine = reader(&db_location(&cli)?, &options(false), registry)?;
            let view = engine
                .state_view(&stream, *at)
                .map_err(|e| crate::suggest::stream(e.into(), engine.journal()))?;
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
            clap_complete::generate(
                *shell,
                &mut crate::args::for_completion(),
                "cairn",
                &mut out,
            );
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
        }) => crate::journal::log(
            &db_location(&cli)?,
            &options(false),
            stream.as_deref(),
            *since,
            *limit,
            *format,
        ),
        Command::Journal(JournalCommand::Streams { format }) => {
            crate::journal::streams(&db_location(&cli)?, &options(false), *format)
        }
        Command::Journal(JournalCommand::Links { stream, format }) => crate::links::links(
            &db_location(&cli)?,
            &options(false),
            stream.as_deref(),
            *format,
        ),
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
            crate::journal::show(&db_location(&cli)?, &options(false), *transition, *format)
        }
        Command::Journal(JournalCommand::Copy { from, to }) => {
            let at = |field: &'static str, text: &std::path::Path| {
                parse_location(text.as_os_str()).map_err(|e| e.at(field))
            };
            crate::trust::copy(&at("from", from)?, &at("to", to)?, &options(true))
        }
        Command::Journal(JournalCommand::Audit { stream, format }) => crate::journal::audit(
            &db_location(&cli)?,
            &options(false),
            registry,
            stream.as_deref(),
            *format,
        ),
    }
}

/// `cairn machines`: every registered machine.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Machines {
    pub machines: Vec<MachineView>,
}

/// One registered machine.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MachineView {
    pub name: &'static str,
    /// The rules version it decides under today.
    pub rules_version: u32,
    /// The state of a stream with no events.
    pub initial: &'static str,
    /// Every state (`cairn graph` has the edges).
    pub states: Vec<cairn::machines::StateSpec>,
    /// Every event type, by name.
    pub events: Vec<&'static str>,
}

/// `cairn man [VERB…]`: the roff page of cairn or of one of its verbs.
fn man(words: &[String]) -> Result<Done, Failure> {
    // Built, so a verb's page lists the global options it takes, as its --help does.
    let mut cmd = crate::args::built();
    // The page's name (`cairn-saga-merge-turn`) and the command as typed
    // (`cairn saga merge-turn`): a verb's own hyphens stay.
    let (mut name, mut typed) = ("cairn".to_owned(), "cairn".to_owned());
    for w in words {
        let sub = cmd.find_subcommand(w).cloned().ok_or_else(|| {
            let known: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            crate::suggest::with(
                crate::failure::input(
                    "verb",
                    "known-verb",
                    &format!("`{typed} {w}` is not a verb: `{typed} --help` lists them"),
                ),
                crate::suggest::nearest(w, known),
            )
        })?;
        name = format!("{name}-{w}");
        typed = format!("{typed} {w}");
        cmd = sub.display_name(name.clone()).bin_name(typed.clone());
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| crate::failure::input("$", "stdout", &format!("cannot render: {e}")))?;
    output::text(&examples_as_typed(&String::from_utf8_lossy(&out)));
    Ok(Done::Ok)
}

/// The page with its examples kept as typed: clap_mangen puts `after_help` in an
/// `EXTRA` section of filled text, where man joins, justifies and hyphenates an
/// example's lines so it no longer pastes. Here the section is `NOTES`, every run
/// of indented lines (the examples) is set without filling (`.nf` … `.fi`), and
/// the page is not hyphenated (`.nh`).
fn examples_as_typed(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len() + 64);
    let (mut notes, mut nofill) = (false, false);
    for line in roff.lines() {
        if line.starts_with(".SH") {
            if nofill {
                out.push_str(".fi\n");
                nofill = false;
            }
            notes = line == ".SH EXTRA";
            if notes {
                out.push_str(".SH NOTES\n");
                continue;
            }
        }
        if notes {
            let indented = line.starts_with(' ');
            if indented != nofill {
                out.push_str(if indented { ".nf\n" } else { ".fi\n" });
                nofill = indented;
            }
        }
        out.push_str(line);
        out.push('\n');
        if line.starts_with(".TH ") {
            out.push_str(".nh\n");
        }
    }
    if nofill {
        out.push_str(".fi\n");
    }
    out
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

/// `--db`, else `CAIRN_DB`, else `cairn/journal.db` in the XDG state directory
/// (etcetera: `$XDG_STATE_HOME` when absolute, else `~/.local/state`); a
/// `postgres://` or `postgresql://` URL is a PostgreSQL database, anything else a
/// SQLite path ([`Location::parse`]).
/// A journal's location as typed: an SQLite file's path or a PostgreSQL URL. A URL
/// of another scheme is refused, not taken for a file's path.
/// A journal's location as typed: an SQLite file's path or a PostgreSQL URL.
/// Refused rather than taken for a file's path: a URL of another scheme, an empty
/// scheme (`://x`), a mistyped PostgreSQL or SQLite URL (`postgres:/x`,
/// `sqlite:x.db`), and a value with leading or trailing white space.
pub fn parse_location(text: &std::ffi::OsStr) -> Result<Location, NoJournalLocation> {
    let path = match Location::parse(text) {
        Location::Sqlite(path) => path,
        postgres => return Ok(postgres),
    };
    let Some(t) = text.to_str() else {
        return Ok(Location::Sqlite(path));
    };
    // `-` reads as stdin to every other tool: never a file named `-` (helper-75).
    if t.trim() != t || t == "-" {
        return Err(NoJournalLocation::UnknownScheme(t.to_owned()));
    }
    let scheme_like = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    };
    if let Some((scheme, _)) = t.split_once("://") {
        if scheme.is_empty() || scheme_like(scheme) {
            return Err(NoJournalLocation::UnknownScheme(t.to_owned()));
        }
    }
    if let Some((scheme, _)) = t.split_once(':') {
        let lower = scheme.to_ascii_lowercase();
        // (`file:` URIs are the journal's to refuse: not-a-journal.)
        if ["postgres", "postgresql", "sqlite"].contains(&lower.as_str()) {
            return Err(NoJournalLocation::UnknownScheme(t.to_owned()));
        }
    }
    Ok(Location::Sqlite(path))
}

pub fn db_location(cli: &Cli) -> Result<Location, NoJournalLocation> {
    let parse = parse_location;
    if let Some(p) = &cli.db {
        return parse(p.as_os_str());
    }
    if let Some(p) = std::env::var_os("CAIRN_DB").filter(|v| !v.is_empty()) {
        return parse(&p);
    }
    use etcetera::BaseStrategy;
    let state = etcetera::base_strategy::Xdg::new()
        .ok()
        .and_then(|xdg| xdg.state_dir())
        .ok_or(NoJournalLocation::Unresolved)?;
    Ok(Location::Sqlite(state.join("cairn").join("journal.db")))
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
