//! Foundation benchmarks, reported as medians (with min–max) on a real journal file.
//!
//! `cargo bench -p cairn-cli --bench journal` for the full run,
//! `cargo bench -p cairn-cli --bench journal -- --smoke` for a few iterations
//! (CI runs the smoke to prove the benchmark builds and runs; it judges no timing).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::journal::{Journal, NewEvent, Options};
use cairn::{Engine, Registry, StreamId};

mod common;

use common::{append, decided, event, Counter};

struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    Stats {
        median: samples[samples.len() / 2],
        min: samples[0],
        max: samples[samples.len() - 1],
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// `--measure-rss open|replay|audit DB N`: run one of them and print this process's peak RSS.
fn measure_rss(args: &[String]) {
    let (what, db, n) = (
        &args[2],
        std::path::Path::new(&args[3]),
        args[4].parse::<u64>().expect("n"),
    );
    let mut registry = Registry::new();
    registry.register::<Counter>();
    let engine = Engine::open(db, &Options::default(), registry).expect("engine");
    let stream = StreamId::parse("counter/mem").expect("stream id");
    match what.as_str() {
        "replay" => assert_eq!(engine.load::<Counter>(&stream).expect("replay").1, n),
        "audit" => assert!(engine.audit(None).expect("audit").redecided == n),
        _ => {}
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok());
    match hwm {
        Some(k) => println!("{:.1} MiB", k as f64 / 1024.0),
        None => println!("not measurable here"),
    }
}

/// `--growth [--smoke]`: append and replay latency on one hot stream while the
/// journal grows (cold streams round-robin), at 10k, 1M and 5M events.
fn growth(smoke: bool) {
    let marks: &[u64] = if smoke {
        &[2_000, 10_000, 20_000]
    } else {
        &[10_000, 1_000_000, 5_000_000]
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("growth.db");
    let mut journal = Journal::open(&db, &Options::default()).expect("journal");
    let cold_streams = 1000u64;
    let mut cold_versions = vec![0u64; cold_streams as usize];
    // A fixed 200-event probe stream, written first: its replay cost must not grow
    // with the rest of the journal.
    let probe: Vec<_> = (0..200)
        .map(|i| append("counter/probe", i, vec![event(i)]))
        .collect();
    journal.append_batch(&probe).expect("probe");
    let mut total = 200u64;
    let mut rows = Vec::new();
    for &mark in marks {
        while total < mark {
            let k = 1000.min(mark - total);
            let batch: Vec<_> = (0..k)
                .map(|i| {
                    let s = ((total + i) % cold_streams) as usize;
                    let a = append(
                        &format!("counter/cold-{s}"),
                        cold_versions[s],
                        vec![event(total + i)],
                    );
                    cold_versions[s] += 1;
                    a
                })
                .collect();
            journal.append_batch(&batch).expect("fill");
            total += k;
        }
        // Appends to a fresh stream at this size (its tip lookup is what a new writer pays).
        let hot = format!("counter/hot-{mark}");
        let mut appends = Vec::new();
        for v in 0..200 {
            let a = append(&hot, v, vec![event(v)]);
            let t = Instant::now();
            journal.append(&a).expect("hot append");
            appends.push(t.elapsed());
        }
        total += 200;
        let mut registry = Registry::new();
        registry.register::<Counter>();
        let engine = Engine::open(&db, &Options::default(), registry).expect("engine");
        let stream = StreamId::parse("counter/probe").expect("id");
        let mut loads = Vec::new();
        for _ in 0..50 {
            let t = Instant::now();
            engine.load::<Counter>(&stream).expect("load");
            loads.push(t.elapsed());
        }
        let (a, l) = (stats(appends), stats(loads));
        println!(
            "journal at {total} events: append median {:.1} µs (max {:.1}); 200-event probe stream replay median {:.1} µs (max {:.1})",
            us(a.median), us(a.max), us(l.median), us(l.max)
        );
        rows.push((a.median, l.median));
    }
    let (first, last) = (rows[0], rows[rows.len() - 1]);
    println!(
        "ratio at {} vs {} events: append {:.2}x, replay {:.2}x",
        marks[marks.len() - 1],
        marks[0],
        last.0.as_secs_f64() / first.0.as_secs_f64(),
        last.1.as_secs_f64() / first.1.as_secs_f64()
    );
    println!(
        "reproduce: cargo bench -p cairn-cli --bench journal -- --growth{}",
        if smoke { " --smoke" } else { "" }
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--measure-rss") {
        return measure_rss(&args);
    }
    if args.iter().any(|a| a == "--growth") {
        return growth(args.iter().any(|a| a == "--smoke"));
    }
    let smoke = std::env::args().any(|a| a == "--smoke");
    let (appends, batches, replay_n, procs) = if smoke {
        (20, 3, 2_000, 3)
    } else {
        (2_000, 30, 100_000, 50)
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("bench.db");
    let mut journal = Journal::open(&db, &Options::default()).expect("journal");

    // 1. One durable append (synchronous=FULL), one event per transaction.
    let mut samples = Vec::with_capacity(appends);
    for i in 0..appends as u64 {
        let a = append("counter/latency", i, vec![event(i)]);
        let t = Instant::now();
        journal.append(&a).expect("append");
        samples.push(t.elapsed());
    }
    let s = stats(samples);
    println!(
        "durable append (1 event/tx, synchronous=FULL): median {:.1} µs (min {:.1}, max {:.1}) over {appends}",
        us(s.median), us(s.min), us(s.max)
    );

    // 2. Batched appends: 1,000 events in one transaction.
    let mut rates = Vec::with_capacity(batches);
    for b in 0..batches as u64 {
        let a = append(
            "counter/batch",
            b * 1000,
            (0..1000).map(|i| event(b * 1000 + i)).collect(),
        );
        let t = Instant::now();
        journal.append(&a).expect("batch");
        rates.push(t.elapsed());
    }
    let s = stats(rates);
    println!(
        "batched append (1,000 events/tx, hash chain included): median {:.0} events/s (min {:.0}, max {:.0}) over {batches}",
        1000.0 / s.median.as_secs_f64(), 1000.0 / s.max.as_secs_f64(), 1000.0 / s.min.as_secs_f64()
    );

    // 3. Replay of one long stream into the machine's state (typed decode + evolve).
    let mut v = 0u64;
    while v < replay_n {
        let n = 1000.min(replay_n - v);
        journal
            .append(&append(
                "counter/replay",
                v,
                (0..n).map(|i| event(v + i)).collect(),
            ))
            .expect("fill");
        v += n;
    }
    drop(journal);
    let mut registry = Registry::new();
    registry.register::<Counter>();
    let engine = Engine::open(&db, &Options::default(), registry).expect("engine");
    let stream = StreamId::parse("counter/replay").expect("stream id");
    let mut samples = Vec::new();
    for _ in 0..if smoke { 2 } else { 5 } {
        let t = Instant::now();
        let (state, version) = engine.load::<Counter>(&stream).expect("replay");
        samples.push(t.elapsed());
        assert_eq!((state.n, version), (replay_n, replay_n));
    }
    let s = stats(samples);
    println!(
        "replay of a {replay_n}-event stream: median {:.0} events/s ({:.1} ms; min {:.1}, max {:.1} ms)",
        replay_n as f64 / s.median.as_secs_f64(),
        s.median.as_secs_f64() * 1e3, s.min.as_secs_f64() * 1e3, s.max.as_secs_f64() * 1e3
    );
    drop(engine);

    // 4. Whole process: one `cairn journal log` read of one event, as a skill would call it.
    let bin = env!("CARGO_BIN_EXE_cairn");
    let run = |args: &[&str], db: &Path| {
        let t = Instant::now();
        let out = Command::new(bin)
            .args(args)
            .arg("--db")
            .arg(db)
            .output()
            .expect("cairn runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        t.elapsed()
    };
    let samples: Vec<_> = (0..procs)
        .map(|_| {
            run(
                &[
                    "journal",
                    "log",
                    "--stream",
                    "counter/latency",
                    "--limit",
                    "1",
                    "--format",
                    "json",
                ],
                &db,
            )
        })
        .collect();
    let s = stats(samples);
    println!(
        "whole process `cairn journal log --stream S --limit 1 --format json`: median {:.2} ms (min {:.2}, max {:.2}) over {procs}",
        s.median.as_secs_f64() * 1e3, s.min.as_secs_f64() * 1e3, s.max.as_secs_f64() * 1e3
    );
    // 5. Whole process: one `cairn state` of a 1,000-event park stream (replay included).
    let episode = "ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
    let mut journal = Journal::open(&db, &Options::default()).expect("journal");
    let prepared = |i: u64| NewEvent {
        event_type: "attempt-prepared".into(),
        schema_version: 1,
        payload: serde_json::json!({
            "type": "attempt-prepared",
            "episode_id": episode,
            "intent_id": "park-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
            "anchor_bead": "rsry-42",
            "attempt_id": format!("attempt-00000000-0000-4000-8000-{i:012}"),
            "at": "2026-11-30T04:00:00Z"
        })
        .to_string(),
    };
    let mut a = append(
        &format!("park/{episode}"),
        0,
        (0..1000).map(prepared).collect(),
    );
    a.machine = "park".into();
    journal.append(&a).expect("park stream");
    drop(journal);
    let stream = format!("park/{episode}");
    let samples: Vec<_> = (0..procs).map(|_| run(&["state", &stream], &db)).collect();
    let s = stats(samples);
    println!(
        "whole process `cairn state park/ep-…` (1,000 events replayed): median {:.2} ms (min {:.2}, max {:.2}) over {procs}",
        s.median.as_secs_f64() * 1e3, s.min.as_secs_f64() * 1e3, s.max.as_secs_f64() * 1e3
    );
    // 6. Memory: peak RSS of replaying and auditing a long stream, above what the
    // process held before (Linux: clear_refs=5 resets the high-water mark).
    let big = if smoke { 20_000 } else { 1_000_000 };
    let mem_db = dir.path().join("memory.db");
    let mut journal = Journal::open(&mem_db, &Options::default()).expect("journal");
    let mut v = 0;
    while v < big {
        let k = 1000.min(big - v);
        let batch: Vec<_> = (0..k).map(|i| decided("counter/mem", v + i)).collect();
        journal.append_batch(&batch).expect("fill");
        v += k;
    }
    drop(journal);
    // Each measurement in a fresh process (this bench binary, re-executed), so the
    // peak is only the open, the replay or audit, and the process itself.
    let exe = std::env::current_exe().expect("bench binary");
    for what in ["open", "replay", "audit"] {
        let out = Command::new(&exe)
            .args(["--measure-rss", what])
            .arg(&mem_db)
            .arg(big.to_string())
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!(
            "peak RSS, fresh process, {what} of a {big}-event stream: {}",
            text.trim()
        );
    }

    println!(
        "reproduce: cargo bench -p cairn-cli --bench journal{}",
        if smoke { " -- --smoke" } else { "" }
    );
}
