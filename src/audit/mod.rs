//! The audit: re-fold every stream, check every event is an edge of its
//! machine's graph, and re-decide every recorded transition.
//!
//! A log says what happened; an audit says whether it was allowed to. For each
//! transition the recorded command, evidence and context are decided again
//! against the state before it, and must yield exactly the recorded events.
//! A transition decided under a rules version the machine declares retired
//! (`Machine::RETIRED_RULES`) is reported as `rules-changed`, a notice naming the
//! version: the rules moved, the record did not. Any other version — a future one
//! included — is `rules-undeclared`, a failure: a forged `rules_version` cannot
//! skip the re-decision.

use cairn_journal::{StoredEvent, StoredTransition};
use cairn_machines::reads::Reread;
use cairn_machines::{Context, RawEvent, Timestamp};
use serde::Serialize;

use cairn_machines::reads::{claim_stream, CLAIM_MACHINE};

use crate::engine::raw;
use crate::{Engine, Error, StreamId};

mod cross;
use cross::{first_seq, seq_at};
mod diff;
mod lease;
mod records;
mod redecide;
mod same;
use redecide::{close, redecide, Parsed};

pub use diff::FieldDiff;

/// What an audit finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// The stream's machine is not registered in this binary: nothing could be checked.
    UnknownMachine,
    /// A stored event cannot be read as its machine's event.
    UndecodableEvent,
    /// An event was applied in a state where the graph has no such edge.
    NotAnEdge,
    /// The recorded command or context cannot be read.
    UnreadableRecord,
    /// Re-deciding the recorded command now refuses it.
    RedecideRejected,
    /// Re-deciding the recorded command yields other events than were recorded.
    RedecideMismatch,
    /// An event has no transition record, or a record covers no events.
    UnrecordedEvent,
    /// Notice: the transition was decided under a rules version the machine
    /// declares retired; it was folded and edge-checked but not re-decided.
    RulesChanged,
    /// SQLite's structural check found the file damaged (an index that disagrees
    /// with its table tells readers another history than the rows), or its tables
    /// and indexes are not the ones cairn makes (`schema:`): nothing read through
    /// it can be trusted.
    Damaged,
    /// The transition names a rules version its machine never declared (a future
    /// one included): it cannot have been decided by this machine.
    RulesUndeclared,
    /// A read recorded in the transition's context is not what the read stream
    /// holds at the recorded version (its state or fact differ, or it never
    /// reached that version): the decision rested on a forged or wrong reading.
    ReadMismatch,
    /// A stream the transition read had already moved past the recorded version
    /// when the transition was appended: the append's read-set check was bypassed.
    ReadStale,
    /// The stream's lease (`claim/<stream>`) existed when the transition was
    /// appended, but the decision did not read it: the act was never fenced.
    LeaseUnread,
    /// The act was decided at an instant the lease's stream, in the end,
    /// records a lease of another token (or, for an act without one, any lease)
    /// live: a grant or renewal decided before the act was appended after it,
    /// or the act presented a token before its grant, so the journal shows a
    /// lease live over an act it never fenced. Also each act of a stream whose
    /// lease stream cannot be read (it clears no act).
    LeaseOverAct,
    /// The transition is recorded at an instant later than the journal's clock
    /// reads as the audit runs (by more than [`AHEAD_TOLERANCE_SECS`]): a writer
    /// whose clock ran fast (on SQLite, each process reads its own host's clock)
    /// decided it — a lease taken over early, a decision dated after acts not yet
    /// made. Found while the journal's clock has not yet passed it.
    RecordedAhead,
    /// Notice, across lifecycles: a fact this decision relied on (read from another
    /// stream) has been withdrawn since by that stream's machine — a work node
    /// that vouched for the commit shipped no longer does. The decision was right
    /// when made; what it rests on no longer holds.
    RelianceWithdrawn,
    /// Notice, across lifecycles: the journal's streams, as they stand, disagree
    /// on what happened — a ship run merged for a saga thread that records no
    /// merge of that commit; a thread at `qa` with no release recorded. Each
    /// decision was admitted; the story they tell together is unfinished or
    /// inconsistent.
    CrossInvariant,
}

impl FindingKind {
    /// True for the kinds that make an audit fail.
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            FindingKind::RulesChanged
                | FindingKind::RelianceWithdrawn
                | FindingKind::CrossInvariant
        )
    }
}

/// How far ahead of the journal's clock a transition may be recorded before the
/// audit names it (`recorded-ahead`): a clock stepped back by its time service.
pub const AHEAD_TOLERANCE_SECS: i64 = 60;

/// One audit finding.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// What is wrong (or, for `rules-changed`, what to know).
    pub kind: FindingKind,
    /// The stream it is in.
    pub stream: String,
    /// The transition record concerned, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition_id: Option<i64>,
    /// The event concerned, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// A lower-case human sentence.
    pub detail: String,
    /// `redecide-mismatch`: every field where the recorded events and the
    /// re-decided ones differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<Vec<FieldDiff>>,
}

/// What the audit did with one stream.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StreamAudit {
    /// The stream id.
    pub stream: String,
    /// The machine that owns it (checked only when this build registers it).
    pub machine: String,
    /// Events replayed.
    pub events: u64,
    /// Transition records.
    pub transitions: u64,
    /// Transitions re-decided to exactly their recorded events.
    pub redecided: u64,
}

/// The result of an audit.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AuditReport {
    /// True when no finding is a failure.
    pub ok: bool,
    /// Streams audited.
    pub streams: u64,
    /// Transition records seen.
    pub transitions: u64,
    /// Events replayed.
    pub events: u64,
    /// Transitions re-decided to exactly their recorded events.
    pub redecided: u64,
    /// Every finding, in stream and version order.
    pub findings: Vec<Finding>,
    /// Each stream audited, by name.
    pub by_stream: Vec<StreamAudit>,
}

impl Engine {
    /// Audits one stream, or every stream.
    pub fn audit(&self, stream: Option<&str>) -> Result<AuditReport, Error> {
        self.audit_with(stream, &mut |_| {})
    }

    /// [`Engine::audit`], telling `progress` how many events it has replayed so
    /// far after each one (a caller's progress bar; the journal's head sequence
    /// number, or the stream's version, is the total).
    pub fn audit_with(
        &self,
        stream: Option<&str>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<AuditReport, Error> {
        // The file as it is: a handle opened before the schema was edited by
        // hand read it through the schema from before (helper-86: an engine
        // opened while two index roots were swapped, and swapped back, audited
        // no stream and passed a forged transition).
        self.journal().refresh_schema()?;
        let streams: Vec<String> = match stream {
            Some(s) => vec![s.to_owned()],
            None => self.journal().stream_names()?,
        };
        let mut report = AuditReport {
            ok: true,
            streams: 0,
            transitions: 0,
            events: 0,
            redecided: 0,
            findings: Vec::new(),
            by_stream: Vec::new(),
        };
        // Beside the re-decisions (another core); its findings are listed first.
        let integrity = self.journal().start_integrity(10);
        // Each stream read by a decision, as it stands now (for `reliance-withdrawn`).
        let mut now = cross::Now::new();
        // The journal's clock as the audit starts: no transition is recorded later.
        let clock = self.now()?;
        let mut unread = Vec::new();
        for s in &streams {
            let before = (report.events, report.transitions, report.redecided);
            let machine = match self.audit_stream(s, &mut report, progress, (&mut now, &clock)) {
                Ok(machine) => machine,
                // A name the journal's list of streams holds that no read by
                // name finds (a NUL in it): damage, named, and the other
                // streams audited (helper-88 F4: the audit stopped at it,
                // blaming a `--stream` the caller never gave).
                Err(Error::NoSuchStream { .. }) if stream.is_none() => {
                    report.findings.push(Finding {
                        kind: FindingKind::Damaged,
                        stream: s.clone(),
                        transition_id: None,
                        seq: None,
                        detail: format!(
                            "the journal lists a stream {s:?} that no read by its name finds: a row written behind cairn's back"
                        ),
                        diff: None,
                    });
                    unread.push(s.clone());
                    continue;
                }
                Err(e) => return Err(e),
            };
            report.by_stream.push(StreamAudit {
                stream: s.clone(),
                machine,
                events: report.events - before.0,
                transitions: report.transitions - before.1,
                redecided: report.redecided - before.2,
            });
        }
        let damaged = self.journal().finish_integrity(integrity)?;
        report.findings.splice(
            0..0,
            damaged.into_iter().map(|line| Finding {
                kind: FindingKind::Damaged,
                stream: String::new(),
                transition_id: None,
                seq: None,
                detail: line,
                diff: None,
            }),
        );
        let read: Vec<String> = streams
            .into_iter()
            .filter(|s| !unread.contains(s))
            .collect();
        report.findings.extend(self.cross_invariants(&read)?);
        report.ok = !report.findings.iter().any(|f| f.kind.is_failure());
        Ok(report)
    }

    /// Audits one stream into `report`; its machine's name.
    fn audit_stream(
        &self,
        stream: &str,
        report: &mut AuditReport,
        progress: &mut dyn FnMut(u64),
        (now, clock): (&mut cross::Now, &Timestamp),
    ) -> Result<String, Error> {
        let Some(machine_name) = self.journal().stream_machine(stream)? else {
            return Err(Error::NoSuchStream {
                stream: stream.to_owned(),
            });
        };
        report.streams += 1;
        let finding = |kind, transition_id, seq, detail: String| Finding {
            kind,
            stream: stream.to_owned(),
            transition_id,
            seq,
            detail,
            diff: None,
        };
        let Some(machine) = self.registry().get(&machine_name) else {
            report.findings.push(finding(
                FindingKind::UnknownMachine,
                None,
                None,
                format!("machine `{machine_name}` is not registered in this build"),
            ));
            return Ok(machine_name);
        };
        // Transition records are fetched a page at a time as their first events
        // arrive: memory stays bounded by a page, whatever the stream's length.
        let recorded = self.journal().transition_count(stream)?;
        report.transitions += recorded;
        let mut started = 0u64;
        let journal = self.journal();
        let mut fold = machine.start();
        // When the stream's lease came into being: a transition appended after it
        // must have read it (and been fenced by it).
        let lease_since = if machine.name() == CLAIM_MACHINE {
            None
        } else {
            first_seq(journal, &claim_stream(stream))?
        };
        // Every stretch the lease was live, as its stream records it in the end.
        let spans = match lease_since {
            Some(_) => lease::Spans::of(journal, &claim_stream(stream))?,
            None => None,
        };
        // The transition being checked: its record, what re-deciding it yields, the events seen so far.
        let mut current: Option<(StoredTransition, Option<Vec<RawEvent>>, Vec<StoredEvent>)> = None;
        let mut broken = false;
        let mut records = records::Records::new(stream);

        self.journal().scan_stream(stream, i64::MAX, &mut |e: StoredEvent| {
            report.events += 1;
            progress(report.events);
            if current.as_ref().is_some_and(|(t, _, _)| e.version > t.last_version) {
                if let Some(done) = current.take() {
                    close(done, report, stream);
                }
            }
            if current.is_none() {
                match records.get(journal, e.version, e.transition_id)? {
                    Some(t) if t.first_version == e.version && t.stream == stream => {
                        started += 1;
                        if let Some(detail) = ahead(&t.recorded_at, clock) {
                            report.findings.push(finding(
                                FindingKind::RecordedAhead,
                                Some(t.id),
                                Some(e.seq),
                                detail,
                            ));
                        }
                        // The record's command and context, each parsed once
                        // for the re-decision and the reads.
                        let parsed = Parsed {
                            command: serde_json::from_str(&t.command),
                            context: serde_json::from_str(&t.context),
                        };
                        let decided =
                            redecide(machine, fold.as_ref(), &t, &parsed, report, stream);
                        // The scans the machine names for the command: required
                        // of a transition decided under this build's rules (a
                        // machine that adds a scan bumps its rules version).
                        let sieves = match &parsed.command {
                            Ok(c) if t.rules_version == machine.rules_version() => fold.scans(c),
                            _ => Vec::new(),
                        };
                        if let Ok(context) = &parsed.context {
                            let at = (e.seq, lease_since);
                            self.check_reads(&t, context, at, &sieves, report, now);
                            let over = match (&spans, lease_since) {
                                (Some(s), _) => s.over(context),
                                // Fails closed: a lease that cannot be read
                                // cannot clear the act.
                                (None, Some(_)) => Some(format!(
                                    "`{}` has an event this build cannot read: the act cannot be held against its lease",
                                    claim_stream(stream)
                                )),
                                (None, None) => None,
                            };
                            if let Some(detail) = over {
                                report.findings.push(finding(
                                    FindingKind::LeaseOverAct,
                                    Some(t.id),
                                    Some(e.seq),
                                    detail,
                                ));
                            }
                        }
                        current = Some((t, decided, Vec::new()));
                    }
                    _ => report.findings.push(finding(
                        FindingKind::UnrecordedEvent,
                        Some(e.transition_id),
                        Some(e.seq),
                        format!("event version {} starts no recorded transition", e.version),
                    )),
                }
            }
            if broken {
                return Ok(());
            }
            // Folded from the stored text as replay folds it (no JSON value in
            // between); the events are kept as text and compared with what
            // re-deciding yields as they close.
            match fold.apply_stored(&e.event_type, e.schema_version, &e.payload) {
                Ok(step) if step.is_edge => {}
                Ok(step) => report.findings.push(finding(
                    FindingKind::NotAnEdge,
                    Some(e.transition_id),
                    Some(e.seq),
                    format!(
                        "`{}` applied in state `{}` led to `{}`, which is not an edge of the `{}` graph",
                        e.event_type,
                        step.from,
                        step.to,
                        machine.name()
                    ),
                )),
                Err(err) => {
                    // A payload that is not JSON at all is named as the read
                    // path names it, and is none of the transition's events.
                    let not_json = raw(&e).err();
                    let json = not_json.is_none();
                    let detail = not_json.map_or_else(|| err.to_string(), |n| n.to_string());
                    report.findings.push(finding(
                        FindingKind::UndecodableEvent,
                        Some(e.transition_id),
                        Some(e.seq),
                        detail,
                    ));
                    // The fold cannot go on meaningfully past an event it cannot apply.
                    broken = true;
                    if !json {
                        return Ok(());
                    }
                }
            }
            if let Some((_, _, seen)) = current.as_mut() {
                seen.push(e);
            }
            Ok(())
        })?;
        if let Some(done) = current.take() {
            close(done, report, stream);
        }
        if started < recorded {
            report.findings.push(finding(
                FindingKind::UnrecordedEvent,
                None,
                None,
                format!(
                    "{} of the stream's {recorded} transition records have none of their events in the stream",
                    recorded - started
                ),
            ));
        }
        Ok(machine_name)
    }
}

impl Engine {
    /// Checks what transition `t` (whose first event is `seq`) read of other
    /// streams: each read is what that stream held at the recorded version, no read
    /// stream had moved past it before `seq`, and a lease that existed before `seq`
    /// was read.
    fn check_reads(
        &self,
        t: &StoredTransition,
        context: &Context,
        (seq, lease_since): (i64, Option<i64>),
        sieves: &[cairn_machines::reads::Sieve],
        report: &mut AuditReport,
        now: &mut cross::Now,
    ) {
        let mut push = |kind, detail: String| {
            report.findings.push(Finding {
                kind,
                stream: t.stream.clone(),
                transition_id: Some(t.id),
                seq: Some(seq),
                detail,
                diff: None,
            })
        };
        let lease = claim_stream(&t.stream);
        if let Some(since) = lease_since {
            if since < seq && context.read(&lease).is_none() {
                push(
                    FindingKind::LeaseUnread,
                    format!("`{lease}` existed from seq {since}, but this transition did not read it: it was never fenced"),
                );
            }
        }
        match self.scan_findings(t.id, &t.stream, context, sieves) {
            Ok(found) => found
                .into_iter()
                .for_each(|(kind, detail)| push(kind, detail)),
            Err(e) => push(
                FindingKind::ReadMismatch,
                format!("cannot re-read a scan: {e}"),
            ),
        }
        for read in &context.reads {
            if let Some(detail) = self.withdrawn(&t.command_name, read, now) {
                push(FindingKind::RelianceWithdrawn, detail);
            }
            let found = StreamId::parse(&read.stream)
                .and_then(|id| self.read_stream_at(&id, Some(read.version)));
            match found.as_ref().map(|now| (read.against(now), now)) {
                Ok((Reread::Same, _)) => {}
                Ok((Reread::Grown, now)) => push(
                    FindingKind::RulesChanged,
                    format!(
                        "read `{}` at version {} under its machine's rules {}; its fact has grown since (rules {}): every field the decision relied on still holds",
                        read.stream,
                        read.version,
                        read.rules.map_or("before they were recorded".to_owned(), |v| format!("v{v}")),
                        now.rules.map_or("unknown".to_owned(), |v| format!("v{v}")),
                    ),
                ),
                Ok((Reread::Differs, now)) => push(
                    FindingKind::ReadMismatch,
                    format!(
                        "recorded a read of `{}` at version {} in `{}`, but the stream holds version {} in `{}` there{}",
                        read.stream,
                        read.version,
                        read.state,
                        now.version,
                        now.state,
                        if now.version == read.version && now.state == read.state {
                            " (a different fact)"
                        } else {
                            ""
                        }
                    ),
                ),
                Err(e) => push(
                    FindingKind::ReadMismatch,
                    format!("recorded a read of `{}` that cannot be re-read: {e}", read.stream),
                ),
            }
            match seq_at(self.journal(), &read.stream, read.version + 1) {
                Ok(Some(moved)) if moved < seq => push(
                    FindingKind::ReadStale,
                    format!(
                        "read `{}` at version {}, but its version {} (seq {moved}) was already appended",
                        read.stream,
                        read.version,
                        read.version + 1
                    ),
                ),
                Ok(_) => {}
                Err(e) => push(
                    FindingKind::ReadMismatch,
                    format!("cannot read `{}`: {e}", read.stream),
                ),
            }
        }
    }
}

/// Why a transition recorded at `recorded_at` is ahead of the journal's `clock`
/// (by more than [`AHEAD_TOLERANCE_SECS`]); `None` when it is not, or when the
/// instant cannot be read (the re-decision names an unreadable record).
fn ahead(recorded_at: &str, clock: &Timestamp) -> Option<String> {
    let at = Timestamp::parse(recorded_at).ok()?;
    let by = at.instant() - clock.instant();
    (by > chrono::Duration::seconds(AHEAD_TOLERANCE_SECS)).then(|| {
        format!(
            "recorded at {recorded_at}, {}s after the journal's clock ({}) as the audit ran: decided by a clock that ran fast",
            by.num_seconds(),
            clock.as_str()
        )
    })
}

#[cfg(test)]
mod ahead_tests {
    use super::*;

    #[test]
    fn only_a_record_past_the_clock_and_its_tolerance_is_ahead() {
        let clock = Timestamp::parse("2026-12-05T10:00:00Z").unwrap();
        assert_eq!(ahead("2026-12-05T10:00:59Z", &clock), None);
        assert_eq!(
            ahead("2026-12-05T10:01:00Z", &clock),
            None,
            "at the tolerance"
        );
        assert!(ahead("2026-12-05T10:01:00.000001Z", &clock).is_some());
        assert!(ahead("2026-12-05T12:00:00Z", &clock).is_some_and(|d| d.contains("7200s after")));
        assert_eq!(ahead("2026-12-05T09:00:00Z", &clock), None);
        assert_eq!(ahead("not a time", &clock), None);
    }
}
