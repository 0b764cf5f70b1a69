//! Fencing on acts, through real processes (issue #24 phase 2): a lease on a ship
//! run (`claim/ship/abc`) fences every ship verb on it. Another process's verb
//! without the holder's token, or with a stale one, is exit 3 naming the holder
//! and the expiry, runs no git and leaves the journal byte for byte unchanged; the
//! holder's verb with its token is recorded, having read the lease; a holder
//! stopped (SIGSTOP) past its expiry while another acquires, resumed and acting
//! with its old token, is refused the same way; a transition forged in raw after
//! a lease exists is named `lease-unread` by the audit; a claimed park episode's
//! verbs are fenced the same way; `--fencing-token` is on every recording verb and
//! on no other.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
use cairn::Context;
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::park::{ANCHOR, EPISODE, INTENT};
use crate::support::ship_repo::{finished, Repo, ID};
use crate::support::TempJournal;

const RUN: &str = "ship/abc";
const LEASE: &str = "claim/ship/abc";

/// `cairn claim acquire` on `resource` in `db`: (exit code, readback).
fn acquire(db: &std::path::Path, resource: &str, owner: &str, id: &str, ttl: &str) -> (i32, Value) {
    let (code, out, _) = cairn(
        &[
            "claim",
            "acquire",
            "--resource",
            resource,
            "--owner",
            owner,
            "--claim-id",
            id,
            "--ttl",
            ttl,
        ],
        "",
        Some(db),
    );
    (code, out)
}

/// Asserts a fenced refusal: exit 3 of `kind`, the holder and the expiry named in
/// the message and in the claim's readback.
fn assert_fenced(
    (code, out): (i32, &Value),
    kind: &str,
    predicate: &str,
    holder: &str,
    token: u64,
) {
    let e = &out["error"];
    assert_eq!(
        (
            code,
            e["kind"].as_str(),
            e["violations"][0]["predicate"].as_str()
        ),
        (3, Some(kind), Some(predicate)),
        "{out}"
    );
    assert_eq!(e["violations"][0]["field"], "fencing_token", "{out}");
    assert_eq!(
        (
            &e["claim"]["holder"],
            &e["claim"]["token"],
            &e["claim"]["live"]
        ),
        (&json!(holder), &json!(token), &json!(true)),
        "{out}"
    );
    let expires = e["claim"]["expires_at"].as_str().expect("an expiry");
    let message = e["message"].as_str().expect("a message");
    assert!(
        message.contains(&format!("`{holder}`")) && message.contains(expires),
        "{out}"
    );
}

/// The contexts of the run's recorded transitions, in order.
fn contexts(db: &std::path::Path) -> Vec<Context> {
    Journal::open_read_only(db, &Options::default())
        .expect("the journal opens")
        .transitions(RUN)
        .expect("the run's transitions read")
        .iter()
        .map(|t| serde_json::from_str(&t.context).expect("a recorded context"))
        .collect()
}

#[test]
fn a_claimed_ship_run_refuses_other_processes_before_any_git_and_admits_its_holder() {
    let repo = Repo::spied();
    let db = repo.journal.path();
    let (code, lease) = acquire(&db, RUN, "agent-a", "a1", "600");
    assert_eq!((code, &lease["token"]), (0, &json!(1)), "{lease}");
    let before = repo.journal.bytes();

    // `open` runs git from its first step: without the token, or with a stale or
    // malformed one, it runs none and writes nothing.
    for (extra, kind, predicate) in [
        (vec![], "claim-held", "held-by-another"),
        (vec!["--fencing-token", "2"], "stale-claim", "current-token"),
    ] {
        let (code, out) = repo.open_with(&extra);
        assert_fenced((code, &out), kind, predicate, "agent-a", 1);
    }
    for bad in ["0", "-1", "one"] {
        let (code, out) = repo.open_with(&["--fencing-token", bad]);
        assert_eq!(
            (code, out["error"]["field"].as_str()),
            (2, Some("fencing_token")),
            "{out}"
        );
    }
    assert_eq!(repo.spy().log(), Vec::<String>::new(), "no git ran");
    assert_eq!(repo.journal.bytes(), before, "nothing was written");

    // The holder opens and creates with its token.
    let (code, out) = repo.open_with(&["--fencing-token", "1"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = repo.run(&["create", "--short-id", ID], "");
    assert_fenced((code, &out), "claim-held", "held-by-another", "agent-a", 1);
    assert!(!repo.wt().exists(), "a refused create added no worktree");
    let (code, out) = repo.run(&["create", "--short-id", ID, "--fencing-token", "1"], "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    assert!(repo.wt().exists());

    // Every transition on the run read the lease and presented the holder's token.
    let contexts = contexts(&db);
    assert!(contexts.len() >= 3, "open, begin, create: {contexts:?}");
    for c in &contexts {
        let read = c.read(LEASE).expect("the lease was read");
        assert_eq!((read.version, c.fencing_token), (1, Some(1)), "{c:?}");
    }
    repo.audit_ok();
}

/// Waits until `done` holds, for at most 30 s.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The process's state letter from /proc (`T` when stopped).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

#[test]
fn a_holder_paused_past_its_expiry_then_acting_with_its_old_token_touches_nothing() {
    let repo = Repo::spied();
    let db = repo.journal.path();
    // The run is opened under a first lease, which is then released.
    let (code, first) = acquire(&db, RUN, "opener", "o1", "600");
    assert_eq!(code, 0, "{first}");
    assert_eq!(repo.open_with(&["--fencing-token", "1"]).0, 0);
    let (code, out, _) = cairn(
        &[
            "claim",
            "release",
            "--resource",
            RUN,
            "--claim-id",
            "o1",
            "--token",
            "1",
        ],
        "",
        Some(&db),
    );
    assert_eq!(code, 0, "{out}");

    // Acquire (token 2), stop (a GC pause, a suspended laptop), then act on what
    // it remembers: `ship create` with token 2.
    let script = r#""$CAIRN" --db "$DB" claim acquire --resource ship/abc --owner paused --claim-id p1 --ttl 1 >/dev/null || exit 9
kill -STOP $$
exec "$CAIRN" ship create --short-id abc --fencing-token 2 --db "$DB""#;
    let holder = Command::new("sh")
        .args(["-c", script])
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("DB", &db)
        .env(crate::support::OBSERVER_PATH_VAR, repo.spy().path())
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let pid = holder.id();
    wait_until("the holder to pause", || proc_state(pid) == Some('T'));
    let (_, shown, _) = cairn(&["claim", "show", "--resource", RUN], "", Some(&db));
    assert_eq!(
        (&shown["holder"], &shown["token"]),
        (&json!("paused"), &json!(2)),
        "{shown}"
    );
    let until = chrono::DateTime::parse_from_rfc3339(shown["expires_at"].as_str().unwrap())
        .expect("an RFC3339 expiry");
    wait_until("the lease to expire", || chrono::Utc::now() > until);
    let (code, next) = acquire(&db, RUN, "next", "n1", "600");
    assert_eq!((code, &next["token"]), (0, &json!(3)), "{next}");

    let before = repo.journal.bytes();
    let git_before = repo.spy().log().len();
    Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .expect("SIGCONT");
    let (code, late, _) = finished(holder);
    assert_fenced((code, &late), "stale-claim", "current-token", "next", 3);
    assert_eq!(repo.spy().ran_by(pid), 0, "the late holder ran no git");
    assert_eq!(repo.spy().log().len(), git_before);
    assert_eq!(repo.journal.bytes(), before, "the late act wrote nothing");
    assert!(!repo.wt().exists());

    // The current holder acts with its token.
    let (code, out) = repo.run(&["create", "--short-id", ID, "--fencing-token", "3"], "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    repo.audit_ok();
}

#[test]
fn a_park_episode_is_fenced_and_a_transition_forged_in_after_its_lease_is_lease_unread() {
    let episode = format!("park/{EPISODE}");
    let input = json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []}).to_string();
    let prepare = |db: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["park", "prepare-attempt"];
        args.extend_from_slice(extra);
        cairn(&args, &input, Some(db))
    };
    // Claimed: the episode's verbs need the holder's token.
    let claimed = TempJournal::new();
    assert_eq!(
        acquire(&claimed.path(), &episode, "agent-a", "a1", "600").0,
        0
    );
    let before = claimed.bytes();
    let (code, out, _) = prepare(&claimed.path(), &[]);
    assert_fenced((code, &out), "claim-held", "held-by-another", "agent-a", 1);
    assert_eq!(claimed.bytes(), before);
    let (code, out, _) = prepare(&claimed.path(), &["--fencing-token", "1"]);
    assert_eq!(
        (code, out["action"].as_str()),
        (0, Some("evaluate")),
        "{out}"
    );
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&claimed.path()));
    assert_eq!(code, 0, "the fenced act audits: {audit}");

    // An honest prepare-attempt where nothing is claimed: its record is what is
    // copied into a journal where the episode is claimed first, appended raw.
    let honest = TempJournal::new();
    let (code, prepared, _) = prepare(&honest.path(), &[]);
    assert_eq!(code, 0, "{prepared}");
    let j = Journal::open_read_only(&honest.path(), &Options::default()).unwrap();
    let record = j.transitions(&episode).unwrap().remove(0);
    let events = j.read_stream(&episode, None).unwrap();

    // Another journal where the episode is claimed first; the copy is appended
    // raw after it, reading nothing.
    let forged = TempJournal::new();
    assert_eq!(
        acquire(&forged.path(), &episode, "agent-a", "a1", "600").0,
        0
    );
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&forged.path()));
    assert_eq!(code, 0, "the honest claim audits: {audit}");
    let mut j = Journal::open(&forged.path(), &Options::default()).unwrap();
    j.append(&Append {
        stream: episode.clone(),
        machine: "park".into(),
        expected_version: 0,
        events: events
            .iter()
            .map(|e| NewEvent {
                event_type: e.event_type.clone(),
                schema_version: e.schema_version,
                payload: e.payload.clone(),
            })
            .collect(),
        transition: TransitionRecord {
            command_name: record.command_name.clone(),
            command: record.command.clone(),
            context: record.context.clone(),
            rules_version: record.rules_version,
        },
        idempotency: None,
        recorded_at: record.recorded_at.clone(),
        reads: Vec::new(),
        scans: Vec::new(),
    })
    .unwrap();
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&forged.path()));
    let kinds: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert_eq!((code, kinds), (5, vec!["lease-unread"]), "{audit}");
    // The same record where no lease exists is clean: the lease is the finding.
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&honest.path()));
    assert_eq!(code, 0, "{audit}");
}

#[test]
fn every_recording_verb_takes_a_fencing_token_and_no_other_verb_does() {
    let help = |verb: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(verb)
            .arg("--help")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{verb:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for verb in crate::idempotency::RECORDING {
        assert!(
            help(verb).contains("--fencing-token <N>"),
            "{verb:?} takes --fencing-token"
        );
    }
    let t = TempJournal::new();
    let before = t.bytes();
    let claim_verbs: &[&[&str]] = &[
        &["claim", "acquire"],
        &["claim", "renew"],
        &["claim", "release"],
        &["claim", "show"],
    ];
    for verb in crate::idempotency::NOT_RECORDING.iter().chain(claim_verbs) {
        let mut args = verb.to_vec();
        args.extend_from_slice(&["--fencing-token", "1"]);
        let (code, out, _) = cairn(&args, "{}", Some(&t.path()));
        assert_eq!(
            (code, out["error"]["kind"].as_str()),
            (2, Some("usage")),
            "{verb:?} must refuse a fencing token: {out}"
        );
    }
    // A park verb records only with its identity; a dry-run build loop never does.
    for args in [
        &["park", "evaluate", "--fencing-token", "1"][..],
        &[
            "build-loop",
            "--issue",
            "1",
            "--dry-run",
            "--fencing-token",
            "1",
        ][..],
    ] {
        let (code, out, _) = cairn(args, "{}", Some(&t.path()));
        assert_eq!(code, 2, "{args:?}: {out}");
    }
    assert_eq!(t.bytes(), before);
}

#[test]
fn a_claimed_build_loop_unit_runs_no_check_without_its_holders_token() {
    let build = crate::support::fixtures::BuildRecord::new(&["touch checked"]);
    let db = build.journal.path();
    let (code, lease) = acquire(&db, "build-loop/issue-42:U1", "agent-a", "a1", "600");
    assert_eq!(code, 0, "{lease}");
    let (record, journal) = (build.bytes(), build.journal.bytes());
    let (code, out) = build.run(&["--unit", "U1"]);
    assert_fenced((code, &out), "claim-held", "held-by-another", "agent-a", 1);
    assert!(!build.repo.join("checked").exists(), "a check ran");
    assert_eq!((build.bytes(), build.journal.bytes()), (record, journal));
    let (code, out) = build.run(&["--unit", "U1", "--fencing-token", "1"]);
    assert!(code == 0 || code == 4, "{out}");
    assert!(build.repo.join("checked").exists());
}
