//! The engine end to end on a real journal, driven by the test-only `ticket` machine.

use cairn::journal::{Append, NewEvent, TransitionRecord};
use cairn::{Decision, Engine, Error, FindingKind, Key, Machine, Outcome, Registry, StreamId};

use crate::support::ticket::{close, Command, Event, State, Ticket};
use crate::support::{ctx, tamper, TempJournal};

fn stream(name: &str) -> StreamId {
    StreamId::parse(&format!("ticket/{name}")).unwrap()
}

fn open(title: &str) -> Command {
    Command::Open {
        title: title.into(),
    }
}

/// One ticket opened, commented on and closed.
fn lifecycle(t: &TempJournal) -> Engine {
    let mut e = t.engine();
    let s = stream("t1");
    e.execute_with_context::<Ticket>(&s, &open("fix it"), &ctx(1), None)
        .unwrap();
    e.execute_with_context::<Ticket>(
        &s,
        &Command::Comment {
            text: "on it".into(),
        },
        &ctx(2),
        None,
    )
    .unwrap();
    e.execute_with_context::<Ticket>(&s, &close(Outcome::Pass, Some(0)), &ctx(3), None)
        .unwrap();
    e
}

#[test]
fn execute_decides_appends_and_replays() {
    let t = TempJournal::new();
    let e = lifecycle(&t);
    let (state, version) = e.load::<Ticket>(&stream("t1")).unwrap();
    assert_eq!(version, 3);
    assert!(matches!(state, State::Closed { .. }), "{state:?}");
    // Time travel.
    let at1 = e.state_at::<Ticket>(&stream("t1"), Some(1)).unwrap();
    assert!(matches!(at1, State::Open { comments: 0, .. }), "{at1:?}");
    let at2 = e.state_at::<Ticket>(&stream("t1"), Some(2)).unwrap();
    assert!(matches!(at2, State::Open { comments: 1, .. }), "{at2:?}");
    assert_eq!(
        e.state_at::<Ticket>(&stream("t1"), Some(0)).unwrap(),
        State::New
    );
    assert!(matches!(
        e.state_at::<Ticket>(&stream("t1"), Some(4)),
        Err(Error::NoSuchVersion {
            requested: 4,
            current: 3,
            ..
        })
    ));
    // The erased view agrees.
    let view = e.state_view(&stream("t1"), Some(2)).unwrap();
    assert_eq!((view.state_name.as_str(), view.version), ("open", 2));
    assert_eq!(view.state["comments"], 1);
}

#[test]
fn the_minted_id_comes_from_the_context() {
    let t = TempJournal::new();
    let mut e = t.engine();
    let done = e
        .execute_with_context::<Ticket>(&stream("t"), &open("x"), &ctx(7), None)
        .unwrap();
    let Event::Opened { id, .. } = &done.events[0] else {
        panic!("{:?}", done.events)
    };
    assert_eq!(id.uuid(), ctx(7).fresh_ids[0]);
    // And a live execute mints one.
    let live = e
        .execute::<Ticket>(&stream("u"), &open("y"), &Default::default())
        .unwrap();
    assert!(matches!(live.state, State::Open { .. }));
}

#[test]
fn a_rejection_names_every_failed_predicate_and_writes_nothing() {
    let t = TempJournal::new();
    let mut e = lifecycle(&t);
    let s = stream("t2");
    e.execute_with_context::<Ticket>(&s, &open("second"), &ctx(4), None)
        .unwrap();
    drop(e);
    let before = t.bytes();
    let mut e = t.engine();
    // An unknown outcome with no command and no exit status: unknown never passes.
    let mut cmd = close(Outcome::Unknown, None);
    if let Command::Close { check } = &mut cmd {
        check.evidence.argv.clear();
    }
    match e.execute_with_context::<Ticket>(&s, &cmd, &ctx(5), None) {
        Err(Error::Rejected(r)) => {
            let predicates: Vec<_> = r.violations.iter().map(|v| v.predicate.as_str()).collect();
            assert_eq!(predicates, ["check-passes", "evidence-argv"]);
            assert_eq!(
                (r.machine.as_str(), r.command.as_str(), r.state.as_str()),
                ("ticket", "close", "open")
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    // A pass whose evidence says the command failed is contradictory evidence.
    match e.execute_with_context::<Ticket>(&s, &close(Outcome::Pass, Some(1)), &ctx(5), None) {
        Err(Error::Rejected(r)) => assert_eq!(r.violations[0].predicate, "evidence-agrees"),
        other => panic!("expected a rejection, got {other:?}"),
    }
    // A command on a terminal state.
    match e.execute_with_context::<Ticket>(
        &stream("t1"),
        &Command::Comment {
            text: "late".into(),
        },
        &ctx(6),
        None,
    ) {
        Err(Error::Rejected(r)) => assert_eq!(
            (r.state.as_str(), r.violations[0].predicate.as_str()),
            ("closed", "command-allowed")
        ),
        other => panic!("expected a rejection, got {other:?}"),
    }
    drop(e);
    assert_eq!(t.bytes(), before, "rejections must not change the journal");
}

#[test]
fn a_stream_of_another_machine_is_refused() {
    let t = TempJournal::new();
    let mut e = t.engine();
    let s = StreamId::parse("park/x").unwrap();
    assert!(matches!(
        e.execute_with_context::<Ticket>(&s, &open("x"), &ctx(1), None),
        Err(Error::InvalidStream { .. })
    ));
}

#[test]
fn an_idempotent_retry_returns_the_original_result() {
    let t = TempJournal::new();
    let mut e = t.engine();
    let s = stream("idem");
    let first = e
        .execute_with_context::<Ticket>(&s, &open("once"), &ctx(1), Some("k1"))
        .unwrap();
    assert!(!first.replayed);
    drop(e);
    let before = t.bytes();
    let mut e = t.engine();
    // Later, at another time, with other fresh ids: still the original events.
    let again = e
        .execute_with_context::<Ticket>(&s, &open("once"), &ctx(9), Some("k1"))
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.events, first.events);
    assert_eq!(again.state, first.state);
    assert_eq!(again.version, 1);
    // The same key for another command is an error.
    assert!(matches!(
        e.execute_with_context::<Ticket>(&s, &open("twice"), &ctx(9), Some("k1")),
        Err(Error::Journal(
            cairn::journal::Error::IdempotencyMismatch { .. }
        ))
    ));
    drop(e);
    assert_eq!(t.bytes(), before);
}

#[test]
fn audit_re_decides_every_transition_of_a_clean_journal() {
    let t = TempJournal::new();
    let e = lifecycle(&t);
    let report = e.audit(None).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(
        (
            report.streams,
            report.transitions,
            report.redecided,
            report.events
        ),
        (1, 3, 3, 3)
    );
    assert!(report.findings.is_empty());
}

/// Appends a transition straight through the journal API: a valid hash chain,
/// but a record the rules did not produce.
pub(crate) fn forge(e: &mut Engine, version: u64, command: &str, event_type: &str, payload: &str) {
    e.journal_mut()
        .append(&Append {
            stream: "ticket/t1".into(),
            machine: "ticket".into(),
            expected_version: version,
            events: vec![NewEvent {
                event_type: event_type.into(),
                schema_version: 1,
                payload: payload.into(),
            }],
            transition: TransitionRecord {
                command_name: "comment".into(),
                command: command.into(),
                context: serde_json::to_string(&ctx(9)).unwrap(),
                rules_version: Ticket::RULES_VERSION,
            },
            idempotency: None,
            recorded_at: "2026-11-30T09:00:00Z".into(),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .unwrap();
}

#[test]
fn audit_catches_recorded_events_that_decide_does_not_yield() {
    let t = TempJournal::new();
    let mut e = t.engine();
    let s = stream("t1");
    e.execute_with_context::<Ticket>(&s, &open("fix it"), &ctx(1), None)
        .unwrap();
    // The command says "comment: hello", the recorded event says "comment: forged".
    forge(
        &mut e,
        1,
        r#"{"command":"comment","text":"hello"}"#,
        "commented",
        r#"{"type":"commented","text":"forged"}"#,
    );
    assert!(
        e.journal().verify().unwrap().ok,
        "the chain itself is intact"
    );
    let report = e.audit(None).unwrap();
    assert!(!report.ok);
    let f: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.kind, f.transition_id))
        .collect();
    assert_eq!(f, [(FindingKind::RedecideMismatch, Some(2))]);
    assert_eq!(report.redecided, 1);
    // The finding names the field, with the recorded and the re-decided value.
    let diff = report.findings[0]
        .diff
        .as_ref()
        .expect("a mismatch has a diff");
    let diff: Vec<_> = diff
        .iter()
        .map(|d| (d.path.as_str(), d.recorded.clone(), d.redecided.clone()))
        .collect();
    assert_eq!(
        diff,
        [(
            "[0].payload.text",
            Some(serde_json::json!("forged")),
            Some(serde_json::json!("hello"))
        )]
    );
}

/// The audit folds and compares the stored text: the decided value spelled
/// another way (spaces, key order) is the same event, one that gives a key
/// twice is not; text that is not JSON is
/// named as such and is none of the transition's events; JSON that is not the
/// machine's event stops the fold and differs from the decided one.
#[test]
fn audit_compares_payloads_as_values_and_names_text_that_is_not_json() {
    let audited = |payload: &str| {
        let t = TempJournal::new();
        let mut e = t.engine();
        e.execute_with_context::<Ticket>(&stream("t1"), &open("fix it"), &ctx(1), None)
            .unwrap();
        forge(
            &mut e,
            1,
            r#"{"command":"comment","text":"hello"}"#,
            "commented",
            payload,
        );
        let report = e.audit(None).unwrap();
        let kinds: Vec<_> = report.findings.iter().map(|f| f.kind).collect();
        (kinds, report)
    };
    let (kinds, report) = audited(r#"{ "text" : "hello", "type":"commented" }"#);
    assert!(kinds.is_empty(), "{report:?}");
    assert_eq!(report.redecided, 2);

    let (kinds, report) = audited(r#"{"type":"commented","text":"hello"} trailing"#);
    assert_eq!(
        kinds,
        [FindingKind::UndecodableEvent, FindingKind::RedecideMismatch],
        "{report:?}"
    );
    assert!(
        report.findings[0].detail.contains("payload is not JSON"),
        "{report:?}"
    );
    assert!(
        report.findings[1].detail.contains("the journal records []"),
        "{report:?}"
    );

    // A key given twice: a `Value` keeps the last (`hello`), a reader that
    // keeps the first sees `evil`; not the decided event (helper-89).
    let (kinds, report) = audited(r#"{"type":"commented","text":"evil","text":"hello"}"#);
    assert_eq!(kinds, [FindingKind::RedecideMismatch], "{report:?}");

    let (kinds, report) = audited(r#"{"type":"commented"}"#);
    assert_eq!(
        kinds,
        [FindingKind::UndecodableEvent, FindingKind::RedecideMismatch],
        "{report:?}"
    );
    let diff: Vec<_> = report.findings[1]
        .diff
        .iter()
        .flatten()
        .map(|d| d.path.as_str())
        .collect();
    assert_eq!(diff, ["[0].payload.text"], "{report:?}");
}

#[test]
fn audit_catches_an_event_that_is_not_an_edge() {
    let t = TempJournal::new();
    let mut e = lifecycle(&t);
    // A comment recorded on a closed ticket: not an edge from `closed`, and the rules refuse it.
    forge(
        &mut e,
        3,
        r#"{"command":"comment","text":"late"}"#,
        "commented",
        r#"{"type":"commented","text":"late"}"#,
    );
    let report = e.audit(Some("ticket/t1")).unwrap();
    let kinds: Vec<_> = report.findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [FindingKind::RedecideRejected, FindingKind::NotAnEdge],
        "{report:?}"
    );
    assert_eq!(report.findings[1].seq, Some(4));
}

#[test]
fn audit_catches_tampered_evidence_even_with_the_chain_rewritten() {
    // Change the close command's evidence to a failing run. verify catches the
    // changed row; audit independently catches that the rules refuse it.
    let t = TempJournal::new();
    drop(lifecycle(&t));
    tamper(
        &t.raw(),
        r#"UPDATE transitions SET command = replace(command, '"exit_status":0', '"exit_status":1') WHERE id = 3"#,
    );
    let e = t.engine();
    assert!(!e.journal().verify().unwrap().ok);
    let report = e.audit(None).unwrap();
    assert_eq!(
        report.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        [FindingKind::RedecideRejected]
    );
}

#[test]
fn audit_tells_changed_rules_apart_from_forgery() {
    let t = TempJournal::new();
    drop(lifecycle(&t));
    tamper(
        &t.raw(),
        "UPDATE transitions SET rules_version = 1 WHERE id = 2",
    );
    let report = t.engine().audit(None).unwrap();
    assert!(
        report.ok,
        "a declared, retired rules version is a notice, not a failure: {report:?}"
    );
    assert_eq!(
        report.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        [FindingKind::RulesChanged]
    );
    assert!(
        report.findings[0].detail.contains("retired rules v1"),
        "{report:?}"
    );
    assert_eq!(report.redecided, 2);
}

#[test]
fn a_forged_rules_version_cannot_skip_the_redecision() {
    // A future version, version 0 and any version the machine never declared are
    // failures: changing `rules_version` must not turn a re-decision into a notice.
    for forged in [3, 0, 99] {
        let t = TempJournal::new();
        drop(lifecycle(&t));
        tamper(
            &t.raw(),
            &format!("UPDATE transitions SET rules_version = {forged} WHERE id = 2"),
        );
        let report = t.engine().audit(None).unwrap();
        assert!(!report.ok, "v{forged}: {report:?}");
        assert_eq!(
            report.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [FindingKind::RulesUndeclared],
            "v{forged}"
        );
        assert!(report.findings[0].detail.contains(&format!("v{forged}")));
    }
}

#[test]
fn audit_reports_an_unregistered_machine() {
    let t = TempJournal::new();
    drop(lifecycle(&t));
    let e = Engine::open(&t.path(), &Default::default(), Registry::new()).unwrap();
    let report = e.audit(None).unwrap();
    assert!(!report.ok);
    assert_eq!(report.findings[0].kind, FindingKind::UnknownMachine);
}

#[test]
fn the_ticket_graph_is_sound() {
    assert_eq!(Ticket::graph().defects(), vec![]);
}

#[test]
fn audit_names_transition_records_whose_events_are_gone() {
    let t = TempJournal::new();
    drop(lifecycle(&t));
    // Delete the closing event (transition 3's only event): its record stays behind.
    tamper(&t.raw(), "DELETE FROM events WHERE seq = 3");
    let report = t.engine().audit(None).unwrap();
    assert!(!report.ok);
    let kinds: Vec<_> = report.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::UnrecordedEvent], "{report:?}");
    assert!(
        report.findings[0]
            .detail
            .starts_with("1 of the stream's 3 transition records"),
        "{report:?}"
    );
}

#[test]
fn a_decision_is_appended_only_at_the_version_it_was_decided_against() {
    use cairn::journal::Error as J;
    let t = TempJournal::new();
    let mut e = t.engine();
    let s = stream("t2");
    e.execute_with_context::<Ticket>(&s, &open("x"), &ctx(1), None)
        .unwrap();
    let comment = |text: &str| Command::Comment { text: text.into() };
    let Decision::Pending(first) = e
        .decide::<Ticket>(&s, &comment("a"), &ctx(2), None)
        .unwrap()
    else {
        panic!("nothing is recorded under a key")
    };
    assert_eq!((first.version, first.events.len()), (1, 1));
    // Another writer moves the stream in between: the decision conflicts, nothing is written.
    e.execute_with_context::<Ticket>(&s, &comment("b"), &ctx(3), None)
        .unwrap();
    let before = t.bytes();
    assert!(matches!(
        e.append(first),
        Err(Error::Journal(J::Conflict { .. }))
    ));
    assert_eq!(t.bytes(), before);

    // A key standing for a caller's request is found before anything is decided.
    let request = r#"{"verb":"comment"}"#;
    assert!(e.recall::<Ticket>(&s, "k", request).unwrap().is_none());
    let key = Key::Request { key: "k", request };
    let Decision::Pending(p) = e
        .decide::<Ticket>(&s, &comment("c"), &ctx(4), Some(key))
        .unwrap()
    else {
        panic!("the key is not recorded yet")
    };
    let done = e.append(p).unwrap();
    let again = e
        .recall::<Ticket>(&s, "k", request)
        .unwrap()
        .expect("recorded under the key");
    assert_eq!(
        (again.events, again.version, again.replayed),
        (done.events, done.version, true)
    );
    // Another request under the key is refused; so is the command itself (a request's
    // fingerprint never equals a command's).
    assert!(matches!(
        e.recall::<Ticket>(&s, "k", "another request"),
        Err(Error::Journal(J::IdempotencyMismatch { .. }))
    ));
    assert!(matches!(
        e.decide::<Ticket>(&s, &comment("c"), &ctx(5), Some(Key::Command("k"))),
        Err(Error::Journal(J::IdempotencyMismatch { .. }))
    ));
    assert_eq!(e.load::<Ticket>(&s).unwrap().1, 3);
}

#[test]
fn an_engine_refuses_to_write_a_machine_it_cannot_audit() {
    // Writing streams the engine's own audit would report as `unknown-machine` is
    // refused before anything is decided or written.
    let t = TempJournal::new();
    drop(t.engine());
    let before = t.bytes();
    let mut e = Engine::open(&t.path(), &Default::default(), Registry::new()).unwrap();
    let err = e
        .execute_with_context::<Ticket>(&stream("t1"), &open("x"), &ctx(1), None)
        .unwrap_err();
    assert!(
        matches!(&err, Error::UnknownMachine { name } if name == "ticket"),
        "{err:?}"
    );
    drop(e);
    assert_eq!(t.bytes(), before);
}

#[test]
fn time_travel_says_when_it_lands_inside_a_transition() {
    let t = TempJournal::new();
    let mut e = t.engine();
    e.execute_with_context::<Ticket>(&stream("t1"), &open("x"), &ctx(1), None)
        .unwrap();
    // One transition of two events (versions 2 and 3).
    let ev = |text: &str| NewEvent {
        event_type: "commented".into(),
        schema_version: 1,
        payload: format!(r#"{{"type":"commented","text":"{text}"}}"#),
    };
    e.journal_mut()
        .append(&Append {
            stream: "ticket/t1".into(),
            machine: "ticket".into(),
            expected_version: 1,
            events: vec![ev("a"), ev("b")],
            transition: TransitionRecord {
                command_name: "comment".into(),
                command: r#"{"type":"comment","text":"a"}"#.into(),
                context: serde_json::to_string(&ctx(2)).unwrap(),
                rules_version: Ticket::RULES_VERSION,
            },
            idempotency: None,
            recorded_at: "2026-11-30T09:00:00Z".into(),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .unwrap();
    let mid = e.state_view(&stream("t1"), Some(2)).unwrap();
    let m = mid
        .mid_transition
        .expect("version 2 is inside the 2..=3 transition");
    assert_eq!((m.first_version, m.last_version), (2, 3));
    for at in [1, 3] {
        assert_eq!(
            e.state_view(&stream("t1"), Some(at))
                .unwrap()
                .mid_transition,
            None,
            "--at {at}"
        );
    }
    assert_eq!(
        e.state_view(&stream("t1"), None).unwrap().mid_transition,
        None
    );
}
