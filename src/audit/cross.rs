//! Findings across lifecycles: what a decision relied on of another stream, held
//! against what that stream states now.
//!
//! Every read a decision recorded is re-read at its recorded version by the
//! per-stream audit (a forged read is a failure). The same read is also held
//! against the read stream *today*: a fact withdrawn since — a work node that no
//! longer vouches for the commit a ship merged on its word — is reported as a
//! notice on the transition that relied on it (`reliance-withdrawn`). The rule of
//! what counts as withdrawn is the machines' (`cairn_machines::reads::withdrawn`).
//! Checked transition by transition as the audit meets them (memory: one folded
//! read per stream read, not a stream's records).

use std::collections::HashMap;

use cairn_machines::reads::withdrawn;
use cairn_machines::Read;

use crate::{Engine, StreamId};

/// Each stream a decision read, folded to its head once (`None`: it cannot be
/// read, which the read check reports).
pub(super) type Now = HashMap<String, Option<Read>>;

impl Engine {
    /// The `reliance-withdrawn` detail for one recorded read of a `command`, when
    /// the read stream has withdrawn since the fact the decision relied on.
    pub(super) fn withdrawn(&self, command: &str, read: &Read, now: &mut Now) -> Option<String> {
        let then = read.fact.as_ref().filter(|_| read.version > 0)?;
        let current = now
            .entry(read.stream.clone())
            .or_insert_with(|| {
                StreamId::parse(&read.stream)
                    .and_then(|id| self.read_stream_at(&id, None))
                    .ok()
            })
            .as_ref()?;
        let why = withdrawn(then, current.fact.as_ref())?;
        Some(format!(
            "`{command}` relied on `{}` at version {} (`{}`); at version {} (`{}`) {why}",
            read.stream, read.version, read.state, current.version, current.state
        ))
    }
}
