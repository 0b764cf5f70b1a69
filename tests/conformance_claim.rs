//! Claims on both journal backends from the same test code (issue #24): a grant,
//! contention, fencing of an act on the claimed episode, the resume gate v2, an
//! expiry and take-over, a stale token, and a forged unfenced act named by the
//! audit — the same answers and the same recorded shape on SQLite and PostgreSQL.
//! And the clock: expiry is judged by the journal's clock, the server's on
//! PostgreSQL — shown with a server whose clock runs an hour behind the client's,
//! where a lease the client's clock would call long expired still holds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn::journal::{Journal, Options};
use cairn::{Engine, Registry};
use chrono::{DateTime, FixedOffset, TimeDelta, Utc};
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::reliability::{episode, prepare};
use crate::support::backend::{backends, Store};
use crate::support::{copy_transition, TempJournal};

/// `cairn claim VERB --resource park/<ep> ARGS…`: exit code and answer.
fn claim(db: &Path, verb: &str, ep: &str, args: &[&str]) -> (i32, Value) {
    let resource = format!("park/{ep}");
    let mut all = vec!["claim", verb, "--resource", &resource];
    all.extend_from_slice(args);
    let (code, out, stderr) = cairn(&all, "", Some(db));
    assert!(!stderr.contains("panicked"), "{stderr}");
    (code, out)
}

fn acquire(db: &Path, ep: &str, owner: &str, ttl: &str) -> (i32, Value) {
    claim(
        db,
        "acquire",
        ep,
        &[
            "--owner",
            owner,
            "--claim-id",
            &format!("{owner}-c"),
            "--ttl",
            ttl,
        ],
    )
}

/// `resume-gate --claim-gate v2` for `owner`'s claim with `token` on `ep`.
fn gate(db: &Path, ep: &str, owner: &str, token: u64) -> Value {
    let claim = json!({"resource": format!("park/{ep}"), "owner": owner, "claim_id": format!("{owner}-c"), "token": token});
    let input =
        json!({"episode_id": ep, "intent_id": crate::support::park::INTENT, "atomic_claim": claim});
    let (code, out, _) = cairn(
        &["park", "resume-gate", "--claim-gate", "v2"],
        &input.to_string(),
        Some(db),
    );
    assert_eq!(code, 0, "{out}");
    out
}

/// Every event in the journal: (stream, type).
fn events(db: &Path) -> Vec<(String, String)> {
    Journal::open_read_only(db, &Options::default())
        .unwrap()
        .read_after(0, None, 10_000)
        .unwrap()
        .into_iter()
        .map(|e| (e.stream, e.event_type))
        .collect()
}

fn audit_kinds(db: &Path) -> (i32, Vec<String>) {
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(db));
    let kinds = audit["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .filter_map(|f| f["kind"].as_str().map(str::to_owned))
        .collect();
    (code, kinds)
}

/// Copies `stream`'s first transition from `from` into `to`, raw, reading
/// nothing; recorded at `at` when given (else when it was).
fn copy_unfenced(from: &Path, to: &Store, stream: &str, at: Option<String>) {
    let j = Journal::open_read_only(from, &Options::default()).unwrap();
    copy_transition(&j, &mut to.journal(), stream, 0, at);
}

#[test]
fn claims_grant_contend_fence_expire_and_audit_alike_on_both_backends() {
    let (ep, other, forged) = (episode(1), episode(2), episode(3));
    let mut shapes = Vec::new();
    for b in backends() {
        let s = b.fresh();
        let db = s.db();
        let (code, a) = acquire(&db, &ep, "agent-a", "600");
        assert_eq!((code, &a["token"]), (0, &json!(1)), "{b:?}: {a}");
        let before = events(&db);
        let (code, lost) = acquire(&db, &ep, "agent-b", "600");
        assert_eq!(
            (code, lost["error"]["kind"].as_str()),
            (3, Some("claim-held")),
            "{b:?}: {lost}"
        );
        // An act on the claimed episode: refused without the token, recorded with it.
        let (code, out) = prepare(&db, &ep, &[]);
        assert_eq!(
            (
                code,
                out["error"]["kind"].as_str(),
                out["error"]["claim"]["holder"].as_str()
            ),
            (3, Some("claim-held"), Some("agent-a")),
            "{b:?}: {out}"
        );
        assert_eq!(events(&db), before, "{b:?}: a refusal wrote");
        let (code, out) = prepare(&db, &ep, &["--fencing-token", "1"]);
        assert_eq!(code, 0, "{b:?}: {out}");
        // The gate: the holder is authorized, the loser is not.
        assert_eq!(gate(&db, &ep, "agent-a", 1)["authorized"], true, "{b:?}");
        assert_eq!(gate(&db, &ep, "agent-b", 1)["authorized"], false, "{b:?}");

        // A one-second lease lapses by the journal's clock; the next acquirer takes
        // it over with token 2, and the old token is stale.
        assert_eq!(acquire(&db, &other, "agent-x", "1").0, 0);
        let start = Instant::now();
        while claim(&db, "show", &other, &[]).1["live"] == json!(true) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{b:?}: never lapsed"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let (code, y) = acquire(&db, &other, "agent-y", "600");
        assert_eq!(
            (code, &y["token"], &y["events"]),
            (0, &json!(2), &json!(["taken-over"])),
            "{b:?}: {y}"
        );
        let (code, late) = claim(
            &db,
            "renew",
            &other,
            &["--claim-id", "agent-x-c", "--token", "1", "--ttl", "60"],
        );
        assert_eq!(
            (code, late["error"]["kind"].as_str()),
            (3, Some("stale-claim")),
            "{b:?}: {late}"
        );
        let (code, late) = prepare(&db, &other, &["--fencing-token", "1"]);
        assert_eq!(
            (code, late["error"]["kind"].as_str()),
            (3, Some("stale-claim")),
            "{b:?}: {late}"
        );
        assert_eq!(audit_kinds(&db), (0, vec![]), "{b:?}");
        shapes.push(events(&db));

        // A transition recorded where nothing was claimed, copied in raw after a
        // lease on its stream exists: never fenced.
        let honest = b.fresh();
        assert_eq!(prepare(&honest.db(), &forged, &[]).0, 0);
        assert_eq!(acquire(&db, &forged, "agent-a", "600").0, 0);
        copy_unfenced(&honest.db(), &s, &format!("park/{forged}"), None);
        assert_eq!(
            audit_kinds(&db),
            (5, vec!["lease-unread".to_owned()]),
            "{b:?}"
        );
    }
    assert_eq!(
        shapes[0], shapes[1],
        "the backends recorded different histories"
    );
}

/// An RFC 3339 instant.
fn instant(v: &Value) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not an instant: {v}")))
        .unwrap()
}

/// Asserts `t` is within a minute of `want`.
fn near(t: DateTime<FixedOffset>, want: DateTime<Utc>, what: &str) {
    let off = (t.with_timezone(&Utc) - want).abs();
    assert!(
        off < TimeDelta::seconds(60),
        "{what}: {t} is {off} from {want}"
    );
}

#[test]
fn a_lease_is_judged_by_the_journals_clock_the_servers_on_postgres() {
    // SQLite: the journal's clock is this host's.
    let t = TempJournal::new();
    let sqlite = Engine::clock(&t.path(), &Options::default()).unwrap();
    near(instant(&json!(sqlite.to_string())), Utc::now(), "sqlite");
    assert!(!t.path().exists(), "reading the clock created a journal");

    // PostgreSQL: a server whose clock runs an hour behind this client's. In a
    // database of its own, the catalogue's `clock_timestamp()` is replaced by one
    // an hour behind, as a server with a slow clock would answer (a function of
    // another schema no longer shadows it: cairn pins `search_path` to the
    // journal's schema, so `pg_catalog` is searched first).
    let url = crate::support::pg::server().fresh_database("UTF8");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "CREATE OR REPLACE FUNCTION pg_catalog.clock_timestamp() RETURNS timestamptz \
             LANGUAGE sql VOLATILE AS $$ SELECT pg_catalog.statement_timestamp() - interval '1 hour' $$",
        )
        .unwrap();
    let db = PathBuf::from(&url);
    let behind = Utc::now() - TimeDelta::hours(1);
    let read = Engine::clock(&db, &Options::default()).unwrap();
    near(
        instant(&json!(read.to_string())),
        behind,
        "the server's clock",
    );

    let ep = episode(7);
    let (code, a) = acquire(&db, &ep, "agent-a", "60");
    assert_eq!(code, 0, "{a}");
    near(instant(&a["acquired_at"]), behind, "the grant");
    // By this client's clock the lease expired an hour ago; by the journal's it
    // holds: another acquirer is refused, an act needs the token, the gate opens.
    assert!(instant(&a["expires_at"]) < Utc::now());
    let (code, b) = acquire(&db, &ep, "agent-b", "60");
    assert_eq!(
        (code, b["error"]["kind"].as_str()),
        (3, Some("claim-held")),
        "{b}"
    );
    let (_, shown) = claim(&db, "show", &ep, &[]);
    assert_eq!(shown["live"], true, "{shown}");
    near(instant(&shown["as_of"]), behind, "show");
    let (code, out) = prepare(&db, &ep, &[]);
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (3, Some("claim-held")),
        "{out}"
    );
    assert_eq!(prepare(&db, &ep, &["--fencing-token", "1"]).0, 0);
    assert_eq!(gate(&db, &ep, "agent-a", 1)["authorized"], true);
    // A verb that decides inside its append (`exec`) reads the clock on the
    // session it appends on: still the server's.
    let (code, out, _) = cairn(&["saga", "save", "--id", "issue-7"], "", Some(&db));
    assert_eq!(code, 0, "{out}");
    let drain = json!({"command": "adjust", "directive": "drain"}).to_string();
    let (code, out, _) = cairn(&["exec", "saga", "saga/issue-7"], &drain, Some(&db));
    assert_eq!(
        (code, out["outcome"].as_str()),
        (0, Some("accepted")),
        "{out}"
    );
    let engine = Engine::open_read_only(&db, &Options::default(), Registry::builtin()).unwrap();
    let recorded = engine.journal().transitions("saga/issue-7").unwrap();
    let context: Value = serde_json::from_str(&recorded.last().unwrap().context).unwrap();
    near(instant(&context["now"]), behind, "exec's decision");
    // `prepare-attempt` reads the clock only as it records, on its writer's
    // session (its answer needs none): the server's too.
    let prepared = engine.journal().transitions(&format!("park/{ep}")).unwrap();
    let context: Value = serde_json::from_str(&prepared.last().unwrap().context).unwrap();
    near(
        instant(&context["now"]),
        behind,
        "prepare-attempt's decision",
    );
    near(
        instant(&json!(engine.now().unwrap().to_string())),
        behind,
        "Engine::now",
    );
    assert_eq!(audit_kinds(&db), (0, vec![]));
}

/// The CLI's face of the same guard: a claim on a stream whose last act was
/// recorded at an instant past the journal's clock (a host whose clock runs
/// ahead wrote it) is `decided-before`, exit 3, after one more decision at a
/// fresh clock, writes nothing, and carries the claim's readback.
#[test]
fn a_claim_decided_before_the_resources_last_act_is_refused_and_writes_nothing() {
    let ep = episode(7);
    let honest = TempJournal::new();
    assert_eq!(prepare(&honest.path(), &ep, &[]).0, 0);
    let ahead = (Utc::now() + TimeDelta::hours(1)).to_rfc3339();
    for b in backends() {
        let s = b.fresh();
        let db = s.db();
        copy_unfenced(
            &honest.path(),
            &s,
            &format!("park/{ep}"),
            Some(ahead.clone()),
        );
        let before = events(&db);
        let (code, out) = acquire(&db, &ep, "agent-a", "600");
        assert_eq!(
            (code, out["error"]["kind"].as_str()),
            (3, Some("decided-before")),
            "{b:?}: {out}"
        );
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&ahead),
            "{b:?}: names the act's instant: {out}"
        );
        assert_eq!(events(&db), before, "{b:?}: the refusal wrote");
        // Like every exit-3 claim answer, it carries the readback of what holds.
        let shown = claim(&db, "show", &ep, &[]).1;
        assert_eq!(shown["state"], "unclaimed", "{b:?}");
        let carried = &out["error"]["claim"];
        assert_eq!(
            (&carried["state"], &carried["version"], &carried["stream"]),
            (&shown["state"], &shown["version"], &shown["stream"]),
            "{b:?}: {out}"
        );
    }
}

/// An instant the guards cannot read is stored data this build cannot read,
/// whichever guard meets it (helper-68: the first grant answered exit 5, a
/// later one exit 1): a forged `recorded_at` on the resource's event refuses
/// the first grant, and on its transition record a renewal, each with exit 1
/// (`stored-data`) and the journal's bytes unchanged.
#[test]
fn an_unreadable_instant_is_stored_data_for_every_claim_guard() {
    use crate::support::tamper;
    let ep = episode(8);
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(prepare(&db, &ep, &[]).0, 0);
    let forge = |sql: &str| {
        let conn = rusqlite::Connection::open(&db).unwrap();
        tamper(&conn, sql);
    };
    let refused = |out: &(i32, Value), what: &str| {
        assert_eq!(
            (out.0, out.1["error"]["kind"].as_str()),
            (1, Some("stored-data")),
            "{what}: {}",
            out.1
        );
        let message = out.1["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("its recorded_at"), "{what}: {}", out.1);
    };
    forge("UPDATE events SET recorded_at = 'not an instant';");
    let before = t.bytes();
    refused(&acquire(&db, &ep, "agent-a", "600"), "the first grant");
    assert_eq!(t.bytes(), before, "the first grant's refusal wrote");
    forge("UPDATE events SET recorded_at = (SELECT recorded_at FROM transitions WHERE id = events.transition_id);");
    assert_eq!(acquire(&db, &ep, "agent-a", "600").0, 0);
    forge("UPDATE transitions SET recorded_at = 'not an instant' WHERE stream LIKE 'park/%';");
    let before = t.bytes();
    let renew = claim(
        &db,
        "renew",
        &ep,
        &["--claim-id", "agent-a-c", "--token", "1", "--ttl", "600"],
    );
    refused(&renew, "a renewal");
    assert_eq!(t.bytes(), before, "the renewal's refusal wrote");
}
