//! Reading the journal: streams, events after a sequence number, transitions
//! (the public row types, and `Journal`'s read methods over its store).

use serde::Serialize;

use crate::append::int;
use crate::{Error, Journal};

/// An event as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StoredEvent {
    pub seq: i64,
    pub stream: String,
    pub version: u64,
    pub machine: String,
    pub event_type: String,
    pub schema_version: u32,
    /// The payload JSON text, exactly as appended.
    pub payload: String,
    pub recorded_at: String,
    pub transition_id: i64,
    pub hash: String,
}

/// A transition record as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StoredTransition {
    pub id: i64,
    pub stream: String,
    pub machine: String,
    pub rules_version: u32,
    pub command_name: String,
    pub command: String,
    pub context: String,
    pub idempotency_key: Option<String>,
    pub fingerprint: Option<String>,
    pub first_version: u64,
    pub last_version: u64,
    pub recorded_at: String,
}

/// One event on the replay path, borrowed from its row.
#[derive(Debug, Clone, Copy)]
pub struct ReplayRow<'a> {
    pub seq: i64,
    pub version: u64,
    pub event_type: &'a str,
    pub schema_version: u32,
    /// The payload JSON text.
    pub payload: &'a str,
}

/// One stream's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamInfo {
    pub stream: String,
    pub machine: String,
    /// The stream's last version (its number of events).
    pub version: u64,
    /// The latest `recorded_at` of any of its events.
    pub last_recorded_at: String,
    /// The event type of its last version.
    pub last_event_type: String,
    /// When its last version was recorded.
    pub last_event_at: String,
}

impl Journal {
    /// The stream's current version (0 when it has no events).
    pub fn stream_version(&self, stream: &str) -> Result<u64, Error> {
        absent(&[stream], 0, || self.store.stream_version(stream))
    }

    /// The id of the last transition recorded on any stream of `machine` (0:
    /// none): a decision that read every stream of a machine requires it
    /// unchanged at its append ([`Append::scans`](crate::Append::scans)).
    pub fn machine_tip(&self, machine: &str) -> Result<i64, Error> {
        absent(&[machine], 0, || self.store.machine_tip(machine))
    }

    /// Every stream of `machine` (named `machine/…`), in name order: one index
    /// seek per stream, whatever the journal holds besides.
    pub fn machine_streams(&self, machine: &str) -> Result<Vec<String>, Error> {
        absent(&[machine], Vec::new(), || {
            self.store.machine_streams(machine)
        })
    }

    /// Every stream's name, in name order: one index seek per stream, never a
    /// pass over the events ([`Journal::streams`] reads every event for its
    /// summaries).
    pub fn stream_names(&self) -> Result<Vec<String>, Error> {
        self.store.stream_names()
    }

    /// The machine that owns a stream, if the stream exists.
    pub fn stream_machine(&self, stream: &str) -> Result<Option<String>, Error> {
        absent(&[stream], None, || self.store.stream_machine(stream))
    }

    /// A stream's events in version order, up to and including `up_to` when given.
    pub fn read_stream(&self, stream: &str, up_to: Option<u64>) -> Result<Vec<StoredEvent>, Error> {
        let limit = int(up_to.unwrap_or(i64::MAX as u64), "version")?;
        let mut out = Vec::new();
        self.scan_stream(stream, limit, &mut |e| {
            out.push(e);
            Ok(())
        })?;
        Ok(out)
    }

    /// Streams a stream's events in version order to `f`, up to version `up_to`.
    /// `f` may read the journal (a transition record, say) while it runs.
    pub fn scan_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(StoredEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        absent(&[stream], (), || self.store.scan_stream(stream, up_to, f))
    }

    /// The replay path: a stream's events in version order, up to version `up_to`,
    /// borrowed from their rows (no per-row allocation on SQLite). The versions
    /// must run 1, 2, 3, … without a gap: a row missing, renumbered or repeated
    /// (a file changed behind cairn's back) stops the replay with
    /// [`Error::Corrupt`] at the row out of line, where a fold would otherwise
    /// go on from the wrong state.
    pub fn replay_stream(
        &self,
        stream: &str,
        up_to: i64,
        f: &mut dyn FnMut(ReplayRow<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if stream.contains('\0') {
            return Ok(());
        }
        let mut last = 0u64;
        self.store.replay_stream(stream, up_to, &mut |r| {
            if Some(r.version) != last.checked_add(1) {
                return Err(Error::Corrupt {
                    seq: r.seq,
                    reason: format!(
                        "its version {} follows version {last} of `{stream}`: the stream's versions have a gap",
                        r.version
                    ),
                });
            }
            last = r.version;
            f(r)
        })
    }

    /// Events with `seq > after`, optionally of one stream, at most `limit`.
    pub fn read_after(
        &self,
        after: i64,
        stream: Option<&str>,
        limit: u64,
    ) -> Result<Vec<StoredEvent>, Error> {
        let limit = int(limit, "limit")?;
        absent(stream.as_slice(), Vec::new(), || {
            self.store.read_after(after, stream, limit)
        })
    }

    /// The transition that covers `version` of `stream`: `(id, first_version,
    /// last_version)`, `None` when no record covers it.
    pub fn transition_at(
        &self,
        stream: &str,
        version: u64,
    ) -> Result<Option<(i64, u64, u64)>, Error> {
        let v = int(version, "version")?;
        Ok(
            absent(&[stream], None, || self.store.transition_at(stream, v))?
                .filter(|(_, _, last)| *last >= v)
                .map(|(id, first, last)| (id, first.max(0) as u64, last.max(0) as u64)),
        )
    }

    /// One transition record by id, with the events it produced (in version
    /// order); `None` when no such record exists.
    pub fn transition_by_id(
        &self,
        id: i64,
    ) -> Result<Option<(StoredTransition, Vec<StoredEvent>)>, Error> {
        let Some(record) = self.store.transition(id)? else {
            return Ok(None);
        };
        let first = int(record.first_version, "version")?;
        let last = int(record.last_version, "version")?;
        let events = self.store.stream_range(&record.stream, first, last)?;
        Ok(Some((record, events)))
    }

    /// A stream's transition records in order.
    pub fn transitions(&self, stream: &str) -> Result<Vec<StoredTransition>, Error> {
        absent(&[stream], Vec::new(), || self.store.transitions(stream))
    }

    /// A page of a stream's transition records: up to `limit` of those whose
    /// first version is above `after`, in version order (a long stream read in
    /// bounded memory). A page may hold fewer (each store ends one at 2 MiB of
    /// decompressed commands and contexts); only an empty page ends the stream.
    /// Ask the next page's size of [`next_page`].
    pub fn transitions_from(
        &self,
        stream: &str,
        after: u64,
        limit: u64,
    ) -> Result<Vec<StoredTransition>, Error> {
        let (after, limit) = (int(after, "version")?, int(limit, "limit")?);
        absent(&[stream], Vec::new(), || {
            self.store.transitions_from(stream, after, limit)
        })
    }

    /// One transition record by id.
    pub fn transition(&self, id: i64) -> Result<Option<StoredTransition>, Error> {
        self.store.transition(id)
    }

    /// How many transition records a stream has.
    pub fn transition_count(&self, stream: &str) -> Result<u64, Error> {
        absent(&[stream], 0, || self.store.transition_count(stream))
    }

    /// The transition recorded under an idempotency key on a stream.
    pub fn transition_by_key(
        &self,
        stream: &str,
        key: &str,
    ) -> Result<Option<StoredTransition>, Error> {
        absent(&[stream, key], None, || {
            self.store.transition_by_key(stream, key)
        })
    }

    /// Every stream with its machine and version, by name.
    pub fn streams(&self) -> Result<Vec<StreamInfo>, Error> {
        self.store.streams()
    }

    /// The last event's sequence number and hash: the chain head an auditor can
    /// keep outside the journal to detect truncation later.
    pub fn head(&self) -> Result<Option<(i64, String)>, Error> {
        self.store.head()
    }
}

/// `read()`'s answer, or `none` when a name it is asked by holds a NUL: no such
/// name is in a journal (an append refuses one on both backends), and
/// PostgreSQL cannot even be asked by one (a NUL is not text to it: its refusal
/// read as a damaged journal, where SQLite answered none; helper-83).
fn absent<T>(names: &[&str], none: T, read: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    if names.iter().any(|n| n.contains('\0')) {
        Ok(none)
    } else {
        read()
    }
}

/// How many rows to ask for after a page that held `held` of the `asked`: a
/// page cut short at its bytes asks twice what it held (at least 4), a full one
/// twice as many as before, never more than `max`. Where a page of large values
/// keeps two rows, asking `max` again would size `max` rows to keep two more:
/// quadratic where sizing costs (helper-52: a retyped column, 440 rows in 112 s).
pub fn next_page(held: i64, asked: i64, max: i64) -> i64 {
    if held < asked {
        held.saturating_mul(2).clamp(4.min(max), max)
    } else {
        asked.saturating_mul(2).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::next_page;

    /// A cut page asks twice what it held (at least 4), a full one doubles, and
    /// no ask passes the maximum, however small.
    #[test]
    fn the_next_page_follows_what_the_last_held() {
        assert_eq!(next_page(2, 2048, 2048), 4);
        assert_eq!(next_page(1, 4, 2048), 4);
        assert_eq!(next_page(100, 2048, 2048), 200);
        assert_eq!(next_page(4, 4, 2048), 8);
        assert_eq!(next_page(2048, 2048, 2048), 2048);
        assert_eq!(next_page(1, 2, 2), 2);
        assert_eq!(next_page(0, 0, 0), 0);
        assert_eq!(next_page(i64::MAX - 1, i64::MAX, i64::MAX), i64::MAX);
    }
}
