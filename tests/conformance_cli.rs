//! The journal's contract through the real `cairn` binary, on both backends from
//! the same test code (`--db PATH` or `--db postgresql://…`): every built-in
//! machine records and re-decides alike, concurrent writers in separate processes
//! lose and duplicate nothing, a writer that cannot get the lock exits 3, a writer
//! killed mid-transaction leaves nothing partial, `journal copy` moves a journal
//! both ways, and an unreachable server is exit 1.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn::journal::{Journal, Options};
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::reliability::{episode, prepare};
use crate::support::backend::{backends, Backend, Store};
use crate::support::fixtures::{phase1, workspec, BuildRecord, ShipRepo, WorkLane};
use crate::support::pr::{doc, FreshRepo};
use crate::support::TempJournal;

fn ok(db: &Path, args: &[&str], stdin: &str) -> Value {
    let (code, out, stderr) = cairn(args, stdin, Some(db));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        code == 0 || code == 4,
        "{args:?}: exit {code}: {out} {stderr}"
    );
    out
}

/// A stream's machine and its transitions' (command, first version, last version).
type Shape = (String, Vec<(String, u64, u64)>);

/// Every transition as (machine, command, versions), grouped by stream in
/// machine order: what must be the same whichever backend recorded it.
fn shape(db: &Path) -> Vec<Shape> {
    let j = Journal::open_read_only(db, &Options::default()).unwrap();
    let mut out: Vec<_> = j
        .streams()
        .unwrap()
        .into_iter()
        .map(|s| {
            let ts = j.transitions(&s.stream).unwrap();
            (
                s.machine,
                ts.into_iter()
                    .map(|t| (t.command_name, t.first_version, t.last_version))
                    .collect(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `journal verify` and `journal audit` pass through the binary.
fn assert_whole(db: &Path) -> Value {
    let (code, audit, stderr) = cairn(&["journal", "audit"], "", Some(db));
    assert_eq!(code, 0, "audit: {audit} {stderr}");
    let (code, verify, stderr) = cairn(&["journal", "verify"], "", Some(db));
    assert_eq!(code, 0, "verify: {verify} {stderr}");
    verify
}

/// park, pr-loop, saga, ship, work-node and build-loop, each through its verbs.
fn record_every_machine(s: &Store) {
    let db = s.db();
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
    ok(
        &db,
        &["pr", "observe"],
        &doc("changes-requested", "merge").to_string(),
    );
    // An approved PR is observed fresh only by cairn itself, in a real repository.
    let fresh = FreshRepo::new();
    ok(
        &db,
        &["pr", "observe", "--repo", fresh.repo()],
        &fresh.doc("approved-fresh", "merge").to_string(),
    );
    ok(
        &db,
        &[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--issue-ref",
            "acme/widgets#42",
            "--lifecycle-phase",
            "work",
            "--phase-status",
            "in_progress",
            "--plan-path",
            "docs/plans/p.md",
            "--rounds-seen",
            "1",
            "--checks-run",
            "pytest",
        ],
        "",
    );
    let mut ship = ShipRepo::new();
    ship.journal = TempJournal::at(db.clone());
    let head = ship.to_phase1();
    let (code, out) = ship.verb("verify", &[], &phase1(&head).to_string());
    assert_eq!(code, 0, "{out}");
    let mut work = WorkLane::new(&workspec("echo cache hit", "cache hit"));
    work.journal = TempJournal::at(db.clone());
    let commit = work.to_dispatched();
    let (code, out) = work.verify(&commit, &[]);
    assert_eq!(code, 0, "{out}");
    let mut build = BuildRecord::new(&["true"]);
    build.journal = TempJournal::at(db.clone());
    let (code, out) = build.run(&["--unit", "U1"]);
    assert!(code == 0 || code == 4, "{out}");
}

#[test]
fn every_builtin_machine_records_and_re_decides_alike() {
    let mut shapes = Vec::new();
    for b in backends() {
        let s = b.fresh();
        record_every_machine(&s);
        let verify = assert_whole(&s.db());
        assert_eq!(
            verify["signing"]["status"],
            json!("signed"),
            "{b:?}: {verify}"
        );
        let shape = shape(&s.db());
        let machines: HashSet<&str> = shape.iter().map(|(m, _)| m.as_str()).collect();
        for m in ["park", "pr-loop", "saga", "ship", "work-node", "build-loop"] {
            assert!(machines.contains(m), "{b:?}: no {m} stream in {shape:?}");
        }
        // `state` replays from either backend.
        let (code, out, _) = cairn(
            &["state", &format!("park/{}", episode(1))],
            "",
            Some(&s.db()),
        );
        assert_eq!(
            (code, out["version"].clone()),
            (0, json!(2)),
            "{b:?}: {out}"
        );
        shapes.push(shape);
    }
    assert_eq!(
        shapes[0], shapes[1],
        "the two backends recorded different transitions"
    );
}

/// N writer processes, M transitions each, half on one shared episode.
fn writers(s: &Store, n: u32, m: u32) {
    let db = s.db();
    let started = Instant::now();
    let results: Vec<(bool, i32, Value)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|w| {
                let db = db.clone();
                sc.spawn(move || {
                    (0..m)
                        .map(|i| {
                            let shared = i % 2 == 0;
                            let ep = if shared { episode(0) } else { episode(w + 1) };
                            let (code, out) = prepare(&db, &ep, &[]);
                            (shared, code, out)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    // A writer alone on its stream never conflicts: appends to other streams wait
    // for the chain's lock (at worst past the busy timeout, on a loaded machine).
    for (shared, code, out) in &results {
        assert!(
            *shared || *code == 0 || out["error"]["kind"] == json!("busy"),
            "{:?}: a writer alone on its stream was refused: {out}",
            s.backend
        );
    }
    let results: Vec<(i32, Value)> = results.into_iter().map(|(_, c, v)| (c, v)).collect();
    let elapsed = started.elapsed();
    let acknowledged: HashSet<String> = results
        .iter()
        .filter(|(c, _)| *c == 0)
        .map(|(_, v)| v["attempt_id"].as_str().unwrap().to_owned())
        .collect();
    for (code, out) in &results {
        assert!(
            *code == 0 || *code == 3,
            "{:?}: exit {code}: {out}",
            s.backend
        );
        if *code == 3 {
            let kind = out["error"]["kind"].as_str().unwrap_or("");
            assert!(kind == "conflict" || kind == "busy", "{out}");
        }
    }
    let acked = results.iter().filter(|(c, _)| *c == 0).count();
    assert_eq!(
        acknowledged.len(),
        acked,
        "two writers acknowledged one attempt"
    );
    let verify = assert_whole(&db);
    let j = Journal::open_read_only(&db, &Options::default()).unwrap();
    let stored: Vec<String> = j
        .read_after(0, None, 1 << 20)
        .unwrap()
        .iter()
        .map(|e| {
            serde_json::from_str::<Value>(&e.payload).unwrap()["attempt_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let unique: HashSet<String> = stored.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        stored.len(),
        "{:?}: an event was duplicated",
        s.backend
    );
    assert_eq!(
        unique, acknowledged,
        "{:?}: acknowledged differs from stored",
        s.backend
    );
    assert_eq!(verify["events"], json!(acked));
    eprintln!(
        "conformance load ({:?}): {n} writers x {m}: {acked} acknowledged = stored, {} refused (exit 3), lost 0, duplicated 0, {:.0} transitions/s",
        s.backend,
        results.len() - acked,
        acked as f64 / elapsed.as_secs_f64()
    );
}

#[test]
fn concurrent_writer_processes_lose_and_duplicate_nothing() {
    for b in backends() {
        writers(&b.fresh(), 8, 3);
        writers(&b.fresh(), 32, 2);
    }
}

#[test]
fn a_writer_that_cannot_get_the_lock_exits_3_and_writes_nothing() {
    for b in backends() {
        let s = b.fresh();
        let db = s.db();
        assert_eq!(prepare(&db, &episode(1), &[]).0, 0);
        let head = s.reader().head().unwrap();
        let hold = s.hold_writers();
        let started = Instant::now();
        let (code, out) = prepare(&db, &episode(1), &["--busy-timeout-ms", "300"]);
        assert_eq!(
            (code, out["error"]["kind"].clone()),
            (3, json!("busy")),
            "{b:?}: {out}"
        );
        assert!(started.elapsed() >= Duration::from_millis(300), "{b:?}");
        drop(hold);
        assert_eq!(s.reader().head().unwrap(), head, "{b:?}");
        assert_eq!(
            prepare(&db, &episode(1), &[]).0,
            0,
            "{b:?}: the next write succeeds"
        );
    }
}

fn spawn_writer(db: &Path, extra: &[&str]) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["park", "prepare-attempt", "--db"])
        .arg(db)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    use std::io::Write;
    let input = json!({"mode": "park", "anchor_bead": crate::support::park::ANCHOR, "episode_id": episode(0),
        "intent_id": crate::support::park::INTENT, "prior_receipts": []});
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    child
}

#[test]
fn writers_killed_at_random_moments_leave_nothing_partial() {
    for b in backends() {
        let s = b.fresh();
        let db = s.db();
        let started = Instant::now();
        assert_eq!(prepare(&db, &episode(0), &[]).0, 0);
        let mut window_us = (started.elapsed().as_micros() as u64).max(1_000);
        let (mut killed, mut seed) = (0, 0x5eed_u64);
        for _ in 0..16 {
            let mut child = spawn_writer(&db, &[]);
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            std::thread::sleep(Duration::from_micros((seed >> 33) % window_us));
            match child.try_wait().unwrap() {
                Some(_) => window_us = (window_us * 3 / 4).max(200),
                None => {
                    child.kill().unwrap();
                    killed += 1;
                    window_us = (window_us * 5 / 4).min(2_000_000);
                }
            }
            child.wait().unwrap();
            assert_whole(&db);
        }
        assert!(killed > 0, "{b:?}: no writer was killed");
    }
}

/// PostgreSQL: a writer stopped inside its transaction — its transition row
/// written, its events not yet — and then SIGKILLed leaves nothing behind.
#[test]
fn a_postgres_writer_killed_inside_its_transaction_leaves_nothing() {
    let s = Backend::Postgres.fresh();
    let db = s.db();
    assert_eq!(prepare(&db, &episode(0), &[]).0, 0);
    let before = s.reader().verify().unwrap();
    let mut blocker = s.pg();
    blocker
        .batch_execute("BEGIN; LOCK TABLE events IN EXCLUSIVE MODE")
        .unwrap();
    let mut child = spawn_writer(&db, &["--busy-timeout-ms", "60000"]);
    let mut watcher = s.pg();
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        // The writer's backend: it holds a row lock on `transitions` (it inserted
        // its transition row) and waits for `events`.
        let row = watcher
            .query_opt(
                "SELECT a.pid FROM pg_stat_activity a
                 WHERE a.application_name = 'cairn' AND a.wait_event_type = 'Lock'
                   AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                               WHERE l.pid = a.pid AND c.relname = 'transitions'
                                 AND l.mode = 'RowExclusiveLock' AND l.granted)",
                &[],
            )
            .unwrap();
        if let Some(r) = row {
            break r.get::<_, i32>(0);
        }
        assert!(
            Instant::now() < deadline,
            "the writer never reached its events"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    blocker.batch_execute("COMMIT").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while watcher
        .query_opt("SELECT 1 FROM pg_stat_activity WHERE pid = $1", &[&pid])
        .unwrap()
        .is_some()
    {
        assert!(
            Instant::now() < deadline,
            "the killed writer's session lingers"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = s.reader().verify().unwrap();
    assert!(after.ok, "{after:?}");
    assert_eq!(
        (after.events, after.transitions),
        (before.events, before.transitions)
    );
    assert_eq!(after.head, before.head);
    assert_eq!(
        prepare(&db, &episode(0), &[]).0,
        0,
        "the next write succeeds"
    );
}

#[test]
fn copy_moves_a_journal_both_ways_verbatim() {
    let from = Backend::Sqlite.fresh();
    for _ in 0..3 {
        assert_eq!(prepare(&from.db(), &episode(5), &[]).0, 0);
    }
    ok(
        &from.db(),
        &["pr", "observe"],
        &doc("changes-requested", "merge").to_string(),
    );
    let pg = Backend::Postgres.fresh();
    let back = Backend::Sqlite.fresh();
    let log = |db: &Path| {
        let (code, out, _) = cairn(&["journal", "log", "--format", "json"], "", Some(db));
        assert_eq!(code, 0, "{out}");
        out
    };
    for (a, b) in [(&from, &pg), (&pg, &back)] {
        let (code, out, stderr) = cairn(
            &[
                "journal",
                "copy",
                "--from",
                &a.db().to_string_lossy(),
                "--to",
                &b.db().to_string_lossy(),
            ],
            "",
            None,
        );
        assert_eq!(code, 0, "{out} {stderr}");
        assert_eq!(out["copy"]["ok"], json!(true), "{out}");
        assert_eq!(
            out["copy"]["events"], out["copy"]["source"]["events"],
            "{out}"
        );
        assert_eq!(out["copy"]["transitions"], json!(4), "{out}");
        assert_eq!(out["copy"]["signatures"], json!(4), "{out}");
        assert_eq!(
            log(&a.db()),
            log(&b.db()),
            "{:?} -> {:?}",
            a.backend,
            b.backend
        );
        assert_eq!(
            assert_whole(&a.db())["head"],
            assert_whole(&b.db())["head"],
            "{:?} -> {:?}",
            a.backend,
            b.backend
        );
        assert_eq!(shape(&a.db()), shape(&b.db()));
    }
    // Never into a journal that holds anything.
    let (code, out, _) = cairn(
        &[
            "journal",
            "copy",
            "--from",
            &from.db().to_string_lossy(),
            "--to",
            &pg.db().to_string_lossy(),
        ],
        "",
        None,
    );
    assert_eq!(
        (code, crate::support::kind_field_rule(&out)),
        (2, ["not-empty", "to", "empty-target"]),
        "{out}"
    );
    // The copy goes on as a journal: the next write chains onto the copied head.
    assert_eq!(prepare(&pg.db(), &episode(5), &[]).0, 0);
    assert_whole(&pg.db());
}

#[test]
fn an_unreachable_database_is_exit_1_with_a_clear_message() {
    let url = "postgresql://cairn:s3cret@%2Fnonexistent-cairn-socket-dir:5432/journal";
    for args in [&["journal", "verify"][..], &["state", "park/x"][..]] {
        let (code, out, _) = cairn(args, "", Some(Path::new(url)));
        assert_eq!(
            (code, out["error"]["kind"].clone()),
            (1, json!("connect")),
            "{out}"
        );
        let message = out["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("cannot connect to the journal database"),
            "{message}"
        );
        assert!(
            !message.contains("s3cret"),
            "a password is never printed: {message}"
        );
    }
    let (code, out) = prepare(Path::new(url), &episode(1), &[]);
    assert_eq!(
        (code, out["error"]["kind"].clone()),
        (1, json!("connect")),
        "{out}"
    );
}
