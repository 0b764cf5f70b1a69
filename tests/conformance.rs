//! The journal's one contract, held on both backends by the same test code: each
//! test loops over `backends()` (SQLite, PostgreSQL). Append, replay and time
//! travel; optimistic concurrency; idempotent retries; verify's damage cases and
//! signatures; the database's own refusal of UPDATE and DELETE; foreign and newer
//! schemas; read-only opens. The process-level half (the built-in machines
//! through the real binary, concurrent writers, killed writers, copy) is in
//! `conformance_cli.rs`.

use cairn::journal::{
    AppendOutcome, Error, Journal, Options, ProblemKind, SigningKey, VerifyOptions,
};
use cairn::{Registry, StreamId};

use crate::journal::append;
use crate::support::backend::{backends, Backend, Store};
use crate::support::ctx;
use crate::support::ticket::{Command, Ticket};

/// Five appends over three streams (the same as `journal::populated`).
pub(crate) fn populate(s: &Store) {
    let mut j = s.journal();
    j.append(&append("ticket/a", 0, &["{\"a\":1}", "{\"a\":2}"], None))
        .unwrap();
    j.append(&append("ticket/b", 0, &["{\"b\":1}"], None))
        .unwrap();
    j.append(&append("ticket/a", 2, &["{\"a\":3}"], None))
        .unwrap();
    j.append(&append("ticket/c", 0, &["{\"c\":1}"], None))
        .unwrap();
    j.append(&append("ticket/b", 1, &["{\"b\":2}"], None))
        .unwrap();
}

pub(crate) fn ticket_registry() -> Registry {
    let mut r = Registry::new();
    r.register::<Ticket>();
    r
}

#[test]
fn streams_name_each_last_event_and_its_time_alike() {
    for b in backends() {
        let s = b.fresh();
        let mut j = s.journal();
        let mut a = append("ticket/a", 0, &["{}", "{}"], None);
        a.events[1].event_type = "closed".into();
        j.append(&a).unwrap();
        let mut b2 = append("ticket/b", 0, &["{}"], None);
        b2.events[0].event_type = "opened".into();
        b2.recorded_at = "2026-11-30T05:00:00Z".into();
        j.append(&b2).unwrap();
        let mut a2 = append("ticket/a", 2, &["{}"], None);
        a2.events[0].event_type = "reopened".into();
        a2.recorded_at = "2026-11-30T06:00:00Z".into();
        j.append(&a2).unwrap();
        let streams: Vec<_> = s
            .reader()
            .streams()
            .unwrap()
            .into_iter()
            .map(|s| (s.stream, s.version, s.last_event_type, s.last_event_at))
            .collect();
        assert_eq!(
            streams,
            [
                (
                    "ticket/a".to_owned(),
                    3,
                    "reopened".to_owned(),
                    "2026-11-30T06:00:00Z".to_owned()
                ),
                (
                    "ticket/b".to_owned(),
                    1,
                    "opened".to_owned(),
                    "2026-11-30T05:00:00Z".to_owned()
                ),
            ],
            "{b:?}"
        );
    }
}

#[test]
fn appends_replay_and_time_travel_alike() {
    let mut heads = Vec::new();
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        let j = s.reader();
        let a = j.read_stream("ticket/a", None).unwrap();
        assert_eq!(
            a.iter().map(|e| e.version).collect::<Vec<_>>(),
            [1, 2, 3],
            "{b:?}"
        );
        assert_eq!(
            a.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2, 4],
            "{b:?}"
        );
        assert_eq!(
            j.read_stream("ticket/a", Some(2)).unwrap().len(),
            2,
            "{b:?}"
        );
        assert_eq!(j.stream_version("ticket/b").unwrap(), 2, "{b:?}");
        assert_eq!(j.stream_version("ticket/none").unwrap(), 0, "{b:?}");
        assert_eq!(
            j.stream_machine("ticket/c").unwrap().as_deref(),
            Some("ticket")
        );
        assert_eq!(j.read_after(4, None, 10).unwrap().len(), 2, "{b:?}");
        assert_eq!(
            j.read_after(0, Some("ticket/b"), 10).unwrap().len(),
            2,
            "{b:?}"
        );
        let streams: Vec<_> = j
            .streams()
            .unwrap()
            .into_iter()
            .map(|s| (s.stream, s.version))
            .collect();
        assert_eq!(
            streams,
            [
                ("ticket/a".into(), 3),
                ("ticket/b".into(), 2),
                ("ticket/c".into(), 1)
            ],
            "{b:?}"
        );
        let ts = j.transitions("ticket/a").unwrap();
        assert_eq!(
            ts.iter()
                .map(|t| (t.first_version, t.last_version))
                .collect::<Vec<_>>(),
            [(1, 2), (3, 3)],
            "{b:?}"
        );
        assert_eq!(j.transition_count("ticket/a").unwrap(), 2);
        assert_eq!(j.transition(ts[1].id).unwrap(), Some(ts[1].clone()));
        let report = j.verify().unwrap();
        assert!(report.ok, "{b:?}: {report:?}");
        assert!(report.unguarded.is_empty(), "{b:?}: {:?}", report.unguarded);
        heads.push((j.head().unwrap(), j.read_after(0, None, 100).unwrap()));

        // The engine over either backend: state now and at every earlier version.
        let mut e = s.engine(ticket_registry());
        let t = StreamId::parse("ticket/t").unwrap();
        e.execute_with_context::<Ticket>(&t, &Command::Open { title: "x".into() }, &ctx(1), None)
            .unwrap();
        e.execute_with_context::<Ticket>(&t, &Command::Comment { text: "y".into() }, &ctx(2), None)
            .unwrap();
        let now = serde_json::to_value(e.state_at::<Ticket>(&t, None).unwrap()).unwrap();
        let at1 = serde_json::to_value(e.state_at::<Ticket>(&t, Some(1)).unwrap()).unwrap();
        assert_ne!(now, at1, "{b:?}");
        assert_eq!(e.load::<Ticket>(&t).unwrap().1, 2, "{b:?}");
        let audit = e.audit(Some("ticket/t")).unwrap();
        assert!(audit.ok, "{b:?}: {audit:?}");
    }
    // Same input, same chain: the hashes do not depend on the backend.
    assert_eq!(heads[0], heads[1]);
}

#[test]
fn a_stale_writer_conflicts_and_writes_nothing() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        let mut j = s.journal();
        let head = j.head().unwrap();
        match j.append(&append("ticket/a", 2, &["{\"stale\":1}"], None)) {
            Err(Error::Conflict {
                expected: 2,
                actual: 3,
                ..
            }) => {}
            other => panic!("{b:?}: {other:?}"),
        }
        let mut wrong = append("ticket/a", 3, &["{}"], None);
        wrong.machine = "other".into();
        assert!(
            matches!(j.append(&wrong), Err(Error::MachineMismatch { .. })),
            "{b:?}"
        );
        assert!(
            matches!(
                j.append(&append("ticket/a", 3, &[], None)),
                Err(Error::InvalidAppend(_))
            ),
            "{b:?}"
        );
        // A batch is all or nothing: its second entry conflicts, so neither lands.
        let batch = [
            append("ticket/d", 0, &["{\"d\":1}"], None),
            append("ticket/a", 1, &["{\"late\":1}"], None),
        ];
        assert!(
            matches!(j.append_batch(&batch), Err(Error::Conflict { .. })),
            "{b:?}"
        );
        assert_eq!(j.head().unwrap(), head, "{b:?}: nothing was written");
        assert_eq!(j.stream_version("ticket/d").unwrap(), 0, "{b:?}");
        assert!(j.verify().unwrap().ok);
    }
}

#[test]
fn idempotent_retries_return_the_first_receipt() {
    for b in backends() {
        let s = b.fresh();
        let mut j = s.journal();
        let first = j
            .append(&append(
                "ticket/k",
                0,
                &["{\"k\":1}"],
                Some(("key-1", "fp-1")),
            ))
            .unwrap();
        let AppendOutcome::Appended(receipt) = first else {
            panic!("{b:?}: {first:?}")
        };
        // A retry decided against a later version still matches its key.
        let again = j
            .append(&append(
                "ticket/k",
                1,
                &["{\"k\":1}"],
                Some(("key-1", "fp-1")),
            ))
            .unwrap();
        assert_eq!(again, AppendOutcome::Duplicate(receipt.clone()), "{b:?}");
        assert!(
            matches!(
                j.append(&append(
                    "ticket/k",
                    1,
                    &["{\"k\":2}"],
                    Some(("key-1", "fp-2"))
                )),
                Err(Error::IdempotencyMismatch { .. })
            ),
            "{b:?}"
        );
        // The key is per stream.
        let other = j
            .append(&append("ticket/l", 0, &["{}"], Some(("key-1", "fp-1"))))
            .unwrap();
        assert!(matches!(other, AppendOutcome::Appended(_)), "{b:?}");
        assert_eq!(j.read_after(0, None, 10).unwrap().len(), 2, "{b:?}");
        let t = j.transition_by_key("ticket/k", "key-1").unwrap().unwrap();
        assert_eq!(t.id, receipt.transition_id, "{b:?}");
    }
}

/// One tampering, as SQL both backends understand, and the problem verify must name.
struct Damage {
    name: &'static str,
    sql: &'static str,
    kind: ProblemKind,
}

fn damages() -> Vec<Damage> {
    vec![
        Damage {
            name: "a payload edited",
            sql: "UPDATE events SET payload = '{\"a\":9}' WHERE seq = 2",
            kind: ProblemKind::HashMismatch,
        },
        Damage {
            name: "a middle event deleted",
            sql: "DELETE FROM events WHERE seq = 3",
            kind: ProblemKind::SeqGap,
        },
        Damage {
            name: "two events swapped",
            sql: "UPDATE events SET seq = 100 WHERE seq = 3; UPDATE events SET seq = 3 WHERE seq = 5; UPDATE events SET seq = 5 WHERE seq = 100",
            kind: ProblemKind::HashMismatch,
        },
        Damage {
            name: "a transition record deleted",
            sql: "DELETE FROM transitions WHERE id = 2",
            kind: ProblemKind::MissingTransition,
        },
        Damage {
            name: "recorded evidence edited",
            sql: "UPDATE transitions SET command = '{\"n\":9}' WHERE id = 3",
            kind: ProblemKind::HashMismatch,
        },
        Damage {
            name: "an orphan transition record added",
            sql: "INSERT INTO transitions (id, stream, machine, rules_version, command_name, command, context, first_version, last_version, recorded_at) VALUES (50, 'ticket/z', 'ticket', 1, 'comment', '{}', '{}', 1, 1, 'x')",
            kind: ProblemKind::TransitionIncomplete,
        },
        Damage {
            name: "a version made negative",
            sql: "UPDATE events SET version = -1 WHERE seq = 4",
            kind: ProblemKind::Unreadable,
        },
        Damage {
            name: "a signature forged",
            sql: "UPDATE signatures SET signature = 'ab' WHERE transition_id = 2",
            kind: ProblemKind::BadSignature,
        },
    ]
}

pub(crate) fn signed() -> Options {
    Options {
        signing_key: Some(SigningKey::from_seed([42; 32])),
        ..Options::default()
    }
}

pub(crate) fn populate_signed(s: &Store) {
    let mut j = Journal::open(&s.db(), &signed()).unwrap();
    j.append(&append("ticket/a", 0, &["{\"a\":1}", "{\"a\":2}"], None))
        .unwrap();
    j.append(&append("ticket/b", 0, &["{\"b\":1}"], None))
        .unwrap();
    j.append(&append("ticket/a", 2, &["{\"a\":3}"], None))
        .unwrap();
    j.append(&append("ticket/c", 0, &["{\"c\":1}"], None))
        .unwrap();
}

/// The audit lists streams by the index (one seek each) and reads their
/// records a page at a time: the same names and records as the full reads,
/// on both backends.
#[test]
fn stream_names_and_record_pages_match_the_full_reads_on_both() {
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        let j = s.reader();
        let full: Vec<String> = j.streams().unwrap().into_iter().map(|i| i.stream).collect();
        assert_eq!(j.stream_names().unwrap(), full, "{b:?}");
        for stream in &full {
            let all = j.transitions(stream).unwrap();
            let mut paged = vec![];
            let mut after = 0;
            loop {
                let page = j.transitions_from(stream, after, 1).unwrap();
                let Some(last) = page.last() else { break };
                after = last.first_version;
                paged.extend(page);
            }
            assert_eq!(paged, all, "{b:?} {stream}");
        }
    }
}

/// A stream longer than a replay page reads back whole and in order, and a
/// replay cut at or across a page's edge stops there, on both backends.
#[test]
fn a_stream_of_several_pages_replays_whole_on_both() {
    let n = 2 * 4096 + 5;
    let texts: Vec<String> = (0..n).map(|i| format!("{{\"i\":{i}}}")).collect();
    for b in backends() {
        let s = b.fresh();
        let mut j = Journal::open(&s.db(), &Options::default()).unwrap();
        let mut v = 0;
        for chunk in texts.chunks(1000) {
            let payloads: Vec<&str> = chunk.iter().map(String::as_str).collect();
            j.append(&append("ticket/long", v, &payloads, None))
                .unwrap();
            v += chunk.len() as u64;
        }
        for up_to in [4095, 4096, 4097, n as i64, i64::MAX] {
            let mut seen = vec![];
            j.replay_stream("ticket/long", up_to, &mut |r| {
                seen.push((r.version, r.payload.to_owned()));
                Ok(())
            })
            .unwrap();
            let want = (up_to as usize).min(n);
            assert_eq!(seen.len(), want, "{b:?} up to {up_to}");
            assert!(
                seen.iter()
                    .enumerate()
                    .all(|(i, (v, p))| *v == i as u64 + 1 && *p == texts[i]),
                "{b:?} up to {up_to}"
            );
        }
    }
}

/// Transitions long enough to have their chain hashed on a second thread
/// (256 events and more), in one batch with short ones and across streams:
/// every stored hash is the chain's definition (`chain_hash`) of the row
/// before it and its record, the seqs run on without a gap, and verify
/// finds the journal intact, on both backends.
#[test]
fn long_transitions_chain_as_short_ones_on_both() {
    let texts: Vec<String> = (0..1200).map(|i| format!("{{\"i\":{i}}}")).collect();
    let payloads = |from: usize, n: usize| -> Vec<&str> {
        texts[from..from + n].iter().map(String::as_str).collect()
    };
    for b in backends() {
        let s = b.fresh();
        let mut j = s.journal();
        j.append(&append("ticket/a", 0, &payloads(0, 3), None))
            .unwrap();
        let out = j
            .append_batch(&[
                append("ticket/a", 3, &payloads(3, 300), None),
                append("ticket/b", 0, &payloads(303, 1), None),
                append("ticket/a", 303, &payloads(304, 700), None),
            ])
            .unwrap();
        let seqs: Vec<_> = out
            .iter()
            .map(|o| (o.receipt().first_seq, o.receipt().last_seq))
            .collect();
        assert_eq!(seqs, [(4, 303), (304, 304), (305, 1004)], "{b:?}");
        j.append(&append("ticket/c", 0, &payloads(1004, 196), None))
            .unwrap();
        let events = j.read_after(0, None, 10_000).unwrap();
        assert_eq!(events.len(), 1200, "{b:?}");
        let mut prev = "0".repeat(64);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.seq, i as i64 + 1, "{b:?}");
            let record = j.transition(e.transition_id).unwrap().unwrap();
            assert_eq!(
                e.hash,
                cairn::journal::chain_hash(&prev, e, &record),
                "{b:?} seq {}",
                e.seq
            );
            prev.clone_from(&e.hash);
        }
        assert_eq!(j.head().unwrap(), Some((1200, prev)), "{b:?}");
        let report = j.verify().unwrap();
        assert!(report.ok, "{b:?}: {report:?}");
    }
}

/// A row written behind the chain at the last seq an i64 holds leaves no seq
/// for the next event: the append is refused as damage and writes nothing,
/// on both backends (it overflowed the seq before).
#[test]
fn a_head_at_the_last_seq_takes_no_more_events_on_both() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        s.exec(&format!(
            "INSERT INTO events (seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash) VALUES ({}, 'ticket/z', 1, 'ticket', 'commented', 1, '{{}}', '2026-11-30T04:00:00Z', 1, '{}')",
            i64::MAX,
            "0".repeat(64)
        ))
        .unwrap();
        let mut j = s.journal();
        let before = (
            j.read_after(0, None, 100).unwrap(),
            j.transitions("ticket/a").unwrap(),
        );
        let e = j
            .append(&append("ticket/a", 3, &["{}", "{}"], None))
            .unwrap_err();
        assert!(
            matches!(&e, Error::Damaged { detail } if detail.contains(&format!("head is at seq {}", i64::MAX))),
            "{b:?}: {e:?}"
        );
        let after = (
            j.read_after(0, None, 100).unwrap(),
            j.transitions("ticket/a").unwrap(),
        );
        assert_eq!(before, after, "{b:?}");
    }
}

/// A NUL byte in any text of an append is bad input on both backends (an
/// invalid append naming the field, nothing written), where PostgreSQL's own
/// refusal read as a damaged journal and SQLite stored what no copy to
/// PostgreSQL could hold (helper-82).
#[test]
fn a_nul_byte_is_refused_alike_on_both() {
    type Edit = fn(&mut cairn::journal::Append);
    let cases: [(&str, Edit); 12] = [
        ("stream", |a| a.stream.push('\0')),
        ("machine", |a| a.machine.push('\0')),
        ("recorded_at", |a| a.recorded_at.push('\0')),
        ("command_name", |a| a.transition.command_name.push('\0')),
        ("command", |a| a.transition.command.push('\0')),
        ("context", |a| a.transition.context.push('\0')),
        ("idempotency key", |a| {
            a.idempotency = Some(cairn::journal::Idempotency {
                key: "k\0".into(),
                fingerprint: "f".into(),
            })
        }),
        ("fingerprint", |a| {
            a.idempotency = Some(cairn::journal::Idempotency {
                key: "k".into(),
                fingerprint: "\0f".into(),
            })
        }),
        ("event_type", |a| {
            a.events[1].event_type = "com\0mented".into()
        }),
        ("payload", |a| a.events[0].payload = "{\"a\":\"\0\"}".into()),
        ("a stream read", |a| a.reads.push(("ticket/\0".into(), 0))),
        ("a machine scanned", |a| {
            a.scans.push(("tick\0et".into(), 0))
        }),
    ];
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        let mut j = s.journal();
        let before = j.read_after(0, None, 100).unwrap();
        for (field, edit) in cases {
            let mut a = append("ticket/a", 3, &["{}", "{}"], None);
            edit(&mut a);
            let e = j.append(&a).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidAppend(m) if m.starts_with(&format!("{field} holds a NUL byte"))),
                "{b:?} {field}: {e:?}"
            );
        }
        assert_eq!(j.read_after(0, None, 100).unwrap(), before, "{b:?}");
        // The JSON escape of a NUL is text without one: stored as written.
        let escaped = "{\"a\":\"\\u0000\"}";
        j.append(&append("ticket/a", 3, &[escaped], None)).unwrap();
        let stored = j.read_stream("ticket/a", None).unwrap();
        assert_eq!(
            stored.last().map(|e| e.payload.as_str()),
            Some(escaped),
            "{b:?}"
        );
    }
}

/// A read by a name holding a NUL answers what a read by a name the journal
/// lacks answers, on both backends: no such name can be stored (an append
/// refuses it), and PostgreSQL's own refusal of the parameter read as a
/// damaged journal where SQLite answered none (helper-83 F1).
#[test]
fn a_read_by_a_name_with_a_nul_finds_nothing_on_both() {
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        let j = s.reader();
        for name in ["ticket/a\0", "ticket/\0a", "\0"] {
            let at = format!("{b:?} {name:?}");
            assert_eq!(j.stream_version(name).unwrap(), 0, "{at}");
            assert_eq!(j.machine_tip(name).unwrap(), 0, "{at}");
            assert!(j.machine_streams(name).unwrap().is_empty(), "{at}");
            assert_eq!(j.stream_machine(name).unwrap(), None, "{at}");
            assert!(j.read_stream(name, None).unwrap().is_empty(), "{at}");
            let mut replayed = 0;
            j.replay_stream(name, i64::MAX, &mut |_| {
                replayed += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(replayed, 0, "{at}");
            assert!(j.read_after(0, Some(name), 10).unwrap().is_empty(), "{at}");
            assert_eq!(j.transition_at(name, 1).unwrap(), None, "{at}");
            assert!(j.transitions(name).unwrap().is_empty(), "{at}");
            assert!(j.transitions_from(name, 0, 10).unwrap().is_empty(), "{at}");
            assert_eq!(j.transition_count(name).unwrap(), 0, "{at}");
            assert!(j.transition_by_key(name, "k").unwrap().is_none(), "{at}");
            assert!(
                j.transition_by_key("ticket/a", name).unwrap().is_none(),
                "{at}"
            );
        }
        // The names without the NUL are there: the reads above asked the journal.
        assert_eq!(j.stream_version("ticket/a").unwrap(), 3, "{b:?}");
        assert_eq!(j.machine_streams("ticket").unwrap().len(), 3, "{b:?}");
    }
}

/// An event stamped with another time than its transition record, its chain
/// hashed anew over the forgery, is named a transition mismatch on both
/// backends: one time stamps a transition and its events (helper-82: verify
/// called such a journal intact).
#[test]
fn an_event_stamped_apart_from_its_transition_is_named_on_both() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        s.tamper("UPDATE events SET recorded_at = '2026-11-30T09:00:00Z' WHERE seq = 2");
        let j = s.reader();
        let mut prev = "0".repeat(64);
        for e in j.read_after(0, None, 100).unwrap() {
            let record = j.transition(e.transition_id).unwrap().unwrap();
            let hash = cairn::journal::chain_hash(&prev, &e, &record);
            s.exec(&format!(
                "UPDATE events SET hash = '{hash}' WHERE seq = {}",
                e.seq
            ))
            .unwrap();
            prev = hash;
        }
        let report = s.reader().verify().unwrap();
        let found: Vec<_> = report.problems.iter().map(|p| (p.kind, p.seq)).collect();
        assert_eq!(
            found,
            [(ProblemKind::TransitionMismatch, Some(2))],
            "{b:?}: {report:?}"
        );
        assert!(
            report.problems[0]
                .detail
                .contains("at 2026-11-30T09:00:00Z is outside transition 1"),
            "{b:?}: {report:?}"
        );
    }
}

/// The walk opens as many records as there are, one of them twice: a count
/// alone would miss the record left without events; verify names it.
#[test]
fn a_record_emptied_by_moving_its_event_back_is_named_on_both() {
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        s.tamper("UPDATE events SET transition_id = 1 WHERE seq = 4");
        let r = s.reader().verify().unwrap();
        assert!(
            r.problems
                .iter()
                .any(|p| p.kind == ProblemKind::TransitionIncomplete
                    && p.transition_id == Some(3)
                    && p.detail.contains("has no events")),
            "{b:?}: {:?}",
            r.problems
        );
    }
}

#[test]
fn verify_names_the_same_damage_on_both() {
    for d in damages() {
        let mut found = Vec::new();
        for b in backends() {
            let s = b.fresh();
            populate_signed(&s);
            s.tamper(d.sql);
            let r = s.reader().verify().unwrap();
            assert!(!r.ok, "{b:?}: `{}` was not caught", d.name);
            assert!(
                r.problems.iter().any(|p| p.kind == d.kind),
                "{b:?}: `{}` should be {:?}: {:?}",
                d.name,
                d.kind,
                r.problems
            );
            // The guards were dropped to do it, and verify says so.
            assert!(!r.unguarded.is_empty(), "{b:?}: {}", d.name);
            found.push(
                r.problems
                    .iter()
                    .map(|p| (p.kind, p.seq))
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(
            found[0], found[1],
            "`{}` reads differently on the two backends",
            d.name
        );
    }
}

#[test]
fn signatures_keys_and_anchors_verify_alike() {
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        let key = SigningKey::from_seed([42; 32]);
        let j = s.reader();
        let trusted = VerifyOptions {
            trusted_key: Some(key.public_hex()),
            ..VerifyOptions::default()
        };
        let r = j.verify_with(&trusted).unwrap();
        assert!(r.ok, "{b:?}: {r:?}");
        assert_eq!((r.signing.status, r.signing.signed), ("signed", 4), "{b:?}");
        let head = r.head.clone().unwrap();
        let anchor = key.anchor(head.seq, &head.hash);
        let anchored = VerifyOptions {
            anchor: Some(anchor),
            ..VerifyOptions::default()
        };
        assert!(j.verify_with(&anchored).unwrap().ok, "{b:?}");
        drop(j);
        // Truncating the tail is caught only by the anchor; stripping every
        // signature only by the trusted key.
        s.tamper("DELETE FROM signatures WHERE transition_id = 4; DELETE FROM events WHERE transition_id = 4; DELETE FROM transitions WHERE id = 4");
        let j = s.reader();
        assert!(j.verify().unwrap().ok, "{b:?}");
        let r = j.verify_with(&anchored).unwrap();
        assert_eq!(r.problems[0].kind, ProblemKind::HeadMissing, "{b:?}: {r:?}");
        drop(j);
        s.exec("DELETE FROM signatures").unwrap();
        let j = s.reader();
        assert_eq!(j.verify().unwrap().signing.status, "unsigned", "{b:?}");
        let r = j.verify_with(&trusted).unwrap();
        assert!(
            r.problems.iter().all(|p| p.kind == ProblemKind::Unsigned),
            "{b:?}: {r:?}"
        );
    }
}

#[test]
fn the_database_refuses_update_and_delete_and_verify_reports_a_missing_guard() {
    let tables = ["events", "transitions", "signing_keys", "signatures"];
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        for t in tables {
            for sql in [
                format!("UPDATE {t} SET rowid_probe = 1"),
                format!("DELETE FROM {t}"),
            ] {
                let sql = sql.replace(
                    "SET rowid_probe = 1",
                    &format!("SET {} = {}", column(t), column(t)),
                );
                let err = s
                    .exec(&sql)
                    .expect_err(&format!("{b:?}: `{sql}` was allowed"));
                assert!(err.contains("append-only"), "{b:?}: `{sql}`: {err}");
            }
        }
        if b == Backend::Postgres {
            let err = s.exec("TRUNCATE events").expect_err("TRUNCATE was allowed");
            assert!(err.contains("append-only"), "{err}");
            let err = s
                .exec("DELETE FROM cairn_journal")
                .expect_err("the marker changed");
            assert!(err.contains("append-only"), "{err}");
        }
        assert!(s.reader().verify().unwrap().unguarded.is_empty(), "{b:?}");
        // Drop one guard: nothing in the history changed, but verify reports it.
        let drop = match b {
            Backend::Sqlite => "DROP TRIGGER events_append_only_delete",
            Backend::Postgres => "DROP TRIGGER events_append_only ON events",
        };
        s.exec(drop).unwrap();
        let r = s.reader().verify().unwrap();
        assert!(r.ok, "{b:?}: {r:?}");
        assert!(
            r.unguarded.contains(&"DELETE on events".to_owned()),
            "{b:?}: {:?}",
            r.unguarded
        );
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["unguarded"].is_array(), "{b:?}: {json}");
    }
}

fn column(table: &str) -> &'static str {
    match table {
        "events" => "payload",
        "transitions" => "command",
        "signing_keys" => "added_at",
        _ => "signature",
    }
}

#[test]
fn foreign_and_newer_schemas_are_refused_before_anything_is_written() {
    for b in backends() {
        // Another application's database.
        let s = b.fresh();
        s.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)")
            .unwrap();
        for read_only in [false, true] {
            let opened = if read_only {
                Journal::open_read_only(&s.db(), &Options::default())
            } else {
                Journal::open(&s.db(), &Options::default())
            };
            assert!(
                matches!(opened, Err(Error::NotAJournal { .. })),
                "{b:?}: {:?}",
                opened.err()
            );
        }
        assert!(
            s.exec("SELECT count(*) FROM events").is_err(),
            "{b:?}: nothing was created"
        );
        // A journal of a newer schema.
        let s = b.fresh();
        populate(&s);
        let bump = match b {
            Backend::Sqlite => "PRAGMA user_version = 99",
            Backend::Postgres => "INSERT INTO cairn_journal VALUES (99, 1668443697, 'x')",
        };
        s.exec(bump).unwrap();
        match Journal::open(&s.db(), &Options::default()) {
            Err(Error::NewerSchema {
                found: 99,
                supported,
            }) => {
                assert_eq!(supported, cairn::journal::SCHEMA_VERSION)
            }
            other => panic!("{b:?}: {:?}", other.err()),
        }
        // A journal whose schema version is below any cairn writes (helper-90:
        // -1 skipped every migration and took appends): neither a writer nor a
        // reader opens it.
        let s = b.fresh();
        populate(&s);
        s.tamper(match b {
            Backend::Sqlite => "PRAGMA user_version = -1",
            Backend::Postgres => "UPDATE cairn_journal SET schema_version = schema_version - 10",
        });
        for opened in [
            Journal::open(&s.db(), &Options::default()).err(),
            Journal::open_read_only(&s.db(), &Options::default()).err(),
        ] {
            assert!(
                matches!(&opened, Some(Error::NotAJournal { reason, .. }) if reason.contains("which no cairn writes")),
                "{b:?}: {opened:?}"
            );
        }
        // No journal yet: a reader finds none and creates none.
        let s = b.fresh();
        assert!(
            matches!(
                Journal::open_read_only(&s.db(), &Options::default()),
                Err(Error::Missing { .. })
            ),
            "{b:?}"
        );
        let no_create = Options {
            create: false,
            ..Options::default()
        };
        assert!(
            matches!(
                Journal::open(&s.db(), &no_create),
                Err(Error::Missing { .. })
            ),
            "{b:?}"
        );
        assert!(
            s.exec("SELECT count(*) FROM events").is_err(),
            "{b:?}: nothing was created"
        );
    }
}

#[test]
fn a_reader_cannot_write() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        let mut r = s.reader();
        assert_eq!(r.access(), cairn::journal::Access::ReadOnly, "{b:?}");
        let head = r.head().unwrap();
        match r.append(&append("ticket/a", 3, &["{}"], None)) {
            Err(Error::ReadOnly) => {}
            other => panic!("{b:?}: {other:?}"),
        }
        assert_eq!(s.reader().head().unwrap(), head, "{b:?}");
    }
}
