//! The PostgreSQL backend's SQL: the migrations (append only, entry `i` takes the
//! schema from version `i` to `i + 1`, recorded in the `cairn_journal` marker
//! table) and every query, named.

/// A page of rows that ends at [`crate::store::FETCH_BYTES`] of what they
/// unpack to, cut in the query (the client reads a result whole): up to
/// `limit` rows of `table` matching `filter`, in `key` order, ending at the row
/// whose `size`s reach `bytes`. The cut is found first on the rows' sizes alone
/// (a running sum over `(key, size)`: summing beside the whole rows cost 2.5x
/// the fetch, this ~1.5x, pgbench), then the rows up to it are read: every row
/// of the last key kept, so a tamperer's duplicated key is seen whole (capped
/// at the rows kept, the walk skipped the rest and called a journal of 41
/// events intact at 7; a key duplicated over many large rows still comes back
/// whole: helper-53, left). Each row ends with how many rows the size scan saw and kept, so
/// whether rows follow is the server's word (helper-52: counted on the client,
/// a payload longer in the server's encoding than in UTF-8 ended the walk
/// early). `octet_length` reads a stored text's size without unpacking it; the
/// cast to text keeps the query valid whatever type a tamperer gave a column
/// (the row is then unreadable), and a null size counts 0, so the cut only ever
/// leaves out a tail. One statement: both scans see the same rows.
macro_rules! cut_page {
    ($cols:literal, $table:literal, $key:literal, $size:literal, $filter:literal, $limit:literal, $bytes:literal) => {
        concat!(
            "WITH sized AS (SELECT ",
            $key,
            ", sum(len) OVER (ORDER BY ",
            $key,
            " ROWS UNBOUNDED PRECEDING) - len AS before FROM (SELECT ",
            $key,
            ", ",
            $size,
            " AS len FROM ",
            $table,
            " ",
            $filter,
            " ORDER BY ",
            $key,
            " LIMIT ",
            $limit,
            ") AS f), cut AS (SELECT count(*) AS scanned, count(*) FILTER (WHERE before < ",
            $bytes,
            ") AS kept, max(",
            $key,
            ") FILTER (WHERE before < ",
            $bytes,
            ") AS last FROM sized) SELECT ",
            $cols,
            ", (SELECT scanned FROM cut), (SELECT kept FROM cut) FROM ",
            $table,
            " ",
            $filter,
            " AND ",
            $key,
            " <= (SELECT last FROM cut) ORDER BY ",
            $key
        )
    };
}

/// The server's clock now, in UTC, as RFC 3339 with microseconds (the format
/// `now_rfc3339` writes on SQLite): `clock_timestamp()`, the instant of the
/// call, not of the transaction's start.
pub(crate) const CLOCK: &str =
    r#"SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"#;

/// Sets `search_path` to the connection's current schema alone (empty when
/// none exists: the journal is then refused as before).
pub(crate) const PIN_SEARCH_PATH: &str = "SELECT pg_catalog.set_config('search_path', \
     COALESCE(pg_catalog.quote_ident(pg_catalog.current_schema()), ''), false)";

/// The planner settings of every session, set with the others at connect.
/// cairn's hot reads are ranges of one index, in its order (`HOT`). With no
/// statistics yet (a journal just loaded or copied, before autovacuum's first
/// `ANALYZE`; or autovacuum off) the planner guessed a handful of rows and read
/// a replay's page by a bitmap scan of *every* later row of the stream, then a
/// sort: a replay of 100k events read each row a dozen times (26% of the
/// floor's rate, 58% with these; `cargo bench -p cairn-cli --bench postgres`).
/// Guessing a third of the table instead, it read a log page by a whole-table
/// scan and a sort. Neither is forbidden, only priced out: a query with no index
/// path (a count of a whole table) still scans. The price pushed such a query
/// over `jit_above_cost`, and compiling it took 70 ms of a 2-row read: no
/// statement of cairn's gains from JIT, so it is off.
pub const PLANNER: &str = "SET enable_bitmapscan = off; SET enable_seqscan = off; SET jit = off;";

/// The hot reads, each with arguments for a journal whose stream `plan/long`
/// holds many events (SQL literals, for `EXECUTE`): the plan test holds each to
/// an index in its order (no bitmap, no sort, no sequential scan), with and
/// without statistics, as a custom and as a generic plan.
pub const HOT: &[(&str, &str, &str)] = &[
    ("HEAD", HEAD, ""),
    ("IDEMPOTENCY", IDEMPOTENCY, "'plan/long', 'k'"),
    ("TRANSITION_SEQS", TRANSITION_SEQS, "'plan/long', 10, 20"),
    ("STREAM_TIP", STREAM_TIP, "'plan/long'"),
    ("STREAM_VERSION", STREAM_VERSION, "'plan/long'"),
    ("FAMILY_TIP", FAMILY_TIP, "'plan/', 'plan0'"),
    ("STREAM_MACHINE", STREAM_MACHINE, "'plan/long'"),
    (
        "REPLAY_PAGE",
        REPLAY_PAGE,
        "'plan/long', 100, 9223372036854775807, 4096, 2097152",
    ),
    (
        "STREAM_PAGE",
        STREAM_PAGE,
        "'plan/long', 100, 9223372036854775807, 4096, 2097152",
    ),
    ("LOG_AFTER", LOG_AFTER, "100, 4096"),
    ("WALK_AFTER", WALK_AFTER, "100, 2048, 2097152"),
    ("WALK_FIRST", WALK_FIRST, "NULL, 2048, 2097152"),
    (
        "LOG_STREAM_AFTER",
        LOG_STREAM_AFTER,
        "100, 'plan/long', 4096",
    ),
    (
        "TRANSITIONS_FROM",
        TRANSITIONS_FROM,
        "'plan/long', 100, 128, 2097152",
    ),
    ("TRANSITION", TRANSITION, "100"),
    ("TRANSITION_BY_KEY", TRANSITION_BY_KEY, "'plan/long', 'k'"),
    ("TRANSITIONS_AFTER", TRANSITIONS_AFTER, "100, 128, 2097152"),
    ("TRANSITION_AT", TRANSITION_AT, "'plan/long', 100"),
    ("STREAM_RANGE", STREAM_RANGE, "'plan/long', 100, 110"),
    ("TRANSITION_COUNT", TRANSITION_COUNT, "'plan/long'"),
    ("SIGNATURE_OF", SIGNATURE_OF, "100"),
    ("SIGNATURES_AFTER", SIGNATURES_AFTER, "100, 128"),
    ("HASH_AT", HASH_AT, "100"),
];

/// The marker's application id: the same as SQLite's `PRAGMA application_id` ("crn1").
pub(crate) const APPLICATION_ID: i64 = 0x6372_6e31;

/// The body of the append-only trigger function; `verify` checks it is unchanged.
pub(crate) const GUARD_BODY: &str =
    " BEGIN RAISE EXCEPTION 'cairn journal table % is append-only', TG_TABLE_NAME; END ";

/// The migrations. Text columns that are compared or sorted are `COLLATE "C"`, so
/// ordering is bytewise as in SQLite; payloads and records are `text`, stored and
/// hashed byte for byte (never `jsonb`, which would normalise them).
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE cairn_journal (
    schema_version bigint PRIMARY KEY,
    application_id bigint NOT NULL,
    migrated_at    text   NOT NULL
);
CREATE TABLE transitions (
    id              bigint PRIMARY KEY,
    stream          text COLLATE "C" NOT NULL,
    machine         text COLLATE "C" NOT NULL,
    rules_version   bigint NOT NULL,
    command_name    text   NOT NULL,
    command         text   NOT NULL,
    context         text   NOT NULL,
    idempotency_key text COLLATE "C",
    fingerprint     text,
    first_version   bigint NOT NULL,
    last_version    bigint NOT NULL,
    recorded_at     text COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX transitions_idempotency
    ON transitions (stream, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX transitions_stream ON transitions (stream, first_version);

CREATE TABLE events (
    seq            bigint PRIMARY KEY,
    stream         text COLLATE "C" NOT NULL,
    version        bigint NOT NULL,
    machine        text COLLATE "C" NOT NULL,
    event_type     text   NOT NULL,
    schema_version bigint NOT NULL,
    payload        text   NOT NULL,
    recorded_at    text COLLATE "C" NOT NULL,
    transition_id  bigint NOT NULL,
    hash           text   NOT NULL,
    UNIQUE (stream, version)
);
CREATE INDEX events_transition ON events (transition_id);

CREATE FUNCTION cairn_append_only() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RAISE EXCEPTION 'cairn journal table % is append-only', TG_TABLE_NAME; END $$;
CREATE TRIGGER cairn_journal_append_only BEFORE UPDATE OR DELETE ON cairn_journal
    FOR EACH ROW EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER cairn_journal_no_truncate BEFORE TRUNCATE ON cairn_journal
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER transitions_append_only BEFORE UPDATE OR DELETE ON transitions
    FOR EACH ROW EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER transitions_no_truncate BEFORE TRUNCATE ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only();
"#,
    r#"
CREATE TABLE signing_keys (
    id          bigint PRIMARY KEY,
    public_key  text COLLATE "C" NOT NULL UNIQUE,
    added_at    text NOT NULL
);
CREATE TABLE signatures (
    transition_id bigint PRIMARY KEY,
    key_id        bigint NOT NULL,
    head_seq      bigint NOT NULL,
    head_hash     text   NOT NULL,
    signature     text   NOT NULL
);
CREATE TRIGGER signing_keys_append_only BEFORE UPDATE OR DELETE ON signing_keys
    FOR EACH ROW EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER signing_keys_no_truncate BEFORE TRUNCATE ON signing_keys
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER signatures_append_only BEFORE UPDATE OR DELETE ON signatures
    FOR EACH ROW EXECUTE FUNCTION cairn_append_only();
CREATE TRIGGER signatures_no_truncate BEFORE TRUNCATE ON signatures
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_append_only();
"#,
    // 3: SQLite may store a transition's command and context packed; PostgreSQL
    // keeps text (its TOAST compresses large values itself). Nothing to change.
    "-- packed command and context (SQLite only)",
];

/// The shape of cairn's tables present among `$2` in the schema `$1`: a line
/// per column (type, schema-qualified collation, `not null`), constraint and
/// index (its `CREATE INDEX` as the server renders it, without the schema's
/// name), and any trigger but cairn's guards, rule, row security policy or
/// row security switch (cairn makes none: each can keep or hide rows), and
/// any relation or type under a name cairn's migrations make (`rows::made_names`)
/// but cairn's tables and their indexes.
/// `verify` holds it to [`SHAPE_DECLARED`] (`shape_problems`): a column retyped
/// by hand, a dropped key or an index cairn never made changes what the
/// journal's queries return, and passes every row's hash (helper-53: a record
/// duplicated after its key was dropped passed verify).
pub(crate) const SHAPE: &str = r#"
WITH t AS (
  SELECT c.oid, c.relname FROM pg_catalog.pg_class c
  WHERE c.relnamespace = $1::bigint::oid AND c.relname = ANY ($2::text[]) AND c.relkind IN ('r', 'p')
), ns AS (
  -- How the server's renderings name a table of the schema (dropped from them).
  SELECT ' ON ' || pg_catalog.quote_ident(nspname) || '.' AS qualified
  FROM pg_catalog.pg_namespace WHERE oid = $1::bigint::oid
)
SELECT line FROM (
  SELECT pg_catalog.format('column %s.%s %s%s%s', t.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
      CASE WHEN a.attcollation <> 0 AND a.attcollation <> 100
           THEN ' collate ' || (SELECT pg_catalog.quote_ident(cn.nspname) || '.' || pg_catalog.quote_ident(co.collname)
                                FROM pg_catalog.pg_collation co
                                JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
                                WHERE co.oid = a.attcollation)
           ELSE '' END,
      CASE WHEN a.attnotnull THEN ' not null' ELSE '' END) AS line
  FROM t JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid
  WHERE a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT pg_catalog.format('constraint %s.%s %s', t.relname, k.conname, pg_catalog.pg_get_constraintdef(k.oid, true))
  FROM t JOIN pg_catalog.pg_constraint k ON k.conrelid = t.oid
  -- PostgreSQL 18 lists NOT NULL as constraints too; the columns say it.
  WHERE k.contype <> 'n'
  UNION ALL
  SELECT pg_catalog.format('trigger %s.%s %s', t.relname, g.tgname,
      pg_catalog.replace(pg_catalog.pg_get_triggerdef(g.oid), (SELECT qualified FROM ns), ' ON '))
  FROM t JOIN pg_catalog.pg_trigger g ON g.tgrelid = t.oid
  -- cairn's own guards, exactly as declared (name, BEFORE UPDATE OR DELETE FOR
  -- EACH ROW or BEFORE TRUNCATE, enabled, unconditional, no arguments), are
  -- `unguarded`'s to report; any other trigger is not cairn's, one that calls
  -- cairn's guard function included (helper-72: `BEFORE INSERT … WHEN (…)
  -- EXECUTE FUNCTION cairn_append_only()` refused appends and verify was clean).
  WHERE NOT g.tgisinternal AND NOT (
      g.tgqual IS NULL AND g.tgnargs = 0 AND g.tgenabled IN ('O', 'A')
      AND g.tgfoid IN (
          SELECT p.oid FROM pg_catalog.pg_proc p
          WHERE p.proname = 'cairn_append_only' AND p.pronamespace = $1::bigint::oid)
      AND ((g.tgname = t.relname || '_append_only' AND g.tgtype = 27)
        OR (g.tgname = t.relname || '_no_truncate' AND g.tgtype = 34)))
  UNION ALL
  -- The migrations the marker records: each once, 1 to the newest (helper-54:
  -- a row set to -1 passed, and the next writer ran a migration again).
  SELECT 'marker ' || coalesce(
      (SELECT pg_catalog.string_agg(schema_version::text, ',' ORDER BY schema_version) FROM cairn_journal), '')
  UNION ALL
  SELECT pg_catalog.format('child %s.%s', t.relname, c.relname)
  FROM t JOIN pg_catalog.pg_inherits i ON i.inhparent = t.oid
  JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
  UNION ALL
  SELECT pg_catalog.format('rule %s.%s %s', t.relname, r.rulename, pg_catalog.pg_get_ruledef(r.oid))
  FROM t JOIN pg_catalog.pg_rewrite r ON r.ev_class = t.oid
  UNION ALL
  SELECT pg_catalog.format('policy %s.%s %s', t.relname, p.polname, coalesce(pg_catalog.pg_get_expr(p.polqual, p.polrelid), ''))
  FROM t JOIN pg_catalog.pg_policy p ON p.polrelid = t.oid
  UNION ALL
  SELECT pg_catalog.format('row-security %s %s', c.relname,
      CASE WHEN c.relforcerowsecurity THEN 'forced' ELSE 'enabled' END)
  FROM t JOIN pg_catalog.pg_class c ON c.oid = t.oid
  WHERE c.relrowsecurity OR c.relforcerowsecurity
  UNION ALL
  -- Anything else under a name cairn's migrations make ($3: its tables and
  -- their indexes): a view, a sequence, a type, a table under an index's name,
  -- an index on another table. None is cairn's, and each keeps a migration from
  -- running as written (helper-92: a view named `signing_keys` under a marker
  -- lowered to 1 verified clean; helper-93: a sequence named `signatures_pkey`
  -- verified clean, and the migration's key was quietly named `signatures_pkey1`).
  SELECT pg_catalog.format('relation %s %s', c.relname, CASE c.relkind
      WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table'
      WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence'
      WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' WHEN 'c' THEN 'type'
      WHEN 'f' THEN 'foreign table' WHEN 't' THEN 'TOAST table' ELSE 'kind ' || c.relkind::text END)
  FROM pg_catalog.pg_class c
  WHERE c.relnamespace = $1::bigint::oid AND c.relname = ANY ($3::text[])
    AND c.oid NOT IN (SELECT oid FROM t)
    AND NOT (c.relkind IN ('i', 'I') AND c.oid IN (
        SELECT x.indexrelid FROM pg_catalog.pg_index x WHERE x.indrelid IN (SELECT oid FROM t)))
  UNION ALL
  SELECT pg_catalog.format('relation %s type', y.typname)
  FROM pg_catalog.pg_type y
  WHERE y.typnamespace = $1::bigint::oid AND y.typname = ANY ($3::text[]) AND y.typrelid = 0
  UNION ALL
  SELECT pg_catalog.format('relation %s constraint', k.conname)
  FROM pg_catalog.pg_constraint k
  WHERE k.connamespace = $1::bigint::oid AND k.conname = ANY ($3::text[])
    AND k.conrelid NOT IN (SELECT oid FROM t)
  UNION ALL
  SELECT pg_catalog.format('index %s.%s %s', t.relname, i.relname,
      pg_catalog.replace(pg_catalog.pg_get_indexdef(x.indexrelid), (SELECT qualified FROM ns), ' ON '))
  FROM t JOIN pg_catalog.pg_index x ON x.indrelid = t.oid
  JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
) AS lines ORDER BY line COLLATE "C"
"#;

/// [`SHAPE`]'s lines for a journal [`MIGRATIONS`] made (a test creates one and
/// holds the two equal), by the schema version that made each table.
pub(crate) const SHAPE_DECLARED: &[&str] = &[
    "column cairn_journal.application_id bigint not null",
    "column cairn_journal.migrated_at text not null",
    "column cairn_journal.schema_version bigint not null",
    "column events.event_type text not null",
    "column events.hash text not null",
    "column events.machine text collate pg_catalog.\"C\" not null",
    "column events.payload text not null",
    "column events.recorded_at text collate pg_catalog.\"C\" not null",
    "column events.schema_version bigint not null",
    "column events.seq bigint not null",
    "column events.stream text collate pg_catalog.\"C\" not null",
    "column events.transition_id bigint not null",
    "column events.version bigint not null",
    "column signatures.head_hash text not null",
    "column signatures.head_seq bigint not null",
    "column signatures.key_id bigint not null",
    "column signatures.signature text not null",
    "column signatures.transition_id bigint not null",
    "column signing_keys.added_at text not null",
    "column signing_keys.id bigint not null",
    "column signing_keys.public_key text collate pg_catalog.\"C\" not null",
    "column transitions.command text not null",
    "column transitions.command_name text not null",
    "column transitions.context text not null",
    "column transitions.fingerprint text",
    "column transitions.first_version bigint not null",
    "column transitions.id bigint not null",
    "column transitions.idempotency_key text collate pg_catalog.\"C\"",
    "column transitions.last_version bigint not null",
    "column transitions.machine text collate pg_catalog.\"C\" not null",
    "column transitions.recorded_at text collate pg_catalog.\"C\" not null",
    "column transitions.rules_version bigint not null",
    "column transitions.stream text collate pg_catalog.\"C\" not null",
    "constraint cairn_journal.cairn_journal_pkey PRIMARY KEY (schema_version)",
    "constraint events.events_pkey PRIMARY KEY (seq)",
    "constraint events.events_stream_version_key UNIQUE (stream, version)",
    "constraint signatures.signatures_pkey PRIMARY KEY (transition_id)",
    "constraint signing_keys.signing_keys_pkey PRIMARY KEY (id)",
    "constraint signing_keys.signing_keys_public_key_key UNIQUE (public_key)",
    "constraint transitions.transitions_pkey PRIMARY KEY (id)",
    "index cairn_journal.cairn_journal_pkey CREATE UNIQUE INDEX cairn_journal_pkey ON cairn_journal USING btree (schema_version)",
    "index events.events_pkey CREATE UNIQUE INDEX events_pkey ON events USING btree (seq)",
    "index events.events_stream_version_key CREATE UNIQUE INDEX events_stream_version_key ON events USING btree (stream, version)",
    "index events.events_transition CREATE INDEX events_transition ON events USING btree (transition_id)",
    "index signatures.signatures_pkey CREATE UNIQUE INDEX signatures_pkey ON signatures USING btree (transition_id)",
    "index signing_keys.signing_keys_pkey CREATE UNIQUE INDEX signing_keys_pkey ON signing_keys USING btree (id)",
    "index signing_keys.signing_keys_public_key_key CREATE UNIQUE INDEX signing_keys_public_key_key ON signing_keys USING btree (public_key)",
    "index transitions.transitions_idempotency CREATE UNIQUE INDEX transitions_idempotency ON transitions USING btree (stream, idempotency_key) WHERE (idempotency_key IS NOT NULL)",
    "index transitions.transitions_pkey CREATE UNIQUE INDEX transitions_pkey ON transitions USING btree (id)",
    "index transitions.transitions_stream CREATE INDEX transitions_stream ON transitions USING btree (stream, first_version)",
];

/// The shape's differences from cairn's declaration for `tables`, one line each,
/// in the words SQLite's schema check uses: what is not one cairn makes, what
/// is declared otherwise (with both), what is missing.
pub(crate) fn shape_problems(live: &[String], tables: &[&str]) -> Vec<String> {
    use std::collections::BTreeMap;
    // `kind table.name` → the rest of the line.
    let split = |line: &str| -> (String, String) {
        let mut words = line.splitn(3, ' ');
        let kind = words.next().unwrap_or_default();
        let name = words.next().unwrap_or_default();
        (
            format!("{kind} `{name}`"),
            words.next().unwrap_or_default().to_owned(),
        )
    };
    let of_table = |line: &&&str| {
        let name = line.split(' ').nth(1).unwrap_or_default();
        tables.iter().any(|t| name.split('.').next() == Some(*t))
    };
    let want: BTreeMap<String, String> = SHAPE_DECLARED
        .iter()
        .filter(of_table)
        .map(|l| split(l))
        .collect();
    let have: BTreeMap<String, String> = live.iter().map(|l| split(l)).collect();
    let mut out = Vec::new();
    for (key, declared) in &have {
        match want.get(key) {
            None => out.push(format!("schema: {key} ({declared}) is not one cairn makes")),
            Some(w) if w != declared => out.push(format!(
                "schema: {key} is declared `{declared}`; cairn declares `{w}`"
            )),
            Some(_) => {}
        }
    }
    for (key, w) in &want {
        if !have.contains_key(key) {
            out.push(format!("schema: {key} ({w}) is missing"));
        }
    }
    out
}

/// The tables of each schema version, for the guard check.
pub(crate) const TABLES: &[(i64, &str)] = &[
    (1, "cairn_journal"),
    (1, "transitions"),
    (1, "events"),
    (2, "signing_keys"),
    (2, "signatures"),
];

/// The first object of the schema (`$1`, its oid) under one of the names `$2`:
/// its name and kind. What a migration would meet.
pub(crate) const TAKEN_NAME: &str = r#"
SELECT name, kind FROM (
  SELECT c.relname::text AS name, CASE c.relkind
      WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table'
      WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence'
      WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' WHEN 'c' THEN 'type'
      WHEN 'f' THEN 'foreign table' ELSE 'relation' END AS kind
  FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::bigint::oid
  UNION ALL
  SELECT y.typname::text, 'type' FROM pg_catalog.pg_type y
  WHERE y.typnamespace = $1::bigint::oid AND y.typrelid = 0
  UNION ALL
  SELECT p.proname::text, 'function' FROM pg_catalog.pg_proc p
  WHERE p.pronamespace = $1::bigint::oid
  UNION ALL
  -- A constraint's name is taken for a key's index too (helper-94: a CHECK
  -- named `signatures_pkey` had the key's index named `signatures_pkey1`).
  SELECT k.conname::text, 'constraint' FROM pg_catalog.pg_constraint k
  WHERE k.connamespace = $1::bigint::oid
) AS o WHERE name = ANY ($2::text[]) ORDER BY name COLLATE "C" LIMIT 1
"#;

/// The search path's first schema and its oid (`NULL` when none of it exists).
pub(crate) const CURRENT_SCHEMA: &str = "SELECT current_schema()::text, (SELECT oid::bigint FROM pg_catalog.pg_namespace WHERE nspname = current_schema()), to_regclass('cairn_journal') IS NOT NULL";
/// The marker: newest schema version, whether every row is cairn's, row count.
pub(crate) const MARKER: &str =
    "SELECT max(schema_version), bool_and(application_id = $1), count(*) FROM cairn_journal";
/// Relations in the schema (another application's tables, when there is no
/// marker). Types and functions are not counted (an extension in `public`
/// makes them, helper-94); one under a name cairn makes is refused by the
/// migration's [`TAKEN_NAME`].
pub(crate) const RELATIONS: &str = "SELECT pg_catalog.count(*) FROM pg_catalog.pg_class WHERE relnamespace = $1::bigint::oid AND relkind IN ('r', 'p', 'v', 'm', 'f', 'S')";
/// Records one migration in the marker.
pub(crate) const MARK: &str =
    "INSERT INTO cairn_journal (schema_version, application_id, migrated_at) VALUES ($1, $2, $3)";
/// The journal's lock: every append and migration of this schema holds it until commit.
pub(crate) const LOCK: &str = "SELECT pg_advisory_xact_lock($1)";

/// The guards that are missing: (table, operation) with no enabled `BEFORE`
/// trigger running cairn's unchanged function.
pub(crate) const UNGUARDED: &str = r#"
SELECT t.tbl, op.name
FROM unnest($1::text[]) WITH ORDINALITY AS t(tbl, n)
CROSS JOIN (VALUES ('UPDATE', 16, 1), ('DELETE', 8, 2), ('TRUNCATE', 32, 3)) AS op(name, bit, o)
WHERE NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_trigger g
    JOIN pg_catalog.pg_proc p ON p.oid = g.tgfoid
    WHERE g.tgrelid = to_regclass(t.tbl)
      AND NOT g.tgisinternal
      AND g.tgenabled IN ('O', 'A')
      AND (g.tgtype::int & 2) <> 0
      AND (g.tgtype::int & op.bit) <> 0
      -- a guard that fires only when a condition holds guards nothing (helper-55)
      AND g.tgqual IS NULL
      AND p.proname = 'cairn_append_only'
      AND p.pronamespace = $2::bigint::oid
      AND p.prosrc = $3)
ORDER BY t.n, op.o"#;

pub(crate) const HEAD: &str = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1";
pub(crate) const IDEMPOTENCY: &str = "SELECT id, fingerprint, first_version, last_version FROM transitions WHERE stream = $1 AND idempotency_key = $2";
pub(crate) const TRANSITION_SEQS: &str =
    "SELECT min(seq), max(seq) FROM events WHERE stream = $1 AND version BETWEEN $2 AND $3";
pub(crate) const STREAM_TIP: &str =
    "SELECT version, machine FROM events WHERE stream = $1 ORDER BY version DESC LIMIT 1";
pub(crate) const STREAM_VERSION: &str = "SELECT max(version) FROM events WHERE stream = $1";
/// The last transition id of any stream in a name range (`COLLATE "C"`: bytewise).
pub(crate) const FAMILY_TIP: &str =
    "SELECT max(id) FROM transitions WHERE stream >= $1 AND stream < $2";
/// Every stream in a name range, in name order: a skip scan of the events'
/// `(stream, version)` index (one seek per stream).
pub(crate) const FAMILY_STREAMS: &str = "WITH RECURSIVE s(stream) AS (
    SELECT min(stream) FROM events WHERE stream >= $1 AND stream < $2
    UNION ALL
    SELECT (SELECT min(e.stream) FROM events AS e WHERE e.stream > s.stream AND e.stream < $2)
    FROM s WHERE s.stream IS NOT NULL
) SELECT stream FROM s WHERE stream IS NOT NULL";
pub(crate) use crate::store::ALL_STREAMS;
pub(crate) const STREAM_MACHINE: &str =
    "SELECT machine FROM events WHERE stream = $1 ORDER BY version LIMIT 1";
/// A page of a stream, by version.
pub(crate) const REPLAY_PAGE: &str = cut_page!(
    "seq, version, event_type, schema_version, payload",
    "events",
    "version",
    "coalesce(octet_length(payload::text), 0)",
    "WHERE stream = $1 AND version > $2 AND version <= $3",
    "$4",
    "$5"
);
pub(crate) const STREAM_PAGE: &str = cut_page!(
    "seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash",
    "events", "version", "coalesce(octet_length(payload::text), 0)",
    "WHERE stream = $1 AND version > $2 AND version <= $3", "$4", "$5"
);
pub(crate) const LOG_AFTER: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE seq > $1 ORDER BY seq LIMIT $2";
/// The verify walk's fetch: events after `$1`, `$2` at most, cut at `$3` bytes.
pub(crate) const WALK_AFTER: &str = cut_page!(
    "seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash",
    "events", "seq", "coalesce(octet_length(payload::text), 0)", "WHERE seq > $1", "$2", "$3"
);
/// [`WALK_AFTER`] from the first row, whatever its `seq` (`$1` is null: a
/// one-time filter, so both take the same parameters).
pub(crate) const WALK_FIRST: &str = cut_page!(
    "seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash",
    "events", "seq", "coalesce(octet_length(payload::text), 0)", "WHERE $1::bigint IS NULL", "$2", "$3"
);
pub(crate) const LOG_STREAM_AFTER: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE stream = $2 AND seq > $1 ORDER BY version LIMIT $3";
pub(crate) const TRANSITIONS_OF: &str = "SELECT id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at FROM transitions WHERE stream = $1 ORDER BY first_version";
/// A page of a stream's records after version `$2`, `$3` at most, cut at `$4`
/// bytes of command and context ([`cut_page`]; each is at most 1 GB, so their
/// sum fits an `int`).
pub(crate) const TRANSITIONS_FROM: &str = cut_page!(
    "id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at",
    "transitions", "first_version",
    "coalesce(octet_length(command::text), 0) + coalesce(octet_length(context::text), 0)",
    "WHERE stream = $1 AND first_version > $2", "$3", "$4"
);
pub(crate) const TRANSITION: &str = "SELECT id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at FROM transitions WHERE id = $1";
pub(crate) const TRANSITION_BY_KEY: &str = "SELECT id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at FROM transitions WHERE stream = $1 AND idempotency_key = $2";
/// `copy`'s page of records by id after `$1`, `$2` at most, cut at `$3` bytes
/// ([`cut_page`]).
pub(crate) const TRANSITIONS_AFTER: &str = cut_page!(
    "id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at",
    "transitions", "id",
    "coalesce(octet_length(command::text), 0) + coalesce(octet_length(context::text), 0)",
    "WHERE id > $1", "$2", "$3"
);
/// The transition record that covers a stream version: the last one starting at or before it.
pub(crate) const TRANSITION_AT: &str = "SELECT id, first_version, last_version FROM transitions WHERE stream = $1 AND first_version <= $2 ORDER BY first_version DESC LIMIT 1";
/// A stream's events in a version range (a transition's events).
pub(crate) const STREAM_RANGE: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE stream = $1 AND version BETWEEN $2 AND $3 ORDER BY version";
/// Whether the journal's schema has a table of this name.
pub(crate) const HAS_TABLE: &str = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relnamespace = $1::bigint::oid AND relname = $2 AND relkind IN ('r', 'p'))";
pub(crate) const TRANSITION_COUNT: &str = "SELECT count(*) FROM transitions WHERE stream = $1";
pub(crate) const TRANSITION_TOTAL: &str = "SELECT count(*) FROM transitions";
pub(crate) const STREAMS: &str = "SELECT s.stream, s.machine, s.version, s.last_at, e.event_type, e.recorded_at \
     FROM (SELECT stream, min(machine) AS machine, max(version) AS version, max(recorded_at) AS last_at \
           FROM events GROUP BY stream) AS s \
     JOIN events AS e ON e.stream = s.stream AND e.version = s.version \
     ORDER BY s.stream";
pub(crate) const INSERT_TRANSITION: &str = "INSERT INTO transitions (id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM transitions), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";
pub(crate) const COPY_TRANSITION: &str = "INSERT INTO transitions (id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
pub(crate) const INSERT_EVENT: &str = "INSERT INTO events (seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
pub(crate) const KEY_INSERT: &str = "INSERT INTO signing_keys (id, public_key, added_at) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM signing_keys), $1, $2) ON CONFLICT (public_key) DO NOTHING";
pub(crate) const COPY_KEY: &str =
    "INSERT INTO signing_keys (id, public_key, added_at) VALUES ($1, $2, $3)";
pub(crate) const KEY_ID: &str = "SELECT id FROM signing_keys WHERE public_key = $1";
pub(crate) const KEYS: &str = "SELECT id, public_key, added_at FROM signing_keys ORDER BY id";
pub(crate) const SIGNATURE_INSERT: &str = "INSERT INTO signatures (transition_id, key_id, head_seq, head_hash, signature) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const SIGNATURE_OF: &str = "SELECT s.key_id, s.head_seq, s.head_hash, s.signature, k.public_key FROM signatures s LEFT JOIN signing_keys k ON k.id = s.key_id WHERE s.transition_id = $1";
pub(crate) const SIGNATURES_AFTER: &str = "SELECT transition_id, key_id, head_seq, head_hash, signature FROM signatures WHERE transition_id > $1 ORDER BY transition_id LIMIT $2";
pub(crate) const ORPHAN_SIGNATURES: &str = "SELECT transition_id FROM signatures s WHERE NOT EXISTS (SELECT 1 FROM transitions t WHERE t.id = s.transition_id) ORDER BY transition_id";
pub(crate) const ORPHAN_TRANSITIONS: &str = "SELECT id, stream FROM transitions t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.transition_id = t.id) ORDER BY id";
pub(crate) const HASH_AT: &str = "SELECT hash FROM events WHERE seq = $1";
pub(crate) const ROW_COUNT: &str = "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM transitions) + (SELECT count(*) FROM signing_keys) + (SELECT count(*) FROM signatures)";
