//! The one error type of `cairn-machines`: values that failed to parse at the edge.

/// Why a value from outside could not become a trusted domain type.
///
/// ### Handling
/// Every variant is bad input: report it to the caller (the CLI answers exit 2)
/// and write nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A timestamp was not RFC3339 with an explicit offset.
    #[error("`{value}` is not an RFC3339 timestamp with an offset ({reason})")]
    Timestamp {
        /// The text given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// An id did not have the expected prefix followed by a canonical UUID.
    #[error("`{value}` is not `{prefix}` followed by a canonical lower-case UUID")]
    Id {
        /// The text given.
        value: String,
        /// The prefix expected.
        prefix: &'static str,
    },
    /// A recorded event could not be read back as this machine's event type.
    #[error(
        "event `{event_type}` v{schema_version} of machine `{machine}` cannot be read: {reason}"
    )]
    Upcast {
        /// The machine reading it.
        machine: &'static str,
        /// The recorded type name.
        event_type: String,
        /// The recorded schema version.
        schema_version: u32,
        /// Why it cannot be read.
        reason: String,
    },
}
