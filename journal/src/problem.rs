//! What `verify` reports: the kinds of problem it finds and where each is.

use serde::Serialize;

/// What is wrong at one place in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// A sequence number is missing: an event was deleted (or rows renumbered).
    SeqGap,
    /// The stored hash does not follow from the predecessor's hash and this row's
    /// content: the row, its transition record or its hash was changed, or rows were moved.
    HashMismatch,
    /// A stream's versions do not run 1, 2, 3, … in sequence order.
    VersionGap,
    /// An event of a stream names another machine than the stream's first event.
    MachineChanged,
    /// An event points at a transition record that does not exist.
    MissingTransition,
    /// An event disagrees with its transition record (stream, machine, version range or time).
    TransitionMismatch,
    /// A transition record has no events, or fewer than its version range says.
    TransitionIncomplete,
    /// A row cannot be read as the schema says.
    Unreadable,
    /// The head an auditor kept from an earlier verify is gone or changed: the tail
    /// was truncated or rewritten.
    HeadMissing,
    /// A transition's signature does not verify under its recorded key, names
    /// another head than the transition's last event, or names no recorded key;
    /// or a signature row belongs to no transition.
    BadSignature,
    /// A transition is unsigned although an earlier one is signed (a signed journal
    /// never goes back to unsigned), or unsigned while a trusted key is required.
    Unsigned,
    /// A transition (or an anchor) is signed by another key than the trusted one.
    UntrustedKey,
    /// An anchor's signature does not verify: it was not made by the key it names.
    AnchorForged,
    /// The storage itself is damaged: SQLite found a truncated or overwritten
    /// page (the walk stopped there), an index that disagrees with its table,
    /// or the file's tables and indexes are not the ones cairn makes (`schema:`).
    Damaged,
}

/// One problem found by [`Journal::verify`](crate::Journal::verify).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    pub kind: ProblemKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition_id: Option<i64>,
    pub detail: String,
}
