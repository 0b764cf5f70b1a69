//! Appending transitions: optimistic concurrency, idempotency, the hash chain.

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde::Serialize;

use crate::hash::{event_hash, transition_digest, EventFields, TransitionFields, GENESIS};
use crate::{Error, Journal};

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
        let busy = self.busy_ms;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| Error::sql(e, busy))?;
        let mut head = chain_head(&tx, busy)?;
        let signer = match &self.signing_key {
            Some(key) => Some((key, signing_key_id(&tx, busy, key)?)),
            None => None,
        };
        let mut out = Vec::with_capacity(appends.len());
        for a in appends {
            let outcome = append_one(&tx, busy, a, &mut head)?;
            if let (Some((key, key_id)), AppendOutcome::Appended(r)) = (&signer, &outcome) {
                sign_transition(&tx, busy, key, *key_id, r.transition_id, &head)?;
            }
            out.push(outcome);
        }
        tx.commit().map_err(|e| Error::sql(e, busy))?;
        Ok(out)
    }
}

/// The journal's id for `key`, recording its public half on first use.
fn signing_key_id(tx: &Transaction<'_>, busy: u64, key: &crate::SigningKey) -> Result<i64, Error> {
    let public = key.public_hex();
    tx.prepare_cached(crate::sql::KEY_INSERT)
        .and_then(|mut s| s.execute(params![public, crate::now_rfc3339()]))
        .map_err(|e| Error::sql(e, busy))?;
    tx.prepare_cached(crate::sql::KEY_ID)
        .and_then(|mut s| s.query_row([&public], |r| r.get(0)))
        .map_err(|e| Error::sql(e, busy))
}

/// Signs the transition's chain head (its last event), in the same transaction.
fn sign_transition(
    tx: &Transaction<'_>,
    busy: u64,
    key: &crate::SigningKey,
    key_id: i64,
    transition_id: i64,
    head: &Head,
) -> Result<(), Error> {
    let signature = key.sign_head(head.seq, &head.hash);
    tx.prepare_cached(crate::sql::SIGNATURE_INSERT)
        .and_then(|mut s| {
            s.execute(params![
                transition_id,
                key_id,
                head.seq,
                head.hash,
                signature
            ])
        })
        .map_err(|e| Error::sql(e, busy))?;
    Ok(())
}

struct Head {
    seq: i64,
    hash: String,
}

fn chain_head(tx: &Transaction<'_>, busy: u64) -> Result<Head, Error> {
    let row: Option<(i64, String)> = tx
        .prepare_cached(crate::sql::HEAD)
        .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(|e| Error::sql(e, busy))?;
    Ok(match row {
        Some((seq, hash)) => Head { seq, hash },
        None => Head {
            seq: 0,
            hash: GENESIS.to_owned(),
        },
    })
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

fn append_one(
    tx: &Transaction<'_>,
    busy: u64,
    a: &Append,
    head: &mut Head,
) -> Result<AppendOutcome, Error> {
    validate(a)?;
    let sql = |e| Error::sql(e, busy);
    if let Some(idem) = &a.idempotency {
        let found: Option<(i64, Option<String>, i64, i64)> = tx
            .prepare_cached(crate::sql::IDEMPOTENCY)
            .and_then(|mut s| {
                s.query_row(params![a.stream, idem.key], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional()
            })
            .map_err(sql)?;
        if let Some((id, fingerprint, first, last)) = found {
            if fingerprint.as_deref() != Some(idem.fingerprint.as_str()) {
                return Err(Error::IdempotencyMismatch {
                    stream: a.stream.clone(),
                    key: idem.key.clone(),
                });
            }
            let (first_seq, last_seq): (i64, i64) = tx
                .prepare_cached(crate::sql::TRANSITION_SEQS)
                .and_then(|mut s| {
                    s.query_row(params![a.stream, first, last], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                })
                .map_err(sql)?;
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

    let current: Option<(i64, String)> = tx
        .prepare_cached(crate::sql::STREAM_TIP)
        .and_then(|mut s| {
            s.query_row([&a.stream], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(sql)?;
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
        let actual: Option<i64> = tx
            .prepare_cached(crate::sql::STREAM_TIP)
            .and_then(|mut s| s.query_row([stream], |r| r.get(0)).optional())
            .map_err(sql)?;
        let actual = actual.map_or(0, |v| v as u64);
        if actual != *expected {
            return Err(Error::Conflict {
                stream: stream.clone(),
                expected: *expected,
                actual,
            });
        }
    }

    let first_version = int(a.expected_version, "version")? + 1;
    let last_version = first_version + a.events.len() as i64 - 1;
    let (key, fingerprint) = match &a.idempotency {
        Some(i) => (Some(i.key.as_str()), Some(i.fingerprint.as_str())),
        None => (None, None),
    };
    let rules_version = i64::from(a.transition.rules_version);
    tx.prepare_cached(
        "INSERT INTO transitions (stream, machine, rules_version, command_name, command, context,
             idempotency_key, fingerprint, first_version, last_version, recorded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )
    .and_then(|mut s| {
        s.execute(params![
            a.stream,
            a.machine,
            rules_version,
            a.transition.command_name,
            a.transition.command,
            a.transition.context,
            key,
            fingerprint,
            first_version,
            last_version,
            a.recorded_at
        ])
    })
    .map_err(sql)?;
    let transition_id = tx.last_insert_rowid();
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
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO events (seq, stream, version, machine, event_type, schema_version,
                 payload, recorded_at, transition_id, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(sql)?;
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
        insert
            .execute(params![
                fields.seq,
                fields.stream,
                fields.version,
                fields.machine,
                fields.event_type,
                fields.schema_version,
                fields.payload,
                fields.recorded_at,
                fields.transition_id,
                hash
            ])
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    Error::Conflict {
                        stream: a.stream.clone(),
                        expected: a.expected_version,
                        actual: a.expected_version + 1,
                    }
                }
                other => sql(other),
            })?;
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
