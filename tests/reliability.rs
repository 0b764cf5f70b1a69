//! Reliability: many writers, crashes, tampering and hostile input, with real
//! processes, real SQLite files and real mounts. Sizes are CI-sized by default;
//! `CAIRN_SOAK=1` runs the long versions (see docs/reliability.md).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn::journal::{Journal, Options};
use cairn::{Engine, Registry};
use serde_json::{json, Value};

use crate::park::park;
use crate::support::park::{ANCHOR, INTENT};
use crate::support::{tamper, TempJournal};

fn soak() -> bool {
    std::env::var_os("CAIRN_SOAK").is_some()
}

pub(crate) fn episode(n: u32) -> String {
    format!("ep-00000000-0000-4000-8000-{n:012}")
}

fn prepare_input(ep: &str) -> String {
    json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": ep, "intent_id": INTENT, "prior_receipts": []}).to_string()
}

/// Runs one `cairn park prepare-attempt` (one recorded transition) as its own process.
pub(crate) fn prepare(db: &Path, ep: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["park", "prepare-attempt"];
    args.extend_from_slice(extra);
    let (code, out, stderr) = park(&args, &prepare_input(ep), Some(db));
    assert!(!stderr.contains("panicked"), "{stderr}");
    (code, out)
}

/// The journal is whole: verify and audit pass.
fn assert_whole(db: &Path) -> (u64, u64) {
    let engine = Engine::open(db, &Options::default(), Registry::builtin()).expect("journal opens");
    let report = engine.journal().verify().expect("verify runs");
    assert!(report.ok, "verify: {:?}", report.problems);
    let audit = engine.audit(None).expect("audit runs");
    assert!(audit.ok, "audit: {:?}", audit.findings);
    (report.events, report.transitions)
}

fn attempt_ids(db: &Path) -> Vec<String> {
    let j = Journal::open(db, &Options::default()).unwrap();
    j.read_after(0, None, u64::MAX >> 1)
        .unwrap()
        .into_iter()
        .map(|e| {
            serde_json::from_str::<Value>(&e.payload).unwrap()["attempt_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// N writers, M transitions each, half on one shared episode and half on their own.
fn writers(n: u32, m: u32) {
    let t = TempJournal::new();
    let db = t.path();
    let started = Instant::now();
    let results: Vec<(i32, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|w| {
                let db = db.clone();
                s.spawn(move || {
                    (0..m)
                        .map(|i| {
                            let ep = if i % 2 == 0 {
                                episode(0)
                            } else {
                                episode(w + 1)
                            };
                            prepare(&db, &ep, &[])
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer thread"))
            .collect()
    });
    let elapsed = started.elapsed();
    let accepted: Vec<&Value> = results
        .iter()
        .filter(|(c, _)| *c == 0)
        .map(|(_, v)| v)
        .collect();
    for (code, out) in &results {
        assert!(
            *code == 0 || *code == 3,
            "a write was neither accepted nor a conflict/busy: exit {code}: {out}"
        );
        if *code == 3 {
            let kind = out["error"]["kind"].as_str().unwrap_or("");
            assert!(kind == "conflict" || kind == "busy", "{out}");
        }
    }
    let (events, _) = assert_whole(&db);
    assert_eq!(events, accepted.len() as u64, "lost or duplicated events");
    let stored: Vec<String> = attempt_ids(&db);
    let unique: HashSet<&String> = stored.iter().collect();
    assert_eq!(unique.len(), stored.len(), "an event was duplicated");
    let reported: HashSet<String> = accepted
        .iter()
        .map(|v| v["attempt_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        reported,
        stored.into_iter().collect::<HashSet<_>>(),
        "what processes reported differs from what is stored"
    );
    eprintln!(
        "load: {n} writers x {m} transitions: {} accepted, {} conflicts/busy, lost 0, {:.0} transitions/s",
        accepted.len(),
        results.len() - accepted.len(),
        accepted.len() as f64 / elapsed.as_secs_f64()
    );
}

#[test]
fn concurrent_writers_lose_nothing() {
    let m = if soak() { 50 } else { 4 };
    for n in [2, 8, 32] {
        writers(n, if n == 32 && !soak() { 2 } else { m });
    }
}

#[test]
fn idempotent_retries_under_contention_append_once() {
    let t = TempJournal::new();
    let db = t.path();
    let n = if soak() { 32 } else { 8 };
    let ep = episode(7);
    let results: Vec<(i32, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| s.spawn(|| prepare(&db, &ep, &["--idempotency-key", "park-retry-1"])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (code, out) in &results {
        assert_eq!(*code, 0, "{out}");
    }
    let first = &results[0].1["attempt_id"];
    assert!(
        results.iter().all(|(_, v)| &v["attempt_id"] == first),
        "all retries get the same result: {results:?}"
    );
    assert_eq!(assert_whole(&db), (1, 1));
}

#[test]
fn a_writer_that_cannot_get_the_lock_exits_3_and_writes_nothing() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    let before = t.bytes();
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let (code, out) = prepare(&db, &episode(1), &["--busy-timeout-ms", "200"]);
    assert_eq!(
        (code, out["error"]["kind"].clone()),
        (3, json!("busy")),
        "{out}"
    );
    assert!(
        out["error"]["message"].as_str().unwrap().contains("200 ms"),
        "{out}"
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(t.bytes(), before);
    assert_eq!(
        prepare(&db, &episode(1), &[]).0,
        0,
        "the next write succeeds"
    );
}

/// A tiny deterministic generator for kill delays.
fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

#[test]
fn sigkill_at_random_moments_never_leaves_a_partial_transition() {
    let t = TempJournal::new();
    let db = t.path();
    let kills = if soak() { 500 } else { 60 };
    // The kill window adapts to the machine's load: it shrinks after a run that
    // completed and grows after a kill, so kills keep landing before, during and after
    // the append (random delays within the window).
    let started = Instant::now();
    assert_eq!(prepare(&db, &episode(0), &[]).0, 0);
    let mut window_us = (started.elapsed().as_micros() as u64).max(1_000);
    let mut seed = 0x5eed;
    let mut killed = 0;
    let mut completed = 0;
    for _ in 0..kills {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["park", "prepare-attempt", "--db"])
            .arg(&db)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(prepare_input(&episode(0)).as_bytes());
        }
        std::thread::sleep(Duration::from_micros(lcg(&mut seed) % window_us));
        match child.try_wait().expect("wait") {
            Some(_) => {
                completed += 1;
                window_us = (window_us * 3 / 4).max(200);
            }
            None => {
                child.kill().expect("SIGKILL");
                killed += 1;
                window_us = (window_us * 5 / 4).min(2_000_000);
            }
        }
        child.wait().expect("the child is reaped");
        // After every kill: the journal opens, verifies and audits; every transition is whole.
        assert_whole(&db);
    }
    assert!(
        killed >= kills / 4,
        "the delays must actually kill writers mid-run ({killed} of {kills})"
    );
    assert!(
        completed >= kills / 10,
        "some runs must complete between kills ({completed} of {kills})"
    );
    eprintln!("faults: {kills} runs, {killed} killed with SIGKILL, {completed} completed; verify+audit passed after each");
}

#[test]
fn a_lost_or_truncated_wal_never_invents_events() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(prepare(&db, &episode(3), &[]).0, 0);
    crate::support::checkpoint(&db);
    // Keep a connection in the WAL so the next commits stay there (no final checkpoint).
    let keeper = rusqlite::Connection::open(&db).unwrap();
    keeper.execute_batch("PRAGMA wal_autocheckpoint=0").unwrap();
    let _: i64 = keeper
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    let mut heads = Vec::new();
    for _ in 0..6 {
        assert_eq!(prepare(&db, &episode(3), &[]).0, 0);
        let (_, v, _) = park(&["journal", "verify"], "", Some(&db));
        heads.push(format!(
            "{}:{}",
            v["head"]["seq"],
            v["head"]["hash"].as_str().unwrap()
        ));
    }
    let written: HashSet<String> = attempt_ids(&db).into_iter().collect();
    let wal = std::fs::read(db.with_extension("db-wal")).unwrap();
    assert!(!wal.is_empty(), "the commits are in the WAL");
    for (name, wal_bytes) in [
        ("deleted", None),
        ("truncated", Some(&wal[..wal.len() / 2])),
    ] {
        let copy = t.dir.path().join(format!("{name}.db"));
        std::fs::copy(&db, &copy).unwrap();
        if let Some(bytes) = wal_bytes {
            std::fs::write(copy.with_extension("db-wal"), bytes).unwrap();
        }
        let (events, _) = assert_whole(&copy);
        assert!(events < 7, "{name}: some commits were only in the WAL");
        let survived: HashSet<String> = attempt_ids(&copy).into_iter().collect();
        assert!(
            survived.is_subset(&written),
            "{name}: an event was invented"
        );
        // What cairn can tell: an auditor holding the last head learns the tail is gone.
        let (code, out, _) = park(
            &["journal", "verify", "--expect-head", heads.last().unwrap()],
            "",
            Some(&copy),
        );
        assert_eq!(
            (code, out["problems"][0]["kind"].clone()),
            (5, json!("head-missing")),
            "{name}: {out}"
        );
    }
    drop(keeper);
}

/// A small tmpfs mounted for one test; unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    fn tmpfs(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "this test mounts a tmpfs (it needs root, as the dev machines and CI have)"
        );
        Self { dir }
    }
    fn path(&self) -> PathBuf {
        self.dir.path().to_owned()
    }
    fn remount(&self, mode: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_fails_cleanly_and_the_next_write_succeeds() {
    let m = Mount::tmpfs("1m");
    let db = m.path().join("journal.db");
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    // Fill the file system.
    let filler = m.path().join("filler");
    let filled = std::fs::write(&filler, vec![0u8; 4 << 20]).map_err(|e| e.kind());
    assert_eq!(
        filled,
        Err(std::io::ErrorKind::StorageFull),
        "4 MiB in 1 MiB"
    );
    let mut accepted = 1;
    let mut failure = None;
    for _ in 0..20 {
        let (code, out) = prepare(&db, &episode(1), &[]);
        if code == 0 {
            accepted += 1;
        } else {
            failure = Some((code, out));
            break;
        }
    }
    let (code, out) = failure.expect("the disk never filled");
    let kind = out["error"]["kind"].as_str().unwrap_or("");
    assert!(
        code == 1 && (kind == "disk-full" || kind == "storage-io"),
        "exit {code}: {out}"
    );
    std::fs::remove_file(&filler).unwrap();
    let after_failure = attempt_ids(&db);
    assert_eq!(
        after_failure.len(),
        accepted,
        "the failed write wrote nothing, the accepted ones survive"
    );
    assert_eq!(
        prepare(&db, &episode(1), &[]).0,
        0,
        "the next write on a healthy disk succeeds"
    );
    assert_eq!(attempt_ids(&db).len(), after_failure.len() + 1);
    assert_whole(&db);
}

#[test]
fn a_read_only_journal_fails_cleanly_and_recovers() {
    let m = Mount::tmpfs("4m");
    let db = m.path().join("journal.db");
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    let bytes = std::fs::read(&db).unwrap();
    m.remount("ro");
    let (code, out) = prepare(&db, &episode(1), &[]);
    assert_eq!(code, 1, "{out}");
    let kind = out["error"]["kind"].as_str().unwrap();
    assert!(kind == "read-only" || kind == "sqlite", "{out}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
    m.remount("rw");
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    assert_whole(&db);
}

#[test]
fn an_event_inserted_mid_chain_with_a_recomputed_hash_is_named() {
    use cairn::journal::chain_hash;
    let t = TempJournal::new();
    let db = t.path();
    for ep in [1, 2, 1, 2] {
        assert_eq!(prepare(&db, &episode(ep), &[]).0, 0);
    }
    let j = Journal::open(&db, &Options::default()).unwrap();
    let events = j.read_after(0, None, 100).unwrap();
    let victim = &events[1];
    let transitions = j.transitions(&victim.stream).unwrap();
    let tr = transitions
        .iter()
        .find(|t| t.id == victim.transition_id)
        .unwrap()
        .clone();
    drop(j);
    // Forge: shift seq 3.. up by one, insert a copy of seq 2's content at seq 3 with a
    // hash correctly recomputed from seq 2's hash.
    let mut forged = victim.clone();
    forged.seq = 3;
    forged.version += 100;
    let hash = chain_hash(&victim.hash, &forged, &tr);
    let c = t.raw();
    tamper(&c, "UPDATE events SET seq = seq + 1000 WHERE seq >= 3; UPDATE events SET seq = seq - 999 WHERE seq >= 1000;");
    c.execute(
        "INSERT INTO events (seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash)
         VALUES (3, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        rusqlite::params![forged.stream, forged.version as i64, forged.machine, forged.event_type, forged.schema_version, forged.payload, forged.recorded_at, forged.transition_id, hash],
    )
    .unwrap();
    let report = Journal::open(&db, &Options::default())
        .unwrap()
        .verify()
        .unwrap();
    let kinds: Vec<_> = report.problems.iter().map(|p| (p.kind, p.seq)).collect();
    use cairn::journal::ProblemKind as K;
    assert!(kinds.contains(&(K::VersionGap, Some(3))), "{kinds:?}");
    assert!(
        kinds.contains(&(K::TransitionMismatch, Some(3))),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(K::HashMismatch, Some(4))),
        "the successor no longer chains: {kinds:?}"
    );
    assert!(
        !kinds.contains(&(K::HashMismatch, Some(3))),
        "the forged row's own hash is right: {kinds:?}"
    );
}

#[test]
fn bad_db_paths_are_refused_and_nothing_is_overwritten() {
    let t = TempJournal::new();
    let dir = t.dir.path();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a database, just notes\n").unwrap();
    let other = dir.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        .unwrap();
    let newer = dir.join("newer.db");
    assert_eq!(prepare(&newer, &episode(1), &[]).0, 0);
    crate::support::checkpoint(&newer);
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let link = dir.join("link.db");
    std::os::unix::fs::symlink(&newer, &link).unwrap();
    for (path, kind) in [
        (dir.to_path_buf(), "not-a-journal"),
        (link.clone(), "not-a-journal"),
        (text.clone(), "not-a-journal"),
        (other.clone(), "not-a-journal"),
        (newer.clone(), "newer-schema"),
    ] {
        let before = std::fs::read(&path).ok();
        let (code, out) = prepare(&path, &episode(1), &[]);
        assert_eq!(
            (code, out["error"]["kind"].clone()),
            (2, json!(kind)),
            "{}: {out}",
            path.display()
        );
        assert_eq!(
            std::fs::read(&path).ok(),
            before,
            "{} was modified",
            path.display()
        );
        let (code, _, _) = park(&["journal", "verify"], "", Some(&path));
        assert_eq!(code, 2);
    }
}
