//! The one place where outcomes and errors become exit codes and JSON error objects.

use serde_json::{json, Map, Value};

use crate::record::Outcome;

/// How a verb ended when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// A read, a check or an answer printed: nothing to judge.
    Ok,
    /// A recording verb's outcome (the machine's verdict).
    Recorded(Outcome),
    /// The verb printed its own report of an invalid input (`work validate`).
    Invalid,
    /// `build-loop`: the run record's version is not one this build writes (the
    /// code `build_loop.py` uses).
    UnknownRecordVersion,
}

/// The exit code of a run: the one function that decides it (errors through
/// [`Failure::classify`]).
pub fn exit_code(result: &Result<Done, Failure>) -> u8 {
    use cairn::Verdict;
    match result {
        Err(failure) => failure.classify().0,
        Ok(Done::Ok) => code::OK,
        Ok(Done::Recorded(outcome)) => match outcome {
            Outcome::Accepted | Outcome::Unchanged | Outcome::Replayed(Verdict::Green) => code::OK,
            Outcome::NotGreen | Outcome::Replayed(Verdict::NotGreen) => code::NOT_GREEN,
        },
        Ok(Done::Invalid) => code::BAD_INPUT,
        Ok(Done::UnknownRecordVersion) => code::RECORD_VERSION,
    }
}

/// An error reaching the CLI's edge.
#[derive(Debug)]
pub enum Failure {
    /// The command line did not parse.
    Usage(String),
    /// Input named by `field` broke `rule`.
    Input {
        field: String,
        rule: String,
        message: String,
    },
    /// The library refused or failed.
    Cairn(cairn::Error),
    /// Verify or audit found problems; the report was already printed.
    Integrity(String),
    /// A step is in flight in another live process: this one ran nothing (exit 3).
    InFlight(String),
    /// The request lost to the resource's current state — a claim another holds,
    /// a stale or expired claim — and wrote nothing (exit 3). `kind` names which;
    /// `fields` are added to the error object (the rejection, the readback).
    Contended {
        kind: &'static str,
        message: String,
        fields: Map<String, Value>,
    },
}

/// An input error naming the field and the rule it broke.
pub fn input(field: &str, rule: &str, message: &str) -> Failure {
    Failure::Input {
        field: field.into(),
        rule: rule.into(),
        message: message.into(),
    }
}

/// A flag (`--some-flag`, field `some_flag`) that must be an absolute, normalised path.
pub fn require_abs_path(field: &str, value: &str) -> Result<(), Failure> {
    if cairn::machines::evidence::is_normal_abs_path(value) {
        Ok(())
    } else {
        Err(input(
            field,
            "absolute-path",
            &format!(
                "--{} must be an absolute, normalised path",
                field.replace('_', "-")
            ),
        ))
    }
}

/// A flag that must not be empty or blank.
pub fn require_nonempty(field: &str, value: &str) -> Result<(), Failure> {
    if value.trim().is_empty() {
        Err(input(
            field,
            "nonempty-string",
            &format!("--{} is empty", field.replace('_', "-")),
        ))
    } else {
        Ok(())
    }
}

/// No journal location could be resolved (no `--db`, `CAIRN_DB`, `XDG_STATE_HOME` or `HOME`).
#[derive(Debug, Clone, Copy)]
pub struct NoJournalLocation;

impl From<NoJournalLocation> for Failure {
    fn from(_: NoJournalLocation) -> Self {
        input(
            "db",
            "journal-location",
            "no journal location: pass --db, or set CAIRN_DB, XDG_STATE_HOME or HOME",
        )
    }
}

impl From<cairn::Error> for Failure {
    fn from(e: cairn::Error) -> Self {
        Failure::Cairn(e)
    }
}

impl From<cairn::machines::evidence::wire::InputError> for Failure {
    fn from(e: cairn::machines::evidence::wire::InputError) -> Self {
        Failure::Input {
            field: e.field,
            rule: e.rule.to_owned(),
            message: e.message,
        }
    }
}

impl From<cairn::journal::Error> for Failure {
    fn from(e: cairn::journal::Error) -> Self {
        Failure::Cairn(cairn::Error::Journal(e))
    }
}

/// The documented exit codes.
pub mod code {
    pub const OK: u8 = 0;
    pub const INTERNAL: u8 = 1;
    pub const BAD_INPUT: u8 = 2;
    pub const CONFLICT: u8 = 3;
    /// Recorded, but a gate stopped the lifecycle (not a refusal).
    pub const NOT_GREEN: u8 = 4;
    pub const INTEGRITY: u8 = 5;
    /// `build-loop` only: a run-record version this build does not write.
    pub const RECORD_VERSION: u8 = 3;
}

impl Failure {
    /// Its exit code, its `kind`, and extra fields for the JSON error object.
    pub fn classify(&self) -> (u8, &'static str, Map<String, Value>) {
        use cairn::journal::Error as J;
        use cairn::Error as C;
        let mut extra = Map::new();
        let (code, kind) = match self {
            Failure::Usage(_) => (code::BAD_INPUT, "usage"),
            Failure::Input { field, rule, .. } => {
                extra.insert("field".into(), json!(field));
                extra.insert("rule".into(), json!(rule));
                (code::BAD_INPUT, "input")
            }
            Failure::Integrity(_) => (code::INTEGRITY, "integrity"),
            Failure::InFlight(_) => (code::CONFLICT, "in-flight"),
            Failure::Contended { kind, fields, .. } => {
                extra.extend(fields.clone());
                (code::CONFLICT, *kind)
            }
            Failure::Cairn(e) => match e {
                C::Rejected(r) => {
                    extra.insert("violations".into(), json!(r.violations));
                    extra.insert("state".into(), json!(r.state));
                    (code::BAD_INPUT, "rejected")
                }
                C::InvalidStream { stream, .. } => {
                    extra.insert("field".into(), json!("stream"));
                    extra.insert("rule".into(), json!("stream-id-format"));
                    extra.insert("value".into(), json!(stream));
                    (code::BAD_INPUT, "invalid-stream")
                }
                C::UnknownMachine { name } => {
                    extra.insert("field".into(), json!("machine"));
                    extra.insert("rule".into(), json!("registered-machine"));
                    extra.insert("value".into(), json!(name));
                    (code::BAD_INPUT, "unknown-machine")
                }
                C::NoSuchVersion { current, .. } => {
                    extra.insert("field".into(), json!("at"));
                    extra.insert("rule".into(), json!("version-exists"));
                    extra.insert("current_version".into(), json!(current));
                    (code::BAD_INPUT, "no-such-version")
                }
                C::NoSuchStream { stream } => {
                    extra.insert("field".into(), json!("stream"));
                    extra.insert("rule".into(), json!("stream-has-events"));
                    extra.insert("value".into(), json!(stream));
                    (code::BAD_INPUT, "no-such-stream")
                }
                C::Stored(_) => (code::INTERNAL, "stored-data"),
                C::Journal(j) => match j {
                    J::Conflict {
                        expected, actual, ..
                    } => {
                        extra.insert("expected_version".into(), json!(expected));
                        extra.insert("actual_version".into(), json!(actual));
                        (code::CONFLICT, "conflict")
                    }
                    J::Busy { .. } => (code::CONFLICT, "busy"),
                    J::IdempotencyMismatch { .. } => (code::BAD_INPUT, "idempotency-mismatch"),
                    J::MachineMismatch { .. } => (code::BAD_INPUT, "machine-mismatch"),
                    J::InvalidAppend(_) => (code::BAD_INPUT, "invalid-append"),
                    J::NewerSchema { .. } => (code::BAD_INPUT, "newer-schema"),
                    J::NotAJournal { .. } => (code::BAD_INPUT, "not-a-journal"),
                    J::Missing { .. } => (code::BAD_INPUT, "no-journal"),
                    J::Corrupt { .. } => (code::INTEGRITY, "corrupt"),
                    J::Damaged { .. } => (code::INTEGRITY, "damaged"),
                    J::LoosePermissions { mode, .. } => {
                        extra.insert("mode".into(), json!(format!("{mode:o}")));
                        (code::INTERNAL, "loose-permissions")
                    }
                    J::SigningKey { .. } => (code::INTERNAL, "signing-key"),
                    J::Io { .. } => (code::INTERNAL, "io"),
                    J::DiskFull => (code::INTERNAL, "disk-full"),
                    J::ReadOnly => (code::INTERNAL, "read-only"),
                    J::StorageIo { .. } => (code::INTERNAL, "storage-io"),
                    J::Sqlite(_) => (code::INTERNAL, "sqlite"),
                    J::Connect { .. } => (code::INTERNAL, "connect"),
                    J::Postgres(_) => (code::INTERNAL, "postgres"),
                    J::NotEmpty { .. } => (code::BAD_INPUT, "not-empty"),
                },
            },
        };
        (code, kind, extra)
    }

    /// The human message.
    pub fn message(&self) -> String {
        match self {
            Failure::Usage(m) | Failure::Integrity(m) | Failure::InFlight(m) => m.clone(),
            Failure::Input { message, .. } | Failure::Contended { message, .. } => message.clone(),
            Failure::Cairn(e) => e.to_string(),
        }
    }

    /// The JSON error object: `{"error": {"kind", "message", …}}`.
    pub fn to_json(&self) -> Value {
        let (_, kind, mut extra) = self.classify();
        extra.insert("kind".into(), json!(kind));
        extra.insert("message".into(), json!(self.message()));
        json!({ "error": extra })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn::Verdict;

    #[test]
    fn one_function_maps_every_ending_to_its_code() {
        let cases = [
            (Ok(Done::Ok), code::OK),
            (Ok(Done::Recorded(Outcome::Accepted)), code::OK),
            (Ok(Done::Recorded(Outcome::Unchanged)), code::OK),
            (Ok(Done::Recorded(Outcome::NotGreen)), code::NOT_GREEN),
            (
                Ok(Done::Recorded(Outcome::Replayed(Verdict::Green))),
                code::OK,
            ),
            (
                Ok(Done::Recorded(Outcome::Replayed(Verdict::NotGreen))),
                code::NOT_GREEN,
            ),
            (Ok(Done::Invalid), code::BAD_INPUT),
            (Ok(Done::UnknownRecordVersion), 3),
            (Err(input("f", "r", "m")), code::BAD_INPUT),
            (Err(Failure::Integrity("x".into())), code::INTEGRITY),
            (Err(Failure::InFlight("x".into())), code::CONFLICT),
            (
                Err(Failure::Contended {
                    kind: "claim-held",
                    message: "x".into(),
                    fields: Map::new(),
                }),
                code::CONFLICT,
            ),
        ];
        for (ending, want) in cases {
            assert_eq!(exit_code(&ending), want, "{ending:?}");
        }
    }
}
