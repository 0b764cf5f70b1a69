//! Reads across lifecycles on a real journal: a decision that depends on another
//! stream records what it read, commits only if that stream has not moved, and the
//! audit re-reads it — driven by the test-only `gate` machine reading a `ticket`.

use cairn::journal::{Append, NewEvent, TransitionRecord};
use cairn::{Decision, Engine, Error, FindingKind, Key, Machine, Read, StreamId};

use crate::support::gate::{self, Gate};
use crate::support::ticket::{Command, Ticket};
use crate::support::{ctx, TempJournal};

fn sid(s: &str) -> StreamId {
    StreamId::parse(s).unwrap()
}

fn open_ticket(e: &mut Engine) {
    e.execute_with_context::<Ticket>(
        &sid("ticket/t1"),
        &Command::Open {
            title: "fix it".into(),
        },
        &ctx(1),
        None,
    )
    .unwrap();
}

fn pass() -> gate::Command {
    gate::Command::Pass {
        ticket: "ticket/t1".into(),
    }
}

#[test]
fn a_read_is_recorded_with_the_transition_and_audited() {
    let t = TempJournal::new();
    let mut e = t.engine();
    open_ticket(&mut e);
    let done = e
        .execute_with_context::<Gate>(&sid("gate/g1"), &pass(), &ctx(2), None)
        .unwrap();
    assert_eq!(
        done.events,
        vec![gate::Event::Passed {
            ticket: "ticket/t1".into(),
            version: 1
        }]
    );
    let record = &e.journal().transitions("gate/g1").unwrap()[0];
    let context: cairn::Context = serde_json::from_str(&record.context).unwrap();
    assert_eq!(
        context.reads,
        vec![Read {
            stream: "ticket/t1".into(),
            version: 1,
            state: "open".into(),
            fact: None,
            rules: Some(2)
        }]
    );
    let report = e.audit(None).unwrap();
    assert!(report.ok, "{:?}", report.findings);
    assert_eq!(report.redecided, 2);
}

#[test]
fn a_reading_the_caller_supplies_is_replaced_by_the_engines() {
    let t = TempJournal::new();
    let mut e = t.engine();
    // The ticket does not exist; the caller's context claims it was read open.
    let mut forged = ctx(2);
    forged.reads.push(Read {
        stream: "ticket/t1".into(),
        version: 1,
        state: "open".into(),
        fact: None,
        rules: Some(2),
    });
    let err = e
        .execute_with_context::<Gate>(&sid("gate/g1"), &pass(), &forged, None)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Rejected(r) if r.violations[0].predicate == "ticket-exists"),
        "{err:?}"
    );
    assert_eq!(e.journal().stream_version("gate/g1").unwrap(), 0);
}

#[test]
fn a_read_stream_that_moves_before_the_append_is_a_conflict_and_writes_nothing() {
    let t = TempJournal::new();
    let mut e = t.engine();
    open_ticket(&mut e);
    let Decision::Pending(pending) = e
        .decide::<Gate>(&sid("gate/g1"), &pass(), &ctx(2), None::<Key<'_>>)
        .unwrap()
    else {
        panic!("a fresh decision is pending");
    };
    // Another writer moves the ticket between the decision and the append.
    let mut other = t.engine();
    other
        .execute_with_context::<Ticket>(
            &sid("ticket/t1"),
            &Command::Comment {
                text: "moved".into(),
            },
            &ctx(3),
            None,
        )
        .unwrap();
    let err = e.append(pending).unwrap_err();
    assert!(
        matches!(&err, Error::Journal(cairn::journal::Error::Conflict { stream, expected: 1, actual: 2 }) if stream == "ticket/t1"),
        "{err:?}"
    );
    assert_eq!(e.journal().stream_version("gate/g1").unwrap(), 0);
}

/// Appends a gate transition straight through the journal with `reads` in its
/// context: a valid chain, a record the engine did not produce.
fn forge_gate(e: &mut Engine, read: Read) {
    let mut context = ctx(5);
    context.reads.push(read.clone());
    e.journal_mut()
        .append(&Append {
            stream: "gate/g1".into(),
            machine: "gate".into(),
            expected_version: 0,
            events: vec![NewEvent {
                event_type: "passed".into(),
                schema_version: 1,
                payload: format!(
                    r#"{{"type":"passed","ticket":"ticket/t1","version":{}}}"#,
                    read.version
                ),
            }],
            transition: TransitionRecord {
                command_name: "pass".into(),
                command: serde_json::to_string(&pass()).unwrap(),
                context: serde_json::to_string(&context).unwrap(),
                rules_version: Gate::RULES_VERSION,
            },
            idempotency: None,
            recorded_at: context.now.to_string(),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .unwrap();
}

fn kinds(e: &Engine) -> Vec<FindingKind> {
    e.audit(None)
        .unwrap()
        .findings
        .into_iter()
        .map(|f| f.kind)
        .collect()
}

#[test]
fn the_audit_catches_a_forged_read() {
    let t = TempJournal::new();
    let mut e = t.engine();
    // The ticket is open, yet the record says it was read `closed`.
    e.execute_with_context::<Ticket>(
        &sid("ticket/t1"),
        &Command::Open { title: "x".into() },
        &ctx(1),
        None,
    )
    .unwrap();
    forge_gate(
        &mut e,
        Read {
            stream: "ticket/t1".into(),
            version: 1,
            state: "closed".into(),
            fact: None,
            rules: Some(2),
        },
    );
    assert_eq!(kinds(&e), vec![FindingKind::ReadMismatch]);
}

#[test]
fn the_audit_catches_a_read_that_was_already_stale() {
    let t = TempJournal::new();
    let mut e = t.engine();
    open_ticket(&mut e);
    e.execute_with_context::<Ticket>(
        &sid("ticket/t1"),
        &Command::Comment { text: "c".into() },
        &ctx(3),
        None,
    )
    .unwrap();
    // Read at version 1 (true then), appended after version 2 landed.
    forge_gate(
        &mut e,
        Read {
            stream: "ticket/t1".into(),
            version: 1,
            state: "open".into(),
            fact: None,
            rules: Some(2),
        },
    );
    assert_eq!(kinds(&e), vec![FindingKind::ReadStale]);
}

/// The read-set check is the journal's, inside the append transaction, on both
/// backends alike: a decision whose read stream moved is a conflict naming it.
#[test]
fn the_read_set_holds_on_both_backends() {
    use crate::support::backend::backends;
    for b in backends() {
        let s = b.fresh();
        let mut registry = cairn::Registry::new();
        registry.register::<Ticket>();
        registry.register::<Gate>();
        let mut e = s.engine(registry.clone());
        open_ticket(&mut e);
        let Decision::Pending(pending) = e
            .decide::<Gate>(&sid("gate/g1"), &pass(), &ctx(2), None::<Key<'_>>)
            .unwrap()
        else {
            panic!("a fresh decision is pending ({b:?})");
        };
        let mut other = s.engine(registry);
        other
            .execute_with_context::<Ticket>(
                &sid("ticket/t1"),
                &Command::Comment {
                    text: "moved".into(),
                },
                &ctx(3),
                None,
            )
            .unwrap();
        let err = e.append(pending).unwrap_err();
        assert!(
            matches!(&err, Error::Journal(cairn::journal::Error::Conflict { stream, .. }) if stream == "ticket/t1"),
            "{b:?}: {err:?}"
        );
        assert_eq!(e.journal().stream_version("gate/g1").unwrap(), 0, "{b:?}");
        // Decided again against the moved ticket, it lands and audits clean.
        e.execute_with_context::<Gate>(&sid("gate/g1"), &pass(), &ctx(4), None)
            .unwrap();
        let report = e.audit(None).unwrap();
        assert!(report.ok, "{b:?}: {:?}", report.findings);
    }
}
