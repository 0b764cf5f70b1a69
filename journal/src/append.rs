//! Appending transitions: optimistic concurrency, idempotency, the hash chain and
//! signatures — the one algorithm every backend runs inside its write transaction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use serde::Serialize;

use crate::hash::{event_hash, transition_digest, EventFields, Hex64, TransitionFields, GENESIS};
use crate::store::{AppendTx, NewTransitionRow, SignatureRow};
use crate::{Error, Journal, SigningKey};

/// One event to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    pub event_type: String,
    pub schema_version: u32,
    /// The payload as JSON text, stored and hashed byte for byte.
    pub payload: String,
}

/// What produced the events: recorded once per transition so an audit can
/// re-decide it. The command carries its evidence; the context carries the time,
/// the minted ids and the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionRecord {
    pub command_name: String,
    /// The command (with its evidence) as JSON text.
    pub command: String,
    /// The decision context as JSON text.
    pub context: String,
    /// The machine's rules version that decided it.
    pub rules_version: u32,
}

/// An idempotency key with the fingerprint of the request it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub fingerprint: String,
}

/// One transition to append to one stream.
#[derive(Debug, Clone)]
pub struct Append {
    pub stream: String,
    pub machine: String,
    /// The stream version the writer decided against (0 for a new stream).
    pub expected_version: u64,
    pub events: Vec<NewEvent>,
    pub transition: TransitionRecord,
    pub idempotency: Option<Idempotency>,
    /// RFC3339 time stamped on the transition and its events.
    pub recorded_at: String,
    /// Other streams the decision read, with the version each was read at: the
    /// append commits only if every one is still at that version (0: the stream
    /// must still not exist). A moved stream is a [`Error::Conflict`] naming it.
    pub reads: Vec<(String, u64)>,
    /// Machines every stream of which the decision read, with the last
    /// transition id among them then ([`Journal::machine_tip`](crate::Journal::machine_tip)):
    /// the append commits only if no stream of the machine has had a transition
    /// since (a new stream included). A moved machine is a [`Error::Conflict`]
    /// naming `machine/*`.
    pub scans: Vec<(String, i64)>,
}

/// Where an appended (or previously appended) transition landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    pub transition_id: i64,
    pub stream: String,
    /// The stream version of the transition's first event.
    pub first_version: u64,
    /// The stream version after the transition.
    pub last_version: u64,
    pub first_seq: i64,
    pub last_seq: i64,
}

/// The result of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    /// New events were written.
    Appended(Receipt),
    /// The idempotency key matched an earlier identical request; nothing was written.
    Duplicate(Receipt),
}

impl AppendOutcome {
    pub fn receipt(&self) -> &Receipt {
        match self {
            AppendOutcome::Appended(r) | AppendOutcome::Duplicate(r) => r,
        }
    }
}

pub(crate) fn int(n: u64, what: &str) -> Result<i64, Error> {
    i64::try_from(n).map_err(|_| Error::InvalidAppend(format!("{what} {n} is out of range")))
}

impl Journal {
    /// Appends one transition atomically.
    pub fn append(&mut self, append: &Append) -> Result<AppendOutcome, Error> {
        let mut out = self.append_batch(std::slice::from_ref(append))?;
        // append_batch returns exactly one outcome per input on success.
        out.pop()
            .ok_or_else(|| Error::InvalidAppend("internal: no outcome".into()))
    }

    /// Appends several transitions in one transaction: all of them or none.
    /// Later entries see the versions earlier entries wrote.
    pub fn append_batch(&mut self, appends: &[Append]) -> Result<Vec<AppendOutcome>, Error> {
        for a in appends {
            validate(a)?;
        }
        // A key named by path is loaded now, at the first append (a failure
        // appends nothing, unsigned or not).
        if let (None, Some(path)) = (&self.signing_key, &self.signing_key_at) {
            self.signing_key = Some(crate::SigningKey::load_or_create(path)?);
        }
        self.store.append_batch(appends, self.signing_key.as_ref())
    }
}

/// The append algorithm, inside a backend's serialised write transaction: the
/// chain head once, then per transition the idempotency lookup, the version
/// check, the transition row, its events chained one by one, and the signature of
/// its last event. The caller commits when this returns `Ok`.
pub(crate) fn append_all(
    tx: &mut dyn AppendTx,
    appends: &[Append],
    signer: Option<&SigningKey>,
) -> Result<Vec<AppendOutcome>, Error> {
    let mut head = match tx.head()? {
        Some((seq, hash)) => Head { seq, hash },
        None => Head {
            seq: 0,
            hash: GENESIS.to_owned(),
        },
    };
    let signer = match signer {
        Some(key) => Some((key, tx.key_id(&key.public_hex(), &crate::now_rfc3339())?)),
        None => None,
    };
    let mut out = Vec::with_capacity(appends.len());
    for a in appends {
        let outcome = append_one(tx, a, &mut head)?;
        if let (Some((key, key_id)), AppendOutcome::Appended(r)) = (&signer, &outcome) {
            tx.insert_signature(&SignatureRow {
                transition_id: r.transition_id,
                key_id: *key_id,
                head_seq: head.seq,
                head_hash: head.hash.clone(),
                signature: key.sign_head(head.seq, &head.hash),
            })
            .map_err(behind("its signature"))?;
        }
        out.push(outcome);
    }
    Ok(out)
}

struct Head {
    seq: i64,
    hash: String,
}

fn validate(a: &Append) -> Result<(), Error> {
    if a.stream.is_empty() || a.machine.is_empty() {
        return Err(Error::InvalidAppend(
            "stream and machine must be non-empty".into(),
        ));
    }
    if a.events.is_empty() {
        return Err(Error::InvalidAppend(
            "a transition appends at least one event".into(),
        ));
    }
    if let Some(i) = &a.idempotency {
        if i.key.is_empty() {
            return Err(Error::InvalidAppend(
                "an idempotency key must be non-empty".into(),
            ));
        }
    }
    // PostgreSQL's text holds no NUL byte, and a journal holds the same values
    // on either backend (a copy between them included): a NUL anywhere is
    // refused here, on both (helper-82: PostgreSQL's own refusal read as a
    // damaged journal).
    let t = &a.transition;
    let texts = [
        ("stream", a.stream.as_str()),
        ("machine", &a.machine),
        ("recorded_at", &a.recorded_at),
        ("command_name", &t.command_name),
        ("command", &t.command),
        ("context", &t.context),
    ]
    .into_iter()
    .chain(a.idempotency.iter().flat_map(|i| {
        [
            ("idempotency key", i.key.as_str()),
            ("fingerprint", &i.fingerprint),
        ]
    }))
    .chain(a.events.iter().flat_map(|e| {
        [
            ("event_type", e.event_type.as_str()),
            ("payload", &e.payload),
        ]
    }))
    .chain(a.reads.iter().map(|(s, _)| ("a stream read", s.as_str())))
    .chain(
        a.scans
            .iter()
            .map(|(m, _)| ("a machine scanned", m.as_str())),
    );
    for (field, text) in texts {
        if text.contains('\0') {
            return Err(Error::InvalidAppend(format!(
                "{field} holds a NUL byte, which a journal does not store (PostgreSQL's text cannot)"
            )));
        }
    }
    Ok(())
}

fn append_one(tx: &mut dyn AppendTx, a: &Append, head: &mut Head) -> Result<AppendOutcome, Error> {
    if let Some(idem) = &a.idempotency {
        if let Some((id, fingerprint, first, last)) = tx.idempotency(&a.stream, &idem.key)? {
            if fingerprint.as_deref() != Some(idem.fingerprint.as_str()) {
                return Err(Error::IdempotencyMismatch {
                    stream: a.stream.clone(),
                    key: idem.key.clone(),
                });
            }
            let (first_seq, last_seq) = tx.transition_seqs(&a.stream, first, last)?;
            return Ok(AppendOutcome::Duplicate(Receipt {
                transition_id: id,
                stream: a.stream.clone(),
                first_version: first as u64,
                last_version: last as u64,
                first_seq,
                last_seq,
            }));
        }
    }

    let current = tx.stream_tip(&a.stream)?;
    let actual = current.as_ref().map_or(0, |(v, _)| *v as u64);
    if let Some((_, owner)) = &current {
        if owner != &a.machine {
            return Err(Error::MachineMismatch {
                stream: a.stream.clone(),
                owner: owner.clone(),
                requested: a.machine.clone(),
            });
        }
    }
    if actual != a.expected_version {
        return Err(Error::Conflict {
            stream: a.stream.clone(),
            expected: a.expected_version,
            actual,
        });
    }
    for (stream, expected) in &a.reads {
        let actual = tx.stream_tip(stream)?.map_or(0, |(v, _)| v as u64);
        if actual != *expected {
            return Err(Error::Conflict {
                stream: stream.clone(),
                expected: *expected,
                actual,
            });
        }
    }

    for (machine, through) in &a.scans {
        let actual = tx.machine_tip(machine)?;
        if actual != *through {
            return Err(Error::Conflict {
                stream: format!("{machine}/*"),
                expected: (*through).max(0) as u64,
                actual: actual.max(0) as u64,
            });
        }
    }

    // A stream at the last version an i64 holds takes no more events (only a
    // file changed behind cairn's back gets there): refused, never wrapped.
    let past = || {
        Error::InvalidAppend(format!(
            "stream {} at version {} has no version left for {} more event(s): a version past {} is not stored (run `cairn journal verify`)",
            a.stream,
            a.expected_version,
            a.events.len(),
            i64::MAX
        ))
    };
    let first_version = int(a.expected_version, "version")?
        .checked_add(1)
        .ok_or_else(past)?;
    let last_version = i64::try_from(a.events.len().saturating_sub(1))
        .ok()
        .and_then(|n| first_version.checked_add(n))
        .ok_or_else(past)?;
    // The events' seqs after the chain's head: a head at the last seq an i64
    // holds (only a row written behind cairn's back puts it there) takes none.
    let first_seq = head
        .seq
        .checked_add(1)
        .filter(|first| first.checked_add(last_version - first_version).is_some())
        .ok_or_else(|| Error::Damaged {
            detail: format!(
                "the chain's head is at seq {} and no seq is left for {} more event(s) (run `cairn journal verify`)",
                head.seq,
                a.events.len()
            ),
        })?;
    let (key, fingerprint) = match &a.idempotency {
        Some(i) => (Some(i.key.as_str()), Some(i.fingerprint.as_str())),
        None => (None, None),
    };
    let rules_version = i64::from(a.transition.rules_version);
    let row = NewTransitionRow {
        stream: &a.stream,
        machine: &a.machine,
        rules_version,
        command_name: &a.transition.command_name,
        command: &a.transition.command,
        context: &a.transition.context,
        idempotency_key: key,
        fingerprint,
        first_version,
        last_version,
        recorded_at: &a.recorded_at,
    };
    let transition_id = tx
        .insert_transition(&row)
        .map_err(behind("the transition record"))?;
    let digest = transition_digest(&TransitionFields {
        id: transition_id,
        stream: &a.stream,
        machine: &a.machine,
        rules_version,
        command_name: &a.transition.command_name,
        command: &a.transition.command,
        context: &a.transition.context,
        idempotency_key: key,
        fingerprint,
        first_version,
        last_version,
        recorded_at: &a.recorded_at,
    });

    let fields = |i: usize| {
        let e = &a.events[i];
        EventFields {
            seq: first_seq + i as i64,
            stream: &a.stream,
            version: first_version + i as i64,
            machine: &a.machine,
            event_type: &e.event_type,
            schema_version: i64::from(e.schema_version),
            payload: &e.payload,
            recorded_at: &a.recorded_at,
            transition_id,
        }
    };
    // A row already at the event's version or seq: see `collides`.
    let mut insert = |i: usize, hash: &str| match tx.insert_event(&fields(i), hash)? {
        true => Ok(()),
        false => Err(collides(&format!(
            "event {}@{} (seq {})",
            a.stream,
            first_version + i as i64,
            first_seq + i as i64
        ))),
    };
    let last = chained(a.events.len(), &head.hash, &fields, &digest, &mut insert)?;
    head.seq = first_seq + (last_version - first_version);
    head.hash = last;
    Ok(AppendOutcome::Appended(Receipt {
        transition_id,
        stream: a.stream.clone(),
        first_version: first_version as u64,
        last_version: last_version as u64,
        first_seq,
        last_seq: head.seq,
    }))
}

/// A transition this long hashes its chain on a second thread while this one
/// inserts the rows (a thread costs tens of microseconds; one event's hash
/// about a third of one).
const HASH_BESIDE: usize = 256;

/// The hashes the second thread may run ahead of the inserts: it hashes a
/// transition this many events at a time (68 bytes an event; a slot for every
/// event of a 3M-event transition held 200 MB: helper-82).
const HASH_AHEAD: usize = 8192;

/// The signature of the insert `chained` hands each event's hash to.
type Insert<'i> = dyn FnMut(usize, &str) -> Result<(), Error> + 'i;

/// Hands `insert` each of `n` events' chain hashes in order, the first chained
/// to `prev`; returns the last. From [`HASH_BESIDE`] events on, the hashes are
/// computed on a second thread, ahead of the inserts (they need nothing the
/// inserts write), so the chain's SHA-256 runs beside SQLite instead of before
/// it. The hashes are the same either way: each is the one function of the
/// one before it.
fn chained<'e>(
    n: usize,
    prev: &str,
    fields: &(dyn Fn(usize) -> EventFields<'e> + Sync),
    digest: &str,
    insert: &mut Insert<'_>,
) -> Result<String, Error> {
    let mut last = prev.to_owned();
    let mut from = 0;
    while from < n {
        let to = n.min(from.saturating_add(HASH_AHEAD));
        last = if to - from < HASH_BESIDE {
            inline(from..to, last, fields, digest, insert)?
        } else {
            beside(from..to, &last, fields, digest, insert)?
        };
        from = to;
    }
    Ok(last)
}

/// The events `range` hashed here, one after another from `prev`.
fn inline<'e>(
    range: std::ops::Range<usize>,
    mut prev: String,
    fields: &(dyn Fn(usize) -> EventFields<'e> + Sync),
    digest: &str,
    insert: &mut Insert<'_>,
) -> Result<String, Error> {
    for i in range {
        let hash = event_hash(&prev, &fields(i), digest);
        insert(i, hash.as_str())?;
        hash.as_str().clone_into(&mut prev);
    }
    Ok(prev)
}

/// The events `range` hashed on a second thread ahead of the inserts here.
/// Neither thread waits for the other, but for the one hash both may reach
/// at once (the slot's lock holds the second until the first has it): a hash
/// not ready when its row is due is computed here (from the one just
/// inserted) and left in its slot, and the second thread takes a slot already
/// filled as its next predecessor instead of hashing it. Every slot holds the one value the chain gives it,
/// whoever fills it. An insert that fails stops the second thread; with no
/// second thread to be had, the range is hashed here.
fn beside<'e>(
    range: std::ops::Range<usize>,
    prev: &str,
    fields: &(dyn Fn(usize) -> EventFields<'e> + Sync),
    digest: &str,
    insert: &mut Insert<'_>,
) -> Result<String, Error> {
    let slots: Vec<OnceLock<Hex64>> = range.clone().map(|_| OnceLock::new()).collect();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let hasher = std::thread::Builder::new().spawn_scoped(s, || {
            let mut prev = prev.to_owned();
            for (i, slot) in range.clone().zip(&slots) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let hash = slot.get_or_init(|| event_hash(&prev, &fields(i), digest));
                hash.as_str().clone_into(&mut prev);
            }
        });
        let Ok(hasher) = hasher else {
            return inline(range.clone(), prev.to_owned(), fields, digest, insert);
        };
        let mut last = prev;
        let mut done = Ok(());
        for (i, slot) in range.clone().zip(&slots) {
            let hash = slot.get_or_init(|| event_hash(last, &fields(i), digest));
            if let Err(e) = insert(i, hash.as_str()) {
                done = Err(e);
                break;
            }
            last = hash.as_str();
        }
        stop.store(true, Ordering::Relaxed);
        // Joined here, so a panic there (none is known) is not raised again
        // by the scope: nothing here depended on it.
        let _ = hasher.join();
        done.map(|()| last.to_owned())
    })
}

/// The append's own row met a row holding its key (version, seq, idempotency
/// key, a signature's transition). The append read the journal under the
/// writer's lock and found none: it was written behind cairn's back (a
/// trigger, a damaged index), and a retry would meet it again. Not a version
/// conflict the stream never reached (helper-88 F3), nor a bare SQL error (F5).
fn collides(what: &str) -> Error {
    Error::Damaged {
        detail: format!("{what} collides with a row this append's reads, made under the writer's lock, did not show: a row written behind cairn's back (run `cairn journal verify`)"),
    }
}

/// [`collides`] for an insert whose taken key is an error; any other as it is.
fn behind(what: &'static str) -> impl Fn(Error) -> Error {
    move |e| if e.is_taken_key() { collides(what) } else { e }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(i: usize) -> EventFields<'static> {
        EventFields {
            seq: i as i64 + 1,
            stream: "ticket/a",
            version: i as i64 + 1,
            machine: "ticket",
            event_type: "commented",
            schema_version: 1,
            payload: "{}",
            recorded_at: "2026-11-30T04:00:00Z",
            transition_id: 1,
        }
    }

    /// The chain as `chained` hands it out, and what it returned.
    fn run(n: usize, fail_at: Option<usize>) -> (Vec<String>, Result<String, Error>) {
        let mut seen = Vec::new();
        let out = chained(n, GENESIS, &fields, "d", &mut |i, hash| {
            if Some(i) == fail_at {
                return Err(Error::InvalidAppend(format!("stop at {i}")));
            }
            assert_eq!(i, seen.len(), "in order");
            seen.push(hash.to_owned());
            Ok(())
        });
        (seen, out)
    }

    /// On the second thread or not, and across the stretches a long
    /// transition is hashed in, each hash is the definition's of the one
    /// before it, handed out in order, and the last is returned.
    #[test]
    fn hashes_beside_or_inline_are_the_chain() {
        for n in [
            1,
            HASH_BESIDE - 1,
            HASH_BESIDE,
            HASH_BESIDE + 37,
            HASH_AHEAD + 10,
            2 * HASH_AHEAD + HASH_BESIDE,
        ] {
            let (seen, out) = run(n, None);
            let mut prev = GENESIS.to_owned();
            for (i, hash) in seen.iter().enumerate() {
                assert_eq!(
                    *hash,
                    event_hash(&prev, &fields(i), "d").as_str(),
                    "{n}: {i}"
                );
                prev.clone_from(hash);
            }
            assert_eq!(seen.len(), n);
            assert_eq!(out.expect("chained"), prev, "{n}");
        }
    }

    /// An insert that fails stops the chain there, with its error, on the
    /// second thread too (the scope returns; the hasher is told to stop), in
    /// a later stretch of a long transition as in the first.
    #[test]
    fn a_failed_insert_stops_the_chain() {
        for (n, at) in [
            (10, 7),
            (HASH_BESIDE + 100, 7),
            (HASH_AHEAD + HASH_BESIDE, HASH_AHEAD + 3),
        ] {
            let (seen, out) = run(n, Some(at));
            assert_eq!(seen.len(), at, "{n}");
            let want = format!("stop at {at}");
            assert!(
                matches!(&out, Err(Error::InvalidAppend(m)) if *m == want),
                "{n}: {out:?}"
            );
        }
    }
}
