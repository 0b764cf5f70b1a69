//! The `cairn` command line as a library: parse the command line, run one verb,
//! map the outcome to an exit code in exactly one place (`failure::exit_code`,
//! errors through `Failure::classify`).
//!
//! The `cairn` binary is `main_with(Registry::builtin())`. A team with its own
//! lifecycles builds its own binary the same way, with a registry that holds the
//! built-in machines and theirs: `machines`, `graph`, `state`, `exec` and
//! `journal log|verify|audit` then serve every registered machine.
//!
//! ```no_run
//! let mut registry = cairn::Registry::builtin();
//! // registry.register::<my_crate::MyLifecycle>();
//! std::process::exit(u8::from(cairn_cli::main_with(registry)).into());
//! ```
//!
//! # Architecture invariant
//!
//! Only this crate knows clap, stdin, stdout and exit codes.

mod args;
mod audit_report;
mod build;
mod claim;
mod exec;
mod failure;
mod input;
mod journal;
mod links;
mod output;
mod park;
mod pr;
mod progress;
mod record;
mod recorded;
mod saga;
mod schema;
mod ship;
mod suggest;
mod trust;
mod usage;
mod verbs;
mod work;

use clap::FromArgMatches;

use crate::args::Cli;
use crate::failure::{exit_code, Done, Failure};

/// The exit code of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit(pub u8);

impl From<Exit> for u8 {
    fn from(e: Exit) -> u8 {
        e.0
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.0)
    }
}

/// Runs the CLI on this process's arguments with `registry`; prints the answer and
/// returns the exit code (see the README's table).
pub fn main_with(registry: cairn::Registry) -> Exit {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `cairn help --help`: clap reads `--help` as a verb's name there; the help on
    // help is the top-level page, which lists `help` and what it takes.
    if argv.len() == 3 && argv[1] == "help" && (argv[2] == "--help" || argv[2] == "-h") {
        argv.remove(1);
    }
    let mut cmd = args::command_for(&argv);
    let parsed = cmd.try_get_matches_from_mut(argv);
    // The command tree and its matches are thousands of small allocations; freeing
    // them one by one was a tenth of a short verb's time, and the process exits
    // soon after, which returns them all at once.
    std::mem::forget(cmd);
    let parsed = parsed.and_then(|matches| {
        input::set_verb(verb_path(&matches));
        let (key, token) = key_flags(&matches);
        input::set_flags(key, token);
        let cli = Cli::from_arg_matches(&matches);
        std::mem::forget(matches);
        cli
    });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let mut help = e.render().to_string();
                if !help.ends_with('\n') {
                    help.push('\n');
                }
                output::text(&help);
                return Exit(exit_code(&Ok(Done::Ok)));
            }
            let failure = Failure::Usage(usage::from_clap(&e));
            output::json(&failure.to_json());
            // clap's message quotes the caller's arguments (its Display drops
            // only its own styling): shown visible like every stderr line.
            output::stderr_text(&output::lines_visible(&e.render().to_string()));
            return Exit(exit_code(&Err(failure)));
        }
    };
    let result = verbs::run(cli, registry).map_err(every_violation);
    if let Err(failure) = &result {
        // An integrity failure already printed its report on stdout.
        if !matches!(failure, Failure::Integrity(_)) {
            output::json(&failure.to_json());
        }
        crate::output::stderr_line(format_args!("cairn: {}", failure.message()));
    }
    Exit(exit_code(&result))
}

/// A refused input document names every violation: the parser's first (what a
/// reader of `field`/`rule` acts on, the parsers' order), then every other the
/// verb's schema finds in the document. Runs only on a refusal.
fn every_violation(failure: Failure) -> Failure {
    let Failure::Input(mut found) = failure else {
        return failure;
    };
    // The key and token flags, judged whatever refused first (helper-94: a
    // verb that checked its own input first dropped them).
    let (key, token) = input::flags();
    for v in record::flag_violations(key, token).1 {
        if !found.iter().any(|f| f.field == v.field) {
            found.push(v);
        }
    }
    let (Some(verb), Some(document)) = (input::verb(), input::kept()) else {
        return Failure::Input(found);
    };
    for v in schema::violations(verb, document) {
        if !found.iter().any(|f| f.field == v.field) {
            found.push(v);
        }
    }
    Failure::Input(found)
}

/// The leaf verb's `--idempotency-key` and `--fencing-token`, where it takes
/// them (an id the verb does not define reads as not given).
fn key_flags(matches: &clap::ArgMatches) -> (Option<String>, Option<String>) {
    let mut m = matches;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    let flag = |id: &str| m.try_get_one::<String>(id).ok().flatten().cloned();
    (flag("idempotency_key"), flag("fencing_token"))
}

/// The subcommand path of a parsed command line: `park check`, `saga merge-turn take`.
fn verb_path(matches: &clap::ArgMatches) -> String {
    let mut names = Vec::new();
    let mut m = matches;
    while let Some((name, sub)) = m.subcommand() {
        names.push(name.to_owned());
        m = sub;
    }
    names.join(" ")
}
