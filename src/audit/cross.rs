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
//!
//! Then the journal's invariants between lifecycles, held on each audited
//! stream's fact as it stands (`cross-invariant`, a notice): a ship run that
//! merged for a saga thread is credited by that thread (a unit's merge of that
//! commit) and by no other; one merge is credited by one thread; a thread at `qa`
//! or `retro` recorded its release first; a thread's review rounds are the ones
//! the PR loops that follow it counted.

use std::collections::HashMap;

use cairn_machines::reads::{withdrawn, Fact, Reread, Scan};
use cairn_machines::{Context, Read};

use super::{Finding, FindingKind};
use crate::{Engine, Error, StreamId};

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

impl Engine {
    /// What is wrong with the scans transition `id` recorded (each machine it read
    /// whole, see [`cairn_machines::reads::Sieve`]): one of `sieves` (the scans
    /// its machine names for the command) it did not record; a stream of the machine that
    /// had a transition after the recorded one but before this transition (the
    /// append's check was bypassed: `read-stale`), or one the sieve keeps at the
    /// recorded point that the context does not carry (a dispatch left out of
    /// the reading: `read-mismatch`) — but `own`, the transition's stream, which
    /// the engine leaves out of its scans.
    pub(super) fn scan_findings(
        &self,
        id: i64,
        own: &str,
        context: &Context,
        sieves: &[cairn_machines::reads::Sieve],
    ) -> Result<Vec<(FindingKind, String)>, Error> {
        let mut out = vec![];
        // A scan the machine names for the command that the context does not
        // carry: the decision never looked (a forged context, or one appended
        // around the engine).
        for sieve in sieves {
            if !context.scans.iter().any(|s| s.sieve == *sieve) {
                out.push((
                    FindingKind::ReadMismatch,
                    format!(
                        "the command reads every `{}` stream ({sieve:?}), but the transition recorded no such scan",
                        sieve.machine()
                    ),
                ));
            }
        }
        for Scan { sieve, through } in &context.scans {
            let machine = sieve.machine();
            for stream in self.journal().machine_streams(machine)? {
                let moved = self
                    .journal()
                    .transitions(&stream)?
                    .into_iter()
                    .find(|x| x.id > *through && x.id < id);
                if let Some(x) = moved {
                    out.push((
                        FindingKind::ReadStale,
                        format!(
                            "scanned every `{machine}` stream through transition {through}, but `{stream}` had transition {} before this one was appended",
                            x.id
                        ),
                    ));
                }
            }
            // The scanning stream is not among its reads (the engine leaves it out:
            // its own version is the append's check already).
            for (stream, read) in self.sieved(*sieve, Some(*through))? {
                if stream == own {
                    continue;
                }
                let carried = context.read(&stream).map(|r| r.against(&read));
                if !matches!(carried, Some(Reread::Same | Reread::Grown)) {
                    out.push((
                        FindingKind::ReadMismatch,
                        format!(
                            "scanned every `{machine}` stream through transition {through}, but did not carry `{stream}` at version {} (`{}`), which its sieve keeps",
                            read.version, read.state
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }
}

impl Engine {
    /// The `cross-invariant` notices for `streams` (see the module header).
    pub(super) fn cross_invariants(&self, streams: &[String]) -> Result<Vec<Finding>, Error> {
        let mut out = vec![];
        let notice = |stream: &str, detail: String| Finding {
            kind: FindingKind::CrossInvariant,
            stream: stream.to_owned(),
            transition_id: None,
            seq: None,
            detail,
            diff: None,
        };
        let fact_of = |stream: &str| -> Result<Option<Fact>, Error> {
            let Ok(id) = StreamId::parse(stream) else {
                return Ok(None);
            };
            if self.registry().get(id.machine()).is_none() {
                return Ok(None);
            }
            Ok(self.read_stream_at(&id, None)?.fact)
        };
        // Every thread's merged tips (the whole journal: a merge credited twice is
        // found whichever of its threads is audited).
        let mut credits: Vec<(String, Vec<cairn_machines::evidence::FullCommit>)> = vec![];
        // The rounds each thread's PR loops counted (`thread -> (loops, rounds)`).
        let mut counted: std::collections::BTreeMap<String, (Vec<String>, Vec<u32>)> =
            Default::default();
        // The two machines' streams by their names' range (an index seek per
        // stream), each kept only when its events say it is that machine's.
        let mut folded = vec![];
        for machine in [
            cairn_machines::reads::SAGA_MACHINE,
            cairn_machines::reads::PR_LOOP_MACHINE,
        ] {
            for stream in self.journal().machine_streams(machine)? {
                if self.journal().stream_machine(&stream)?.as_deref() == Some(machine) {
                    folded.push((stream, machine));
                }
            }
        }
        for (stream, machine) in folded {
            match fact_of(&stream)? {
                Some(Fact::Saga { merged, .. })
                    if machine == cairn_machines::reads::SAGA_MACHINE =>
                {
                    credits.push((stream, merged));
                }
                Some(Fact::PrLoop {
                    thread: Some(thread),
                    rounds_seen,
                    ..
                }) => {
                    let entry = counted.entry(thread).or_default();
                    entry.0.push(stream);
                    entry.1.extend(rounds_seen);
                }
                _ => {}
            }
        }
        let crediting = |commit: &cairn_machines::evidence::FullCommit| -> Vec<&str> {
            credits
                .iter()
                .filter(|(_, merged)| merged.contains(commit))
                .map(|(s, _)| s.as_str())
                .collect()
        };
        for stream in streams {
            // Only a thread's or a ship run's fact is checked below: no other
            // stream is replayed for it.
            let checked = [
                cairn_machines::reads::SAGA_MACHINE,
                cairn_machines::reads::SHIP_MACHINE,
            ];
            if !checked.contains(&stream.split('/').next().unwrap_or_default()) {
                continue;
            }
            let fact = fact_of(stream)?;
            // One merge is one unit's work: credited by two threads, one of them
            // took another's merge (a typed merge without `--from`).
            if let Some(Fact::Saga { merged, .. }) = &fact {
                for commit in merged {
                    let others: Vec<&str> = crediting(commit)
                        .into_iter()
                        .filter(|s| *s != stream.as_str())
                        .collect();
                    if !others.is_empty() {
                        out.push(notice(
                            stream,
                            format!(
                                "records the merge of {commit}, which `{}` records too: one merge is one unit's work",
                                others.join("`, `")
                            ),
                        ));
                    }
                }
            }
            // Rounds are counted once, by the loops that follow the thread: a
            // round the thread holds that none of them saw was typed by hand.
            if let (Some(Fact::Saga { rounds_seen, .. }), Some((loops, rounds))) =
                (&fact, counted.get(stream.as_str()))
            {
                let extra: Vec<u32> = rounds_seen
                    .iter()
                    .filter(|r| !rounds.contains(r))
                    .copied()
                    .collect();
                if !extra.is_empty() {
                    out.push(notice(
                        stream,
                        format!(
                            "holds rounds {extra:?}, which `{}` never counted: a thread's rounds are its PR loops'",
                            loops.join("`, `")
                        ),
                    ));
                }
            }
            match fact {
                Some(Fact::Ship {
                    merged: Some(commit),
                    acts_for: Some(thread),
                    ..
                }) => {
                    let by = crediting(&commit);
                    let credited = by.contains(&thread.as_str());
                    if let Some(other) = by.iter().find(|s| **s != thread.as_str()) {
                        out.push(notice(
                            stream,
                            format!("merged {commit} acting for `{thread}`, and `{other}` records it as its own merge"),
                        ));
                    }
                    if !credited {
                        out.push(notice(
                            stream,
                            format!(
                                "merged {commit} acting for `{thread}`, which records no unit's merge of it (`cairn saga merge-turn merged --from {stream}`)"
                            ),
                        ));
                    }
                }
                Some(Fact::Saga {
                    phase, released, ..
                }) if (phase == "qa" || phase == "retro") && !released => {
                    out.push(notice(
                        stream,
                        format!("the thread is at `{phase}` with no release recorded: QA runs after the release (`cairn saga release`)"),
                    ));
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The seq of `stream`'s first event, if it has one.
pub(super) fn first_seq(
    journal: &cairn_journal::Journal,
    stream: &str,
) -> Result<Option<i64>, Error> {
    Ok(seq_at(journal, stream, 1)?)
}

/// The seq of `stream`'s event at `version`, if it has one.
pub(super) fn seq_at(
    journal: &cairn_journal::Journal,
    stream: &str,
    version: u64,
) -> Result<Option<i64>, cairn_journal::Error> {
    Ok(journal
        .read_stream(stream, Some(version))?
        .into_iter()
        .find(|e| e.version == version)
        .map(|e| e.seq))
}
