//! Claims on both journal backends from the same test code (issue #24): a grant,
//! contention, fencing of an act on the claimed episode, the resume gate v2, an
//! expiry and take-over, a stale token, and a forged unfenced act named by the
//! audit — the same answers and the same recorded shape on SQLite and PostgreSQL.
//! And the clock: expiry is judged by the journal's clock, the server's on
//! PostgreSQL — shown with a server whose clock runs an hour behind the client's,
//! where a lease the client's clock would call long expired still holds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
use cairn::{Engine, Registry};
use chrono::{DateTime, FixedOffset, TimeDelta, Utc};
use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::reliability::{episode, prepare};
use crate::support::backend::{backends, Store};
use crate::support::TempJournal;

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
    let record = j.transitions(stream).unwrap().remove(0);
    let events = j.read_stream(stream, None).unwrap();
    to.journal()
        .append(&Append {
            stream: stream.to_owned(),
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
                command_name: record.command_name,
                command: record.command,
                context: record.context,
                rules_version: record.rules_version,
            },
            idempotency: None,
            recorded_at: at.unwrap_or(record.recorded_at),
            reads: Vec::new(),
            scans: Vec::new(),
        })
        .unwrap();
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

/// A lease never spans an act that found it lapsed (helper-65), on both
/// backends: a renewal decided just before the expiry and appended after an
/// untokened act landed on the resource (the act judged the lease lapsed) is a
/// conflict, not a renewal; decided again at its old instant, before the act's,
/// it is refused at once as decided before it; decided at a fresh instant it is refused as
/// expired. The journal keeps the grant alone, and the act.
#[test]
fn a_lease_never_spans_an_act_that_found_it_lapsed() {
    use cairn::machines::claim::{self, Claim, ClaimId, Owner, Token, Ttl};
    use cairn::machines::reads::claim_stream;
    use cairn::{Decision, StreamId};

    use crate::support::ctx;
    use crate::support::ticket::{self, Ticket};

    for b in backends() {
        let store = b.fresh();
        let mut registry = Registry::new();
        registry.register::<Claim>();
        registry.register::<Ticket>();
        let mut engine = Engine::open(&store.db(), &Options::default(), registry).unwrap();
        let resource = StreamId::parse("ticket/t1").unwrap();
        let lease = StreamId::parse(&claim_stream("ticket/t1")).unwrap();
        let open = ticket::Command::Open {
            title: "claimed".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &open, &ctx(0), None)
            .unwrap();
        let ten_minutes = Ttl::from_seconds(600).unwrap();
        let acquire = claim::Command::Acquire {
            owner: Owner::parse("a").unwrap(),
            claim_id: ClaimId::parse("c1").unwrap(),
            ttl_seconds: ten_minutes,
        };
        engine
            .execute_with_context::<Claim>(&lease, &acquire, &ctx(1), None)
            .unwrap();
        // Decided at minute 10, the lease live until minute 11; held.
        let renew = claim::Command::Renew {
            claim_id: ClaimId::parse("c1").unwrap(),
            token: Token::new(1).unwrap(),
            ttl_seconds: ten_minutes,
        };
        let held = match engine.decide::<Claim>(&lease, &renew, &ctx(10), None) {
            Ok(Decision::Pending(p)) => p,
            Ok(Decision::Replayed(_)) => panic!("{b:?}: no key, nothing replayed"),
            Err(e) => panic!("{b:?}: the renewal decides: {e}"),
        };
        // At minute 12 the lease has lapsed: an act without a token goes ahead.
        let comment = ticket::Command::Comment {
            text: "unfenced".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &comment, &ctx(12), None)
            .unwrap_or_else(|e| panic!("{b:?}: the act after the expiry: {e}"));
        let conflict = |r: Result<(), cairn::Error>, what: &str| {
            assert!(
                matches!(&r, Err(cairn::Error::Journal(cairn::journal::Error::Conflict { stream, .. })) if stream == "ticket/t1"),
                "{b:?}: {what}: {r:?}"
            );
        };
        conflict(engine.append(held).map(|_| ()), "the held renewal appended");
        let again = engine.decide::<Claim>(&lease, &renew, &ctx(10), None);
        assert!(
            matches!(&again, Err(cairn::Error::DecidedBefore { stream, .. }) if stream == "ticket/t1"),
            "{b:?}: decided again before the act's instant: {:?}",
            again.map(drop)
        );
        match engine.execute_with_context::<Claim>(&lease, &renew, &ctx(13), None) {
            Err(cairn::Error::Rejected(r)) => assert_eq!(
                claim::contention(&r).map(|c| c.kind()),
                Some("claim-expired"),
                "{b:?}: {r}"
            ),
            other => panic!("{b:?}: a renewal at minute 13: {other:?}"),
        }
        assert_eq!(
            engine.load::<Claim>(&lease).unwrap().1,
            1,
            "{b:?}: the grant alone"
        );
        assert_eq!(
            engine.load::<Ticket>(&resource).unwrap().1,
            2,
            "{b:?}: the act"
        );
    }
}

/// The CLI's face of the same guard: a claim on a stream whose last act was
/// recorded at an instant past the journal's clock (a host whose clock runs
/// ahead wrote it) is `decided-before`, exit 3, after one more decision at a
/// fresh clock, and writes nothing.
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
        assert_eq!(
            claim(&db, "show", &ep, &[]).1["state"],
            "unclaimed",
            "{b:?}"
        );
    }
}

/// On a claimed stream, acts land in the order of their instants (both
/// backends): an act decided before the stream's last act is
/// `DecidedBefore`, so the claim guard's look at the last act sees the latest.
/// Without it: a tokened act decided at minute 5 and held while an unfenced act
/// at minute 12 (the lease lapsed at 11) lands, then decided again at minute 5
/// on top of it, was recorded last; a renewal at minute 6 then looked only at
/// that act and showed the lease live over the unfenced one.
#[test]
fn acts_on_a_claimed_stream_land_in_the_order_of_their_instants() {
    use cairn::machines::claim::{self, Claim, ClaimId, Owner, Token, Ttl};
    use cairn::machines::reads::claim_stream;
    use cairn::{Decision, StreamId};

    use crate::support::ctx;
    use crate::support::ticket::{self, Ticket};

    for b in backends() {
        let store = b.fresh();
        let mut registry = Registry::new();
        registry.register::<Claim>();
        registry.register::<Ticket>();
        let mut engine = Engine::open(&store.db(), &Options::default(), registry).unwrap();
        let resource = StreamId::parse("ticket/t1").unwrap();
        let lease = StreamId::parse(&claim_stream("ticket/t1")).unwrap();
        let open = ticket::Command::Open {
            title: "claimed".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &open, &ctx(0), None)
            .unwrap();
        let ten_minutes = Ttl::from_seconds(600).unwrap();
        let acquire = claim::Command::Acquire {
            owner: Owner::parse("a").unwrap(),
            claim_id: ClaimId::parse("c1").unwrap(),
            ttl_seconds: ten_minutes,
        };
        engine
            .execute_with_context::<Claim>(&lease, &acquire, &ctx(1), None)
            .unwrap();
        let comment = |text: &str| ticket::Command::Comment { text: text.into() };
        let tokened = |n: u32| {
            let mut c = ctx(n);
            c.fencing_token = Some(1);
            c
        };
        let held = match engine.decide::<Ticket>(&resource, &comment("held"), &tokened(5), None) {
            Ok(Decision::Pending(p)) => p,
            other => panic!("{b:?}: the tokened act decides: {:?}", other.map(drop)),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &comment("unfenced"), &ctx(12), None)
            .unwrap_or_else(|e| panic!("{b:?}: the act after the expiry: {e}"));
        let appended = engine.append(held).map(drop);
        assert!(
            matches!(
                &appended,
                Err(cairn::Error::Journal(
                    cairn::journal::Error::Conflict { .. }
                ))
            ),
            "{b:?}: {appended:?}"
        );
        let again =
            engine.execute_with_context::<Ticket>(&resource, &comment("held"), &tokened(5), None);
        assert!(
            matches!(&again, Err(cairn::Error::DecidedBefore { stream, .. }) if stream == "ticket/t1"),
            "{b:?}: the act decided again at minute 5: {:?}",
            again.map(drop)
        );
        let renew = claim::Command::Renew {
            claim_id: ClaimId::parse("c1").unwrap(),
            token: Token::new(1).unwrap(),
            ttl_seconds: ten_minutes,
        };
        let renewed = engine.execute_with_context::<Claim>(&lease, &renew, &ctx(6), None);
        assert!(
            matches!(&renewed, Err(cairn::Error::DecidedBefore { .. })),
            "{b:?}: a renewal at minute 6: {:?}",
            renewed.map(drop)
        );
        // An act on an unclaimed stream is not held to it: no lease, no order.
        let free = StreamId::parse("ticket/t2").unwrap();
        engine
            .execute_with_context::<Ticket>(&free, &open, &ctx(20), None)
            .unwrap();
        engine
            .execute_with_context::<Ticket>(&free, &comment("earlier"), &ctx(19), None)
            .unwrap_or_else(|e| panic!("{b:?}: an unclaimed stream: {e}"));
        assert_eq!(engine.load::<Claim>(&lease).unwrap().1, 1, "{b:?}");
        assert_eq!(engine.load::<Ticket>(&resource).unwrap().1, 2, "{b:?}");
    }
}

/// Only what grants or extends a lease waits for the resource's last act
/// (helper-66): with a tokened act recorded at minute 30, a renewal decided at
/// minute 5 is `DecidedBefore`, but the holder's acquire (a readback, writing
/// nothing) and the release (which only ends the lease) go ahead at minute 5.
#[test]
fn only_a_grant_or_renewal_waits_for_the_resources_last_act() {
    use cairn::machines::claim::{self, Claim, ClaimId, Owner, Token, Ttl};
    use cairn::machines::reads::claim_stream;
    use cairn::StreamId;

    use crate::support::ctx;
    use crate::support::ticket::{self, Ticket};

    for b in backends() {
        let store = b.fresh();
        let mut registry = Registry::new();
        registry.register::<Claim>();
        registry.register::<Ticket>();
        let mut engine = Engine::open(&store.db(), &Options::default(), registry).unwrap();
        let resource = StreamId::parse("ticket/t1").unwrap();
        let lease = StreamId::parse(&claim_stream("ticket/t1")).unwrap();
        let open = ticket::Command::Open {
            title: "claimed".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &open, &ctx(0), None)
            .unwrap();
        let hour = Ttl::from_seconds(3600).unwrap();
        let acquire = claim::Command::Acquire {
            owner: Owner::parse("a").unwrap(),
            claim_id: ClaimId::parse("c1").unwrap(),
            ttl_seconds: hour,
        };
        engine
            .execute_with_context::<Claim>(&lease, &acquire, &ctx(1), None)
            .unwrap();
        let mut ahead = ctx(30);
        ahead.fencing_token = Some(1);
        let comment = ticket::Command::Comment {
            text: "ahead".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource, &comment, &ahead, None)
            .unwrap();
        let token = Token::new(1).unwrap();
        let renew = claim::Command::Renew {
            claim_id: ClaimId::parse("c1").unwrap(),
            token,
            ttl_seconds: hour,
        };
        let renewed = engine.execute_with_context::<Claim>(&lease, &renew, &ctx(5), None);
        assert!(
            matches!(&renewed, Err(cairn::Error::DecidedBefore { .. })),
            "{b:?}: {:?}",
            renewed.map(drop)
        );
        let again = engine
            .execute_with_context::<Claim>(&lease, &acquire, &ctx(5), None)
            .unwrap_or_else(|e| panic!("{b:?}: the holder's readback: {e}"));
        assert!(again.events.is_empty(), "{b:?}: a readback writes nothing");
        let release = claim::Command::Release {
            claim_id: ClaimId::parse("c1").unwrap(),
            token,
        };
        let released = engine
            .execute_with_context::<Claim>(&lease, &release, &ctx(5), None)
            .unwrap_or_else(|e| panic!("{b:?}: the release: {e}"));
        assert_eq!(released.events.len(), 1, "{b:?}");
        assert_eq!(engine.load::<Claim>(&lease).unwrap().1, 2, "{b:?}");
    }
}

/// The audit names a lease the journal shows live over an act it never fenced
/// (`lease-over-act`, both backends): a renewal decided at minute 10, before
/// the expiry, copied in raw after an unfenced act at minute 12 (the claim
/// verbs refuse it now; a journal from before the guard, or forged, holds it).
/// The act's own re-decision passes: it read the lease lapsed.
#[test]
fn the_audit_names_a_lease_recorded_live_over_an_unfenced_act() {
    use cairn::machines::claim::{self, Claim, ClaimId, Owner, Token, Ttl};
    use cairn::machines::reads::claim_stream;
    use cairn::StreamId;

    use crate::support::ctx;
    use crate::support::ticket::{self, Ticket};

    let open = ticket::Command::Open {
        title: "claimed".into(),
    };
    let ten_minutes = Ttl::from_seconds(600).unwrap();
    let acquire = claim::Command::Acquire {
        owner: Owner::parse("a").unwrap(),
        claim_id: ClaimId::parse("c1").unwrap(),
        ttl_seconds: ten_minutes,
    };
    let renew = claim::Command::Renew {
        claim_id: ClaimId::parse("c1").unwrap(),
        token: Token::new(1).unwrap(),
        ttl_seconds: ten_minutes,
    };
    let comment = ticket::Command::Comment {
        text: "unfenced".into(),
    };
    let resource = StreamId::parse("ticket/t1").unwrap();
    let lease = StreamId::parse(&claim_stream("ticket/t1")).unwrap();
    let engine = |store: &Store| {
        let mut registry = Registry::new();
        registry.register::<Claim>();
        registry.register::<Ticket>();
        Engine::open(&store.db(), &Options::default(), registry).unwrap()
    };
    for b in backends() {
        // Where the renewal is decided: the lease renewed at minute 10.
        let source = b.fresh();
        let mut e = engine(&source);
        e.execute_with_context::<Ticket>(&resource, &open, &ctx(0), None)
            .unwrap();
        e.execute_with_context::<Claim>(&lease, &acquire, &ctx(1), None)
            .unwrap();
        e.execute_with_context::<Claim>(&lease, &renew, &ctx(10), None)
            .unwrap();
        drop(e);
        let store = b.fresh();
        let mut e = engine(&store);
        e.execute_with_context::<Ticket>(&resource, &open, &ctx(0), None)
            .unwrap();
        e.execute_with_context::<Claim>(&lease, &acquire, &ctx(1), None)
            .unwrap();
        e.execute_with_context::<Ticket>(&resource, &comment, &ctx(12), None)
            .unwrap();
        let honest = e.audit(None).unwrap();
        assert!(honest.ok, "{b:?}: {:?}", honest.findings);
        // The renewal, copied in raw after the act.
        let from = source.journal();
        let record = from.transitions(lease.as_str()).unwrap().remove(1);
        let events = from.read_stream(lease.as_str(), None).unwrap();
        store
            .journal()
            .append(&Append {
                stream: lease.as_str().to_owned(),
                machine: "claim".into(),
                expected_version: 1,
                events: vec![NewEvent {
                    event_type: events[1].event_type.clone(),
                    schema_version: events[1].schema_version,
                    payload: events[1].payload.clone(),
                }],
                transition: TransitionRecord {
                    command_name: record.command_name,
                    command: record.command,
                    context: record.context,
                    rules_version: record.rules_version,
                },
                idempotency: None,
                recorded_at: record.recorded_at,
                reads: Vec::new(),
                scans: Vec::new(),
            })
            .unwrap();
        let forged = e.audit(None).unwrap();
        let kinds: Vec<_> = forged
            .findings
            .iter()
            .map(|f| {
                (
                    f.kind,
                    f.stream.as_str(),
                    f.detail.contains("without a fencing token"),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            vec![(cairn::audit::FindingKind::LeaseOverAct, "ticket/t1", true)],
            "{b:?}: {:?}",
            forged.findings
        );
        assert!(!forged.ok, "{b:?}");
    }
}
