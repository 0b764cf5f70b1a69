//! The one place where outcomes and errors become exit codes and JSON error objects.

use cairn::machines::evidence::AbsPath;
use schemars::JsonSchema;
use serde::Serialize;

use crate::record::{NoJournalLocation, Outcome};
use crate::usage::Usage;

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
    /// The command line did not parse: every argument at fault.
    Usage(Usage),
    /// Input broke rules: every violation found, the first the one a reader that
    /// knows only `field` and `rule` acts on (never empty).
    Input(Vec<Violation>),
    /// The library refused or failed.
    Cairn(cairn::Error),
    /// Verify or audit found problems; the report was already printed.
    Integrity(String),
    /// The journal does not verify and this verb has no report of its own to
    /// print (`journal anchor`): exit 5 with the error document, naming `db`.
    Unsound(String),
    /// A step is in flight in another live process: this one ran nothing (exit 3).
    InFlight(String),
    /// The request lost to the resource's current state — a claim another holds,
    /// a stale or expired claim — and wrote nothing (exit 3). `kind` names which
    /// (`claim-held`, `stale-claim`, `claim-expired`); the error object carries the
    /// machine's rejection and `claim`, the readback of what holds now.
    Contended {
        kind: &'static str,
        rejection: Box<cairn::Rejection>,
        claim: serde_json::Value,
    },
    /// Nothing is recorded under the id a read verb was asked about (exit 2): the
    /// one not-found rule (README, "Exit codes"). `field` names the flag.
    NoSuchStream { field: &'static str, stream: String },
    /// An unknown name (a machine, a stream, a verb), with the known names nearest
    /// it (`suggest`): the inner failure's code and body, plus `suggestions`.
    Suggested(Box<Failure>, Vec<String>),
    /// The inner failure, about the value of the flag `field` rather than the one
    /// its kind names by default (`journal copy --from` for a missing journal,
    /// which is otherwise `db`).
    Flag {
        field: &'static str,
        inner: Box<Failure>,
    },
    /// The inner failure of a claim verb with `claim`, the readback of what
    /// holds now: a `decided-before` or a race lost twice, so every exit-3 claim
    /// answer carries one.
    WithClaim {
        inner: Box<Failure>,
        claim: serde_json::Value,
    },
}

/// One input or usage violation: the field (a JSON path into the document, or a
/// flag's name with `_` for `-`), the stable rule it broke, and a human sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Violation {
    pub field: String,
    pub rule: String,
    pub message: String,
}

impl Violation {
    /// The field at fault, the rule it broke and why, in words.
    pub fn new(field: &str, rule: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule: rule.into(),
            message: message.into(),
        }
    }
}

/// An input error naming the field and the rule it broke.
pub fn input(field: &str, rule: &str, message: &str) -> Failure {
    Failure::Input(vec![Violation::new(field, rule, message)])
}

/// A flag (`--some-flag`, field `some_flag`) that must be an absolute, normalised
/// path: the checked path.
pub fn require_abs_path(field: &str, value: &str) -> Result<AbsPath, Failure> {
    AbsPath::parse(value).map_err(|e| {
        input(
            field,
            e.rule,
            &format!(
                "--{} must be an absolute, normalised path",
                field.replace('_', "-")
            ),
        )
    })
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

impl From<NoJournalLocation> for Failure {
    fn from(e: NoJournalLocation) -> Self {
        e.at("db")
    }
}

impl From<cairn::Error> for Failure {
    fn from(e: cairn::Error) -> Self {
        Failure::Cairn(e)
    }
}

impl From<cairn::machines::evidence::wire::InputError> for Failure {
    fn from(e: cairn::machines::evidence::wire::InputError) -> Self {
        input(&e.field, e.rule, &e.message)
    }
}

impl From<cairn::journal::Error> for Failure {
    fn from(e: cairn::journal::Error) -> Self {
        Failure::Cairn(cairn::Error::Journal(e))
    }
}

/// `field` and `rule` of the first violation at the top (what existing readers
/// act on), and every violation in `violations`.
fn first_violation(b: &mut ErrorBody, violations: &[Violation]) {
    if let Some(first) = violations.first() {
        b.field = Some(first.field.clone());
        b.rule = Some(first.rule.clone());
    }
    b.violations = Some(Violations::Input(violations.to_vec()));
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

/// The JSON error every verb prints on stdout when it fails: `{"error": {…}}`
/// (`cairn schema <verb>` prints its JSON Schema).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorDocument {
    pub error: ErrorBody,
}

/// What failed. Only `kind` and `message` are always there; the rest depends on
/// the kind.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub kind: Kind,
    /// A lower-case human sentence.
    pub message: String,
    /// The first violation's field: a JSON path into the input document, or a
    /// flag's name with `_` for `-` (`usage`, `input`, `rejected` when its first
    /// predicate looked at a field, and the stream/machine kinds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The stable name of the rule the first violation broke (`rejected`: its
    /// first failed predicate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The value at fault (`invalid-stream`, `unknown-machine`, `no-such-stream`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Every violation: `usage` and `input` list `{field, rule, message}`, the
    /// first being `field` and `rule` above; `rejected` lists the machine's failed
    /// predicates `{predicate, field?, message}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub violations: Option<Violations>,
    /// What clap suggests instead (`usage`), or the known names nearest an unknown
    /// one, nearest first (`unknown-machine`, `no-such-stream`, an unknown verb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<String>>,
    /// The state the machine was in (`rejected`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The stream's current version (`no-such-version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// The version the writer read (`conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<u64>,
    /// The version another writer got to first (`conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_version: Option<u64>,
    /// The journal file's mode, in octal (`loose-permissions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The verb that records this command with cairn's own observation
    /// (`recorded-by-cairn`, from `cairn exec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// The lease as read back after the refusal (`claim-held`, `stale-claim`,
    /// `claim-expired`; see `cairn schema claim show`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<serde_json::Value>,
}

/// The violations of an error: the input's or the machine's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Violations {
    Input(Vec<Violation>),
    Rejected(Vec<cairn::Violation>),
}

/// The kinds of error, each with its exit code (see `Failure::classify`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The command line did not parse (2).
    #[default]
    Usage,
    /// An input document or flag broke a rule (2).
    Input,
    /// `journal verify` or `audit` found a problem; its report was printed instead (5).
    Integrity,
    /// A step is in flight in another live process (3).
    InFlight,
    /// The machine refused the command in its state (2).
    Rejected,
    InvalidStream,
    UnknownMachine,
    NoSuchVersion,
    NoSuchStream,
    /// A stored value could not be read back (1).
    StoredData,
    /// Another writer appended first (3).
    Conflict,
    /// Another writer held the lock past the busy timeout (3).
    Busy,
    /// A claim command, or an act on a claimed stream, was decided at an
    /// instant before that stream's last act (3).
    DecidedBefore,
    IdempotencyMismatch,
    MachineMismatch,
    InvalidAppend,
    NewerSchema,
    NotAJournal,
    NoJournal,
    Corrupt,
    Damaged,
    LoosePermissions,
    SigningKey,
    Io,
    DiskFull,
    ReadOnly,
    StorageIo,
    Sqlite,
    /// The PostgreSQL server could not be reached (1).
    Connect,
    /// The PostgreSQL server refused a statement (1).
    Postgres,
    /// `journal copy` into a journal that already holds rows (2).
    NotEmpty,
    /// `build-loop`: the run record's `schema` is a version this build does not
    /// write (3, `build_loop.py`'s code).
    RecordVersion,
    /// `cairn exec` was given a command whose evidence cairn observes itself (2):
    /// `verb` names the verb that records it.
    RecordedByCairn,
    /// Another holds a live claim on the resource (3).
    ClaimHeld,
    /// The claim id or token presented is not the current grant's (3).
    StaleClaim,
    /// The lease presented has expired (3).
    ClaimExpired,
    /// stdout could not be serialized (1).
    Internal,
}

impl Failure {
    /// Its exit code and its JSON error body (without the message).
    pub fn classify(&self) -> (u8, ErrorBody) {
        use cairn::journal::Error as J;
        use cairn::Error as C;
        let mut b = ErrorBody::default();
        let named = |b: &mut ErrorBody, field: &str, rule: &str, value: Option<String>| {
            b.field = Some(field.into());
            b.rule = Some(rule.into());
            b.value = value;
        };
        let (code, kind) = match self {
            Failure::Suggested(inner, suggestions) => {
                let (code, mut b) = inner.classify();
                b.suggestions = Some(suggestions.clone());
                return (code, b);
            }
            Failure::Flag { field, inner } => {
                let (code, mut b) = inner.classify();
                b.field = Some((*field).into());
                return (code, b);
            }
            Failure::WithClaim { inner, claim } => {
                let (code, mut b) = inner.classify();
                b.claim = Some(claim.clone());
                return (code, b);
            }
            Failure::Usage(u) => {
                first_violation(&mut b, &u.violations);
                if !u.suggestions.is_empty() {
                    b.suggestions = Some(u.suggestions.clone());
                }
                (code::BAD_INPUT, Kind::Usage)
            }
            Failure::Input(violations) => {
                first_violation(&mut b, violations);
                (code::BAD_INPUT, Kind::Input)
            }
            Failure::Integrity(_) => (code::INTEGRITY, Kind::Integrity),
            Failure::Unsound(_) => {
                named(&mut b, "db", "journal-verifies", None);
                (code::INTEGRITY, Kind::Integrity)
            }
            Failure::InFlight(_) => (code::CONFLICT, Kind::InFlight),
            Failure::NoSuchStream { field, stream } => {
                named(&mut b, field, "stream-has-events", Some(stream.clone()));
                (code::BAD_INPUT, Kind::NoSuchStream)
            }
            Failure::Contended {
                kind,
                rejection,
                claim,
            } => {
                b.violations = Some(Violations::Rejected(rejection.violations.clone()));
                b.state = Some(rejection.state.clone());
                b.claim = Some(claim.clone());
                let kind = match *kind {
                    "claim-held" => Kind::ClaimHeld,
                    "stale-claim" => Kind::StaleClaim,
                    "claim-expired" => Kind::ClaimExpired,
                    _ => Kind::Conflict,
                };
                (code::CONFLICT, kind)
            }
            Failure::Cairn(e) => match e {
                C::Rejected(r) => {
                    // The first failed predicate is the rule, and its field (when
                    // it looked at one) the field: as for every other kind.
                    if let Some(first) = r.violations.first() {
                        b.field = first.field.clone();
                        b.rule = Some(first.predicate.clone());
                    }
                    b.violations = Some(Violations::Rejected(r.violations.clone()));
                    b.state = Some(r.state.clone());
                    (code::BAD_INPUT, Kind::Rejected)
                }
                C::InvalidStream { stream, .. } => {
                    named(&mut b, "stream", "stream-id-format", Some(stream.clone()));
                    (code::BAD_INPUT, Kind::InvalidStream)
                }
                C::CommandStream { stream, .. } => {
                    named(&mut b, "stream", "command-stream", Some(stream.clone()));
                    (code::BAD_INPUT, Kind::InvalidStream)
                }
                C::UnknownMachine { name } => {
                    named(&mut b, "machine", "registered-machine", Some(name.clone()));
                    (code::BAD_INPUT, Kind::UnknownMachine)
                }
                C::NoSuchVersion { current, .. } => {
                    named(&mut b, "at", "version-exists", None);
                    b.current_version = Some(*current);
                    (code::BAD_INPUT, Kind::NoSuchVersion)
                }
                C::NoSuchStream { stream } => {
                    named(&mut b, "stream", "stream-has-events", Some(stream.clone()));
                    (code::BAD_INPUT, Kind::NoSuchStream)
                }
                C::BadCommand { field, rule, .. } => {
                    named(&mut b, field, rule, None);
                    (code::BAD_INPUT, Kind::Input)
                }
                C::RecordedByCairn { verb, .. } => {
                    named(&mut b, "command", "recorded-by-cairn", None);
                    b.verb = Some(verb.to_string());
                    (code::BAD_INPUT, Kind::RecordedByCairn)
                }
                C::Stored(_) => (code::INTERNAL, Kind::StoredData),
                C::DecidedBefore { .. } => (code::CONFLICT, Kind::DecidedBefore),
                C::Journal(j) => match j {
                    J::Conflict {
                        expected, actual, ..
                    } => {
                        b.expected_version = Some(*expected);
                        b.actual_version = Some(*actual);
                        (code::CONFLICT, Kind::Conflict)
                    }
                    J::Busy { .. } => (code::CONFLICT, Kind::Busy),
                    J::IdempotencyMismatch { key, .. } => {
                        named(&mut b, "idempotency_key", "same-request", Some(key.clone()));
                        (code::BAD_INPUT, Kind::IdempotencyMismatch)
                    }
                    J::MachineMismatch { .. } => (code::BAD_INPUT, Kind::MachineMismatch),
                    J::InvalidAppend(_) => (code::BAD_INPUT, Kind::InvalidAppend),
                    J::NewerSchema { .. } => (code::BAD_INPUT, Kind::NewerSchema),
                    J::NotAJournal { path, .. } => {
                        let at = path.display().to_string();
                        named(&mut b, "db", "is-a-journal", Some(at));
                        (code::BAD_INPUT, Kind::NotAJournal)
                    }
                    J::Missing { path } => {
                        let at = path.display().to_string();
                        named(&mut b, "db", "journal-exists", Some(at));
                        (code::BAD_INPUT, Kind::NoJournal)
                    }
                    J::Corrupt { .. } => (code::INTEGRITY, Kind::Corrupt),
                    J::Damaged { .. } => (code::INTEGRITY, Kind::Damaged),
                    J::LoosePermissions { mode, .. } => {
                        b.mode = Some(format!("{mode:o}"));
                        (code::INTERNAL, Kind::LoosePermissions)
                    }
                    J::SigningKey { path, .. } => {
                        // The key `--signing-key` (or its default) names is not
                        // one cairn can sign with: the setting is at fault.
                        let at = path.display().to_string();
                        named(&mut b, "signing_key", "usable-key", Some(at));
                        (code::BAD_INPUT, Kind::SigningKey)
                    }
                    J::Io { .. } => (code::INTERNAL, Kind::Io),
                    J::DiskFull => (code::INTERNAL, Kind::DiskFull),
                    J::ReadOnly => (code::INTERNAL, Kind::ReadOnly),
                    J::StorageIo { .. } => (code::INTERNAL, Kind::StorageIo),
                    J::Sqlite(_) => (code::INTERNAL, Kind::Sqlite),
                    J::Connect { .. } => (code::INTERNAL, Kind::Connect),
                    J::Postgres(_) => (code::INTERNAL, Kind::Postgres),
                    J::NotEmpty { path } => {
                        let at = path.display().to_string();
                        named(&mut b, "to", "empty-target", Some(at));
                        (code::BAD_INPUT, Kind::NotEmpty)
                    }
                },
            },
        };
        b.kind = kind;
        (code, b)
    }

    /// The human message.
    pub fn message(&self) -> String {
        match self {
            Failure::Integrity(m) | Failure::Unsound(m) | Failure::InFlight(m) => m.clone(),
            Failure::Usage(u) => u.message.clone(),
            Failure::Input(violations) => match violations.as_slice() {
                [] => "invalid input".into(),
                [one] => one.message.clone(),
                // Each further violation with its rule: `pr (required)` after an
                // unknown field does not read as another unknown one.
                [first, rest @ ..] => format!(
                    "{} (and {} more: {})",
                    first.message,
                    rest.len(),
                    rest.iter()
                        .map(|v| format!("{} ({})", v.field, v.rule))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            Failure::NoSuchStream { stream, .. } => format!("no events in stream `{stream}`"),
            Failure::Contended { rejection, .. } => rejection.to_string(),
            Failure::Suggested(inner, suggestions) => format!(
                "{}; did you mean {}?",
                inner.message(),
                suggestions
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            Failure::Cairn(e) => e.to_string(),
            Failure::Flag { inner, .. } | Failure::WithClaim { inner, .. } => inner.message(),
        }
    }

    /// The JSON error object: `{"error": {"kind", "message", …}}`.
    pub fn to_json(&self) -> ErrorDocument {
        let (_, mut error) = self.classify();
        error.message = self.message();
        ErrorDocument { error }
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
                    rejection: Box::new(cairn::Rejection::single(
                        "claim",
                        "acquire",
                        "held",
                        cairn::Violation::new("claim-free", None, "x"),
                    )),
                    claim: serde_json::Value::Null,
                }),
                code::CONFLICT,
            ),
        ];
        for (ending, want) in cases {
            assert_eq!(exit_code(&ending), want, "{ending:?}");
        }
    }
}
