//! What a decision reads of other streams (see [`cairn_machines::reads`]): the
//! engine reads them for `decide`, and the append requires them unmoved.

use cairn_machines::claim::{Claim, ClaimState};
use cairn_machines::reads::{claim_stream, extends_lease, fence, Scan, Sieve, CLAIM_MACHINE};
use cairn_machines::{Context, Machine, Read, Timestamp};

use crate::{Engine, Error, StreamId};

impl Engine {
    /// A lease changes only while the stream it fences stands where the
    /// decision found it, and only at an instant no act on that stream was
    /// decided after: otherwise an act that judged the lease at a later
    /// instant (lapsed, so it went unfenced) could be followed by a renewal or
    /// a grant judged earlier, and the journal would show the lease live over
    /// that act (helper-65). The resource's version for the append to require;
    /// [`Error::DecidedBefore`] when an act on it was decided after `now`.
    ///
    /// Once the lease stream exists (`lease_version > 0`) the resource's acts
    /// land in the order of their instants ([`Engine::order_guard`]), so its
    /// last transition is its latest; before the first grant they need not
    /// (two acts racing), so the first grant looks at every one (helper-67).
    pub(crate) fn resource_guard(
        &self,
        stream: &StreamId,
        lease_version: u64,
        now: &Timestamp,
    ) -> Result<(String, u64), Error> {
        let resource = stream.claimed_resource()?.to_string();
        let at = self.journal().stream_version(&resource)?;
        if lease_version > 0 {
            self.not_decided_after(&resource, at, now)?;
            return Ok((resource, at));
        }
        // The latest instant, or the first one that cannot be read (a stored
        // value: answered as every other unreadable record is, exit 1).
        let mut latest: Result<Option<(Timestamp, String)>, Error> = Ok(None);
        let up_to = i64::try_from(at).unwrap_or(i64::MAX);
        self.journal().scan_stream(&resource, up_to, &mut |e| {
            if let Ok(seen) = &mut latest {
                match decided_at(&e.recorded_at, || format!("event {}", e.seq)) {
                    Ok(t) if !seen.as_ref().is_some_and(|(l, _)| t <= *l) => {
                        *seen = Some((t, e.recorded_at));
                    }
                    Ok(_) => {}
                    Err(err) => latest = Err(err),
                }
            }
            Ok(())
        })?;
        match latest? {
            Some((decided, acted)) if decided > *now => Err(Error::DecidedBefore {
                stream: resource,
                acted,
                now: now.to_string(),
            }),
            _ => Ok((resource, at)),
        }
    }

    /// A decision that writes on a claimed stream (its lease among the
    /// context's reads) is decided no earlier than the stream's last
    /// transition, and, without a fencing token, than the lease's last event;
    /// on a lease stream, no earlier than that stream's last. So a claimed
    /// stream's acts land in the order of their instants (two acts racing, the
    /// one that read its clock first and the stream second would otherwise land
    /// after the other at an earlier instant), and [`Engine::resource_guard`]'s
    /// look at the last one sees the latest; and an untokened act never lands
    /// after a lease event of a later instant (decided at minute 9 and appended
    /// after a release at minute 10, it would sit inside the lease:
    /// `lease-over-act`). A tokened act is held only to its grant's instant
    /// (`not_granted_after`): a renewal while it ran (a holder renewing as it
    /// works) leaves its token live, and a release would have refused it.
    pub(crate) fn order_guard<M: Machine>(
        &self,
        stream: &StreamId,
        version: u64,
        context: &Context,
    ) -> Result<(), Error> {
        let now = &context.now;
        if M::NAME == CLAIM_MACHINE {
            return self.not_decided_after(stream.as_str(), version, now);
        }
        let lease = claim_stream(stream.as_str());
        if let Some(read) = context.reads.iter().find(|r| r.stream == lease) {
            self.not_decided_after(stream.as_str(), version, now)?;
            match context.fencing_token {
                None => self.not_decided_after(&lease, read.version, now)?,
                Some(_) => self.not_granted_after(&lease, read.version, now)?,
            }
        }
        Ok(())
    }

    /// [`Error::DecidedBefore`] when the grant in force on `lease` at
    /// `version` was granted after `now`: a tokened act presents a grant that
    /// did not exist yet at its instant (a token is the last plus one, so it
    /// can be guessed; the fence reads only the expiry), and the journal would
    /// record it inside the lease before it (helper-68).
    fn not_granted_after(&self, lease: &str, version: u64, now: &Timestamp) -> Result<(), Error> {
        let (state, _) = self.fold::<Claim>(&StreamId::parse(lease)?, Some(version))?;
        match state {
            ClaimState::Held { grant } if grant.acquired_at > *now => Err(Error::DecidedBefore {
                stream: lease.to_owned(),
                acted: grant.acquired_at.to_string(),
                now: now.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// [`Error::DecidedBefore`] when `stream`'s transition holding `version`
    /// was decided after `now`.
    fn not_decided_after(&self, stream: &str, version: u64, now: &Timestamp) -> Result<(), Error> {
        if version == 0 {
            return Ok(());
        }
        let last = match self.journal().transition_at(stream, version)? {
            Some((id, _, _)) => self.journal().transition(id)?,
            None => None,
        };
        if let Some(t) = last {
            if decided_at(&t.recorded_at, || format!("transition {}", t.id))? > *now {
                return Err(Error::DecidedBefore {
                    stream: stream.to_owned(),
                    acted: t.recorded_at,
                    now: now.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Reads the streams a decision of `command` on `stream` depends on: the ones
    /// [`Machine::reads`] names, the stream's lease (`claim/<stream>`) when it
    /// exists, and every stream of each machine [`Machine::scans`] sieves, keeping
    /// the ones its sieve keeps. A lease stream that does not exist is not recorded
    /// (the append still requires it not to exist).
    pub(crate) fn read_for<M: Machine>(
        &self,
        stream: &StreamId,
        state: &M::State,
        command: &M::Command,
    ) -> Result<(Vec<Read>, Vec<Scan>), Error> {
        let mut names = M::reads(state, command);
        if M::NAME != CLAIM_MACHINE {
            let lease = claim_stream(stream.as_str());
            if self.journal().stream_version(&lease)? > 0 {
                names.push(lease);
            }
        }
        let mut reads: Vec<Read> = Vec::with_capacity(names.len());
        for name in names {
            if name == stream.as_str() || reads.iter().any(|r| r.stream == name) {
                continue;
            }
            reads.push(self.read_stream_now(&StreamId::parse(&name)?)?);
        }
        let mut scans = Vec::new();
        for sieve in M::scans(state, command) {
            if scans.iter().any(|s: &Scan| s.sieve == sieve) {
                continue;
            }
            // The tip first: a stream that moves after it makes the append conflict.
            let through = self.journal().machine_tip(sieve.machine())?;
            for (name, read) in self.sieved(sieve, None)? {
                if name != stream.as_str() && !reads.iter().any(|r| r.stream == name) {
                    reads.push(read);
                }
            }
            scans.push(Scan { sieve, through });
        }
        Ok((reads, scans))
    }

    /// Every stream of the sieve's machine that it keeps, as read now, or (with
    /// `through`) as it stood after transition `through`: what a decision that
    /// recorded that scan must have read.
    pub(crate) fn sieved(
        &self,
        sieve: Sieve,
        through: Option<i64>,
    ) -> Result<Vec<(String, Read)>, Error> {
        let mut kept = Vec::new();
        for stream in self.journal().machine_streams(sieve.machine())? {
            let version = match through {
                None => None,
                Some(t) => {
                    let before = self.journal().transitions(&stream)?;
                    match before
                        .iter()
                        .filter(|x| x.id <= t)
                        .map(|x| x.last_version)
                        .max()
                    {
                        Some(v) => Some(v),
                        // The stream did not exist yet.
                        None => continue,
                    }
                }
            };
            let read = self.read_stream_at(&StreamId::parse(&stream)?, version)?;
            if sieve.keeps(&read) {
                kept.push((stream, read));
            }
        }
        Ok(kept)
    }

    /// Every stream `sieve` keeps, as the journal holds it now: what a decision
    /// that scans it would read. A verb plans its observations on it (which
    /// commits to read); the decision reads the journal again, and refuses
    /// readings that no longer match.
    pub fn scan(&self, sieve: Sieve) -> Result<Vec<Read>, Error> {
        Ok(self
            .sieved(sieve, None)?
            .into_iter()
            .map(|(_, read)| read)
            .collect())
    }

    /// Whether an act `act` on `stream` presenting `token` passes the stream's
    /// fence at `now`, as the journal holds now: the check a verb makes before it
    /// changes the world (runs git, writes a file), so a stale holder touches
    /// nothing. It writes nothing and decides nothing; the transition that records
    /// the act is fenced again inside its append (see [`cairn_machines::reads`]).
    /// A refusal is [`Error::Rejected`], as the recording decision's would be.
    pub fn fence<M: Machine>(
        &self,
        stream: &StreamId,
        act: &str,
        token: Option<u64>,
        now: &Timestamp,
    ) -> Result<(), Error> {
        if M::NAME == CLAIM_MACHINE {
            return Ok(());
        }
        // A lease stream that cannot exist (too long a name) was never granted.
        let lease = claim_stream(stream.as_str());
        let read = if self.journal().stream_version(&lease)? > 0 {
            Some(self.read_stream_now(&StreamId::parse(&lease)?)?)
        } else {
            None
        };
        match fence(read.as_ref().and_then(|r| r.fact.as_ref()), token, now) {
            Ok(()) => Ok(()),
            Err(refusal) => {
                let (state, _) = self.load::<M>(stream)?;
                Err(Error::Rejected(refusal.rejection(
                    M::NAME,
                    act,
                    M::state_name(&state),
                )))
            }
        }
    }

    /// One stream as a decision reads it: its version, state name and fact.
    pub fn read_stream_at(&self, stream: &StreamId, at: Option<u64>) -> Result<Read, Error> {
        let machine =
            self.registry()
                .get(stream.machine())
                .ok_or_else(|| Error::UnknownMachine {
                    name: stream.machine().to_owned(),
                })?;
        let up_to = at.map_or(i64::MAX, |v| v.min(i64::MAX as u64) as i64);
        let mut fold = machine.start();
        let mut version = 0;
        self.journal()
            .replay_stream(stream.as_str(), up_to, &mut |r| {
                version = r.version;
                fold.apply_stored(r.event_type, r.schema_version, r.payload)
                    .map(|_| ())
                    .map_err(|err| cairn_journal::Error::Corrupt {
                        seq: r.seq,
                        reason: err.to_string(),
                    })
            })?;
        Ok(Read {
            stream: stream.to_string(),
            version,
            state: fold.state_name().to_owned(),
            fact: fold.fact(),
            rules: Some(machine.rules_version()),
        })
    }

    pub(crate) fn read_stream_now(&self, stream: &StreamId) -> Result<Read, Error> {
        self.read_stream_at(stream, None)
    }
}

/// The machines the append requires unmoved: each scan recorded, through the
/// transition recorded; a scan [`Machine::scans`] names that was not read (no
/// journal yet), through 0: the machine must still have no stream.
pub(crate) fn occ_scans<M: Machine>(
    state: &M::State,
    command: &M::Command,
    context: &Context,
) -> Vec<(String, i64)> {
    let mut scans: Vec<(String, i64)> = context
        .scans
        .iter()
        .map(|s| (s.sieve.machine().to_owned(), s.through))
        .collect();
    for sieve in M::scans(state, command) {
        if !context.scans.iter().any(|s| s.sieve == sieve) {
            scans.push((sieve.machine().to_owned(), 0));
        }
    }
    scans
}

/// The versions the append requires unchanged: every recorded read; every stream
/// [`Machine::reads`] names that was not read, at 0 (it must still not exist:
/// [`Pending::decide`] reads no journal); and for a fenced machine the stream's
/// lease at 0 when none was read, so a lease granted between the decision and the
/// append is a conflict.
pub(crate) fn occ_reads<M: Machine>(
    stream: &StreamId,
    state: &M::State,
    command: &M::Command,
    context: &Context,
) -> Vec<(String, u64)> {
    let mut reads: Vec<(String, u64)> = context
        .reads
        .iter()
        .map(|r| (r.stream.clone(), r.version))
        .collect();
    let mut absent = M::reads(state, command);
    if M::NAME != CLAIM_MACHINE {
        absent.push(claim_stream(stream.as_str()));
    } else if let (true, Ok(resource)) = (
        extends_lease(M::NAME, M::command_name(command)),
        stream.claimed_resource(),
    ) {
        // The claimed resource, required unmoved (`Engine::decide` puts in the
        // version it read; with no journal it must still not exist).
        absent.push(resource.to_string());
    }
    for name in absent {
        if name != stream.as_str() && !reads.iter().any(|(s, _)| *s == name) {
            reads.push((name, 0));
        }
    }
    reads
}

impl crate::Registry {
    /// What `Engine::read_for` reads for a decision on a journal that does not
    /// exist yet: each stream the command names at version 0, in its machine's
    /// initial state, and each scan through transition 0, keeping nothing. A
    /// first transition records its reads as any other does (found: a first
    /// `saga save` recorded no scan, and its audit said it never looked).
    pub fn read_fresh<M: Machine>(
        &self,
        stream: &StreamId,
        state: &M::State,
        command: &M::Command,
    ) -> Result<(Vec<Read>, Vec<Scan>), Error> {
        let mut reads: Vec<Read> = Vec::new();
        for name in M::reads(state, command) {
            if name == stream.as_str() || reads.iter().any(|r| r.stream == name) {
                continue;
            }
            let id = StreamId::parse(&name)?;
            let machine = self
                .get(id.machine())
                .ok_or_else(|| Error::UnknownMachine {
                    name: id.machine().to_owned(),
                })?;
            let fold = machine.start();
            reads.push(Read {
                stream: name,
                version: 0,
                state: fold.state_name().to_owned(),
                fact: fold.fact(),
                rules: Some(machine.rules_version()),
            });
        }
        let mut scans: Vec<Scan> = Vec::new();
        for sieve in M::scans(state, command) {
            if !scans.iter().any(|s| s.sieve == sieve) {
                scans.push(Scan { sieve, through: 0 });
            }
        }
        Ok((reads, scans))
    }
}

/// The instant a stored record says it was decided at (`what` names the
/// record): an unreadable one is stored data this build cannot read.
fn decided_at(recorded_at: &str, what: impl Fn() -> String) -> Result<Timestamp, Error> {
    Timestamp::parse(recorded_at)
        .map_err(|e| Error::Stored(format!("{}: its recorded_at: {e}", what())))
}
