//! A PostgreSQL journal's tables altered by hand: every column retyped, a key
//! dropped, an index cairn never made. Verify holds the tables to what cairn's
//! migrations declare (as SQLite's schema check does), and no verb panics on a
//! value of another type: it is damage (exit 5), reported or refused.

use std::path::Path;

use serde_json::Value;

use crate::support::backend::{Backend, Store};

const RESOURCE: &str = "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
const STREAM: &str = "claim/park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";

/// `s` with a signed claim on [`RESOURCE`], acquired by the CLI.
fn acquired(s: Store) -> Store {
    let claim = ["--resource", RESOURCE, "--claim-id", "a-c", "--ttl", "600"];
    let (code, out) = run(
        Some(&s.db()),
        &[&["claim", "acquire", "--owner", "a"][..], &claim].concat(),
    );
    assert_eq!(code, 0, "{out}");
    s
}

/// A journal with two signed claim transitions on one resource, written by the CLI.
fn claimed() -> Store {
    let s = acquired(Backend::Postgres.fresh());
    let claim = ["--resource", RESOURCE, "--claim-id", "a-c", "--ttl", "600"];
    let (code, out) = run(
        Some(&s.db()),
        &[&["claim", "renew", "--token", "1"][..], &claim].concat(),
    );
    assert_eq!(code, 0, "{out}");
    s
}

/// `cairn [--db DB] ARGS…`: the exit code and stdout as JSON (null when it is
/// text: `journal log`); never a panic.
fn run(db: Option<&Path>, args: &[&str]) -> (i32, Value) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args).env_remove("CAIRN_DB");
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    let out = cmd.output().expect("cairn runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_ne!(code, 101, "{args:?}: {stderr}");
    (
        code,
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

/// What a writer's open of the journal says, when it refuses.
fn writer_refused(s: &Store) -> Option<cairn::journal::Error> {
    cairn::journal::Journal::open(&s.db(), &cairn::journal::Options::default()).err()
}

fn verify_problems(s: &Store) -> Vec<String> {
    let (code, out) = run(Some(&s.db()), &["journal", "verify"]);
    assert_eq!(code, 5, "{out}");
    match out["problems"].as_array() {
        Some(problems) => problems
            .iter()
            .map(|p| p["detail"].as_str().unwrap_or_default().to_owned())
            .collect(),
        // An error document: the walk could not go on (exit 5, `damaged`).
        None => vec![out["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()],
    }
}

/// A fresh journal's tables are exactly what cairn declares: the declaration
/// the check holds journals to is the migrations' own (a drift fails here).
#[test]
fn a_fresh_postgres_journal_has_the_declared_shape() {
    let s = claimed();
    assert_eq!(
        s.reader().integrity_problems(100).unwrap(),
        Vec::<String>::new()
    );
    let (code, out) = run(Some(&s.db()), &["journal", "verify"]);
    assert_eq!((code, &out["ok"]), (0, &Value::Bool(true)), "{out}");
}

/// Every column of every table retyped (its values kept): verify and audit
/// exit 5, naming the column where the walk got that far; every other verb
/// answers without a panic (before, the head's `seq`/`hash`, the streams view
/// and the transition lookup panicked on a value of another type).
#[test]
fn a_retyped_column_is_damage_never_a_panic() {
    let cases = [
        ("events", "seq", "numeric"),
        ("events", "hash", "bytea"),
        ("events", "version", "text"),
        ("events", "event_type", "bytea"),
        ("events", "machine", "bytea"),
        ("transitions", "id", "numeric"),
        ("transitions", "stream", "bytea"),
        ("signatures", "head_hash", "bytea"),
        ("signatures", "transition_id", "numeric"),
        ("signing_keys", "public_key", "bytea"),
        ("cairn_journal", "application_id", "text"),
    ];
    for (table, column, ty) in cases {
        let s = claimed();
        let using = match ty {
            "bytea" => format!("convert_to({column}::text, 'UTF8')"),
            _ => format!("{column}::{ty}"),
        };
        s.exec(&format!(
            "ALTER TABLE {table} ALTER COLUMN {column} TYPE {ty} USING {using}"
        ))
        .unwrap();
        let db = s.db();
        let problems = verify_problems(&s);
        assert!(
            problems
                .iter()
                .any(|p| p.contains(&format!("{table}.{column}"))
                    || p.contains("not as cairn made them")
                    || p.contains("wrong type")),
            "{table}.{column}: {problems:?}"
        );
        assert_eq!(
            run(Some(&db), &["journal", "audit"]).0,
            5,
            "{table}.{column}"
        );
        for args in [
            &["journal", "streams"][..],
            &["journal", "log"],
            &["state", STREAM],
            &["journal", "links", STREAM],
            &["claim", "show", "--resource", RESOURCE],
        ] {
            run(Some(&db), args);
        }
        let target = tempfile::tempdir().unwrap();
        let copy = target.path().join("copy.db");
        let (code, out) = run(
            None,
            &[
                "journal",
                "copy",
                "--from",
                &db.to_string_lossy(),
                "--to",
                &copy.to_string_lossy(),
            ],
        );
        assert_eq!(code, 5, "{table}.{column}: {out}");
    }
}

/// A dropped key, an index cairn never made and a check constraint are named
/// by verify, and a record duplicated once its key is gone fails it (helper-53:
/// it passed, and `journal copy` then failed on the target's key).
#[test]
fn a_dropped_key_or_a_foreign_index_is_reported() {
    let s = claimed();
    s.tamper(
        "ALTER TABLE transitions DROP CONSTRAINT transitions_pkey; \
         INSERT INTO transitions SELECT * FROM transitions WHERE id = 1; \
         CREATE INDEX events_backwards ON events (stream, version DESC); \
         ALTER TABLE events ADD CONSTRAINT events_small CHECK (version < 1000)",
    );
    let problems = verify_problems(&s);
    for want in [
        "schema: constraint `transitions.transitions_pkey` (PRIMARY KEY (id)) is missing",
        "schema: index `transitions.transitions_pkey` (CREATE UNIQUE INDEX transitions_pkey ON transitions USING btree (id)) is missing",
        "schema: index `events.events_backwards` (CREATE INDEX events_backwards ON events USING btree (stream, version DESC)) is not one cairn makes",
        "schema: constraint `events.events_small` (CHECK (version < 1000)) is not one cairn makes",
    ] {
        assert!(problems.iter().any(|p| p == want), "{want}: {problems:?}");
    }
}

/// A byte that is not text, written by hand into an `SQL_ASCII` database (which
/// stores any byte): verify reports damage and every reader exits 5 (it was
/// exit 1, the driver's error).
#[test]
fn a_byte_that_is_not_text_is_damage() {
    let s = acquired(Store::postgres_in("SQL_ASCII"));
    let db = s.db();
    s.tamper(
        "UPDATE events SET payload = convert_from('\\x7b2278223a22ff227d'::bytea, 'SQL_ASCII') WHERE seq = 1",
    );
    let (code, out) = run(Some(&db), &["journal", "verify"]);
    assert_eq!((code, &out["ok"]), (5, &Value::Bool(false)), "{out}");
    assert_eq!(out["problems"][0]["kind"], "damaged", "{out}");
    for args in [
        &["journal", "audit"][..],
        &["journal", "log"],
        &["state", STREAM],
    ] {
        let (code, out) = run(Some(&db), args);
        assert_eq!(code, 5, "{args:?}: {out}");
    }
}

/// What keeps or hides rows without touching a column — a rule, a trigger, a
/// row security policy, a look-alike collation — is named by verify; and an
/// append whose insert a rule swallowed is refused (exit 5, nothing stored)
/// instead of answering as if recorded (helper-54: `claim acquire` handed out
/// a token the journal never stored).
#[test]
fn a_rule_trigger_policy_or_collation_swap_is_reported() {
    let s = claimed();
    let db = s.db();
    s.tamper(
        "CREATE RULE keep AS ON INSERT TO events DO INSTEAD NOTHING; \
         CREATE FUNCTION forget() RETURNS trigger LANGUAGE plpgsql AS \
           $$ BEGIN NEW.idempotency_key := NULL; RETURN NEW; END $$; \
         CREATE TRIGGER forget BEFORE INSERT ON transitions FOR EACH ROW EXECUTE FUNCTION forget(); \
         ALTER TABLE signatures ENABLE ROW LEVEL SECURITY; \
         CREATE POLICY early ON signatures USING (transition_id <= 1); \
         CREATE COLLATION \"C\" (provider = icu, locale = 'und-u-ks-level2', deterministic = false); \
         DO $$ BEGIN EXECUTE format('ALTER TABLE transitions ALTER COLUMN machine \
           TYPE text COLLATE %I.\"C\"', current_schema()); END $$",
    );
    let problems = verify_problems(&s);
    for want in [
        "schema: rule `events.keep`",
        "schema: trigger `transitions.forget`",
        "schema: policy `signatures.early`",
        "schema: row-security `signatures` (enabled)",
        "schema: column `transitions.machine` is declared",
    ] {
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "{want}: {problems:?}"
        );
    }
    let streams = run(Some(&db), &["journal", "streams"]).1;
    let other = "park/ep-22222222-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
    let (code, out) = run(
        Some(&db),
        &[
            "claim",
            "acquire",
            "--resource",
            other,
            "--owner",
            "b",
            "--claim-id",
            "b-c",
            "--ttl",
            "600",
        ],
    );
    assert_eq!(
        (code, &out["error"]["kind"]),
        (5, &Value::from("damaged")),
        "{out}"
    );
    assert_eq!(
        run(Some(&db), &["journal", "streams"]).1,
        streams,
        "nothing stored"
    );
}

/// No way around the guards through PostgreSQL's own means (helper-55): a
/// `public.=` on text put before `pg_catalog` by the database's `search_path`
/// (it made a live lease read as never claimed), a guard disabled and stood in
/// for by one that fires `WHEN (false)`, a child table whose rows every query of
/// its parent reads.
#[test]
fn a_search_path_override_a_conditional_guard_or_a_child_table_is_no_way_around() {
    let s = acquired(Store::postgres_in("UTF8"));
    let db = s.db();
    s.exec(
        "CREATE FUNCTION public.evil_eq(a text, b text) RETURNS bool LANGUAGE sql IMMUTABLE \
           AS $$ SELECT pg_catalog.texteq(a, b) AND a NOT LIKE 'claim/%' $$; \
         CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.evil_eq); \
         DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = public, pg_catalog', \
           current_database()); END $$",
    )
    .unwrap();
    let (code, out) = run(Some(&db), &["claim", "show", "--resource", RESOURCE]);
    assert_eq!(
        (code, &out["holder"], &out["live"]),
        (0, &Value::from("a"), &Value::Bool(true)),
        "{out}"
    );
    let (code, out) = run(Some(&db), &["journal", "verify"]);
    assert_eq!(code, 0, "the operator is not cairn's table: {out}");

    s.exec(
        "ALTER TABLE transitions DISABLE TRIGGER transitions_append_only; \
         CREATE TRIGGER stand_in BEFORE UPDATE OR DELETE ON transitions FOR EACH ROW \
           WHEN (false) EXECUTE FUNCTION cairn_append_only(); \
         CREATE TABLE trx () INHERITS (transitions); \
         INSERT INTO trx SELECT * FROM transitions WHERE id = 1",
    )
    .unwrap();
    let (code, out) = run(Some(&db), &["journal", "verify"]);
    assert_eq!(code, 5, "{out}");
    let unguarded: Vec<String> = out["unguarded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect();
    assert!(unguarded.iter().any(|u| u.contains("transitions")), "{out}");
    let problems = verify_problems(&s);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("schema: child `transitions.trx`")),
        "{problems:?}"
    );
}

/// helper-91: a marker lowered below the tables it holds (its later rows
/// deleted with the triggers off) verified clean, and the next writer failed
/// with a raw SQL error. Verify names it; a writer refuses it as damage.
#[test]
fn a_marker_lowered_below_its_tables_fails_verify_and_refuses_a_writer() {
    let s = claimed();
    s.tamper("DELETE FROM cairn_journal WHERE schema_version >= 2");
    let problems = verify_problems(&s);
    assert!(
        problems.iter().any(|p| p
            == "schema: the marker says schema version 1, yet holds `signing_keys`, which migration 2 makes"),
        "{problems:?}"
    );
    let refused = writer_refused(&s);
    assert!(
        matches!(&refused, Some(cairn::journal::Error::Damaged { detail }) if detail.contains("the marker was changed")),
        "{refused:?}"
    );
}

/// helper-92: with the signing tables dropped, a view named `signing_keys` in
/// their place and the marker lowered to 1, verify found the journal intact
/// (it looked at tables only) and the next writer failed on migration 2 with
/// the driver's bare "db error". Verify names the view (and a type under
/// another table's name); a writer refuses the schema as damage before it
/// migrates, naming the first name it would meet.
#[test]
fn a_relation_of_another_kind_under_a_later_tables_name_fails_verify_and_refuses_a_writer() {
    let s = claimed();
    s.tamper(
        "DROP TABLE signatures; DROP TABLE signing_keys; \
         CREATE VIEW signing_keys AS SELECT 1 AS id; CREATE DOMAIN signatures AS int; \
         DELETE FROM cairn_journal WHERE schema_version >= 2",
    );
    let problems = verify_problems(&s);
    assert!(
        problems.iter().any(|p| p
            == "schema: the marker says schema version 1, yet holds `signing_keys`, which migration 2 makes"),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p == "schema: relation `signing_keys` (view) is not one cairn makes"),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p == "schema: relation `signatures` (type) is not one cairn makes"),
        "{problems:?}"
    );
    let refused = writer_refused(&s);
    assert!(
        matches!(&refused, Some(cairn::journal::Error::Damaged { detail })
            if detail.contains("the marker was changed")
                && detail.contains("holds `signatures` (type), a name migration 2 makes")),
        "{refused:?}"
    );
}

/// helper-93: a relation under the name of a key's index a later migration
/// makes (a sequence `signatures_pkey`, the marker lowered to 1) verified
/// clean, and the writer's migration quietly named its key `signatures_pkey1`:
/// the journal failed verify from then on. Verify names it; a writer refuses
/// before it migrates, and the marker stays at 1.
#[test]
fn a_relation_under_a_later_keys_index_name_fails_verify_and_refuses_a_writer() {
    let s = claimed();
    s.tamper(
        "DROP TABLE signatures; DROP TABLE signing_keys; CREATE SEQUENCE signatures_pkey; \
         DELETE FROM cairn_journal WHERE schema_version >= 2",
    );
    let problems = verify_problems(&s);
    assert!(
        problems
            .iter()
            .any(|p| p == "schema: relation `signatures_pkey` (sequence) is not one cairn makes"),
        "{problems:?}"
    );
    let refused = writer_refused(&s);
    assert!(
        matches!(&refused, Some(cairn::journal::Error::Damaged { detail })
            if detail.contains("holds `signatures_pkey` (sequence), a name migration 2 makes")),
        "{refused:?}"
    );
    let marker: i64 = s
        .pg()
        .query_one("SELECT max(schema_version) FROM cairn_journal", &[])
        .unwrap()
        .get(0);
    assert_eq!(marker, 1, "nothing was migrated");
}

/// helper-94: a constraint of another table (or of a domain) under a key's
/// index name a later migration makes verified clean, and the migration
/// quietly named the key otherwise. Verify names it; a writer refuses it.
#[test]
fn a_constraint_under_a_later_keys_index_name_fails_verify_and_refuses_a_writer() {
    let s = claimed();
    s.tamper(
        "DROP TABLE signatures; DROP TABLE signing_keys; \
         CREATE DOMAIN posint AS int CONSTRAINT signatures_pkey CHECK (VALUE > 0); \
         DELETE FROM cairn_journal WHERE schema_version >= 2",
    );
    let problems = verify_problems(&s);
    assert!(
        problems
            .iter()
            .any(|p| p == "schema: relation `signatures_pkey` (constraint) is not one cairn makes"),
        "{problems:?}"
    );
    let refused = writer_refused(&s);
    assert!(
        matches!(&refused, Some(cairn::journal::Error::Damaged { detail })
            if detail.contains("holds `signatures_pkey` (constraint), a name migration 2 makes")),
        "{refused:?}"
    );
}

/// helper-94: a function of the journal's schema that matches a call better
/// than the catalog's (`format(text, name, name, text)` beside the catalog's
/// variadic one) rewrote verify's own reading of the schema, and a foreign
/// trigger vanished from it. Verify calls the catalog's functions by name.
#[test]
fn a_schemas_own_function_cannot_rewrite_verifys_reading() {
    let s = claimed();
    s.exec(
        "CREATE FUNCTION drop_it() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$; \
         CREATE TRIGGER sneaky BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION drop_it(); \
         CREATE FUNCTION format(f text, a name, b name, c text) RETURNS text LANGUAGE sql AS \
           $$ SELECT 'constraint events.events_pkey PRIMARY KEY (seq)' $$",
    )
    .unwrap();
    let problems = verify_problems(&s);
    assert!(
        problems.iter().any(|p| p.contains("sneaky")),
        "{problems:?}"
    );
}

/// helper-93: a schema with no journal yet, holding a type named like a key's
/// index or a table cairn makes, or a function named as cairn's guard, got a
/// journal that failed verify from its first write, or a "changed marker" it
/// never had, or a raw SQL error. Each is another application's schema:
/// refused as no journal, nothing created.
#[test]
fn a_schema_holding_a_type_or_function_under_cairns_names_is_no_journal() {
    for held in [
        "CREATE TYPE events_pkey AS (a int)",
        "CREATE DOMAIN transitions AS int",
        "CREATE FUNCTION cairn_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
    ] {
        let s = Backend::Postgres.fresh();
        s.exec(held).unwrap();
        let refused =
            writer_refused(&s);
        assert!(
            matches!(&refused, Some(cairn::journal::Error::NotAJournal { reason, .. })
                if reason.contains("give cairn an empty schema or database")),
            "{held}: {refused:?}"
        );
        let created: bool = s
            .pg()
            .query_one("SELECT to_regclass('cairn_journal') IS NOT NULL", &[])
            .unwrap()
            .get(0);
        assert!(!created, "{held}: a journal was created");
    }
    // Types and functions under other names (what an extension in `public`
    // makes) leave the schema cairn's to use (helper-94: refused for a while).
    let s = Backend::Postgres.fresh();
    s.exec(
        "CREATE DOMAIN posint AS int; \
         CREATE FUNCTION helper() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$",
    )
    .unwrap();
    drop(s.journal());
}

/// helper-54: a marker row set to -1 passed verify (and the next writer ran a
/// migration again); a copy into a target whose unique key was dropped took every
/// row, then failed the target's verify. Both are refused before anything else.
#[test]
fn a_forged_marker_or_a_keyless_copy_target_is_refused() {
    let s = claimed();
    s.tamper("UPDATE cairn_journal SET schema_version = -1 WHERE schema_version = 3");
    let problems = verify_problems(&s);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("schema: the marker records migrations `-1,1,2`")),
        "{problems:?}"
    );

    let source = acquired(Backend::Sqlite.fresh());
    let target = Backend::Postgres.fresh();
    drop(target.journal());
    target.tamper("ALTER TABLE events DROP CONSTRAINT events_stream_version_key");
    let (code, out) = run(
        None,
        &[
            "journal",
            "copy",
            "--from",
            &source.db().to_string_lossy(),
            "--to",
            &target.db().to_string_lossy(),
        ],
    );
    assert_eq!(
        (code, &out["error"]["kind"]),
        (5, &Value::from("damaged")),
        "{out}"
    );
    let rows: i64 = target
        .pg()
        .query_one("SELECT count(*) FROM events", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 0, "nothing was copied");
}

/// helper-56: with `pg_temp` first on the URL's `search_path`, cairn created the
/// journal in the session's temporary schema: the first append ended "damaged"
/// (exit 5), the next call found no journal. A journal never lives in one of
/// PostgreSQL's own schemas: the URL is refused (exit 2, naming the schema and
/// what to do), and nothing is created anywhere.
#[test]
fn a_search_path_naming_a_system_schema_first_is_refused() {
    let s = Store::postgres_in("UTF8");
    let base = s.db().to_string_lossy().into_owned();
    let sep = if base.contains('?') { '&' } else { '?' };
    // A role that may not create temporary tables: `pg_temp` first is refused
    // by the server while the session is set up (helper-61: the driver's bare
    // error before; now the reason and where to look).
    let role = format!("cairn_notemp_{}", std::process::id());
    s.exec(&format!(
        "CREATE ROLE {role} LOGIN; GRANT CREATE ON SCHEMA public TO {role}; \
         DO $$ BEGIN EXECUTE format('REVOKE TEMP ON DATABASE %I FROM PUBLIC', current_database()); END $$"
    ))
    .unwrap();
    let (scheme, rest) = base.split_once("://").expect("a URL");
    let as_role = format!(
        "{scheme}://{role}@{}",
        rest.split_once('@').map_or(rest, |(_, host)| host)
    );
    // (the URL, its search_path, what the refusal names, exit code and kind)
    for (url, path, named, (code, kind)) in [
        (
            &base,
            "pg_temp%2Cpublic",
            "the session's temporary schema",
            (2, "not-a-journal"),
        ),
        (
            &base,
            "pg_catalog",
            "puts `pg_catalog` first, a `pg_` schema",
            (2, "not-a-journal"),
        ),
        // The server's refusal, not cairn's: the session cannot be set up
        // (exit 1, as a refused connection), the reason and where to look named.
        (
            &as_role,
            "pg_temp%2Cpublic",
            "refused the session's settings: permission denied to create temporary tables",
            (1, "connect"),
        ),
    ] {
        let url = format!("{url}{sep}options=-csearch_path%3D{path}");
        let acquire = [
            "claim",
            "acquire",
            "--resource",
            RESOURCE,
            "--owner",
            "a",
            "--claim-id",
            "c",
            "--ttl",
            "60",
        ];
        for args in [&acquire[..], &["journal", "verify"]] {
            let (got, out) = run(Some(Path::new(&url)), args);
            assert_eq!(
                (got, out["error"]["kind"].as_str()),
                (code, Some(kind)),
                "{args:?}: {out}"
            );
            let message = out["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(named), "{message}");
        }
    }
    let mut pg = s.pg();
    let made: i64 = pg
        .query_one(
            "SELECT count(*) FROM pg_catalog.pg_class WHERE relname IN ('events', 'transitions', 'cairn_journal')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(made, 0, "nothing created");
    s.exec(&format!(
        "REVOKE CREATE ON SCHEMA public FROM {role}; DROP ROLE {role}"
    ))
    .unwrap();
}

/// A trigger that calls cairn's guard function is not cairn's guard: only the
/// guards as declared (name, timing, events, no condition) are left to the
/// guard check, any other is named (helper-72: `BEFORE INSERT … WHEN (…)
/// EXECUTE FUNCTION cairn_append_only()` refused appends while verify was clean).
#[test]
fn a_trigger_calling_the_guard_function_is_not_a_guard() {
    let s = claimed();
    assert_eq!(run(Some(&s.db()), &["journal", "verify"]).0, 0);
    s.exec(
        "CREATE TRIGGER zz_censor BEFORE INSERT ON signatures FOR EACH ROW \
           WHEN (NEW.key_id > 0) EXECUTE FUNCTION cairn_append_only(); \
         CREATE TRIGGER events_no_truncate2 BEFORE TRUNCATE ON events \
           FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only()",
    )
    .unwrap();
    let problems = verify_problems(&s);
    for want in [
        "schema: trigger `signatures.zz_censor`",
        "schema: trigger `events.events_no_truncate2`",
    ] {
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "{want}: {problems:?}"
        );
    }
}

/// Writers on a database whose default isolation is `repeatable read` (a
/// server's or a role's setting cairn does not choose) append as under the
/// default: each writer's transaction is READ COMMITTED, so after the journal's
/// lock it reads the head the writer before it committed (helper-89: the
/// snapshot was taken by the lock's own statement, and 36 of 40 racing writers
/// failed on a taken key).
#[test]
fn racing_writers_append_under_a_repeatable_read_default() {
    use cairn::journal::{Journal, Options};
    let s = Store::postgres_in("UTF8");
    s.exec(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', \
         current_database(), 'repeatable read'); END $$;",
    )
    .unwrap();
    drop(s.journal());
    let db = s.db();
    std::thread::scope(|scope| {
        for w in 0..4 {
            let db = &db;
            scope.spawn(move || {
                let mut j = Journal::open(db, &Options::default()).unwrap();
                for v in 0..8 {
                    j.append(&crate::journal::append(
                        &format!("ticket/w{w}"),
                        v,
                        &["{\"a\":1}"],
                        None,
                    ))
                    .unwrap();
                }
            });
        }
    });
    let r = s.reader().verify().unwrap();
    assert!(r.ok && r.events == 32, "{r:?}");
}
