//! How PostgreSQL runs cairn's hot reads: each one a range of one index, in its
//! order, whatever the table's statistics. A journal just loaded or copied has
//! none until autovacuum's first `ANALYZE` (or never, with autovacuum off); the
//! planner then guessed a handful of rows and read a stream's page by a bitmap
//! scan of every later row, sorted — a replay read each row a dozen times.
//! (SQLite's counterpart is `every_hot_query_uses_an_index` in the journal
//! crate.)

use cairn::journal::pg_plans::{HOT, PLANNER};

use crate::journal::append;
use crate::support::backend::{Backend, Store};

/// Events in the stream the plans are asked about: enough that a scan of the
/// rest of the stream costs the planner more than a page of the index.
const EVENTS: u64 = 6_000;

/// A journal whose stream `plan/long` holds [`EVENTS`] events, one a
/// transition, in tables autovacuum leaves alone (no statistics, ever).
fn loaded() -> Store {
    let s = Backend::Postgres.fresh();
    drop(s.journal());
    s.exec(
        "ALTER TABLE events SET (autovacuum_enabled = off); \
         ALTER TABLE transitions SET (autovacuum_enabled = off); \
         ALTER TABLE signatures SET (autovacuum_enabled = off);",
    )
    .expect("autovacuum off");
    let mut j = s.journal();
    let pad = "x".repeat(200);
    for first in (0..EVENTS).step_by(1_000) {
        let batch: Vec<_> = (first..first + 1_000)
            .map(|v| {
                let payload = format!("{{\"n\":{v},\"pad\":\"{pad}\"}}");
                append("plan/long", v, &[payload.as_str()], None)
            })
            .collect();
        j.append_batch(&batch).expect("fill");
    }
    s
}

/// The plan of `sql` run with `args`, as a custom or a generic plan, after
/// `settings`; each node's line.
fn plan(
    c: &mut postgres::Client,
    settings: &str,
    sql: &str,
    args: &str,
    generic: bool,
) -> Vec<String> {
    let mode = if generic {
        "force_generic_plan"
    } else {
        "force_custom_plan"
    };
    c.batch_execute(&format!(
        "RESET ALL; {settings} SET plan_cache_mode = {mode}; DEALLOCATE ALL; PREPARE q AS {sql};"
    ))
    .unwrap_or_else(|e| panic!("prepare `{sql}`: {e}"));
    let execute = if args.is_empty() {
        "EXPLAIN EXECUTE q".to_owned()
    } else {
        format!("EXPLAIN EXECUTE q({args})")
    };
    c.query(execute.as_str(), &[])
        .unwrap_or_else(|e| panic!("explain `{sql}`: {e}"))
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
}

/// What a hot read must not do: scan a table whole, scan by bitmap (no order, so
/// a sort follows), or sort.
fn offences(plan: &[String]) -> Vec<&String> {
    plan.iter()
        .filter(|l| {
            let node = l.trim_start().trim_start_matches("->").trim_start();
            node.starts_with("Seq Scan")
                || node.starts_with("Bitmap")
                || node.starts_with("Sort")
                || node.starts_with("Incremental Sort")
        })
        .collect()
}

/// Every hot read, under cairn's planner settings, as a custom and as a generic
/// plan: no [`offences`].
fn every_hot_read_uses_an_index(c: &mut postgres::Client) {
    for (name, sql, args) in HOT {
        for generic in [false, true] {
            let p = plan(c, PLANNER, sql, args, generic);
            assert!(
                offences(&p).is_empty(),
                "{name} ({}) plans {:?}:\n{}",
                if generic { "generic" } else { "custom" },
                offences(&p),
                p.join("\n")
            );
        }
    }
}

#[test]
fn every_hot_read_is_a_range_of_one_index_without_statistics() {
    let s = loaded();
    let mut c = s.pg();
    let stats: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_catalog.pg_stats WHERE tablename = 'events' AND schemaname = current_schema()",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        stats, 0,
        "the events table has statistics: the test asks about none"
    );
    every_hot_read_uses_an_index(&mut c);
    // Without cairn's planner settings, a log's page is a scan of the whole
    // table, sorted (and on a larger table a replay's page a bitmap scan of the
    // rest of the stream, sorted): what the settings are for.
    let unset: Vec<&str> = HOT
        .iter()
        .filter(|(_, sql, args)| !offences(&plan(&mut c, "", sql, args, false)).is_empty())
        .map(|(name, _, _)| *name)
        .collect();
    assert!(unset.contains(&"LOG_AFTER"), "{unset:?}");
}

#[test]
fn every_hot_read_is_a_range_of_one_index_with_statistics() {
    let s = loaded();
    let mut c = s.pg();
    c.batch_execute("ANALYZE events; ANALYZE transitions; ANALYZE signatures;")
        .unwrap();
    every_hot_read_uses_an_index(&mut c);
}
