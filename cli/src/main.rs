//! The `cairn` binary: parses the command line, runs one verb, and maps the
//! outcome to an exit code in exactly one place ([`failure::Failure::classify`]).
//!
//! # Architecture invariant
//!
//! Only this crate knows clap, stdin, stdout and exit codes.

mod args;
mod failure;
mod output;
mod park;
mod pr;
mod verbs;

use std::process::ExitCode;

use clap::Parser;

use crate::args::Cli;
use crate::failure::{code, Failure};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let mut help = e.render().to_string();
                if !help.ends_with('\n') {
                    help.push('\n');
                }
                output::text(&help);
                return ExitCode::from(code::OK);
            }
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .next()
                .unwrap_or("invalid command line")
                .trim_start_matches("error: ")
                .to_owned();
            let failure = Failure::Usage(first);
            output::json(&failure.to_json());
            eprint!("{rendered}");
            return ExitCode::from(code::BAD_INPUT);
        }
    };
    match verbs::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            let (code, _, _) = failure.classify();
            // An integrity failure already printed its report on stdout.
            if !matches!(failure, Failure::Integrity(_)) {
                output::json(&failure.to_json());
            }
            eprintln!("cairn: {}", failure.message());
            ExitCode::from(code)
        }
    }
}
