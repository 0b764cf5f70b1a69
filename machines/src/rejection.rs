//! Rejections: every failed predicate of a refused command, machine-readably.

use serde::{Deserialize, Serialize};

/// One failed guard predicate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Violation {
    /// A stable, kebab-case name of the predicate that failed (e.g. `unknown-evidence`).
    pub predicate: String,
    /// The input field the predicate looked at, as a JSON-pointer-like path, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<String>,
    /// A lower-case human sentence.
    pub message: String,
}

impl Violation {
    /// A violation of `predicate`, about `field`.
    pub fn new(predicate: &str, field: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            predicate: predicate.to_owned(),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

/// Why `decide` refused a command. Never empty: it names every failed predicate,
/// not just the first, so a caller can fix all of them at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The machine that refused.
    pub machine: String,
    /// The command it refused.
    pub command: String,
    /// The state it was in.
    pub state: String,
    /// Every failed predicate, in the order they were checked.
    pub violations: Vec<Violation>,
}

impl Rejection {
    /// Builds a rejection from collected violations; `None` when there are none,
    /// so a guard can end with `if let Some(r) = Rejection::from_violations(..) { return Err(r) }`.
    pub fn from_violations(
        machine: &str,
        command: &str,
        state: &str,
        violations: Vec<Violation>,
    ) -> Option<Self> {
        if violations.is_empty() {
            None
        } else {
            Some(Self {
                machine: machine.to_owned(),
                command: command.to_owned(),
                state: state.to_owned(),
                violations,
            })
        }
    }

    /// A rejection with one violation.
    pub fn single(machine: &str, command: &str, state: &str, violation: Violation) -> Self {
        Self {
            machine: machine.to_owned(),
            command: command.to_owned(),
            state: state.to_owned(),
            violations: vec![violation],
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} refused `{}` in state `{}`: ",
            self.machine, self.command, self.state
        )?;
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            match &v.field {
                Some(field) => write!(f, "{} ({}): {}", v.predicate, field, v.message)?,
                None => write!(f, "{}: {}", v.predicate, v.message)?,
            }
        }
        Ok(())
    }
}
