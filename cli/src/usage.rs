//! A command line clap refused, as a JSON error: built from clap's structured error
//! (its kind and context), so every missing argument, invalid value and suggestion
//! is named — never only clap's first rendered line.

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::failure::Violation;

/// What was wrong with a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// One lower-case sentence naming everything that is wrong.
    pub message: String,
    /// One entry per argument at fault (a missing flag, an invalid value, an unknown
    /// argument): never empty.
    pub violations: Vec<Violation>,
    /// What clap suggests instead (`--flag`, a subcommand, a value), possibly none.
    pub suggestions: Vec<String>,
}

/// A field name for an argument clap names: `--worktree-path <DIR>` is
/// `worktree_path`, `<MACHINE>` is `machine`, `-h` is `h`.
pub fn field_of(arg: &str) -> String {
    let word = arg.split_whitespace().next().unwrap_or(arg);
    let word = word.split('=').next().unwrap_or(word);
    // A required group is `<--spec <FILE>|SPEC>`: its first member names it.
    word.trim_start_matches(['-', '<'])
        .trim_end_matches("...")
        .trim_end_matches('>')
        .to_lowercase()
        .replace('-', "_")
}

fn strings(e: &clap::Error, kind: ContextKind) -> Vec<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::StyledStr(s)) => vec![s.to_string()],
        Some(ContextValue::StyledStrs(v)) => v.iter().map(ToString::to_string).collect(),
        Some(ContextValue::Number(n)) => vec![n.to_string()],
        _ => Vec::new(),
    }
}

fn one(e: &clap::Error, kind: ContextKind) -> Option<String> {
    strings(e, kind).into_iter().next()
}

/// The usage error of a clap error that is not help or a version.
pub fn from_clap(e: &clap::Error) -> Usage {
    let arg = one(e, ContextKind::InvalidArg);
    let value = one(e, ContextKind::InvalidValue);
    let mut suggestions: Vec<String> = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
        ContextKind::SuggestedCommand,
    ]
    .into_iter()
    .flat_map(|k| strings(e, k))
    .collect();
    suggestions.dedup();
    let did_you_mean = || match suggestions.as_slice() {
        [] => String::new(),
        [s] => format!(" (did you mean `{s}`?)"),
        many => format!(
            " (did you mean one of {}?)",
            many.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let cause = std::error::Error::source(e).map(|c| c.to_string());
    let v = |field: String, rule: &str, message: String| Violation {
        field,
        rule: rule.to_owned(),
        message,
    };
    let (message, violations) = match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(e, ContextKind::InvalidArg);
            let message = format!(
                "missing required argument{}: {}",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            );
            let violations = missing
                .iter()
                .map(|a| v(field_of(a), "required", format!("{a} is required")))
                .collect();
            (message, violations)
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let command = one(e, ContextKind::InvalidSubcommand)
                .or_else(|| command_of_usage(e))
                .unwrap_or_else(|| "cairn".into());
            let valid = strings(e, ContextKind::ValidSubcommand);
            let message = if valid.is_empty() {
                format!("`{command}` needs a subcommand (see `{command} --help`)")
            } else {
                format!(
                    "`{command}` needs a subcommand: one of {}",
                    valid.join(", ")
                )
            };
            (
                message.clone(),
                vec![v("command".into(), "subcommand-required", message)],
            )
        }
        ErrorKind::InvalidSubcommand => {
            let name = one(e, ContextKind::InvalidSubcommand).unwrap_or_default();
            let message = format!("unknown subcommand `{name}`{}", did_you_mean());
            (
                message.clone(),
                vec![v("command".into(), "unknown-subcommand", message)],
            )
        }
        ErrorKind::UnknownArgument => {
            let a = arg.unwrap_or_default();
            let message = format!("unknown argument `{a}`{}", did_you_mean());
            (
                message.clone(),
                vec![v(field_of(&a), "unknown-argument", message)],
            )
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let a = arg.unwrap_or_default();
            let valid = strings(e, ContextKind::ValidValue);
            let mut message = format!("invalid value `{}` for {a}", value.unwrap_or_default());
            if let Some(c) = cause {
                message.push_str(&format!(": {c}"));
            }
            if !valid.is_empty() {
                message.push_str(&format!(" (expected one of {})", valid.join(", ")));
            }
            message.push_str(&did_you_mean());
            (message.clone(), vec![v(field_of(&a), "value", message)])
        }
        ErrorKind::ArgumentConflict => {
            let a = arg.unwrap_or_default();
            let prior = strings(e, ContextKind::PriorArg);
            let message = if prior.is_empty() {
                format!("{a} cannot be used here")
            } else {
                format!("{a} cannot be used with {}", prior.join(", "))
            };
            (message.clone(), vec![v(field_of(&a), "conflict", message)])
        }
        ErrorKind::TooManyValues
        | ErrorKind::TooFewValues
        | ErrorKind::WrongNumberOfValues
        | ErrorKind::NoEquals => {
            let a = arg.unwrap_or_default();
            let message = first_line(e);
            (
                message.clone(),
                vec![v(field_of(&a), "value-count", message)],
            )
        }
        _ => {
            let message = first_line(e);
            let field = arg.map(|a| field_of(&a)).unwrap_or_else(|| "$".into());
            (message.clone(), vec![v(field, "usage", message)])
        }
    };
    Usage {
        message,
        violations,
        suggestions,
    }
}

/// The command path of the usage line clap prints (`Usage: cairn journal [OPTIONS]
/// <COMMAND>` is `cairn journal`).
fn command_of_usage(e: &clap::Error) -> Option<String> {
    // Help shown for a missing subcommand carries no context: read its usage line.
    let usage = one(e, ContextKind::Usage).unwrap_or_else(|| e.render().to_string());
    let line = usage
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Usage:"))?
        .trim_start_matches("Usage:")
        .trim();
    let words: Vec<&str> = line
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// clap's own first line, without its `error: ` prefix.
fn first_line(e: &clap::Error) -> String {
    e.render()
        .to_string()
        .lines()
        .next()
        .unwrap_or("invalid command line")
        .trim_start_matches("error: ")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_as_input_errors_name_them() {
        assert_eq!(field_of("--worktree-path <DIR>"), "worktree_path");
        assert_eq!(field_of("<MACHINE>"), "machine");
        assert_eq!(field_of("--tiebreaker-4 <PROTOCOL>"), "tiebreaker_4");
        assert_eq!(field_of("--format=dot"), "format");
        assert_eq!(field_of("<SPEC>..."), "spec");
        assert_eq!(field_of("<--spec <FILE>|SPEC>"), "spec");
    }
}
