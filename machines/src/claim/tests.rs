//! The claim's rules as given/when/then tables: grants, take-overs at the exact
//! expiry instant, readbacks, stale and expired tokens, the fact the fence reads, and the
//! serialized forms the journal keeps.

use super::*;
use crate::testing::Scenario;
use crate::{Context, Machine, Timestamp};

fn at(secs: u32) -> Timestamp {
    Timestamp::parse(&format!("2026-11-30T10:{:02}:{:02}Z", secs / 60, secs % 60))
        .expect("a fixed time parses")
}

fn ctx(secs: u32) -> Context {
    Context {
        now: at(secs),
        fresh_ids: vec![],
        session: None,
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn owner(s: &str) -> Owner {
    Owner::parse(s).expect("a valid owner")
}

fn id(s: &str) -> ClaimId {
    ClaimId::parse(s).expect("a valid claim id")
}

fn tok(n: u64) -> Token {
    Token::new(n).expect("a positive token")
}

fn ttl(s: u64) -> Ttl {
    Ttl::from_seconds(s).expect("a ttl in bounds")
}

fn grant(who: &str, claim: &str, token: u64, from: u32, until: u32) -> Grant {
    Grant {
        owner: owner(who),
        claim_id: id(claim),
        token: tok(token),
        acquired_at: at(from),
        expires_at: at(until),
    }
}

fn acquire(who: &str, claim: &str, secs: u64) -> Command {
    Command::Acquire {
        owner: owner(who),
        claim_id: id(claim),
        ttl_seconds: ttl(secs),
    }
}

fn renew(claim: &str, token: u64, secs: u64) -> Command {
    Command::Renew {
        claim_id: id(claim),
        token: tok(token),
        ttl_seconds: ttl(secs),
    }
}

fn release(claim: &str, token: u64) -> Command {
    Command::Release {
        claim_id: id(claim),
        token: tok(token),
    }
}

/// `a` holds claim `c1`, token 1, from 0 s until 30 s.
fn held() -> Vec<Event> {
    vec![Event::Acquired {
        grant: grant("a", "c1", 1, 0, 30),
    }]
}

#[test]
fn the_graph_has_no_defects() {
    assert_eq!(Claim::graph().defects(), vec![]);
}

#[test]
fn a_free_resource_is_granted_with_the_first_token() {
    let state = Scenario::<Claim>::given_no_events()
        .when(acquire("a", "c1", 30), &ctx(0))
        .then([Event::Acquired {
            grant: grant("a", "c1", 1, 0, 30),
        }]);
    assert_eq!(state.holder_at(&at(29)).map(|g| g.token), Some(tok(1)));
    assert_eq!(
        state.holder_at(&at(30)),
        None,
        "live while now < expires_at"
    );
}

#[test]
fn a_live_lease_refuses_every_other_claim_and_names_its_holder() {
    for (who, claim) in [("b", "c2"), ("a", "c2"), ("b", "c1")] {
        let refused = Claim::decide(
            &Scenario::<Claim>::given(held()).state().clone(),
            &acquire(who, claim, 30),
            &ctx(29),
        )
        .expect_err("a live lease is held");
        assert_eq!(refused.violations.len(), 1);
        assert_eq!(refused.violations[0].predicate, HELD_BY_ANOTHER);
        let message = &refused.violations[0].message;
        assert!(
            message.contains("`a` holds it under claim `c1` (token 1) until 2026-11-30T10:00:30Z"),
            "{message}"
        );
        assert_eq!(contention(&refused), Some(Contention::Held));
    }
}

#[test]
fn the_holder_acquiring_again_reads_its_grant_back_and_changes_nothing() {
    let state = Scenario::<Claim>::given(held())
        .when(acquire("a", "c1", 600), &ctx(10))
        .then([]);
    assert_eq!(state.last_grant(), Some(&grant("a", "c1", 1, 0, 30)));
}

#[test]
fn an_expired_lease_is_taken_over_at_its_expiry_instant_with_a_greater_token() {
    Scenario::<Claim>::given(held())
        .when(acquire("b", "c2", 30), &ctx(29))
        .then_rejected_with(&[HELD_BY_ANOTHER]);
    Scenario::<Claim>::given(held())
        .when(acquire("b", "c2", 30), &ctx(30))
        .then([Event::TakenOver {
            grant: grant("b", "c2", 2, 30, 60),
            expired: grant("a", "c1", 1, 0, 30),
        }]);
    // Its own expired claim too: the old token is dead, so a new one.
    Scenario::<Claim>::given(held())
        .when(acquire("a", "c1", 30), &ctx(45))
        .then([Event::TakenOver {
            grant: grant("a", "c1", 2, 45, 75),
            expired: grant("a", "c1", 1, 0, 30),
        }]);
}

#[test]
fn a_released_resource_grants_a_token_greater_than_every_earlier_one() {
    let mut events = held();
    events.push(Event::Released {
        claim_id: id("c1"),
        token: tok(1),
        released_at: at(5),
    });
    Scenario::<Claim>::given(events)
        .when(acquire("b", "c2", 30), &ctx(6))
        .then([Event::Acquired {
            grant: grant("b", "c2", 2, 6, 36),
        }]);
}

#[test]
fn renew_extends_only_the_current_live_grant() {
    let state = Scenario::<Claim>::given(held())
        .when(renew("c1", 1, 60), &ctx(20))
        .then([Event::Renewed {
            claim_id: id("c1"),
            token: tok(1),
            renewed_at: at(20),
            expires_at: at(80),
        }]);
    assert_eq!(
        state.holder_at(&at(79)).map(|g| &g.acquired_at),
        Some(&at(0))
    );
    Scenario::<Claim>::given(held())
        .when(renew("c2", 2, 60), &ctx(20))
        .then_rejected_with(&[CURRENT_CLAIM, CURRENT_TOKEN]);
    Scenario::<Claim>::given(held())
        .when(renew("c1", 2, 60), &ctx(20))
        .then_rejected_with(&[CURRENT_TOKEN]);
    Scenario::<Claim>::given(held())
        .when(renew("c1", 1, 60), &ctx(30))
        .then_rejected_with(&[LEASE_LIVE]);
    Scenario::<Claim>::given_no_events()
        .when(renew("c1", 1, 60), &ctx(0))
        .then_rejected_with(&[HELD]);
}

#[test]
fn release_needs_the_current_grant_and_a_retry_is_a_readback() {
    let released = Event::Released {
        claim_id: id("c1"),
        token: tok(1),
        released_at: at(10),
    };
    Scenario::<Claim>::given(held())
        .when(release("c1", 2), &ctx(10))
        .then_rejected_with(&[CURRENT_TOKEN]);
    let state = Scenario::<Claim>::given(held())
        .when(release("c1", 1), &ctx(10))
        .then([released.clone()]);
    assert_eq!(state.last_token(), Some(tok(1)));
    let mut events = held();
    events.push(released);
    Scenario::<Claim>::given(events.clone())
        .when(release("c1", 1), &ctx(11))
        .then([]);
    Scenario::<Claim>::given(events.clone())
        .when(release("c2", 1), &ctx(11))
        .then_rejected_with(&[HELD]);
    Scenario::<Claim>::given(events)
        .when(renew("c1", 1, 30), &ctx(11))
        .then_rejected_with(&[HELD]);
    // An expired grant no one took over is still the holder's to release.
    Scenario::<Claim>::given(held())
        .when(release("c1", 1), &ctx(90))
        .then([Event::Released {
            claim_id: id("c1"),
            token: tok(1),
            released_at: at(90),
        }]);
}

#[test]
fn which_refusals_are_contention() {
    let state = Scenario::<Claim>::given(held()).state().clone();
    let refusal = |c: Command, now: u32| {
        Claim::decide(&state, &c, &ctx(now)).expect_err("the case is refused")
    };
    assert_eq!(
        contention(&refusal(renew("c9", 1, 5), 1)),
        Some(Contention::Stale)
    );
    assert_eq!(
        contention(&refusal(renew("c1", 1, 5), 31)),
        Some(Contention::Expired)
    );
    assert_eq!(
        contention(&refusal(acquire("b", "c2", 5), 1)),
        Some(Contention::Held)
    );
    let other = crate::Rejection::single(
        "park",
        "evaluate",
        "fresh",
        crate::Violation::new(HELD, None, "not a claim's"),
    );
    assert_eq!(contention(&other), None);
    let exhausted = crate::Rejection::single(
        NAME,
        "acquire",
        "held",
        crate::Violation::new("token-exhausted", None, "x"),
    );
    assert_eq!(contention(&exhausted), None);
}

#[test]
fn the_claims_fact_fences_acts_with_the_live_grants_token_only() {
    let held = Scenario::<Claim>::given(held()).state().clone();
    // What the engine does for an act on the claimed resource: the claim stream's
    // fact, through the one fence rule.
    let predicate = |state: &ClaimState, t: Option<u64>, now: u32| {
        crate::reads::fence(Claim::fact(state).as_ref(), t, &at(now))
            .err()
            .map(|r| r.violation().predicate)
    };
    assert_eq!(predicate(&held, Some(1), 29), None);
    assert_eq!(
        predicate(&held, Some(2), 29).as_deref(),
        Some(CURRENT_TOKEN)
    );
    assert_eq!(predicate(&held, None, 29).as_deref(), Some(HELD_BY_ANOTHER));
    assert_eq!(predicate(&held, Some(1), 30).as_deref(), Some(LEASE_LIVE));
    assert_eq!(
        predicate(&held, None, 30),
        None,
        "no live lease: not fenced"
    );
    let released = Claim::evolve(
        held.clone(),
        &Event::Released {
            claim_id: id("c1"),
            token: tok(1),
            released_at: at(3),
        },
    );
    assert_eq!(predicate(&released, Some(1), 4).as_deref(), Some(HELD));
    assert_eq!(predicate(&released, None, 4), None);
    assert_eq!(
        predicate(&ClaimState::Unclaimed, Some(1), 0).as_deref(),
        Some(CURRENT_TOKEN)
    );
    assert_eq!(predicate(&ClaimState::Unclaimed, None, 0), None);
    // The fact as the reads of a recorded act keep it.
    assert_eq!(
        serde_json::to_string(&Claim::fact(&held)).unwrap(),
        r#"{"kind":"lease","holder":{"claim_id":"c1","owner":"a","token":1,"expires_at":"2026-11-30T10:00:30Z"},"last_token":1}"#
    );
    assert_eq!(
        serde_json::to_string(&Claim::fact(&released)).unwrap(),
        r#"{"kind":"lease","last_token":1}"#
    );
}

#[test]
fn the_serialized_forms_are_pinned() {
    assert_eq!(
        serde_json::to_string(&acquire("a", "c1", 30)).unwrap(),
        r#"{"command":"acquire","owner":"a","claim_id":"c1","ttl_seconds":30}"#
    );
    assert_eq!(
        serde_json::to_string(&renew("c1", 3, 30)).unwrap(),
        r#"{"command":"renew","claim_id":"c1","token":3,"ttl_seconds":30}"#
    );
    assert_eq!(
        serde_json::to_string(&held()[0]).unwrap(),
        r#"{"type":"acquired","grant":{"owner":"a","claim_id":"c1","token":1,"acquired_at":"2026-11-30T10:00:00Z","expires_at":"2026-11-30T10:00:30Z"}}"#
    );
    let state = Claim::replay(&held());
    assert_eq!(
        serde_json::to_value(&state).unwrap()["lease"],
        serde_json::json!("held")
    );
    // A recorded command is checked again as it is read back.
    assert!(serde_json::from_str::<Command>(
        r#"{"command":"acquire","owner":"a","claim_id":"c1","ttl_seconds":0}"#
    )
    .is_err());
    assert!(serde_json::from_str::<Command>(
        r#"{"command":"release","claim_id":"c1","token":1,"extra":1}"#
    )
    .is_err());
}

/// `reads::extends_lease` names every claim command but a release: the engine
/// holds those to the resource's last act (a renamed command would otherwise
/// slip out of the guard, or a release be held to it).
#[test]
fn every_claim_command_but_release_extends_a_lease() {
    let commands = [
        Command::Acquire {
            owner: owner("a"),
            claim_id: id("c1"),
            ttl_seconds: Ttl::from_seconds(30).expect("in bounds"),
        },
        Command::Renew {
            claim_id: id("c1"),
            token: Token::FIRST,
            ttl_seconds: Ttl::from_seconds(30).expect("in bounds"),
        },
        Command::Release {
            claim_id: id("c1"),
            token: Token::FIRST,
        },
    ];
    for c in &commands {
        assert_eq!(
            crate::reads::extends_lease(Claim::NAME, Claim::command_name(c)),
            !matches!(c, Command::Release { .. }),
            "{c:?}"
        );
    }
    assert!(!crate::reads::extends_lease("park", "acquire"));
}
