//! The journal on PostgreSQL, measured (`cargo bench -p cairn-cli --bench postgres`;
//! `-- --smoke` for CI-sized runs): a durable transition through the `cairn` binary
//! beside a minimal durable insert with the same client crate (whole processes),
//! appends/s with 1, 8 and 32 concurrent writers over distinct streams (one
//! connection each, as separate hosts would have), and beside a floor with the
//! same crate on the same rows: one durable append, 1,000-event transactions,
//! typed replay; then verify. Uses
//! `CAIRN_TEST_PG` when set, else starts the tests' throwaway cluster.

#[path = "../tests/support/pg.rs"]
#[allow(dead_code)]
mod pg;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_journal::{Append, Journal, NewEvent, Options, TransitionRecord};

fn append(stream: &str, expected: u64, events: usize) -> Append {
    Append {
        stream: stream.into(),
        machine: "bench".into(),
        expected_version: expected,
        events: (0..events)
            .map(|i| NewEvent {
                event_type: "happened".into(),
                schema_version: 1,
                payload: format!(
                    "{{\"n\":{},\"pad\":\"{}\"}}",
                    expected as usize + i,
                    "x".repeat(64)
                ),
            })
            .collect(),
        transition: TransitionRecord {
            command_name: "do".into(),
            command: "{\"do\":true}".into(),
            context: "{\"now\":\"2026-12-01T00:00:00Z\"}".into(),
            rules_version: 1,
        },
        idempotency: None,
        recorded_at: "2026-12-01T00:00:00.000000Z".into(),
        reads: Vec::new(),
        scans: Vec::new(),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `argv` with `stdin` `n` times; the median wall time of one run.
fn whole_process(n: usize, argv: &[String], stdin: &str) -> Duration {
    whole_process_each(n, &|_| argv.to_vec(), stdin)
}

/// [`whole_process`] with the `i`-th run's arguments from `argv_of(i)`.
fn whole_process_each(n: usize, argv_of: &dyn Fn(usize) -> Vec<String>, stdin: &str) -> Duration {
    let times = (0..n)
        .map(|i| {
            let argv = argv_of(i);
            let started = Instant::now();
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn");
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(stdin.as_bytes())
                .unwrap();
            assert!(child.wait().unwrap().success(), "{argv:?} failed");
            started.elapsed()
        })
        .collect();
    median(times)
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let server = pg::server();
    // CAIRN_BENCH_PG_EVENTS: the long stream's length (default 100,000).
    let (procs, secs, replay_n) = if smoke {
        (3, 1, 2_000)
    } else {
        let n = std::env::var("CAIRN_BENCH_PG_EVENTS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(100_000u64);
        (100, 5, n.div_ceil(1000) * 1000)
    };
    println!(
        "# cairn on PostgreSQL ({})",
        if smoke { "smoke" } else { "full" }
    );

    // 1. A durable transition through the binary vs a minimal insert, whole processes.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The smoke proves the path runs, on the test build's artifacts (no second,
    // release build in CI); the full run measures the release binaries.
    let (profile, dir) = if smoke {
        ("dev", "debug")
    } else {
        ("release", "release")
    };
    let status = Command::new("cargo")
        .args([
            "build",
            "-q",
            "--profile",
            profile,
            "-p",
            "cairn-cli",
            "--bin",
            "cairn",
            "--example",
            "pg_floor",
        ])
        .current_dir(&root)
        .status()
        .expect("cargo build");
    assert!(status.success());
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or(root.join("target"));
    let cairn = target
        .join(dir)
        .join("cairn")
        .to_string_lossy()
        .into_owned();
    let floor = target
        .join(dir)
        .join("examples/pg_floor")
        .to_string_lossy()
        .into_owned();
    let url = server.fresh_url();
    let key = std::env::temp_dir().join(format!("cairn-bench-key-{}", std::process::id()));
    let input = |n: usize| {
        format!("{{\"mode\":\"park\",\"anchor_bead\":\"rsry-42\",\"episode_id\":\"ep-00000000-0000-4000-8000-{n:012}\",\"intent_id\":\"park-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f\",\"prior_receipts\":[]}}")
    };
    let park = vec![
        cairn.clone(),
        "--db".into(),
        url.clone(),
        "--signing-key".into(),
        key.to_string_lossy().into_owned(),
        "park".into(),
        "prepare-attempt".into(),
    ];
    whole_process(2, &park, &input(1)); // creates the journal and the key
    let cli = whole_process(procs, &park, &input(1));
    let floor_url = server.fresh_url();
    let floor_argv = vec![floor, floor_url];
    let bare = whole_process(procs, &floor_argv, &input(1));
    println!(
        "| durable `cairn park prepare-attempt` (whole process, median of {procs}) | {:.2} ms |",
        ms(cli)
    );
    println!(
        "| floor: minimal Rust binary, `postgres` crate, one durable insert | {:.2} ms |",
        ms(bare)
    );
    println!("| ratio | {:.2}x |", cli.as_secs_f64() / bare.as_secs_f64());
    // A lease taken on a fresh resource each run: the clock read on the
    // session it appends on (one session).
    let acquire = |i: usize| -> Vec<String> {
        [
            &cairn,
            "--db",
            &url,
            "--signing-key",
            &key.to_string_lossy(),
            "claim",
            "acquire",
            "--resource",
            &format!("park/ep-00000000-0000-4000-8000-{i:012}"),
            "--owner",
            "bench",
            "--claim-id",
            "c",
            "--ttl",
            "60",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let claims = whole_process_each(procs, &acquire, "");
    println!(
        "| durable `cairn claim acquire` on a fresh resource (whole process, median of {procs}) | {:.2} ms |",
        ms(claims)
    );
    let _ = std::fs::remove_file(&key);

    // 2. Appends/s with N writers, each its own connection and stream.
    for writers in [1usize, 8, 32] {
        let url = server.fresh_url();
        drop(Journal::open(url.as_str(), &Options::default()).unwrap());
        let deadline = Instant::now() + Duration::from_secs(secs);
        let total: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    let url = url.clone();
                    s.spawn(move || {
                        let mut j = Journal::open(url.as_str(), &Options::default()).unwrap();
                        let stream = format!("bench/w{w}");
                        let mut v = 0;
                        while Instant::now() < deadline {
                            j.append(&append(&stream, v, 1)).unwrap();
                            v += 1;
                        }
                        v
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let j = Journal::open_read_only(url.as_str(), &Options::default()).unwrap();
        assert!(j.verify().unwrap().ok);
        println!("| {writers} writer(s), distinct streams, durable single-event appends | {:.0} appends/s |", total as f64 / secs as f64);
    }

    // 3. Beside the floor: the same rows through the `postgres` crate alone
    // (the floor's table has no chain, no transition records, no signatures).
    let raw_url = server.fresh_url();
    let mut raw = postgres::Client::connect(&raw_url, postgres::NoTls).unwrap();
    raw.batch_execute(
        "SET synchronous_commit = on;
         CREATE TABLE raw_events (seq bigserial PRIMARY KEY, stream text NOT NULL,
             version bigint NOT NULL, machine text NOT NULL, event_type text NOT NULL,
             schema_version int NOT NULL, payload text NOT NULL, recorded_at text NOT NULL,
             UNIQUE (stream, version))",
    )
    .unwrap();
    let url = server.fresh_url();
    let mut j = Journal::open(url.as_str(), &Options::default()).unwrap();
    let ones = if smoke { 5 } else { 200 };
    let one_cairn = median(
        (0..ones as u64)
            .map(|v| {
                let a = append("bench/one", v, 1);
                let started = Instant::now();
                j.append(&a).unwrap();
                started.elapsed()
            })
            .collect(),
    );
    let one_raw = median(
        (0..ones as u64)
            .map(|v| {
                let started = Instant::now();
                raw_append(&mut raw, "bench/one", v, 1);
                started.elapsed()
            })
            .collect(),
    );
    println!(
        "| one durable single-event append (median of {ones}) | {:.2} ms | {:.2} ms | {:.2}x the time |",
        ms(one_cairn),
        ms(one_raw),
        one_cairn.as_secs_f64() / one_raw.as_secs_f64()
    );

    // Load one long stream, 1,000 events per transaction, both ways.
    let started = Instant::now();
    let mut v = 0u64;
    while v < replay_n {
        j.append(&append("bench/long", v, 1000)).unwrap();
        v += 1000;
    }
    let load = started.elapsed();
    let started = Instant::now();
    let mut v = 0u64;
    while v < replay_n {
        raw_append(&mut raw, "bench/long", v, 1000);
        v += 1000;
    }
    let raw_load = started.elapsed();
    let rate = |d: Duration| replay_n as f64 / d.as_secs_f64();
    println!(
        "| {replay_n} events, 1,000 per transaction | {:.0} events/s | {:.0} events/s | {:.0}% of the floor's rate |",
        rate(load),
        rate(raw_load),
        100.0 * rate(load) / rate(raw_load)
    );

    // Replay into a typed payload, both ways.
    let started = Instant::now();
    let mut n = 0u64;
    j.replay_stream("bench/long", i64::MAX, &mut |r| {
        let p: Payload = serde_json::from_str(r.payload).expect("payload");
        n += u64::from(p.n < u64::MAX && !p.pad.is_empty());
        Ok(())
    })
    .unwrap();
    let replay = started.elapsed();
    assert_eq!(n, replay_n);
    let started = Instant::now();
    let mut n = 0u64;
    for row in raw
        .query(
            "SELECT payload FROM raw_events WHERE stream = $1 ORDER BY version",
            &[&"bench/long"],
        )
        .unwrap()
    {
        let p: Payload = serde_json::from_str(row.get::<_, &str>(0)).expect("payload");
        n += u64::from(p.n < u64::MAX && !p.pad.is_empty());
    }
    let raw_replay = started.elapsed();
    assert_eq!(n, replay_n);
    println!(
        "| replay {replay_n} events into a typed payload | {:.0} events/s | {:.0} events/s | {:.0}% of the floor's rate |",
        rate(replay),
        rate(raw_replay),
        100.0 * rate(replay) / rate(raw_replay)
    );
    let started = Instant::now();
    let report = j.verify().unwrap();
    assert!(report.ok);
    let verify = started.elapsed();
    println!(
        "| verify {replay_n} events (chain, versions, records, signatures) | {:.2} s ({:.0} events/s) | — | — |",
        verify.as_secs_f64(),
        rate(verify)
    );
}

#[derive(serde::Deserialize)]
struct Payload {
    n: u64,
    pad: String,
}

/// The floor's append: one transaction, an expected-version check, the rows.
fn raw_append(c: &mut postgres::Client, stream: &str, expected: u64, n: usize) {
    let mut tx = c.transaction().unwrap();
    let v: i64 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM raw_events WHERE stream = $1",
            &[&stream],
        )
        .unwrap()
        .get(0);
    assert_eq!(v as u64, expected);
    let insert = tx
        .prepare("INSERT INTO raw_events (stream, version, machine, event_type, schema_version, payload, recorded_at) VALUES ($1, $2, 'bench', 'happened', 1, $3, '2026-12-01T00:00:00.000000Z')")
        .unwrap();
    for i in 0..n {
        let payload = format!(
            "{{\"n\":{},\"pad\":\"{}\"}}",
            expected as usize + i,
            "x".repeat(64)
        );
        tx.execute(
            &insert,
            &[&stream, &(expected as i64 + i as i64 + 1), &payload],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}
