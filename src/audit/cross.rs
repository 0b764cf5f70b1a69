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

use std::collections::HashMap;

use cairn_machines::reads::{withdrawn, Scan};
use cairn_machines::{Context, Read};

use super::FindingKind;
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
    /// the reading: `read-mismatch`).
    pub(super) fn scan_findings(
        &self,
        id: i64,
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
            for info in self.journal().streams()? {
                if info.machine != machine {
                    continue;
                }
                let moved = self
                    .journal()
                    .transitions(&info.stream)?
                    .into_iter()
                    .find(|x| x.id > *through && x.id < id);
                if let Some(x) = moved {
                    out.push((
                        FindingKind::ReadStale,
                        format!(
                            "scanned every `{machine}` stream through transition {through}, but `{}` had transition {} before this one was appended",
                            info.stream, x.id
                        ),
                    ));
                }
            }
            for (stream, read) in self.sieved(*sieve, Some(*through))? {
                if context.read(&stream) != Some(&read) {
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
