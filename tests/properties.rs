//! Property tests of the journal: random append sequences against an in-memory
//! model, and single-byte tampering always named by `verify`.

use std::collections::HashMap;

use cairn::journal::{AppendOutcome, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use crate::journal::append;
use crate::support::{tamper, TempJournal};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/journal.txt"
        )))),
        ..Config::default()
    }
}

#[derive(Debug, Clone)]
struct Op {
    stream: u8,
    /// 0: the right version; 1: one behind (stale); 2: one ahead.
    skew: u8,
    events: u8,
    key: Option<u8>,
    /// Whether a keyed request repeats the fingerprint of the key's first use.
    same_request: bool,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0u8..3,
        prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        1u8..4,
        proptest::option::weighted(0.4, 0u8..3),
        any::<bool>(),
    )
        .prop_map(|(stream, skew, events, key, same_request)| Op {
            stream,
            skew,
            events,
            key,
            same_request,
        })
}

proptest! {
    #![proptest_config(config(48))]

    /// Replaying the journal equals folding the accepted appends in memory;
    /// versions run 1..=n; conflicts and repeated keys write nothing; verify passes.
    #[test]
    fn journal_matches_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        let t = TempJournal::new();
        let mut j = t.journal();
        let mut model: HashMap<String, Vec<String>> = HashMap::new();
        let mut keys: HashMap<(String, u8), (String, u64)> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            let stream = format!("ticket/s{}", op.stream);
            let actual = model.get(&stream).map_or(0, |v| v.len() as u64);
            let expected = match op.skew { 0 => actual, 1 => actual.saturating_sub(1), _ => actual + 1 };
            let payloads: Vec<String> = (0..op.events).map(|k| format!("{{\"op\":{i},\"k\":{k}}}")).collect();
            let refs: Vec<&str> = payloads.iter().map(String::as_str).collect();
            let fingerprint = match (op.key, op.same_request) {
                (Some(k), true) => keys.get(&(stream.clone(), k)).map_or(format!("fp-{i}"), |(f, _)| f.clone()),
                _ => format!("fp-{i}"),
            };
            let key_name = op.key.map(|k| format!("key-{k}"));
            let result = j.append(&append(&stream, expected, &refs, key_name.as_deref().map(|k| (k, fingerprint.as_str()))));
            match op.key.and_then(|k| keys.get(&(stream.clone(), k))) {
                Some((fp, last_version)) if *fp == fingerprint => {
                    prop_assert!(matches!(&result, Ok(AppendOutcome::Duplicate(r)) if r.last_version == *last_version), "{result:?}");
                }
                Some(_) => prop_assert!(matches!(result, Err(Error::IdempotencyMismatch { .. })), "{result:?}"),
                None if expected != actual => {
                    prop_assert!(matches!(result, Err(Error::Conflict { expected: e, actual: a, .. }) if e == expected && a == actual), "{result:?}");
                }
                None => {
                    let receipt = match result {
                        Ok(AppendOutcome::Appended(r)) => r,
                        other => return Err(TestCaseError::fail(format!("expected an append, got {other:?}"))),
                    };
                    let entry = model.entry(stream.clone()).or_default();
                    entry.extend(payloads);
                    prop_assert_eq!(receipt.last_version, entry.len() as u64);
                    if let Some(k) = op.key {
                        keys.insert((stream.clone(), k), (fingerprint, receipt.last_version));
                    }
                }
            }
        }
        for (stream, payloads) in &model {
            let stored = j.read_stream(stream, None).unwrap();
            prop_assert_eq!(stored.iter().map(|e| e.version).collect::<Vec<_>>(), (1..=payloads.len() as u64).collect::<Vec<_>>());
            prop_assert_eq!(&stored.iter().map(|e| e.payload.clone()).collect::<Vec<_>>(), payloads);
        }
        let total: usize = model.values().map(Vec::len).sum();
        let report = j.verify().unwrap();
        prop_assert!(report.ok, "{:?}", report.problems);
        prop_assert_eq!(report.events, total as u64);
    }

    /// Changing any single byte (or integer) of any stored event makes verify name that event first.
    #[test]
    fn any_changed_byte_is_named(seq in 1i64..=6, column in 0usize..9, at in any::<prop::sample::Index>(), delta in 1u8..26) {
        let t = TempJournal::new();
        {
            let mut j = t.journal();
            j.append(&append("ticket/a", 0, &["{\"a\":1}", "{\"a\":2}"], None)).unwrap();
            j.append(&append("ticket/b", 0, &["{\"b\":1}"], None)).unwrap();
            j.append(&append("ticket/a", 2, &["{\"a\":3}"], None)).unwrap();
            j.append(&append("ticket/c", 0, &["{\"c\":1}", "{\"c\":2}"], None)).unwrap();
        }
        let text_columns = ["stream", "machine", "event_type", "payload", "recorded_at", "hash"];
        let int_columns = ["version", "schema_version", "transition_id"];
        let conn = t.raw();
        let sql = if column < text_columns.len() {
            let name = text_columns[column];
            let value: String = conn.query_row(&format!("SELECT {name} FROM events WHERE seq = ?1"), [seq], |r| r.get(0)).unwrap();
            let mut bytes = value.into_bytes();
            let i = at.index(bytes.len());
            // Replace one byte with another printable ASCII byte, so the text stays valid UTF-8 when the original was ASCII.
            let old = bytes[i];
            let new = if old.is_ascii_graphic() { b'!' + ((old - b'!' + delta) % 94) } else { b'x' };
            prop_assume!(new != old);
            bytes[i] = new;
            // A byte inside a multi-byte character is replaced by `x`: not a change this test can write as text.
            let Ok(changed) = String::from_utf8(bytes) else { return Err(TestCaseError::reject("not utf-8 after the change")) };
            format!("UPDATE events SET {name} = '{}' WHERE seq = {seq}", changed.replace('\'', "''"))
        } else {
            let name = int_columns[column - text_columns.len()];
            format!("UPDATE events SET {name} = {name} + {delta} WHERE seq = {seq}")
        };
        let conn2 = t.raw();
        // A change that breaks the (stream, version) uniqueness is refused by SQLite itself: nothing to verify.
        if conn2.execute_batch("SELECT 1").is_ok() {
            let probe = conn2.execute_batch(&format!("BEGIN; DROP TRIGGER IF EXISTS events_append_only_update; {sql}; ROLLBACK;"));
            prop_assume!(probe.is_ok());
        }
        tamper(&conn, &sql);
        let report = t.journal().verify().unwrap();
        prop_assert!(!report.ok, "`{}` went undetected", sql);
        prop_assert_eq!(report.problems[0].seq, Some(seq), "`{}`: {:?}", sql, report.problems);
    }
}
