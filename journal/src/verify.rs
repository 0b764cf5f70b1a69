//! `verify`: re-walks the hash chain, every stream's version sequence and every
//! transition record, streaming (memory grows with the number of streams, not events).
//! One walk over any backend's [`Snapshot`].

use std::collections::HashMap;

use serde::Serialize;

use crate::hash::GENESIS;
use crate::pages::{
    check_page as check_off_thread, Checker, FoundSignature, OpenedRecord, Page, Reader, Record,
};
pub use crate::problem::{Problem, ProblemKind};
use crate::signed::Signatures;
pub use crate::signed::{SigningReport, VerifyOptions};
use crate::store::{Snapshot, WalkRow};
use crate::{Error, Journal};

/// At most this many problems are listed; the count of the rest is still reported.
const MAX_LISTED: usize = 100;

/// The chain head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ChainHead {
    pub seq: i64,
    pub hash: String,
}

/// The result of [`Journal::verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct VerifyReport {
    pub ok: bool,
    pub events: u64,
    pub transitions: u64,
    pub streams: u64,
    /// The last event: keep it outside the journal to detect a truncated tail later.
    pub head: Option<ChainHead>,
    /// The first problems found, in sequence order (at most 100).
    pub problems: Vec<Problem>,
    /// How many problems were found in all.
    pub problem_count: u64,
    /// What this report can say about the tail: `anchored` when checked against a
    /// head kept outside the journal, else `unanchored` — a chain cannot prove that
    /// no events were removed from its end (a lost WAL, a truncated file).
    pub tail: &'static str,
    /// What the signatures say.
    pub signing: SigningReport,
    /// How the file was opened (`read-only`, `immutable`, `read-write`).
    pub access: crate::Access,
    /// The file's mode when group or others may read it (octal), else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loose_permissions: Option<String>,
    /// The append-only guards the database no longer enforces (`"UPDATE on
    /// events"`: a trigger dropped or disabled), else absent. Not a problem of the
    /// history itself — the chain and signatures say whether rows changed — but
    /// the database would no longer refuse the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unguarded: Vec<String>,
}

pub(crate) struct Collector {
    listed: Vec<Problem>,
    count: u64,
}

impl Collector {
    pub(crate) fn push(
        &mut self,
        kind: ProblemKind,
        seq: Option<i64>,
        stream: Option<&str>,
        transition_id: Option<i64>,
        detail: String,
    ) {
        self.count += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(Problem {
                kind,
                seq,
                stream: stream.map(str::to_owned),
                transition_id,
                detail,
            });
        }
    }
}

struct StreamCursor {
    machine: String,
    version: u64,
}

pub(crate) struct OpenTransition {
    pub(crate) record: Record,
    /// Its signature row as read when it opened (`None`: unsigned).
    pub(crate) signature: Option<FoundSignature>,
    seen: u64,
    pub(crate) last: Option<(i64, String)>,
}

/// Rows read per page of the walk: two or three pages are in flight (one being
/// checked, one being read, the rest of a fetch), so a page of 4,096 made a 1M
/// walk peak 17-22 MB above the open against 16 MB asked; 2,048 keeps it ~13 MB.
const PAGE: i64 = 2048;
/// The structural check's lines reported at most.
const INTEGRITY_LINES: u32 = 10;

/// What the walk found, before the report is assembled.
struct Walked {
    problems: Collector,
    events: u64,
    transitions: u64,
    streams: u64,
    head: Option<ChainHead>,
    signatures: Signatures,
}

impl Journal {
    /// Walks the whole journal and reports every inconsistency it finds.
    pub fn verify(&self) -> Result<VerifyReport, Error> {
        self.verify_with(&VerifyOptions::default())
    }

    /// [`Journal::verify`], and also requires that the journal still contains
    /// `expected` (a head reported earlier): the one check a self-contained chain
    /// cannot make on its own tail.
    pub fn verify_against(&self, expected: Option<&ChainHead>) -> Result<VerifyReport, Error> {
        self.verify_with(&VerifyOptions {
            expect: expected.cloned(),
            ..VerifyOptions::default()
        })
    }

    /// [`Journal::verify`] with a kept head, a signed anchor and a trusted key.
    pub fn verify_with(&self, options: &VerifyOptions) -> Result<VerifyReport, Error> {
        self.verify_observed(options, &mut |_| {})
    }

    /// [`Journal::verify_with`], telling `progress` how many events it has walked
    /// so far after each page (a caller's progress bar; the head's `seq` is the
    /// total).
    pub fn verify_observed(
        &self,
        options: &VerifyOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<VerifyReport, Error> {
        let mut walked = None;
        self.store.snapshot(&mut |snap| {
            // The guards as the walked rows had them (helper-86).
            walked = Some((walk(snap, options, progress)?, snap.unguarded()));
            Ok(())
        })?;
        let (w, unguarded) =
            walked.ok_or_else(|| Error::InvalidAppend("internal: no walk".into()))?;
        // After the snapshot only where it could not be read on (PostgreSQL ends
        // it at a row it could not read; the report names that damage).
        let unguarded = match unguarded {
            Ok(u) => u,
            Err(_) => self.unguarded()?,
        };
        Ok(self.finish(w, options, unguarded))
    }

    fn finish(&self, w: Walked, options: &VerifyOptions, unguarded: Vec<String>) -> VerifyReport {
        let mut problems = w.problems;
        problems.listed.sort_by_key(|p| (p.seq.is_none(), p.seq));
        VerifyReport {
            ok: problems.count == 0,
            events: w.events,
            transitions: w.transitions,
            streams: w.streams,
            head: w.head,
            problems: problems.listed,
            problem_count: problems.count,
            tail: if options.expect.is_some() || options.anchor.is_some() {
                "anchored"
            } else {
                "unanchored"
            },
            signing: w.signatures.report(),
            access: self.access(),
            loose_permissions: self.loose_permissions().map(|m| format!("{m:o}")),
            unguarded,
        }
    }
}

/// The walk: every event in `seq` order, page by page, each transition record
/// fetched as its first event is read and its signature checked as it closes;
/// the hashes are checked a page at a time (`pages.rs`).
fn walk(
    snap: &mut dyn Snapshot,
    options: &VerifyOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Walked, Error> {
    let mut signatures = Signatures {
        trusted: options.trusted_key.clone(),
        signed: 0,
        unsigned: 0,
        any_signed: false,
        keys: Vec::new(),
    };
    let mut problems = Collector {
        listed: Vec::new(),
        count: 0,
    };
    let mut streams: HashMap<String, StreamCursor> = HashMap::new();
    let mut prev_seq = 0i64;
    let mut events = 0u64;
    let mut head = None;
    let mut open: Option<OpenTransition> = None;
    let mut opened = Opened {
        count: 0,
        last: 0,
        in_order: true,
    };
    let mut c = Cursors {
        problems: &mut problems,
        streams: &mut streams,
        prev_seq: &mut prev_seq,
        head: &mut head,
        open: &mut open,
        opened: &mut opened,
        signatures: &mut signatures,
        events: &mut events,
    };

    // A journal of more than one page is checked on other threads, a page behind
    // the reading, and its structure beside, in this snapshot where the store can;
    // a smaller one (or where no thread can be started) on this thread.
    let mut reader = Reader::new(GENESIS, PAGE);
    let mut page = reader.read(snap)?;
    let threaded = page.full && page.damaged.is_none();
    threaded.then(|| snap.start_integrity(INTEGRITY_LINES));
    let damaged = std::thread::scope(|scope| -> Result<bool, Error> {
        let checker = if threaded {
            Checker::start(scope)
        } else {
            None
        };
        loop {
            let last = !page.full || page.damaged.is_some();
            let checked = match &checker {
                Some(checker) => {
                    checker.send(page)?;
                    let next = if last { None } else { Some(reader.read(snap)?) };
                    (checker.take()?, next)
                }
                None => {
                    check_off_thread(&mut page);
                    let next = if last { None } else { Some(reader.read(snap)?) };
                    (page, next)
                }
            };
            if check_page(checked.0, &mut c, progress) {
                return Ok(true);
            }
            match checked.1 {
                Some(p) => page = p,
                None => return Ok(false),
            }
        }
    })?;
    if damaged {
        return Ok(Walked {
            problems,
            events,
            transitions: 0,
            streams: streams.len() as u64,
            head,
            signatures,
        });
    }
    if let Some(t) = open.take() {
        close_transition(&t, &mut problems);
        signatures.check(&t, &mut problems);
    }
    for id in snap.orphan_signatures()? {
        problems.push(
            ProblemKind::BadSignature,
            None,
            None,
            Some(id),
            format!("a signature names transition {id}, which does not exist"),
        );
    }
    // The rows were walked by `seq`; readers find a stream's events through its
    // indexes. The structural check makes sure both tell the same history.
    let structural = snap.integrity_problems(INTEGRITY_LINES)?;
    let transitions = snap.transition_total()?;
    // Distinct records, each with events, as many as there are records: none
    // can be without events, and the search for one (a pass over every event)
    // is skipped. The count is read from an index, so only when the structural
    // check found every index agreeing with its table (helper-47: an index
    // missing a record's entry made the count short).
    if !(structural.is_empty() && opened.in_order && opened.count == transitions.max(0) as u64) {
        for (id, stream) in snap.orphan_transitions()? {
            problems.push(
                ProblemKind::TransitionIncomplete,
                None,
                Some(&stream),
                Some(id),
                format!("transition record {id} has no events"),
            );
        }
    }
    for line in structural {
        problems.push(ProblemKind::Damaged, None, None, None, line);
    }
    check_kept_heads(snap, options, &mut problems)?;
    Ok(Walked {
        problems,
        events,
        transitions: transitions.max(0) as u64,
        streams: streams.len() as u64,
        head,
        signatures,
    })
}

/// The walk's state between events.
struct Cursors<'a> {
    problems: &'a mut Collector,
    streams: &'a mut HashMap<String, StreamCursor>,
    prev_seq: &'a mut i64,
    head: &'a mut Option<ChainHead>,
    open: &'a mut Option<OpenTransition>,
    opened: &'a mut Opened,
    signatures: &'a mut Signatures,
    events: &'a mut u64,
}

/// Checks one read and hashed page in `seq` order; `true` when the file is
/// damaged after it (nothing further can be read in order).
fn check_page(page: Page, c: &mut Cursors<'_>, progress: &mut dyn FnMut(u64)) -> bool {
    for row in page.rows {
        *c.events += 1;
        match row.row {
            WalkRow::Event(e) => check_event(e, row.lookup, row.hash_holds, c),
            WalkRow::Unreadable { seq, reason, .. } => {
                c.problems
                    .push(ProblemKind::Unreadable, Some(seq), None, None, reason);
                *c.prev_seq = seq;
            }
        }
    }
    progress(*c.events);
    if let Some(detail) = page.damaged {
        let prev_seq = *c.prev_seq;
        c.problems.push(
            ProblemKind::Damaged,
            Some(prev_seq + 1),
            None,
            None,
            format!("the file is damaged after event {prev_seq}: {detail}"),
        );
        return true;
    }
    false
}

/// The transition records the walk opened: how many, and whether their ids
/// only ever rose (then each was opened once).
struct Opened {
    count: u64,
    last: i64,
    in_order: bool,
}

fn check_event(
    e: crate::StoredEvent,
    lookup: Option<Result<Option<OpenedRecord>, String>>,
    hash_holds: bool,
    c: &mut Cursors<'_>,
) {
    let problems = &mut *c.problems;
    if e.seq != *c.prev_seq + 1 {
        problems.push(
            ProblemKind::SeqGap,
            Some(e.seq),
            Some(&e.stream),
            None,
            format!(
                "expected sequence number {}, found {}: events are missing before it",
                *c.prev_seq + 1,
                e.seq
            ),
        );
    }
    *c.prev_seq = e.seq;

    // The transition record this event belongs to (events of one transition are contiguous).
    // The page's reader looked the record up exactly when this event names
    // another transition than the open one.
    if let Some(lookup) = lookup {
        if let Some(t) = c.open.take() {
            close_transition(&t, problems);
            c.signatures.check(&t, problems);
        }
        match lookup {
            Ok(Some(OpenedRecord { record, signature })) => {
                c.opened.count += 1;
                c.opened.in_order &= record.id > c.opened.last;
                c.opened.last = record.id;
                *c.open = Some(OpenTransition {
                    record,
                    signature,
                    seen: 0,
                    last: None,
                });
            }
            Ok(None) => problems.push(
                ProblemKind::MissingTransition,
                Some(e.seq),
                Some(&e.stream),
                Some(e.transition_id),
                format!("transition record {} does not exist", e.transition_id),
            ),
            Err(err) => problems.push(
                ProblemKind::Unreadable,
                Some(e.seq),
                Some(&e.stream),
                Some(e.transition_id),
                format!("transition record {}: {err}", e.transition_id),
            ),
        }
    }
    match c.open.as_mut() {
        Some(t) if t.record.id == e.transition_id => {
            t.seen += 1;
            let r = &t.record;
            // One time stamps a transition and its events (helper-82: a forged
            // source whose events' times differed from their record's passed).
            if r.stream != e.stream
                || r.machine != e.machine
                || e.version < r.first_version
                || e.version > r.last_version
                || r.recorded_at != e.recorded_at
            {
                problems.push(
                    ProblemKind::TransitionMismatch,
                    Some(e.seq),
                    Some(&e.stream),
                    Some(r.id),
                    format!(
                        "event {}@{} of `{}` at {} is outside transition {} ({}@{}..={} of `{}` at {})",
                        e.stream,
                        e.version,
                        e.machine,
                        e.recorded_at,
                        r.id,
                        r.stream,
                        r.first_version,
                        r.last_version,
                        r.machine,
                        r.recorded_at
                    ),
                );
            }
        }
        _ => {}
    }

    if !hash_holds {
        problems.push(
            ProblemKind::HashMismatch,
            Some(e.seq),
            Some(&e.stream),
            Some(e.transition_id),
            "the stored hash does not follow from the previous hash and this event's content (or its transition record)".into(),
        );
    }
    if let Some(t) = c.open.as_mut().filter(|t| t.record.id == e.transition_id) {
        t.last = Some((e.seq, e.hash.clone()));
    }

    // Looked up before inserting: the key is copied once per stream, not once
    // per event.
    if !c.streams.contains_key(&e.stream) {
        c.streams.insert(
            e.stream.clone(),
            StreamCursor {
                machine: e.machine.clone(),
                version: 0,
            },
        );
    }
    let Some(cursor) = c.streams.get_mut(&e.stream) else {
        unreachable!("inserted just above")
    };
    if e.version != cursor.version + 1 {
        problems.push(
            ProblemKind::VersionGap,
            Some(e.seq),
            Some(&e.stream),
            Some(e.transition_id),
            format!(
                "expected version {}, found {}",
                cursor.version + 1,
                e.version
            ),
        );
    }
    if e.machine != cursor.machine {
        problems.push(
            ProblemKind::MachineChanged,
            Some(e.seq),
            Some(&e.stream),
            Some(e.transition_id),
            format!(
                "stream belongs to `{}`, event says `{}`",
                cursor.machine, e.machine
            ),
        );
    }
    cursor.version = e.version;
    *c.head = Some(ChainHead {
        seq: e.seq,
        hash: e.hash,
    });
}

/// A kept head and a signed anchor: each must still be in the journal.
fn check_kept_heads(
    snap: &mut dyn Snapshot,
    options: &VerifyOptions,
    problems: &mut Collector,
) -> Result<(), Error> {
    if let Some(anchor) = &options.anchor {
        if !anchor.signature_holds() {
            problems.push(
                ProblemKind::AnchorForged,
                Some(anchor.seq),
                None,
                None,
                format!(
                    "the anchor's signature does not verify under the key it names ({})",
                    anchor.public_key
                ),
            );
        } else if options
            .trusted_key
            .as_ref()
            .is_some_and(|k| k != &anchor.public_key)
        {
            problems.push(
                ProblemKind::UntrustedKey,
                Some(anchor.seq),
                None,
                None,
                format!(
                    "the anchor is signed by {}, not the trusted key",
                    anchor.public_key
                ),
            );
        }
    }
    let anchor_head = options.anchor.as_ref().map(|a| ChainHead {
        seq: a.seq,
        hash: a.hash.clone(),
    });
    for want in options.expect.iter().chain(anchor_head.as_ref()) {
        let stored = snap.hash_at(want.seq)?;
        if stored.as_deref() != Some(want.hash.as_str()) {
            problems.push(
                ProblemKind::HeadMissing,
                Some(want.seq),
                None,
                None,
                match stored {
                    None => format!(
                        "the expected head (seq {}) is gone: the tail was truncated",
                        want.seq
                    ),
                    Some(_) => format!(
                        "event {} no longer has the expected hash: the chain was rewritten",
                        want.seq
                    ),
                },
            );
        }
    }
    Ok(())
}

fn close_transition(t: &OpenTransition, problems: &mut Collector) {
    let want = t.record.last_version.saturating_sub(t.record.first_version) + 1;
    if t.seen != want {
        problems.push(
            ProblemKind::TransitionIncomplete,
            None,
            Some(&t.record.stream),
            Some(t.record.id),
            format!(
                "transition record {} spans versions {}..={} but {} of its events are present",
                t.record.id, t.record.first_version, t.record.last_version, t.seen
            ),
        );
    }
}
