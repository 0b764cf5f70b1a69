//! Appending transitions: optimistic concurrency, idempotency, the hash chain and
//! signatures — the one algorithm every backend runs inside its write transaction.

use serde::Serialize;

use crate::hash::{event_hash, transition_digest, EventFields, TransitionFields, GENESIS};
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
            })?;
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
    let transition_id = tx.insert_transition(&row)?;
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

    let first_seq = head.seq + 1;
    for (i, e) in a.events.iter().enumerate() {
        let fields = EventFields {
            seq: head.seq + 1,
            stream: &a.stream,
            version: first_version + i as i64,
            machine: &a.machine,
            event_type: &e.event_type,
            schema_version: i64::from(e.schema_version),
            payload: &e.payload,
            recorded_at: &a.recorded_at,
            transition_id,
        };
        let hash = event_hash(&head.hash, &fields, &digest);
        if !tx.insert_event(&fields, &hash)? {
            return Err(Error::Conflict {
                stream: a.stream.clone(),
                expected: a.expected_version,
                actual: a.expected_version + 1,
            });
        }
        head.seq = fields.seq;
        head.hash = hash;
    }
    Ok(AppendOutcome::Appended(Receipt {
        transition_id,
        stream: a.stream.clone(),
        first_version: first_version as u64,
        last_version: last_version as u64,
        first_seq,
        last_seq: head.seq,
    }))
}
