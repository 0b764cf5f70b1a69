//! A journal file's tables and indexes are cairn's: `integrity_check` judges a
//! file by its own schema, so a table rebuilt without its primary key or an
//! index cairn never made passes it and changes which row a query returns
//! (helper-47: two records under one id, an index that walks ids backwards,
//! and verify read the genuine one while `journal show` read the forgery).

use cairn::journal::ProblemKind;
use cairn::FindingKind;

use crate::conformance::{populate_signed, ticket_registry};
use crate::support::backend::Backend;

fn schema_damage(s: &crate::support::backend::Store) -> Vec<String> {
    let r = s.reader().verify().unwrap();
    assert!(!r.ok, "{r:?}");
    let lines: Vec<String> = r
        .problems
        .iter()
        .filter(|p| p.kind == ProblemKind::Damaged && p.detail.starts_with("schema: "))
        .map(|p| p.detail.clone())
        .collect();
    let a = cairn::Engine::new(s.reader(), ticket_registry())
        .audit(None)
        .unwrap();
    assert!(
        a.findings
            .iter()
            .any(|f| f.kind == FindingKind::Damaged && f.detail.starts_with("schema: ")),
        "{a:?}"
    );
    lines
}

#[test]
fn a_table_rebuilt_with_a_second_record_under_one_id_is_damage() {
    let s = Backend::Sqlite.fresh();
    populate_signed(&s);
    s.tamper(
        "CREATE TABLE t2 (id INTEGER NOT NULL, stream TEXT NOT NULL, machine TEXT NOT NULL,
             rules_version INTEGER NOT NULL, command_name TEXT NOT NULL, command TEXT NOT NULL,
             context TEXT NOT NULL, idempotency_key TEXT, fingerprint TEXT,
             first_version INTEGER NOT NULL, last_version INTEGER NOT NULL, recorded_at TEXT NOT NULL);
         INSERT INTO t2 SELECT id, stream, machine, rules_version, command_name, command,
             '{\"forged\":1}', idempotency_key, fingerprint, first_version, last_version,
             recorded_at FROM transitions WHERE id = 3;
         INSERT INTO t2 SELECT * FROM transitions;
         DROP TABLE transitions;
         ALTER TABLE t2 RENAME TO transitions;
         CREATE UNIQUE INDEX transitions_idempotency ON transitions (stream, idempotency_key)
             WHERE idempotency_key IS NOT NULL;
         CREATE INDEX transitions_stream ON transitions (stream, first_version);
         CREATE INDEX transitions_id ON transitions (id DESC);",
    );
    let lines = schema_damage(&s);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("table `transitions` is declared otherwise")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("index `transitions_id` is not one cairn makes")),
        "{lines:?}"
    );
}

#[test]
fn an_index_cairn_never_made_is_damage_and_a_missing_one_too() {
    let s = Backend::Sqlite.fresh();
    populate_signed(&s);
    s.tamper("CREATE INDEX backwards ON events (seq DESC); DROP INDEX transitions_stream;");
    let lines = schema_damage(&s);
    assert_eq!(
        lines,
        [
            "schema: index `backwards` is not one cairn makes",
            "schema: index `transitions_stream` is missing"
        ]
    );
}

/// A key row no signature names is never read: one stored as a BLOB (an
/// insert the guards allow) does not stop verify from reporting.
#[test]
fn an_unnamed_key_row_of_the_wrong_type_does_not_silence_verify() {
    let s = Backend::Sqlite.fresh();
    populate_signed(&s);
    let c = rusqlite::Connection::open(s.db()).unwrap();
    c.execute(
        "INSERT INTO signing_keys (public_key, added_at) VALUES (X'01', 'x')",
        [],
    )
    .unwrap();
    drop(c);
    assert!(s.reader().verify().unwrap().ok);
    s.tamper("UPDATE events SET payload = '{\"a\":9}' WHERE seq = 3");
    let r = s.reader().verify().unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.kind == ProblemKind::HashMismatch && p.seq == Some(3)),
        "{r:?}"
    );
}
