//! A lease never spans an act that judged it otherwise (helper-65, helper-66),
//! on both journal backends, through the library with chosen instants: a grant
//! or renewal waits for the resource's last act (`DecidedBefore`), acts on a
//! claimed stream land in the order of their instants, a release and a
//! readback are not held up, and the audit names a lease recorded live over an
//! act it never fenced (`lease-over-act`). The CLI's face of the guard is in
//! `conformance_claim.rs`.

use cairn::journal::Options;
use cairn::machines::claim::{self, Claim, ClaimId, Owner, Token, Ttl};
use cairn::machines::reads::claim_stream;
use cairn::machines::{Context, Timestamp};
use cairn::{Decision, Engine, Registry, StreamId};

use crate::support::backend::{backends, Backend, Store};
use crate::support::ticket::{self, Ticket};
use crate::support::{copy_transition, ctx};

/// The resource: a ticket.
fn resource() -> StreamId {
    StreamId::parse("ticket/t1").unwrap()
}

/// Its lease stream.
fn lease() -> StreamId {
    StreamId::parse(&claim_stream("ticket/t1")).unwrap()
}

fn engine(store: &Store) -> Engine {
    let mut registry = Registry::new();
    registry.register::<Claim>();
    registry.register::<Ticket>();
    Engine::open(&store.db(), &Options::default(), registry).unwrap()
}

fn acquire(ttl: u64) -> claim::Command {
    claim::Command::Acquire {
        owner: Owner::parse("a").unwrap(),
        claim_id: ClaimId::parse("c1").unwrap(),
        ttl_seconds: Ttl::from_seconds(ttl).unwrap(),
    }
}

fn renew(ttl: u64) -> claim::Command {
    claim::Command::Renew {
        claim_id: ClaimId::parse("c1").unwrap(),
        token: Token::FIRST,
        ttl_seconds: Ttl::from_seconds(ttl).unwrap(),
    }
}

fn comment(text: &str) -> ticket::Command {
    ticket::Command::Comment { text: text.into() }
}

/// Minute `n`'s context, carrying token 1.
fn tokened(n: u32) -> Context {
    Context {
        fencing_token: Some(1),
        ..ctx(n)
    }
}

/// Asserts `result` is [`cairn::Error::DecidedBefore`], naming `stream` as the
/// one whose later record refused it and that record's instant as minute
/// `acted` (as [`ctx`] writes it).
#[track_caller]
fn decided_before<T>(result: Result<T, cairn::Error>, stream: &StreamId, acted: u32, what: &str) {
    let later = ctx(acted).now;
    match result.map(drop) {
        Err(cairn::Error::DecidedBefore {
            stream: named,
            acted: at,
            ..
        }) if named == stream.as_str()
            && Timestamp::parse(&at).is_ok_and(|t| t.cmp(&later).is_eq()) => {}
        other => panic!("{what}: decided-before on `{stream}` at minute {acted}, not {other:?}"),
    }
}

/// A fresh journal on `b`: ticket `t1` opened at minute 0, leased to `a`
/// (claim id `c1`, token 1) at minute 1 for `ttl` seconds.
fn claimed(b: Backend, ttl: u64) -> (Store, Engine) {
    let store = b.fresh();
    let mut e = engine(&store);
    let open = ticket::Command::Open {
        title: "claimed".into(),
    };
    e.execute_with_context::<Ticket>(&resource(), &open, &ctx(0), None)
        .unwrap();
    e.execute_with_context::<Claim>(&lease(), &acquire(ttl), &ctx(1), None)
        .unwrap();
    (store, e)
}

/// A renewal decided just before the expiry and appended after an untokened
/// act that found the lease lapsed is a conflict, not a renewal; decided again
/// at its old instant, before the act's, it is refused at once as decided
/// before it; decided at a fresh instant it is refused as expired. The journal
/// keeps the grant alone, and the act.
#[test]
fn a_lease_never_spans_an_act_that_found_it_lapsed() {
    for b in backends() {
        // Granted at minute 1 for ten minutes: live until minute 11.
        let (_store, mut engine) = claimed(b, 600);
        let held = match engine.decide::<Claim>(&lease(), &renew(600), &ctx(10), None) {
            Ok(Decision::Pending(p)) => p,
            other => panic!("{b:?}: the renewal decides: {:?}", other.map(drop)),
        };
        // At minute 12 the lease has lapsed: an act without a token goes ahead.
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("unfenced"), &ctx(12), None)
            .unwrap_or_else(|e| panic!("{b:?}: the act after the expiry: {e}"));
        let appended = engine.append(held).map(drop);
        assert!(
            matches!(&appended, Err(cairn::Error::Journal(cairn::journal::Error::Conflict { stream, .. })) if stream == "ticket/t1"),
            "{b:?}: the held renewal appended: {appended:?}"
        );
        decided_before(
            engine.decide::<Claim>(&lease(), &renew(600), &ctx(10), None),
            &resource(),
            12,
            &format!("{b:?}: decided again before the act's instant"),
        );
        match engine.execute_with_context::<Claim>(&lease(), &renew(600), &ctx(13), None) {
            Err(cairn::Error::Rejected(r)) => assert_eq!(
                claim::contention(&r).map(|c| c.kind()),
                Some("claim-expired"),
                "{b:?}: {r}"
            ),
            other => panic!("{b:?}: a renewal at minute 13: {other:?}"),
        }
        assert_eq!(engine.load::<Claim>(&lease()).unwrap().1, 1, "{b:?}");
        assert_eq!(engine.load::<Ticket>(&resource()).unwrap().1, 2, "{b:?}");
    }
}

/// On a claimed stream, acts land in the order of their instants: an act
/// decided before the stream's last act is `DecidedBefore`, so the claim
/// guard's look at the last act sees the latest. Without it: a tokened act
/// decided at minute 5 and held while an unfenced act at minute 12 (the lease
/// lapsed at 11) lands, then decided again at minute 5 on top of it, was
/// recorded last; a renewal at minute 6 then looked only at that act and showed
/// the lease live over the unfenced one.
#[test]
fn acts_on_a_claimed_stream_land_in_the_order_of_their_instants() {
    for b in backends() {
        let (_store, mut engine) = claimed(b, 600);
        let held = match engine.decide::<Ticket>(&resource(), &comment("held"), &tokened(5), None) {
            Ok(Decision::Pending(p)) => p,
            other => panic!("{b:?}: the tokened act decides: {:?}", other.map(drop)),
        };
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("unfenced"), &ctx(12), None)
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
        decided_before(
            engine.execute_with_context::<Ticket>(&resource(), &comment("held"), &tokened(5), None),
            &resource(),
            12,
            &format!("{b:?}: the act decided again at minute 5"),
        );
        decided_before(
            engine.execute_with_context::<Claim>(&lease(), &renew(600), &ctx(6), None),
            &resource(),
            12,
            &format!("{b:?}: a renewal at minute 6"),
        );
        // An act on an unclaimed stream is not held to it: no lease, no order.
        let free = StreamId::parse("ticket/t2").unwrap();
        let open = ticket::Command::Open {
            title: "free".into(),
        };
        engine
            .execute_with_context::<Ticket>(&free, &open, &ctx(20), None)
            .unwrap();
        engine
            .execute_with_context::<Ticket>(&free, &comment("earlier"), &ctx(19), None)
            .unwrap_or_else(|e| panic!("{b:?}: an unclaimed stream: {e}"));
        assert_eq!(engine.load::<Claim>(&lease()).unwrap().1, 1, "{b:?}");
        assert_eq!(engine.load::<Ticket>(&resource()).unwrap().1, 2, "{b:?}");
    }
}

/// Only what grants or extends a lease waits for the resource's last act
/// (helper-66): with a tokened act recorded at minute 30, a renewal decided at
/// minute 5 is `DecidedBefore`, but the holder's acquire (a readback, writing
/// nothing) and the release (which only ends the lease) go ahead at minute 5.
#[test]
fn only_a_grant_or_renewal_waits_for_the_resources_last_act() {
    for b in backends() {
        let (_store, mut engine) = claimed(b, 3600);
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("ahead"), &tokened(30), None)
            .unwrap();
        decided_before(
            engine.execute_with_context::<Claim>(&lease(), &renew(3600), &ctx(5), None),
            &resource(),
            30,
            &format!("{b:?}: a renewal at minute 5"),
        );
        let again = engine
            .execute_with_context::<Claim>(&lease(), &acquire(3600), &ctx(5), None)
            .unwrap_or_else(|e| panic!("{b:?}: the holder's readback: {e}"));
        assert!(again.events.is_empty(), "{b:?}: a readback writes nothing");
        let release = claim::Command::Release {
            claim_id: ClaimId::parse("c1").unwrap(),
            token: Token::FIRST,
        };
        let released = engine
            .execute_with_context::<Claim>(&lease(), &release, &ctx(5), None)
            .unwrap_or_else(|e| panic!("{b:?}: the release: {e}"));
        assert_eq!(released.events.len(), 1, "{b:?}");
        assert_eq!(engine.load::<Claim>(&lease()).unwrap().1, 2, "{b:?}");
    }
}

/// The audit names a lease the journal shows live over an act it never fenced
/// (`lease-over-act`): a renewal decided at minute 10, before the expiry,
/// copied in raw after an unfenced act at minute 12 (the claim verbs refuse it
/// now; a journal from before the guard, or forged, holds it). The act's own
/// re-decision passes: it read the lease lapsed.
#[test]
fn the_audit_names_a_lease_recorded_live_over_an_unfenced_act() {
    for b in backends() {
        // Where the renewal is decided: the lease renewed at minute 10.
        let (source, mut e) = claimed(b, 600);
        e.execute_with_context::<Claim>(&lease(), &renew(600), &ctx(10), None)
            .unwrap();
        drop(e);
        let (store, mut e) = claimed(b, 600);
        e.execute_with_context::<Ticket>(&resource(), &comment("unfenced"), &ctx(12), None)
            .unwrap();
        let honest = e.audit(None).unwrap();
        assert!(honest.ok, "{b:?}: {:?}", honest.findings);
        // The renewal, copied in raw after the act.
        copy_transition(
            &source.journal(),
            &mut store.journal(),
            lease().as_str(),
            1,
            None,
        );
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

/// An untokened act waits for its lease's last event too, and a lease stream
/// for its own: with the lease released at minute 10, an untokened act decided
/// at minute 9 (the lease live then, by instants) is `DecidedBefore` (else the
/// journal shows it inside the lease: `lease-over-act`); decided at minute 11
/// it goes ahead. A release decided at minute 9 after a renewal at minute 10 is
/// `DecidedBefore` as well. The holder's tokened act decided at minute 9 after
/// its renewal at minute 10 is recorded: its token was live.
#[test]
fn an_act_waits_for_its_leases_last_event() {
    let release = claim::Command::Release {
        claim_id: ClaimId::parse("c1").unwrap(),
        token: Token::FIRST,
    };
    for b in backends() {
        let (_store, mut engine) = claimed(b, 3600);
        engine
            .execute_with_context::<Claim>(&lease(), &renew(3600), &ctx(10), None)
            .unwrap();
        // The holder's act decided at minute 9, while it renewed at minute 10
        // (renewing as it works): its token is live, it is recorded.
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("working"), &tokened(9), None)
            .unwrap_or_else(|e| panic!("{b:?}: the holder's act: {e}"));
        decided_before(
            engine.execute_with_context::<Claim>(&lease(), &release, &ctx(9), None),
            &lease(),
            10,
            &format!("{b:?}: a release before the renewal's instant"),
        );
        engine
            .execute_with_context::<Claim>(&lease(), &release, &ctx(10), None)
            .unwrap_or_else(|e| panic!("{b:?}: the release at minute 10: {e}"));
        decided_before(
            engine.execute_with_context::<Ticket>(
                &resource(),
                &comment("before the release"),
                &ctx(9),
                None,
            ),
            &lease(),
            10,
            &format!("{b:?}: an untokened act before the release's instant"),
        );
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("after"), &ctx(11), None)
            .unwrap_or_else(|e| panic!("{b:?}: the act at minute 11: {e}"));
        let audit = engine.audit(None).unwrap();
        assert!(audit.ok, "{b:?}: {:?}", audit.findings);
    }
}

/// The first grant looks at every act on the resource (helper-67): before any
/// lease, acts are not held to order, so the last one need not be the latest.
/// Acts at minutes 12 and then 5 on an unclaimed ticket; an acquire at minute 8
/// is `DecidedBefore` (granted, the journal would show it live over the act at
/// minute 12); at minute 12 it is granted, and the audit passes.
#[test]
fn the_first_grant_waits_for_the_latest_act_not_the_last() {
    for b in backends() {
        let store = b.fresh();
        let mut engine = engine(&store);
        let open = ticket::Command::Open {
            title: "unclaimed".into(),
        };
        engine
            .execute_with_context::<Ticket>(&resource(), &open, &ctx(0), None)
            .unwrap();
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("late"), &ctx(12), None)
            .unwrap();
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("early"), &ctx(5), None)
            .unwrap_or_else(|e| panic!("{b:?}: no lease, no order: {e}"));
        decided_before(
            engine.execute_with_context::<Claim>(&lease(), &acquire(600), &ctx(8), None),
            &resource(),
            12,
            &format!("{b:?}: the first grant at minute 8"),
        );
        engine
            .execute_with_context::<Claim>(&lease(), &acquire(600), &ctx(12), None)
            .unwrap_or_else(|e| panic!("{b:?}: the grant at minute 12: {e}"));
        let audit = engine.audit(None).unwrap();
        assert!(audit.ok, "{b:?}: {:?}", audit.findings);
    }
}

/// A lease stream the audit cannot read clears no act (helper-67): with an
/// undecodable event forged onto it, auditing the claimed stream alone names
/// each of its acts `lease-over-act` (the lease stream's own audit names the
/// event), where it used to pass.
#[test]
fn an_unreadable_lease_clears_no_act() {
    use cairn::journal::{Append, NewEvent, TransitionRecord};
    for b in backends() {
        let (store, mut engine) = claimed(b, 600);
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("tokened"), &tokened(2), None)
            .unwrap();
        let clean = engine.audit(Some("ticket/t1")).unwrap();
        assert!(clean.ok, "{b:?}: {:?}", clean.findings);
        let record = store
            .journal()
            .transitions(lease().as_str())
            .unwrap()
            .remove(0);
        store
            .journal()
            .append(&Append {
                stream: lease().as_str().to_owned(),
                machine: "claim".into(),
                expected_version: 1,
                events: vec![NewEvent {
                    event_type: "renewed".into(),
                    schema_version: 1,
                    payload: r#"{"type":"renewed","bogus":1}"#.into(),
                }],
                transition: TransitionRecord {
                    command_name: "renew".into(),
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
        let forged = engine.audit(Some("ticket/t1")).unwrap();
        assert!(!forged.ok, "{b:?}");
        let over: Vec<_> = forged
            .findings
            .iter()
            .filter(|f| f.kind == cairn::audit::FindingKind::LeaseOverAct)
            .map(|f| f.detail.contains("cannot read"))
            .collect();
        assert_eq!(over, vec![true, true], "{b:?}: {:?}", forged.findings);
    }
}

/// A tokened act presents a grant in force at its instant, not one granted
/// after it (helper-68): tokens are the last plus one, so the next is known.
/// Token 1 live from minute 1 to 11; token 2 taken over at minute 12; an act
/// with token 2 decided at minute 5 is `DecidedBefore` (recorded, the journal
/// showed it inside token 1's lease: `lease-over-act`); at minute 12 it goes.
#[test]
fn a_tokened_act_never_lands_before_its_grant() {
    for b in backends() {
        let (_store, mut engine) = claimed(b, 600);
        let take_over = claim::Command::Acquire {
            owner: Owner::parse("b").unwrap(),
            claim_id: ClaimId::parse("c2").unwrap(),
            ttl_seconds: Ttl::from_seconds(600).unwrap(),
        };
        engine
            .execute_with_context::<Claim>(&lease(), &take_over, &ctx(12), None)
            .unwrap();
        let next = |n: u32| Context {
            fencing_token: Some(2),
            ..ctx(n)
        };
        decided_before(
            engine.execute_with_context::<Ticket>(&resource(), &comment("early"), &next(5), None),
            &lease(),
            12,
            &format!("{b:?}: an act with token 2 at minute 5"),
        );
        engine
            .execute_with_context::<Ticket>(&resource(), &comment("on time"), &next(12), None)
            .unwrap_or_else(|e| panic!("{b:?}: the act at the grant's instant: {e}"));
        let audit = engine.audit(None).unwrap();
        assert!(audit.ok, "{b:?}: {:?}", audit.findings);
    }
}

/// A decision dated ahead of the journal's clock is named by the audit
/// (`recorded-ahead`, a failure), on both backends (helper-70, MEDIUM: on SQLite
/// a process whose clock ran two hours fast took over a live lease, and verify
/// and audit passed). Through the library a caller chooses the instant, as a
/// fast clock does; one within the tolerance is not named.
#[test]
fn a_decision_dated_ahead_of_the_journals_clock_is_named_by_the_audit() {
    for b in backends() {
        let store = b.fresh();
        let mut e = engine(&store);
        let now = e.now().unwrap().instant();
        let at = |secs: i64| Context {
            now: Timestamp::from_instant(now + chrono::Duration::seconds(secs)),
            ..ctx(0)
        };
        e.execute_with_context::<Ticket>(
            &resource(),
            &ticket::Command::Open { title: "t".into() },
            &at(30),
            None,
        )
        .unwrap_or_else(|err| panic!("{b:?}: {err}"));
        let report = e.audit(None).unwrap();
        assert!(
            report.ok,
            "{b:?}: within the tolerance: {:?}",
            report.findings
        );
        e.execute_with_context::<Claim>(&lease(), &acquire(600), &at(7200), None)
            .unwrap_or_else(|err| panic!("{b:?}: {err}"));
        let report = e.audit(None).unwrap();
        assert!(!report.ok, "{b:?}");
        let ahead: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.kind == cairn::FindingKind::RecordedAhead)
            .collect();
        assert_eq!(ahead.len(), 1, "{b:?}: {:?}", report.findings);
        assert_eq!(ahead[0].stream, lease().as_str(), "{b:?}");
    }
}
