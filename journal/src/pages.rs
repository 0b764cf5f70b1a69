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
use std::sync::{Arc, Mutex, PoisonError};

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

/// A page ends early once the records it opened and its events' payloads reach
/// this many bytes: two or three pages are in flight, so what the pages hold
/// stays near this many bytes each plus one record (helper-48: pages of 4,096
/// decompressed 400 KB commands held 3.3 GB). The stores' fetches of event rows
/// and records end at their bytes too ([`crate::store::FETCH_BYTES`]), on both
/// backends.
const PAGE_BYTES: usize = 2 << 20;

/// Where reading stopped: the rows fetched but not yet handed out, and the
/// chain and record state at the last row handed out.
pub(crate) struct Reader {
    after: Option<i64>,
    /// Rows fetched from the store and not yet in a page (at most one fetch).
    fetched: std::vec::IntoIter<WalkRow>,
    /// The fetch's damage (after its last row), and whether it was full.
    fetched_damaged: Option<String>,
    fetched_full: bool,
    /// The record of the transition open at the last row handed out.
    open: Option<Record>,
    /// The stored hash of the last row handed out (the genesis hash before any).
    prev_hash: String,
    page: i64,
}

impl Reader {
    pub(crate) fn new(genesis: &str, page: i64) -> Self {
        Reader {
            after: None,
            fetched: Vec::new().into_iter(),
            fetched_damaged: None,
            fetched_full: true,
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
    /// The page ends at the store's page of rows or at [`PAGE_BYTES`], whichever
    /// comes first; rows fetched beyond it begin the next page.
    pub(crate) fn read(&mut self, snap: &mut dyn Snapshot) -> Result<Page, Error> {
        if self.fetched.len() == 0 && self.fetched_full && self.fetched_damaged.is_none() {
            let page = snap.events_after(self.after, self.page)?;
            self.fetched_full = page.more;
            self.fetched_damaged = page.damaged;
            if let Some(last) = page.rows.last() {
                self.after = Some(match last {
                    WalkRow::Event(e) => e.seq,
                    WalkRow::Unreadable { seq, .. } => *seq,
                });
            }
            self.fetched = page.rows.into_iter();
        }
        let prev_hash = self.prev_hash.clone();
        let mut rows = Vec::with_capacity(self.fetched.len());
        let mut bytes = 0usize;
        while bytes < PAGE_BYTES {
            let Some(row) = self.fetched.next() else {
                break;
            };
            let mut lookup = None;
            let mut covered_by = None;
            match &row {
                WalkRow::Event(e) => {
                    bytes += e.payload.len();
                    if self.open.as_ref().map(|r| r.id) != Some(e.transition_id) {
                        self.open = None;
                        lookup = Some(match snap.transition(e.transition_id) {
                            Ok(Some(record)) => {
                                bytes += record.command.len() + record.context.len();
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
                WalkRow::Unreadable { hash, .. } => {
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
        // The fetch's damage and fullness belong to the page that ends with its
        // last row; a page cut short by its bytes has more after it.
        let (damaged, full) = if self.fetched.len() == 0 {
            (self.fetched_damaged.take(), self.fetched_full)
        } else {
            (None, true)
        };
        Ok(Page {
            rows,
            damaged,
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
    let share = found.len().div_ceil(cores()).max(SIGNATURES_PER_THREAD);
    // The shares wait in a queue that every thread takes from, this one too:
    // a thread the system will not start leaves its share to the others.
    let queue = Mutex::new(found.chunks_mut(share).collect::<Vec<_>>());
    let take = || queue.lock().unwrap_or_else(PoisonError::into_inner).pop();
    std::thread::scope(|scope| {
        let helpers = queue.lock().map_or(0, |q| q.len().saturating_sub(1));
        for _ in 0..helpers {
            let started = std::thread::Builder::new().spawn_scoped(scope, || {
                while let Some(chunk) = take() {
                    check_signatures(chunk);
                }
            });
            if started.is_err() {
                break;
            }
        }
        check_hashes(std::mem::take(prev_hash), &mut hashed);
        while let Some(chunk) = take() {
            check_signatures(chunk);
        }
    });
}

/// Fewer signatures than this are checked on the thread that has them (a thread
/// costs more than the checks it would take over).
const SIGNATURES_PER_THREAD: usize = 64;

/// The threads a page's signatures are spread over: the cores this process may
/// use (read once: on Linux it reads the cgroup's quota), at most four.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
}

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
                **holds = event_hash(&prev, &stored_event_fields(e), d).as_str() == e.hash;
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
pub(crate) struct Checker {
    to: SyncSender<Page>,
    back: Receiver<Page>,
}

impl Checker {
    /// Starts the checker in `scope`; it ends when the walk drops it. `None`
    /// when the system will not start a thread (the walk then checks each page
    /// itself).
    pub(crate) fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>) -> Option<Self> {
        let (to, pages) = sync_channel::<Page>(1);
        let (done, back) = sync_channel::<Page>(1);
        std::thread::Builder::new()
            .spawn_scoped(scope, move || {
                for mut page in pages {
                    check_page(&mut page);
                    if done.send(page).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Checker { to, back })
    }

    pub(crate) fn send(&self, page: Page) -> Result<(), Error> {
        self.to.send(page).map_err(|_| checker_gone())
    }

    pub(crate) fn take(&self) -> Result<Page, Error> {
        self.back.recv().map_err(|_| checker_gone())
    }
}

fn checker_gone() -> Error {
    Error::InvalidAppend("internal: verify's checking thread stopped".into())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hash::GENESIS;
    use crate::{Append, Journal, NewEvent, Options, TransitionRecord};

    /// One transition of one small event whose command is `pad` bytes long.
    pub(crate) fn big(version: u64, pad: usize) -> Append {
        Append {
            stream: "ticket/big".into(),
            machine: "ticket".into(),
            expected_version: version,
            events: vec![NewEvent {
                event_type: "commented".into(),
                schema_version: 1,
                payload: "{\"n\":1}".into(),
            }],
            transition: TransitionRecord {
                command_name: "comment".into(),
                command: format!("{{\"pad\":\"{}\"}}", "x".repeat(pad)),
                context: "{}".into(),
                rules_version: 1,
            },
            idempotency: None,
            recorded_at: "2026-12-04T00:00:00Z".into(),
            reads: Vec::new(),
            scans: Vec::new(),
        }
    }

    /// 300 records of 100 KB come in one fetch of rows; the pages holding them
    /// are cut by bytes (helper-48: pages of 4,096 such records held gigabytes),
    /// and together still hand out every row once, in order.
    #[test]
    fn a_page_holds_its_bytes_and_at_most_one_record_more() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut j = Journal::open(&dir.path().join("j.db"), &Options::default()).expect("open");
        let batch: Vec<_> = (0..300).map(|v| big(v, 100 << 10)).collect();
        j.append_batch(&batch).expect("append");
        let mut pages: Vec<(usize, Vec<i64>)> = Vec::new();
        j.store
            .snapshot(&mut |snap| {
                let mut reader = Reader::new(GENESIS, 4096);
                loop {
                    let page = reader.read(snap)?;
                    let mut bytes = 0;
                    let mut seqs = Vec::new();
                    for r in &page.rows {
                        if let WalkRow::Event(e) = &r.row {
                            bytes += e.payload.len();
                            seqs.push(e.seq);
                        }
                        if let Some(Ok(Some(o))) = &r.lookup {
                            bytes += o.record.command.len() + o.record.context.len();
                        }
                    }
                    pages.push((bytes, seqs));
                    if !page.full {
                        return Ok(());
                    }
                }
            })
            .expect("walk");
        let record = (100 << 10) + 12;
        // 30 MB of records in pages of at most 2 MiB and one record.
        assert!(pages.len() >= 14, "{} pages", pages.len());
        assert!(pages.iter().all(|(b, _)| *b < (2 << 20) + record));
        let seqs: Vec<i64> = pages.into_iter().flat_map(|(_, s)| s).collect();
        assert_eq!(seqs, (1..=300).collect::<Vec<_>>());
    }
}
