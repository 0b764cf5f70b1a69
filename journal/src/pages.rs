//! The walk's pages for `verify`: each page of events is read with the transition
//! records its events open and those records' signatures, then its hashes and
//! signatures are checked on other threads while the walk's own thread reads the
//! next page (the store's connection never leaves the walk's thread; the checkers
//! get owned rows and nothing else). Signatures, the costliest check (an Ed25519
//! verification each), are spread over every core.
//!
//! An event's hash is checked against the *stored* hash of the row before it, so
//! every event's check stands alone and a page can be checked apart from the rest;
//! the walk then reports each page's findings in `seq` order, as one thread would.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use crate::hash::{event_hash, stored_event_fields, stored_transition_digest};
use crate::read::StoredTransition;
use crate::sign::HeadVerifier;
use crate::store::{SignatureRow, Snapshot, WalkRow};
use crate::Error;

/// A transition record as the walk shares it between its threads.
pub(crate) type Record = Arc<StoredTransition>;

/// A transition record the walk opens, with its signature row.
pub(crate) struct OpenedRecord {
    pub(crate) record: Record,
    /// `None`: the transition is unsigned.
    pub(crate) signature: Option<FoundSignature>,
}

/// A signature row, the key it names (`None`: no recorded key), and whether it
/// verifies under that key (set by [`check_page`]; `false` until then).
pub(crate) struct FoundSignature {
    pub(crate) row: SignatureRow,
    pub(crate) key: Option<String>,
    pub(crate) holds: bool,
}

/// One row of a page, with what the walk learned about it while reading.
pub(crate) struct PageRow {
    pub(crate) row: WalkRow,
    /// The record lookup this event made: it did not belong to the transition
    /// open before it. `None` when it made none.
    pub(crate) lookup: Option<Result<Option<OpenedRecord>, String>>,
    /// The open record this event's hash covers (the record whose id it names).
    covered_by: Option<Record>,
    /// Whether the stored hash follows from the row before and this event (set
    /// by [`check_page`]; `true` until then and for unreadable rows).
    pub(crate) hash_holds: bool,
}

/// One page of the walk, read and (once [`check_page`] ran) checked.
pub(crate) struct Page {
    pub(crate) rows: Vec<PageRow>,
    pub(crate) damaged: Option<String>,
    /// As many rows as were asked for: there may be more.
    pub(crate) full: bool,
    /// The stored hash of the row before this page's first.
    prev_hash: String,
}

/// Where reading stopped: the next page starts after it.
pub(crate) struct Reader {
    after: Option<i64>,
    /// The record of the transition open at the end of the last page read.
    open: Option<Record>,
    /// The stored hash of the last row read (the genesis hash before any).
    prev_hash: String,
    page: i64,
}

impl Reader {
    pub(crate) fn new(genesis: &str, page: i64) -> Self {
        Reader {
            after: None,
            open: None,
            prev_hash: genesis.to_owned(),
            page,
        }
    }

    /// Reads the next page, the records its events open and their signatures,
    /// looking a record up exactly when the one-thread walk would: when an event
    /// names another id than the record open before it (after a failed lookup
    /// none is open, so the next event of that id looks again). Each opened
    /// record's signature is read as it opens (the walk checks it as it closes).
    pub(crate) fn read(&mut self, snap: &mut dyn Snapshot) -> Result<Page, Error> {
        let page = snap.events_after(self.after, self.page)?;
        let full = page.rows.len() as i64 == self.page;
        let prev_hash = self.prev_hash.clone();
        let mut rows = Vec::with_capacity(page.rows.len());
        for row in page.rows {
            let mut lookup = None;
            let mut covered_by = None;
            match &row {
                WalkRow::Event(e) => {
                    self.after = Some(e.seq);
                    if self.open.as_ref().map(|r| r.id) != Some(e.transition_id) {
                        self.open = None;
                        lookup = Some(match snap.transition(e.transition_id) {
                            Ok(Some(record)) => {
                                let signature =
                                    snap.signature(record.id)?.map(|(row, key)| FoundSignature {
                                        row,
                                        key,
                                        holds: false,
                                    });
                                let record = Arc::new(record);
                                self.open = Some(Arc::clone(&record));
                                Ok(Some(OpenedRecord { record, signature }))
                            }
                            Ok(None) => Ok(None),
                            Err(reason) => Err(reason),
                        });
                    }
                    covered_by = self
                        .open
                        .as_ref()
                        .filter(|r| r.id == e.transition_id)
                        .map(Arc::clone);
                    self.prev_hash.clone_from(&e.hash);
                }
                WalkRow::Unreadable { seq, hash, .. } => {
                    self.after = Some(*seq);
                    // Its own hash cannot be checked; the chain goes on from its
                    // stored hash when that is readable.
                    if let Some(h) = hash {
                        self.prev_hash.clone_from(h);
                    }
                }
            }
            rows.push(PageRow {
                row,
                lookup,
                covered_by,
                hash_holds: true,
            });
        }
        Ok(Page {
            rows,
            damaged: page.damaged,
            full,
            prev_hash,
        })
    }
}

/// Checks the page: every signature (spread over the cores, beside the hashing)
/// and every event's stored hash, which must follow from the stored hash of the
/// row before, the event's columns and its record's digest (none when no record
/// covers it; each record's digest is computed once).
pub(crate) fn check_page(page: &mut Page) {
    let Page {
        rows, prev_hash, ..
    } = page;
    let mut found: Vec<&mut FoundSignature> = Vec::new();
    let mut hashed: Vec<(&WalkRow, Option<&Record>, &mut bool)> = Vec::with_capacity(rows.len());
    for r in rows.iter_mut() {
        let PageRow {
            row,
            lookup,
            covered_by,
            hash_holds,
        } = r;
        if let Some(Ok(Some(OpenedRecord {
            signature: Some(s), ..
        }))) = lookup
        {
            if s.key.is_some() {
                found.push(s);
            }
        }
        hashed.push((row, covered_by.as_ref(), hash_holds));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let share = found.len().div_ceil(cores).max(SIGNATURES_PER_THREAD);
    std::thread::scope(|scope| {
        let mut chunks = found.chunks_mut(share);
        let here = chunks.next();
        for chunk in chunks {
            scope.spawn(move || check_signatures(chunk));
        }
        check_hashes(std::mem::take(prev_hash), &mut hashed);
        if let Some(chunk) = here {
            check_signatures(chunk);
        }
    });
}

/// Fewer signatures than this are checked on the thread that has them (a thread
/// costs more than the checks it would take over).
const SIGNATURES_PER_THREAD: usize = 64;

fn check_signatures(found: &mut [&mut FoundSignature]) {
    let mut keys = HeadVerifier::default();
    for s in found {
        if let Some(key) = &s.key {
            s.holds = keys.holds(key, s.row.head_seq, &s.row.head_hash, &s.row.signature);
        }
    }
}

fn check_hashes(mut prev: String, rows: &mut [(&WalkRow, Option<&Record>, &mut bool)]) {
    let mut digest: Option<(&Record, String)> = None;
    for (row, covered_by, holds) in rows {
        match row {
            WalkRow::Event(e) => {
                let d = match covered_by {
                    Some(record) => {
                        if !digest.as_ref().is_some_and(|(d, _)| Arc::ptr_eq(d, record)) {
                            digest = Some((record, stored_transition_digest(record)));
                        }
                        digest.as_ref().map_or("", |(_, d)| d.as_str())
                    }
                    None => "",
                };
                **holds = event_hash(&prev, &stored_event_fields(e), d) == e.hash;
                prev.clone_from(&e.hash);
            }
            WalkRow::Unreadable { hash, .. } => {
                if let Some(h) = hash {
                    prev.clone_from(h);
                }
            }
        }
    }
}

/// A second thread that checks the pages sent to it, in order.
pub(crate) struct Hasher {
    to: SyncSender<Page>,
    back: Receiver<Page>,
}

impl Hasher {
    /// Starts the hasher in `scope`; it ends when the walk drops it.
    pub(crate) fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>) -> Self {
        let (to, pages) = sync_channel::<Page>(1);
        let (done, back) = sync_channel::<Page>(1);
        scope.spawn(move || {
            for mut page in pages {
                check_page(&mut page);
                if done.send(page).is_err() {
                    break;
                }
            }
        });
        Hasher { to, back }
    }

    pub(crate) fn send(&self, page: Page) -> Result<(), Error> {
        self.to.send(page).map_err(|_| hasher_gone())
    }

    pub(crate) fn take(&self) -> Result<Page, Error> {
        self.back.recv().map_err(|_| hasher_gone())
    }
}

fn hasher_gone() -> Error {
    Error::InvalidAppend("internal: verify's hashing thread stopped".into())
}
