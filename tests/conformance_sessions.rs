//! How many PostgreSQL sessions a CLI call opens, counted by the server
//! (`pg_stat_database.sessions` of the journal's database): each one is a server
//! process started and a connection set up, most of a short verb's time.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::reliability::{episode, prepare};
use crate::support::backend::Store;

/// The server's session count once it has stopped moving: a session is counted
/// when its backend reports (at the end of its first transaction, or when it
/// exits).
fn settled(pg: &mut postgres::Client) -> i64 {
    let mut sessions = || -> i64 {
        pg.query_one(
            "SELECT sessions FROM pg_catalog.pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let mut last = sessions();
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = sessions();
        if now == last || started.elapsed() > Duration::from_secs(10) {
            return now;
        }
        last = now;
    }
}

/// On PostgreSQL a `prepare-attempt` that records opens one session: its answer
/// needs no clock, so the clock is read on the session it appends on. One that
/// records nothing opens none. (Each opened one more, for the clock, before.)
#[test]
fn a_prepare_attempt_opens_one_session_when_it_records_and_none_otherwise() {
    let s = Store::postgres_in("UTF8");
    let db = s.db();
    assert_eq!(prepare(&db, &episode(1), &[]).0, 0, "the journal made");
    let mut pg = s.pg();
    let before = settled(&mut pg);
    assert_eq!(prepare(&db, &episode(2), &[]).0, 0, "recorded");
    let recorded = settled(&mut pg);
    assert_eq!(recorded - before, 1, "one session for a recording prepare");
    let nothing = json!({"mode": "park", "anchor_bead": crate::support::park::ANCHOR,
        "episode_id": null, "intent_id": null, "prior_receipts": []});
    let (code, out, _) = cairn(
        &["park", "prepare-attempt"],
        &nothing.to_string(),
        Some(&db),
    );
    assert_eq!((code, &out["action"]), (0, &json!("retry")), "{out}");
    assert_eq!(
        settled(&mut pg),
        recorded,
        "no session for a prepare that records nothing"
    );
}

/// Each claim verb reads the journal's clock on the session it reads or
/// appends on: one session for `acquire`, `renew`, `release` and `show`; a
/// refused `acquire` two (its decision, then the readback of what holds).
/// Each opened one more, for the clock, before.
#[test]
fn a_claim_verb_opens_one_session_for_its_state_and_its_clock() {
    let s = Store::postgres_in("UTF8");
    let db = s.db();
    let resource = format!("park/{}", crate::support::park::EPISODE);
    let run = |args: &[&str], code: i32| -> Value {
        let (got, out, stderr) = cairn(args, "", Some(&db));
        assert_eq!(got, code, "{args:?}: {out} {stderr}");
        out
    };
    let first = run(
        &[
            "claim",
            "acquire",
            "--resource",
            "park/ep-1b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "--owner",
            "a",
            "--claim-id",
            "c0",
            "--ttl",
            "60",
        ],
        0,
    );
    assert_eq!(first["state"], json!("held"), "the journal made: {first}");
    let mut pg = s.pg();
    let mut sessions = settled(&mut pg);
    let mut opened = |pg: &mut postgres::Client| {
        let now = settled(pg);
        let n = now - sessions;
        sessions = now;
        n
    };
    let acquire = ["claim", "acquire", "--resource", &resource, "--ttl", "60"];
    let held = run(
        &[&acquire[..], &["--owner", "a", "--claim-id", "c1"]].concat(),
        0,
    );
    assert_eq!(opened(&mut pg), 1, "acquire: {held}");
    let token = held["token"].to_string();
    let mine = [
        "--resource",
        &resource,
        "--claim-id",
        "c1",
        "--token",
        &token,
    ];
    run(&[&["claim", "renew", "--ttl", "60"][..], &mine].concat(), 0);
    assert_eq!(opened(&mut pg), 1, "renew");
    let shown = run(&["claim", "show", "--resource", &resource], 0);
    assert_eq!(
        (shown["live"].clone(), opened(&mut pg)),
        (json!(true), 1),
        "show: {shown}"
    );
    let refused = run(
        &[&acquire[..], &["--owner", "b", "--claim-id", "c2"]].concat(),
        3,
    );
    assert_eq!(
        (refused["error"]["kind"].clone(), opened(&mut pg)),
        (json!("claim-held"), 2),
        "a refused acquire: {refused}"
    );
    run(&[&["claim", "release"][..], &mine].concat(), 0);
    assert_eq!(opened(&mut pg), 1, "release");
}
