//! The journal on PostgreSQL, measured (`cargo bench -p cairn-cli --bench postgres`;
//! `-- --smoke` for CI-sized runs): a durable transition through the `cairn` binary
//! beside a minimal durable insert with the same client crate (whole processes),
//! appends/s with 1, 8 and 32 concurrent writers over distinct streams (one
//! connection each, as separate hosts would have), replay rate, and verify. Uses
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
    let times = (0..n)
        .map(|_| {
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
    let (procs, secs, replay_n) = if smoke {
        (3, 1, 2_000)
    } else {
        (100, 5, 100_000)
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

    // 3. Replay and verify of one long stream.
    let url = server.fresh_url();
    let mut j = Journal::open(url.as_str(), &Options::default()).unwrap();
    let started = Instant::now();
    let mut v = 0u64;
    while v < replay_n {
        j.append(&append("bench/long", v, 1000)).unwrap();
        v += 1000;
    }
    let load = started.elapsed();
    println!(
        "| load {replay_n} events, 1,000 per transaction | {:.0} events/s |",
        replay_n as f64 / load.as_secs_f64()
    );
    let started = Instant::now();
    let mut n = 0u64;
    j.replay_stream("bench/long", i64::MAX, &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    let replay = started.elapsed();
    assert_eq!(n, replay_n);
    println!(
        "| replay {replay_n} events (rows to the caller) | {:.0} events/s |",
        n as f64 / replay.as_secs_f64()
    );
    let started = Instant::now();
    let report = j.verify().unwrap();
    assert!(report.ok);
    let verify = started.elapsed();
    println!(
        "| verify {replay_n} events | {:.2} s ({:.0} events/s) |",
        verify.as_secs_f64(),
        replay_n as f64 / verify.as_secs_f64()
    );
}
