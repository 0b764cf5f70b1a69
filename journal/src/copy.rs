//! Copying a journal between locations (SQLite to PostgreSQL and back): every
//! row verbatim — events, transition records, signing keys, signatures, with
//! their ids, sequence numbers and hashes — into an empty journal, in one
//! transaction of the target, the chain verified on both sides.

use serde::Serialize;

use crate::store::WalkRow;
use crate::verify::{ChainHead, VerifyReport};
use crate::{Error, Journal};

/// Rows per page read from the source.
const PAGE: i64 = 4096;

/// What [`Journal::copy_into`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CopyReport {
    /// The source verified, the rows were copied, the target verified, and both
    /// have the same head and counts.
    pub ok: bool,
    /// False when the source failed verify: nothing was written.
    pub copied: bool,
    pub events: u64,
    pub transitions: u64,
    pub keys: u64,
    pub signatures: u64,
    /// The source's head before the copy.
    pub head: Option<ChainHead>,
    /// `verify` of the source, before anything is written.
    pub source: VerifyReport,
    /// `verify` of the target after the copy (absent when nothing was copied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<VerifyReport>,
}

impl CopyReport {
    /// Nothing copied: the report of a source that failed verify (or before the
    /// rows are copied).
    pub fn refused(source: VerifyReport) -> Self {
        CopyReport {
            ok: false,
            copied: false,
            events: 0,
            transitions: 0,
            keys: 0,
            signatures: 0,
            head: source.head.clone(),
            source,
            target: None,
        }
    }
}

impl Journal {
    /// Copies this journal verbatim into `target`, which must be empty
    /// ([`Error::NotEmpty`] otherwise). The source is verified first (a source
    /// that fails verify is not copied: `copied` is false), the rows are written
    /// in one transaction of the target, and the target is verified after: `ok`
    /// says both verify and agree on the head and every count.
    pub fn copy_into(&self, target: &mut Journal) -> Result<CopyReport, Error> {
        self.copy_verified(self.verify()?, target)
    }

    /// [`Journal::copy_into`] with the source's verify report in hand: a caller
    /// verifies first and opens (creates) the target only for a source that
    /// verified, so a refused copy leaves no target behind.
    pub fn copy_verified(
        &self,
        source: VerifyReport,
        target: &mut Journal,
    ) -> Result<CopyReport, Error> {
        let mut report = CopyReport::refused(source);
        if !report.source.ok {
            return Ok(report);
        }
        // The target's tables as cairn makes them, guards included, before a row
        // is written (helper-54: a target whose unique key was dropped took every
        // row, then failed its verify).
        let mut damage = target.integrity_problems(10)?;
        damage.extend(
            target
                .unguarded()?
                .into_iter()
                .map(|g| format!("unguarded: {g}")),
        );
        if !damage.is_empty() {
            return Err(Error::Damaged {
                detail: format!(
                    "the target's tables are not as cairn makes them, nothing was copied: {}",
                    damage.join("; ")
                ),
            });
        }
        let (mut events, mut transitions, mut keys, mut signatures) = (0u64, 0u64, 0u64, 0u64);
        let store = &mut target.store;
        self.store.snapshot(&mut |snap| {
            store.import(&mut |sink| {
                for k in snap.keys()? {
                    sink.key(&k)?;
                    keys += 1;
                }
                // A page ends at its bytes; the next asks twice what a cut page
                // held (back up to `PAGE` while pages come whole), so records
                // that keep pages short are not sized `PAGE` at a time.
                let (mut after, mut ask) = (i64::MIN, PAGE);
                loop {
                    let (page, more) = snap.transitions_after(after, ask)?;
                    for t in &page {
                        sink.transition(t)?;
                        after = t.id;
                    }
                    let held = page.len() as i64;
                    transitions += held as u64;
                    if !more || held == 0 {
                        break;
                    }
                    ask = crate::next_page(held, ask, PAGE);
                }
                let mut after = None;
                loop {
                    let page = snap.events_after(after, PAGE)?;
                    if let Some(detail) = page.damaged {
                        return Err(Error::Damaged { detail });
                    }
                    let n = page.rows.len() as i64;
                    let more = page.more;
                    for row in page.rows {
                        match row {
                            WalkRow::Event(e) => {
                                sink.event(&e)?;
                                after = Some(e.seq);
                            }
                            WalkRow::Unreadable { seq, reason, .. } => {
                                return Err(Error::Corrupt { seq, reason })
                            }
                        }
                    }
                    events += n as u64;
                    if !more {
                        break;
                    }
                }
                let mut after = i64::MIN;
                loop {
                    let page = snap.signatures_after(after, PAGE)?;
                    for s in &page {
                        sink.signature(s)?;
                        after = s.transition_id;
                    }
                    signatures += page.len() as u64;
                    if (page.len() as i64) < PAGE {
                        break;
                    }
                }
                Ok(())
            })
        })?;
        let verified = target.verify()?;
        report.copied = true;
        report.ok = verified.ok
            && verified.head == report.source.head
            && verified.events == report.source.events
            && verified.transitions == report.source.transitions
            && verified.signing == report.source.signing
            && events == report.source.events;
        (
            report.events,
            report.transitions,
            report.keys,
            report.signatures,
        ) = (events, transitions, keys, signatures);
        report.target = Some(verified);
        Ok(report)
    }
}
