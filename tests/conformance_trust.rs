//! Journal trust on both backends from the same test code: signature checks are
//! switched on by the tables present (never by the recorded schema version), a
//! reader refuses a journal whose tables are gone, a stored value of the wrong
//! type is damage, no anchor is signed for a journal that fails verify. The cases
//! that cannot exist on PostgreSQL (SQLite's structural check, file modes,
//! read-only media, a key colliding with the journal's files) run on SQLite and
//! are skipped on PostgreSQL by `sqlite_only`, with the reason in the code.

use cairn::journal::{Access, Error, Journal, Options, ProblemKind};
use cairn::{FindingKind, StreamId};

use crate::conformance::{populate, populate_signed, signed, ticket_registry};
use crate::journal::append;
use crate::support::backend::{backends, sqlite_only, Backend, Store};
use crate::support::ctx;
use crate::support::ticket::{Command, Ticket};
use crate::trust::{files, Mount};
use crate::trust_cli::{cairn, prepare};

#[test]
fn signature_checks_follow_the_tables_not_the_recorded_version() {
    for b in backends() {
        let s = b.fresh();
        populate_signed(&s);
        // Forge one signature and record the journal as if it predated signing.
        let lower = match b {
            Backend::Sqlite => "PRAGMA user_version = 1;",
            Backend::Postgres => "DELETE FROM cairn_journal WHERE schema_version = 2;",
        };
        s.tamper(&format!(
            "UPDATE signatures SET signature = 'ab' WHERE transition_id = 2; {lower}"
        ));
        let r = s.reader().verify().unwrap();
        assert!(!r.ok, "{b:?}: {r:?}");
        assert!(
            r.problems
                .iter()
                .any(|p| p.kind == ProblemKind::BadSignature && p.transition_id == Some(2)),
            "{b:?}: {r:?}"
        );
        assert_eq!(r.signing.status, "signed", "{b:?}");
        // The dropped guards of the signing tables are still named.
        for guard in ["UPDATE on signatures", "DELETE on signing_keys"] {
            assert!(
                r.unguarded.iter().any(|u| u == guard),
                "{b:?}: {guard} missing from {:?}",
                r.unguarded
            );
        }
    }
}

#[test]
fn a_reader_refuses_a_journal_whose_tables_are_gone() {
    for b in backends() {
        for table in ["transitions", "signatures"] {
            let s = b.fresh();
            populate_signed(&s);
            s.tamper(&format!("DROP TABLE {table}"));
            match Journal::open_read_only(&s.db(), &Options::default()) {
                Err(Error::Damaged { detail }) => {
                    assert!(detail.contains(table), "{b:?}: {detail}")
                }
                Err(other) => panic!("{b:?} without {table}: {other:?}"),
                Ok(_) => panic!("{b:?} without {table}: opened"),
            }
        }
    }
}

#[test]
fn a_stored_value_of_the_wrong_type_is_damage_or_refused() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        match b {
            Backend::Sqlite => {
                // SQLite stores what it is given: the read is damage (exit 5).
                s.tamper("UPDATE events SET payload = CAST(payload AS BLOB) WHERE seq = 3");
                let out = crate::trust::cli_verify(&s.db());
                assert_eq!(out.status.code(), Some(5), "{out:?}");
                let r = s.reader().verify().unwrap();
                assert!(
                    r.problems.iter().any(|p| p.seq == Some(3)),
                    "the damaged row is named: {r:?}"
                );
            }
            Backend::Postgres => {
                // A typed column refuses a value it cannot hold before any trigger
                // runs; what it converts (bytes to their text form) is still a
                // changed row, which the chain names.
                s.exec("DROP FUNCTION cairn_append_only() CASCADE").unwrap();
                let e = s
                    .exec("UPDATE events SET version = 'three' WHERE seq = 3")
                    .unwrap_err();
                assert!(e.contains("bigint"), "{e}");
                s.exec("UPDATE events SET payload = decode('00', 'hex') WHERE seq = 3")
                    .unwrap();
                let r = s.reader().verify().unwrap();
                assert!(
                    r.problems
                        .iter()
                        .any(|p| p.seq == Some(3) && p.kind == ProblemKind::HashMismatch),
                    "{r:?}"
                );
            }
        }
    }
}

#[test]
fn the_structural_check_runs_in_verify_and_audit_where_the_backend_has_one() {
    for b in backends() {
        let s = b.fresh();
        // Ticket events the audit re-decides: t1 at versions 1..=3, t2 at 1.
        let mut e = s.engine(ticket_registry());
        for (name, comments) in [("ticket/t1", 2), ("ticket/t2", 0)] {
            let t = StreamId::parse(name).unwrap();
            e.execute_with_context::<Ticket>(
                &t,
                &Command::Open { title: "x".into() },
                &ctx(1),
                None,
            )
            .unwrap();
            for n in 0..comments {
                e.execute_with_context::<Ticket>(
                    &t,
                    &Command::Comment {
                        text: format!("c{n}"),
                    },
                    &ctx(2 + n),
                    None,
                )
                .unwrap();
            }
        }
        drop(e);
        let audit = cairn::Engine::new(s.reader(), ticket_registry())
            .audit(None)
            .unwrap();
        assert!(audit.ok, "{b:?}: {audit:?}");
        assert_eq!(
            s.reader().integrity_problems(10).unwrap(),
            Vec::<String>::new(),
            "{b:?}: a sound journal"
        );
        if sqlite_only(
            b,
            "an index rewritten to tell another history",
            "PostgreSQL has no structural check every role may run (amcheck is an \
             extension), so Journal::integrity_problems is empty there (asserted above); \
             its page checksums and the hash chain catch damage",
        ) {
            continue;
        }
        crate::support::checkpoint(&s.db());
        // The events' own index pointed at a shadow one without ticket/t1's tail.
        crate::trust::swap_events_index(&s.db(), "NOT (stream = 'ticket/t1' AND version > 1)");
        let e = cairn::Engine::new(s.reader(), ticket_registry());
        let t1 = StreamId::parse("ticket/t1").unwrap();
        assert_ne!(
            e.state_view(&t1, None).map(|v| v.version).ok(),
            Some(3),
            "the index swap did not take"
        );
        let r = e.journal().verify().unwrap();
        assert!(
            r.problems.iter().any(|p| p.kind == ProblemKind::Damaged),
            "{r:?}"
        );
        let a = e.audit(None).unwrap();
        assert!(
            a.findings.iter().any(|f| f.kind == FindingKind::Damaged),
            "{a:?}"
        );
    }
}

#[test]
fn loose_file_modes_are_refused_by_writers_and_reported_by_readers() {
    for b in backends() {
        let s = b.fresh();
        populate(&s);
        if sqlite_only(
            b,
            "loose file modes",
            "a PostgreSQL journal is no file: who may read it is the server's roles and grants",
        ) {
            assert_eq!(s.reader().loose_permissions(), None);
            continue;
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(s.db(), std::fs::Permissions::from_mode(0o644)).unwrap();
        match Journal::open(&s.db(), &Options::default()) {
            Err(Error::LoosePermissions { mode, .. }) => assert_eq!(mode, 0o644),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("a writer opened a 0644 journal"),
        }
        let r = s.reader().verify().unwrap();
        assert!(r.ok, "{r:?}");
        assert_eq!(r.loose_permissions.as_deref(), Some("644"));
    }
}

#[test]
fn a_write_ahead_log_on_read_only_media_is_read_from_a_private_copy() {
    for b in backends() {
        if sqlite_only(
            b,
            "read-only media",
            "read-only media is a file-system notion; a PostgreSQL reader's session is \
             read-only instead (conformance::a_reader_cannot_write)",
        ) {
            continue;
        }
        let src = Mount::tmpfs();
        let db = src.dir.path().join("journal.db");
        drop(Journal::open(&db, &signed()).unwrap());
        // A second connection keeps the log from being checkpointed away.
        let hold = rusqlite::Connection::open(&db).unwrap();
        let _: i64 = hold
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap();
        let mut j = Journal::open(&db, &signed()).unwrap();
        j.append(&append("ticket/a", 0, &["{\"a\":1}", "{\"a\":2}"], None))
            .unwrap();
        j.append(&append("ticket/b", 0, &["{\"b\":1}"], None))
            .unwrap();
        drop(j);
        let ro = Mount::tmpfs();
        for f in ["journal.db", "journal.db-wal"] {
            std::fs::copy(src.dir.path().join(f), ro.dir.path().join(f)).unwrap();
        }
        drop(hold);
        ro.remount("ro");
        let before = files(ro.dir.path());
        let r = Journal::open_read_only(&ro.dir.path().join("journal.db"), &Options::default())
            .unwrap();
        assert_eq!(r.access(), Access::Copy);
        let report = r.verify().unwrap();
        assert!(report.ok, "{report:?}");
        assert_eq!(report.events, 3, "every committed transition in the log");
        drop(r);
        assert_eq!(files(ro.dir.path()), before);
        ro.remount("rw");
    }
}

#[test]
fn no_anchor_is_signed_for_a_journal_that_fails_verify() {
    for b in backends() {
        let s = b.fresh();
        let keys = tempfile::tempdir().unwrap();
        let key = keys.path().join("signing.key");
        prepare(&s.db(), &key, 1);
        let (code, a, err) = cairn(&["journal", "anchor"], &s.db(), &key, "");
        assert_eq!(code, 0, "{b:?}: {a} {err}");
        s.tamper("UPDATE events SET payload = replace(payload, 'bd-1', 'bd-2')");
        let (code, r, _) = cairn(&["journal", "anchor"], &s.db(), &key, "");
        // The error document anchor's schema names (not a verify report, which
        // `journal verify` prints).
        assert_eq!(
            (code, &r["error"]["kind"], &r["error"]["rule"]),
            (
                5,
                &serde_json::json!("integrity"),
                &serde_json::json!("journal-verifies")
            ),
            "{b:?}: {r}"
        );
    }
}

#[test]
fn the_signing_key_cannot_be_the_journal_or_its_sidecars() {
    for b in backends() {
        if sqlite_only(
            b,
            "a key colliding with the journal's files",
            "a PostgreSQL journal has no file beside the key that SQLite could overwrite",
        ) {
            continue;
        }
        let s: Store = b.fresh();
        let db = s.db();
        let key = db.with_file_name("signing.key");
        prepare(&db, &key, 1);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut side = db.clone().into_os_string();
            side.push(suffix);
            let (code, e, _) = cairn(&["journal", "key"], &db, side.as_ref(), "");
            assert_eq!(code, 2, "{suffix}: {e}");
            assert_eq!(e["error"]["rule"], "key-not-journal");
        }
    }
}

/// Appends 1,500 transitions of 7 events to `ticket/many`: 10,500 events, so
/// the walk's pages (2,048 rows) split records.
fn many_pages(j: &mut Journal) {
    let payloads: Vec<String> = (0..7).map(|i| format!("{{\"n\":{i}}}")).collect();
    let refs: Vec<&str> = payloads.iter().map(String::as_str).collect();
    let batch: Vec<_> = (0..1500u64)
        .map(|t| append("ticket/many", t * 7, &refs, None))
        .collect();
    j.append_batch(&batch).unwrap();
}

/// More than two pages of the walk (hashed on a second thread, a page behind the
/// reading): every changed event is found where a one-thread walk finds it, at
/// the page boundary, across it, and in a transition record a boundary splits.
#[test]
fn a_walk_of_many_pages_finds_each_change_where_one_thread_would() {
    for b in backends() {
        let s = b.fresh();
        let mut j = s.journal();
        many_pages(&mut j);
        let split = j.transition_at("ticket/many", 8192).unwrap().unwrap();
        drop(j);
        let clean = s.reader().verify().unwrap();
        assert!(clean.ok, "{b:?}: {:?}", clean.problems);
        assert_eq!((clean.events, clean.transitions), (10_500, 1500), "{b:?}");

        // The last event of the first page; the stored hash of the second page's
        // first event (it and the event after it no longer follow); the record
        // of the transition the second boundary splits (all its events).
        s.tamper(&format!(
            "UPDATE events SET payload = '{{\"n\":99}}' WHERE seq = 4096;
             UPDATE events SET hash = '{}' WHERE seq = 4097;
             UPDATE transitions SET command = '{{\"forged\":1}}' WHERE id = {};",
            "0".repeat(64),
            split.0
        ));
        let r = s.reader().verify().unwrap();
        let found: Vec<(ProblemKind, Option<i64>)> =
            r.problems.iter().map(|p| (p.kind, p.seq)).collect();
        let mut want = vec![
            (ProblemKind::HashMismatch, Some(4096)),
            (ProblemKind::HashMismatch, Some(4097)),
            (ProblemKind::HashMismatch, Some(4098)),
        ];
        // One stream: its versions are the events' sequence numbers.
        want.extend((split.1..=split.2).map(|v| (ProblemKind::HashMismatch, Some(v as i64))));
        assert_eq!(found, want, "{b:?}");
        assert!(
            want.iter().any(|w| w.1 == Some(8192)),
            "{b:?}: the record spans 8192"
        );
        assert_eq!((r.events, r.problem_count), (10_500, 10), "{b:?}");
    }
}

/// The same walk on a signed journal: each signature is read as its record
/// opens and verified off the walk's thread, the page's share split between
/// threads; each forged one is found at its transition's head, in order.
#[test]
fn a_signed_walk_of_many_pages_finds_each_forged_signature() {
    for b in backends() {
        let s = b.fresh();
        let mut j = Journal::open(&s.db(), &signed()).unwrap();
        many_pages(&mut j);
        // The second transition, the one the first page boundary splits, one
        // in the third page: each signature replaced by its predecessor's.
        let forged: Vec<(i64, u64)> = [8, 4096, 9800]
            .iter()
            .map(|v| {
                let (id, _, last) = j.transition_at("ticket/many", *v).unwrap().unwrap();
                (id, last)
            })
            .collect();
        drop(j);
        let clean = s.reader().verify().unwrap();
        assert!(clean.ok, "{b:?}: {:?}", clean.problems);
        assert_eq!(clean.signing.signed, 1500, "{b:?}");
        s.tamper(
            &forged
                .iter()
                .map(|(id, _)| {
                    format!(
                        "UPDATE signatures SET signature = (SELECT signature FROM signatures
                         WHERE transition_id = {prev}) WHERE transition_id = {id};",
                        prev = id - 1
                    )
                })
                .collect::<String>(),
        );
        let r = s.reader().verify().unwrap();
        let found: Vec<(ProblemKind, Option<i64>, Option<i64>)> = r
            .problems
            .iter()
            .map(|p| (p.kind, p.seq, p.transition_id))
            .collect();
        let want: Vec<_> = forged
            .iter()
            .map(|(id, last)| (ProblemKind::BadSignature, Some(*last as i64), Some(*id)))
            .collect();
        assert_eq!(found, want, "{b:?}");
        assert_eq!(r.signing.signed, 1497, "{b:?}");
    }
}

/// A trigger that writes, first, a row holding the key of one of the append's
/// own rows — an event at the version (or version and seq) it takes, a record
/// with its idempotency key, a signature of its transition — after the append
/// read the journal under the writer's lock: `Damaged`, naming the row, nothing
/// written. Not a version conflict the stream never reached (helper-88 F3: a
/// caller retried into it), nor a bare SQL error (F5).
#[test]
fn a_row_a_trigger_takes_first_is_damage_not_a_conflict_on_both() {
    let event = |seq: &str| {
        format!(
            "INSERT INTO events (seq, stream, version, machine, event_type, schema_version, \
             payload, recorded_at, transition_id, hash) \
             SELECT (SELECT max(seq) FROM events) + {seq}, stream, version + 1, machine, \
             event_type, schema_version, payload, recorded_at, transition_id, hash \
             FROM events WHERE stream = NEW.stream AND version = \
             (SELECT max(version) FROM events WHERE stream = NEW.stream)"
        )
    };
    let signature = "INSERT INTO signatures (transition_id, key_id, head_seq, head_hash, \
                     signature) SELECT NEW.id, key_id, head_seq, head_hash, signature \
                     FROM signatures LIMIT 1";
    let record = "INSERT INTO transitions (id, stream, machine, rules_version, command_name, \
                  command, context, idempotency_key, fingerprint, first_version, last_version, \
                  recorded_at) SELECT id + 100, stream, machine, rules_version, command_name, \
                  command, context, NEW.idempotency_key, 'other', first_version + 100, \
                  last_version + 100, recorded_at FROM transitions WHERE stream = NEW.stream LIMIT 1";
    let cases = [
        ("BEFORE", event("1000"), "event ticket/a@4 (seq 6)"),
        ("BEFORE", event("1"), "event ticket/a@4 (seq 6)"),
        ("AFTER", signature.to_owned(), "its signature"),
        ("BEFORE", record.to_owned(), "the transition record"),
    ];
    for b in backends() {
        for (when, insert, what) in &cases {
            let s = b.fresh();
            populate_signed(&s);
            s.exec(&match b {
                Backend::Sqlite => format!(
                    "CREATE TRIGGER take {when} INSERT ON transitions \
                     WHEN NEW.id IS NULL OR NEW.id < 100 BEGIN {insert}; END;"
                ),
                Backend::Postgres => format!(
                    "CREATE FUNCTION take() RETURNS trigger LANGUAGE plpgsql \
                     AS $$ BEGIN IF pg_trigger_depth() = 1 THEN {insert}; END IF; \
                     RETURN NEW; END $$; \
                     CREATE TRIGGER take {when} INSERT ON transitions \
                     FOR EACH ROW EXECUTE FUNCTION take();"
                ),
            })
            .unwrap();
            let head = s.reader().head().unwrap();
            let bytes = (b == Backend::Sqlite).then(|| s.temp.bytes());
            let mut j = Journal::open(&s.db(), &signed()).unwrap();
            match j.append(&append("ticket/a", 3, &["{\"a\":4}"], Some(("k-1", "f-1")))) {
                Err(Error::Damaged { detail }) => assert!(
                    detail.starts_with(what) && detail.contains("behind cairn's back"),
                    "{b:?} {what}: {detail}"
                ),
                other => panic!("{b:?} {what}: expected damage, got {other:?}"),
            }
            drop(j);
            assert_eq!(s.reader().head().unwrap(), head, "{b:?} {what}");
            if let Some(bytes) = bytes {
                assert_eq!(s.temp.bytes(), bytes, "{what}: nothing written");
            }
        }
    }
}

/// An insert a foreign trigger aborts (SQLite's `RAISE(ABORT)`, which it
/// reports as a constraint failing; PostgreSQL's `RAISE EXCEPTION`) is the
/// journal keeping the row: `Damaged`, nothing written, on every table an
/// append writes. It is not a version conflict (helper-83 F2: on SQLite it read
/// as another writer having moved the stream, so a caller would re-read and
/// retry against a journal that refuses every row). A real conflict still is one.
#[test]
fn an_insert_a_trigger_aborts_is_damage_not_a_conflict_on_both() {
    for b in backends() {
        for table in ["events", "transitions", "signatures"] {
            let s = b.fresh();
            populate_signed(&s);
            s.exec(&match b {
                Backend::Sqlite => format!(
                    "CREATE TRIGGER abort_it BEFORE INSERT ON {table} \
                     BEGIN SELECT RAISE(ABORT, 'not today'); END;"
                ),
                Backend::Postgres => format!(
                    "CREATE FUNCTION abort_it() RETURNS trigger LANGUAGE plpgsql \
                     AS $$ BEGIN RAISE EXCEPTION 'not today'; END $$; \
                     CREATE TRIGGER abort_it BEFORE INSERT ON {table} \
                     FOR EACH ROW EXECUTE FUNCTION abort_it();"
                ),
            })
            .unwrap();
            let head = s.reader().head().unwrap();
            let bytes = (b == Backend::Sqlite).then(|| s.temp.bytes());
            let mut j = Journal::open(&s.db(), &signed()).unwrap();
            match j.append(&append("ticket/a", 3, &["{\"a\":4}"], None)) {
                Err(Error::Damaged { detail }) => {
                    assert!(detail.contains("did not store"), "{b:?} {table}: {detail}")
                }
                other => panic!("{b:?} {table}: expected damage, got {other:?}"),
            }
            assert!(
                matches!(
                    j.append(&append("ticket/a", 2, &["{\"a\":4}"], None)),
                    Err(Error::Conflict { .. })
                ),
                "{b:?} {table}: a moved version is a conflict still"
            );
            drop(j);
            assert_eq!(s.reader().head().unwrap(), head, "{b:?} {table}");
            if let Some(bytes) = bytes {
                assert_eq!(s.temp.bytes(), bytes, "{table}: nothing written");
            }
        }
    }
}
