//! Findings across lifecycles: what a decision relied on of another stream, held
//! against what that stream states now.
//!
//! Every read a decision recorded is re-read at its recorded version by the
//! per-stream audit (a forged read is a failure). Here the same reads are held
//! against the read stream *today*: a fact withdrawn since — a work node that no
//! longer vouches for the commit a ship merged on its word — is reported as a
//! notice on the transition that relied on it (`reliance-withdrawn`). The rule of
//! what counts as withdrawn is the machines' (`cairn_machines::reads::withdrawn`).

use std::collections::HashMap;

use cairn_machines::reads::withdrawn;
use cairn_machines::{Context, Read};

use super::{AuditReport, Finding, FindingKind};
use crate::{Engine, Error, StreamId};

impl Engine {
    /// Adds a `reliance-withdrawn` notice for every recorded read of `streams`'
    /// transitions whose fact the read stream has withdrawn since.
    pub(super) fn withdrawn_reliance(
        &self,
        streams: &[String],
        report: &mut AuditReport,
    ) -> Result<(), Error> {
        // Each read stream is folded once, to its head.
        let mut now: HashMap<String, Option<Read>> = HashMap::new();
        for s in streams {
            for t in self.journal().transitions(s)? {
                // An unreadable context is the re-decision's finding.
                let Ok(context) = serde_json::from_str::<Context>(&t.context) else {
                    continue;
                };
                for read in context.reads.iter().filter(|r| r.version > 0) {
                    let Some(then) = &read.fact else {
                        continue;
                    };
                    if !now.contains_key(&read.stream) {
                        // A stream that cannot be read is the read check's finding.
                        let current = StreamId::parse(&read.stream)
                            .and_then(|id| self.read_stream_at(&id, None))
                            .ok();
                        now.insert(read.stream.clone(), current);
                    }
                    let Some(Some(current)) = now.get(&read.stream) else {
                        continue;
                    };
                    if let Some(why) = withdrawn(then, current.fact.as_ref()) {
                        report.findings.push(Finding {
                            kind: FindingKind::RelianceWithdrawn,
                            stream: t.stream.clone(),
                            transition_id: Some(t.id),
                            seq: None,
                            detail: format!(
                                "`{}` relied on `{}` at version {} (`{}`); at version {} (`{}`) {why}",
                                t.command_name,
                                read.stream,
                                read.version,
                                read.state,
                                current.version,
                                current.state
                            ),
                            diff: None,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}
