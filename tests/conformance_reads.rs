//! The journal's transition lookups, held on both backends by the same test code:
//! the transition covering a stream version (`transition_at`, behind `cairn state
//! --at` saying when a version falls inside a transition) and one transition by
//! id with its events (`transition_by_id`, behind `cairn journal show`).

use cairn::journal::{Append, NewEvent, TransitionRecord};
use cairn::{Machine, StreamId};

use crate::conformance::{populate, ticket_registry};
use crate::park::park as cairn;
use crate::reliability::{episode, prepare};
use crate::support::backend::backends;
use crate::support::ctx;
use crate::support::ticket::{Command, Ticket};

#[test]
fn transitions_are_found_by_version_and_by_id_alike() {
    let mut seen = Vec::new();
    for b in backends() {
        let s = b.fresh();
        // ticket/a: one transition of versions 1..=2, then one of version 3.
        populate(&s);
        let j = s.reader();
        let ts = j.transitions("ticket/a").unwrap();
        let (first, second) = (ts[0].id, ts[1].id);
        assert_eq!(
            j.transition_at("ticket/a", 1).unwrap(),
            Some((first, 1, 2)),
            "{b:?}"
        );
        assert_eq!(
            j.transition_at("ticket/a", 2).unwrap(),
            Some((first, 1, 2)),
            "{b:?}"
        );
        assert_eq!(
            j.transition_at("ticket/a", 3).unwrap(),
            Some((second, 3, 3)),
            "{b:?}"
        );
        assert_eq!(j.transition_at("ticket/a", 4).unwrap(), None, "{b:?}");
        assert_eq!(j.transition_at("ticket/none", 1).unwrap(), None, "{b:?}");

        let (record, events) = j.transition_by_id(first).unwrap().expect("transition");
        assert_eq!(record, ts[0], "{b:?}");
        assert_eq!(
            events
                .iter()
                .map(|e| (e.version, e.payload.as_str()))
                .collect::<Vec<_>>(),
            [(1, "{\"a\":1}"), (2, "{\"a\":2}")],
            "{b:?}"
        );
        assert!(events.iter().all(|e| e.transition_id == first), "{b:?}");
        assert_eq!(j.transition_by_id(9_999).unwrap(), None, "{b:?}");
        seen.push(j.transition_by_id(second).unwrap());
    }
    // The same record and events on either backend.
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn time_travel_says_when_it_lands_inside_a_transition_alike() {
    for b in backends() {
        let s = b.fresh();
        let mut e = s.engine(ticket_registry());
        let t = StreamId::parse("ticket/t1").unwrap();
        e.execute_with_context::<Ticket>(&t, &Command::Open { title: "x".into() }, &ctx(1), None)
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
        let m = e
            .state_view(&t, Some(2))
            .unwrap()
            .mid_transition
            .unwrap_or_else(|| panic!("{b:?}: version 2 is inside the 2..=3 transition"));
        assert_eq!((m.first_version, m.last_version), (2, 3), "{b:?}");
        for at in [Some(1), Some(3), None] {
            assert_eq!(
                e.state_view(&t, at).unwrap().mid_transition,
                None,
                "{b:?}: --at {at:?}"
            );
        }
    }
}

#[test]
fn journal_show_prints_a_transition_and_its_events_alike() {
    let mut shown = Vec::new();
    for b in backends() {
        let s = b.fresh();
        let db = s.db();
        assert_eq!(prepare(&db, &episode(1), &[]).0, 0, "{b:?}");
        let (code, v, err) = cairn(&["journal", "show", "1", "--format", "json"], "", Some(&db));
        assert_eq!(code, 0, "{b:?}: {v} {err}");
        assert_eq!(v["transition"]["id"], 1, "{b:?}");
        assert_eq!(v["transition"]["command_name"], "prepare-attempt", "{b:?}");
        assert!(v["transition"]["command"].is_object(), "{b:?}: {v}");
        let events = v["events"].as_array().expect("events");
        assert_eq!(events.len(), 1, "{b:?}");
        assert_eq!(events[0]["event_type"], "attempt-prepared", "{b:?}");
        assert!(events[0]["payload"].is_object(), "{b:?}");
        shown.push((
            v["transition"]["command_name"].clone(),
            events[0]["event_type"].clone(),
        ));
        let (code, e, _) = cairn(&["journal", "show", "99"], "", Some(&db));
        assert_eq!(code, 2, "{b:?}: {e}");
        assert_eq!(e["error"]["field"], "transition", "{b:?}");
    }
    assert_eq!(shown[0], shown[1]);
}

/// A scan (a decision that read every stream of one machine) commits only if no
/// stream of that machine has had a transition since it read the machine's tip:
/// a new stream of the machine conflicts as a moved one does, naming
/// `machine/*`; a stream of a machine whose name merely shares a prefix does not.
#[test]
fn a_scan_conflicts_when_any_stream_of_its_machine_moves_alike() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        let mut e = s.engine(ticket_registry());
        let append = |stream: &str, expected: u64, scans: Vec<(String, i64)>| Append {
            stream: stream.into(),
            machine: stream.split('/').next().unwrap().into(),
            expected_version: expected,
            events: vec![NewEvent {
                event_type: "commented".into(),
                schema_version: 1,
                payload: r#"{"type":"commented","text":"x"}"#.into(),
            }],
            transition: TransitionRecord {
                command_name: "comment".into(),
                command: r#"{"type":"comment","text":"x"}"#.into(),
                context: serde_json::to_string(&ctx(2)).unwrap(),
                rules_version: Ticket::RULES_VERSION,
            },
            idempotency: None,
            recorded_at: "2026-11-30T09:00:00Z".into(),
            reads: Vec::new(),
            scans,
        };
        let tip = e.journal().machine_tip("ticket").unwrap();
        let last = e
            .journal()
            .streams()
            .unwrap()
            .iter()
            .filter(|i| i.machine == "ticket")
            .flat_map(|i| e.journal().transitions(&i.stream).unwrap())
            .map(|t| t.id)
            .max()
            .unwrap();
        assert_eq!(tip, last, "{b:?}");
        assert_eq!(e.journal().machine_tip("ticke").unwrap(), 0, "{b:?}");
        // Neighbours by name are other machines: the scan holds.
        for other in ["ticket-b/1", "ticketb/1", "ticket.b/1"] {
            e.journal_mut().append(&append(other, 0, vec![])).unwrap();
        }
        assert_eq!(e.journal().machine_tip("ticket").unwrap(), tip, "{b:?}");
        // The machine's streams, listed by the same name range: exactly its own.
        let mut own: Vec<String> = e
            .journal()
            .streams()
            .unwrap()
            .into_iter()
            .filter(|i| i.machine == "ticket")
            .map(|i| i.stream)
            .collect();
        own.sort();
        assert!(!own.is_empty(), "{b:?}");
        assert_eq!(e.journal().machine_streams("ticket").unwrap(), own, "{b:?}");
        assert!(
            e.journal().machine_streams("ticke").unwrap().is_empty(),
            "{b:?}"
        );
        e.journal_mut()
            .append(&append("scanner/1", 0, vec![("ticket".into(), tip)]))
            .unwrap();
        // A new stream of the machine appears: the same scan is stale.
        e.journal_mut()
            .append(&append("ticket/new", 0, vec![]))
            .unwrap();
        match e
            .journal_mut()
            .append(&append("scanner/1", 1, vec![("ticket".into(), tip)]))
        {
            Err(cairn::journal::Error::Conflict { stream, .. }) => {
                assert_eq!(stream, "ticket/*", "{b:?}")
            }
            other => panic!("{b:?}: a moved machine must conflict: {other:?}"),
        }
        assert_eq!(e.journal().stream_version("scanner/1").unwrap(), 1, "{b:?}");
    }
}
