//! The one error type of the facade.

use cairn_machines::Rejection;

/// What can go wrong executing, reading or auditing a lifecycle.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The journal failed or refused (conflict, busy, idempotency, schema, IO…).
    ///
    /// ### Handling
    /// See [`cairn_journal::Error`]: each variant documents its own handling.
    #[error(transparent)]
    Journal(#[from] cairn_journal::Error),
    /// The machine's guards refused the command.
    ///
    /// ### Handling
    /// Nothing was written. The rejection names every failed predicate (exit 2).
    #[error("{0}")]
    Rejected(Rejection),
    /// A stream id is malformed, or names another machine than the one asked for.
    ///
    /// ### Handling
    /// Bad input (exit 2).
    #[error("stream id `{stream}`: {reason}")]
    InvalidStream {
        /// The stream id given.
        stream: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The command names its own stream ([`cairn_machines::Machine::stream_of`]:
    /// a park command's episode, a saga save's id) and it is not this one.
    ///
    /// ### Handling
    /// Bad input (exit 2): nothing was decided or written. Send the command to
    /// the stream it names.
    #[error("stream `{stream}`: the command is for `{named}`")]
    CommandStream {
        /// The stream given.
        stream: String,
        /// The stream the command names.
        named: String,
    },
    /// No machine of that name is registered.
    ///
    /// ### Handling
    /// Bad input (exit 2); `cairn machines` lists the registered ones.
    #[error("no machine named `{name}` is registered")]
    UnknownMachine {
        /// The name asked for.
        name: String,
    },
    /// `--at` names a version the stream has not reached.
    ///
    /// ### Handling
    /// Bad input (exit 2).
    #[error("stream `{stream}` has {current} events; version {requested} does not exist")]
    NoSuchVersion {
        /// The stream.
        stream: String,
        /// The version asked for.
        requested: u64,
        /// The stream's version.
        current: u64,
    },
    /// A claim command, or an act on a claimed stream, was decided at an
    /// instant before the claimed stream's last transition was decided:
    /// granting or renewing the lease then could show it live over an act that
    /// judged it otherwise, and an act landing after a later one would hide
    /// that one's instant from that check.
    ///
    /// ### Handling
    /// Nothing was written. Decide again at a fresh instant (the CLI's claim
    /// verbs do so once; every verb then answers exit 3): a clock behind the
    /// one that recorded the last act keeps answering this.
    #[error("stream `{stream}` was last acted on at {acted}, after this decision's instant {now}: decide again at a later instant")]
    DecidedBefore {
        /// The stream whose record is later: the claimed stream, or its lease.
        stream: String,
        /// When that record was decided (a grant's instant, for a tokened act
        /// presenting a grant made after it).
        acted: String,
        /// The instant this decision was made at.
        now: String,
    },
    /// The stream has no events.
    ///
    /// ### Handling
    /// Bad input (exit 2): `cairn journal log` lists the streams.
    #[error("stream `{stream}` has no events")]
    NoSuchStream {
        /// The stream asked for.
        stream: String,
    },
    /// A stored event or record cannot be read by this build (corruption,
    /// tampering, or a journal written by a newer machine).
    ///
    /// ### Handling
    /// Run `cairn journal verify` and `cairn journal audit` (exit 1).
    #[error("stored data cannot be read: {0}")]
    Stored(String),
    /// A command given as JSON is not a command of the machine.
    ///
    /// ### Handling
    /// Bad input (exit 2): nothing was decided or written. `field` is the JSON
    /// path (`$` for the document), `rule` what it broke (`required`,
    /// `unknown-field`, `unknown-variant`, `type`).
    #[error("{field}: {message} ({rule})")]
    BadCommand {
        /// The JSON path of the field at fault.
        field: String,
        /// The rule it broke.
        rule: &'static str,
        /// What serde said.
        message: String,
    },
    /// A command given as JSON carries what cairn observes itself: only the named
    /// verb records it ([`cairn_machines::Machine::recorded_by`]).
    ///
    /// ### Handling
    /// Bad input (exit 2): nothing was decided or written. Run the named verb,
    /// which makes the observation the command must carry.
    #[error("`{command}` of `{machine}` carries what cairn observes itself: only `cairn {verb}` records it")]
    RecordedByCairn {
        /// The machine.
        machine: &'static str,
        /// The command.
        command: &'static str,
        /// The verb that records it.
        verb: &'static str,
    },
}
