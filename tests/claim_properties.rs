//! The claim tested the way leases fail (issue #24): many simulated clients
//! acquiring, renewing, pausing past expiry (the context clock jumps), resuming
//! with what they remember and acting on the resource, some racing two decisions
//! against one version, through the real engine on a real SQLite journal. An act
//! is a transition on the claimed resource (a `ticket` comment) presenting a
//! fencing token (or none): the engine reads the claim into its decision and the
//! one fence rule (`reads::fence`) admits or refuses it. A plain reference model
//! says what each step must answer; afterwards the recorded history — the claim
//! stream, and the acts with the lease version, instant and token each recorded
//! — must show at most one holder at any instant, tokens strictly increasing, no
//! renew, release or act accepted with a stale token, and an audit that
//! re-decides every transition and re-checks every fence. Seeds in
//! proptest-regressions/claim.txt.

use cairn::journal::{Durability, Options};
use cairn::machines::claim::{
    contention, Claim, ClaimId, ClaimState, Command, Contention, Event, Owner, Token, Ttl,
};
use cairn::machines::reads::{claim_stream, is_fence_refusal};
use cairn::{Context, Decision, Engine, Machine, Registry, StreamId, Timestamp};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use crate::support::ticket::{self, Ticket};
use crate::support::TempJournal;

/// The claimed resource: a ticket, whose comments are the acts.
const RESOURCE: &str = "ticket/t1";

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/claim.txt"
        )))),
        ..Config::default()
    }
}

const CLIENTS: usize = 4;

/// Which token a client presents.
#[derive(Debug, Clone, Copy)]
enum Pick {
    /// The one it remembers from its last grant (token 1 if it never had one).
    Remembered,
    /// Any token, most likely someone else's or an old one.
    Guess(u64),
    /// None at all (acts only).
    Without,
}

#[derive(Debug, Clone)]
enum Op {
    /// The clock moves on: every client may have paused this long.
    Pause(u64),
    /// The clock moves to the last grant's expiry, one second before it or one
    /// after (the boundary where a lease stops holding), if that is ahead.
    PauseToExpiry(i8),
    Acquire(usize, u64),
    Renew(usize, Pick, u64),
    Release(usize, Pick),
    Act(usize, Pick),
    /// Two clients decide an acquire against the same version, then both append.
    Race(usize, usize, u64),
}

fn client() -> impl Strategy<Value = usize> {
    0..CLIENTS
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        6 => Just(Pick::Remembered),
        3 => (1u64..8).prop_map(Pick::Guess),
        1 => Just(Pick::Without),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop_oneof![1u64..20, 20u64..90].prop_map(Op::Pause),
        2 => (-1i8..=1).prop_map(Op::PauseToExpiry),
        4 => (client(), 1u64..40).prop_map(|(c, t)| Op::Acquire(c, t)),
        3 => (client(), pick(), 1u64..40).prop_map(|(c, p, t)| Op::Renew(c, p, t)),
        2 => (client(), pick()).prop_map(|(c, p)| Op::Release(c, p)),
        4 => (client(), pick()).prop_map(|(c, p)| Op::Act(c, p)),
        1 => (client(), client(), 1u64..40).prop_map(|(a, b, t)| Op::Race(a, b, t)),
    ]
}

/// What a step must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Accepted with events.
    Written,
    /// Accepted with no event (the holder's readback, a repeated release).
    Readback,
    Refused(Contention),
}

/// The reference model: the last grant, in whole seconds.
#[derive(Debug, Clone, Default)]
struct Model {
    last: Option<Lease>,
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    client: usize,
    token: u64,
    expires: u64,
    released: bool,
}

impl Model {
    fn live(&self, now: u64) -> Option<Lease> {
        self.last.filter(|l| !l.released && now < l.expires)
    }

    fn acquire(&mut self, c: usize, ttl: u64, now: u64) -> Answer {
        match self.live(now) {
            Some(l) if l.client == c => Answer::Readback,
            Some(_) => Answer::Refused(Contention::Held),
            None => {
                let token = self.last.map_or(1, |l| l.token + 1);
                self.last = Some(Lease {
                    client: c,
                    token,
                    expires: now + ttl,
                    released: false,
                });
                Answer::Written
            }
        }
    }

    fn renew(&mut self, c: usize, token: u64, ttl: u64, now: u64) -> Answer {
        match &mut self.last {
            Some(l) if !l.released && l.client == c && l.token == token => {
                if now >= l.expires {
                    return Answer::Refused(Contention::Expired);
                }
                l.expires = now + ttl;
                Answer::Written
            }
            _ => Answer::Refused(Contention::Stale),
        }
    }

    fn release(&mut self, c: usize, token: u64) -> Answer {
        match &mut self.last {
            Some(l) if l.client == c && l.token == token && l.released => Answer::Readback,
            Some(l) if l.client == c && l.token == token => {
                l.released = true;
                Answer::Written
            }
            _ => Answer::Refused(Contention::Stale),
        }
    }

    fn act(&self, token: Option<u64>, now: u64) -> bool {
        match (self.live(now), token) {
            (Some(l), Some(t)) => l.token == t,
            (Some(_), None) | (None, Some(_)) => false,
            (None, None) => true,
        }
    }
}

fn at(secs: u64) -> Timestamp {
    let base = chrono::DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z").expect("a fixed time");
    Timestamp::from_instant(base + chrono::TimeDelta::seconds(secs as i64))
}

fn ctx(secs: u64) -> Context {
    Context {
        now: at(secs),
        fresh_ids: vec![],
        session: None,
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn claim_id(c: usize) -> ClaimId {
    ClaimId::parse(&format!("c{c}")).expect("a valid claim id")
}

fn acquire(c: usize, ttl: u64) -> Command {
    Command::Acquire {
        owner: Owner::parse(&format!("agent-{c}")).expect("a valid owner"),
        claim_id: claim_id(c),
        ttl_seconds: Ttl::from_seconds(ttl).expect("a ttl in bounds"),
    }
}

fn token(remembered: &[Option<u64>], c: usize, p: Pick) -> Option<u64> {
    match p {
        Pick::Remembered => Some(remembered[c].unwrap_or(1)),
        Pick::Guess(t) => Some(t),
        Pick::Without => None,
    }
}

fn tok(t: u64) -> Token {
    Token::new(t).expect("generated tokens are positive")
}

/// What the engine answered, as an [`Answer`].
fn answer(result: Result<&Vec<Event>, &cairn::Error>) -> Answer {
    match result {
        Ok(events) if events.is_empty() => Answer::Readback,
        Ok(_) => Answer::Written,
        Err(cairn::Error::Rejected(r)) => Answer::Refused(
            contention(r).unwrap_or_else(|| panic!("a claim refusal that is not contention: {r}")),
        ),
        Err(e) => panic!("the engine failed: {e}"),
    }
}

/// An act on the resource that went ahead, as its transition recorded it: the
/// claim stream's version it read (0: none existed), its instant, its token.
type Act = (u64, Timestamp, Option<u64>);

fn run(ops: &[Op]) -> Result<(Engine, StreamId), TestCaseError> {
    let journal = TempJournal::new();
    let options = Options {
        durability: Durability::Normal,
        ..Options::default()
    };
    let mut registry = Registry::new();
    registry.register::<Claim>();
    registry.register::<Ticket>();
    let mut engine = Engine::open(&journal.path(), &options, registry).expect("the journal opens");
    let resource = StreamId::parse(RESOURCE).expect("a stream");
    let stream = StreamId::parse(&claim_stream(RESOURCE)).expect("a stream");
    // The resource exists before anyone claims it (the act is a comment on it).
    let mut open = ctx(0);
    open.fresh_ids = vec![uuid::Uuid::from_u128(1)];
    engine
        .execute_with_context::<Ticket>(
            &resource,
            &ticket::Command::Open {
                title: "claimed".into(),
            },
            &open,
            None,
        )
        .expect("an unclaimed ticket opens");
    let (mut model, mut now) = (Model::default(), 0u64);
    let mut remembered: Vec<Option<u64>> = vec![None; CLIENTS];
    for op in ops {
        let exec = |engine: &mut Engine, cmd: &Command, now: u64| {
            engine
                .execute_with_context::<Claim>(&stream, cmd, &ctx(now), None)
                .map(|done| done.events)
        };
        match *op {
            Op::Pause(secs) => now += secs,
            Op::PauseToExpiry(offset) => {
                if let Some(l) = model.last {
                    now = now.max(l.expires.saturating_add_signed(i64::from(offset)));
                }
            }
            Op::Acquire(c, ttl) => {
                let got = answer(exec(&mut engine, &acquire(c, ttl), now).as_ref());
                prop_assert_eq!(got, model.acquire(c, ttl, now), "{:?} at {}", op, now);
                if got == Answer::Written {
                    remembered[c] = model.last.map(|l| l.token);
                }
            }
            Op::Renew(c, p, ttl) => {
                let t = token(&remembered, c, p).unwrap_or(1);
                let cmd = Command::Renew {
                    claim_id: claim_id(c),
                    token: tok(t),
                    ttl_seconds: Ttl::from_seconds(ttl).expect("in bounds"),
                };
                prop_assert_eq!(
                    answer(exec(&mut engine, &cmd, now).as_ref()),
                    model.renew(c, t, ttl, now),
                    "{:?} at {}",
                    op,
                    now
                );
            }
            Op::Release(c, p) => {
                let t = token(&remembered, c, p).unwrap_or(1);
                let cmd = Command::Release {
                    claim_id: claim_id(c),
                    token: tok(t),
                };
                prop_assert_eq!(
                    answer(exec(&mut engine, &cmd, now).as_ref()),
                    model.release(c, t),
                    "{:?} at {}",
                    op,
                    now
                );
            }
            Op::Act(c, p) => {
                let t = token(&remembered, c, p);
                let mut act = ctx(now);
                act.fencing_token = t;
                let done = engine.execute_with_context::<Ticket>(
                    &resource,
                    &ticket::Command::Comment {
                        text: format!("client {c}"),
                    },
                    &act,
                    None,
                );
                let admitted = match &done {
                    Ok(_) => true,
                    Err(cairn::Error::Rejected(r)) if is_fence_refusal(r) => false,
                    Err(e) => panic!("the act failed otherwise: {e}"),
                };
                prop_assert_eq!(
                    admitted,
                    model.act(t, now),
                    "{:?} at {} in {:?}",
                    op,
                    now,
                    engine.load::<Claim>(&stream).expect("the stream loads").0
                );
            }
            Op::Race(a, b, ttl) => {
                let decide =
                    |c: usize| engine.decide::<Claim>(&stream, &acquire(c, ttl), &ctx(now), None);
                let (da, db) = (decide(a), decide(b));
                let pending = |d: Result<Decision<Claim>, cairn::Error>| match d {
                    Ok(Decision::Pending(p)) => Ok(p),
                    Ok(Decision::Replayed(_)) => panic!("no key, no replay"),
                    Err(e) => Err(e),
                };
                let (pa, pb) = (pending(da), pending(db));
                let mut before = model.clone();
                let want_a = model.acquire(a, ttl, now);
                let want_b = before.acquire(b, ttl, now);
                prop_assert_eq!(answer(pa.as_ref().map(|p| &p.events)), want_a);
                prop_assert_eq!(answer(pb.as_ref().map(|p| &p.events)), want_b);
                if let Ok(p) = pa {
                    engine
                        .append(p)
                        .expect("the first append at the version read succeeds");
                }
                if want_a == Answer::Written {
                    remembered[a] = model.last.map(|l| l.token);
                }
                if let Ok(p) = pb {
                    let appended = engine.append(p);
                    if want_a == Answer::Written && want_b == Answer::Written {
                        // Both decided a grant at one version: the second lost the race.
                        prop_assert!(
                            matches!(
                                appended,
                                Err(cairn::Error::Journal(
                                    cairn::journal::Error::Conflict { .. }
                                ))
                            ),
                            "{:?}",
                            appended
                        );
                    } else {
                        prop_assert!(appended.is_ok(), "{:?}", appended);
                        if want_b == Answer::Written {
                            model = before;
                            remembered[b] = model.last.map(|l| l.token);
                        }
                    }
                }
            }
        }
        // The journal's state is the model's, after every step.
        let (state, _) = engine.load::<Claim>(&stream).expect("the stream loads");
        let grant = state.last_grant();
        prop_assert_eq!(grant.map(|g| g.token.get()), model.last.map(|l| l.token));
        prop_assert_eq!(
            grant.map(|g| g.expires_at.clone()),
            model.last.map(|l| at(l.expires))
        );
        prop_assert_eq!(
            matches!(state, ClaimState::Released { .. }),
            model.last.is_some_and(|l| l.released)
        );
    }
    Ok((engine, stream))
}

/// The acts that went ahead, read back from the resource's transitions.
fn acts(engine: &Engine, stream: &StreamId) -> Vec<Act> {
    let records = engine
        .journal()
        .transitions(RESOURCE)
        .expect("the resource's transitions read");
    records
        .iter()
        .filter(|t| t.command_name == "comment")
        .map(|t| {
            let context: Context = serde_json::from_str(&t.context).expect("a recorded context");
            let lease = context.read(stream.as_str()).map_or(0, |r| r.version);
            (lease, context.now, context.fencing_token)
        })
        .collect()
}

/// The recorded history's invariants, read back from the journal.
fn check_history(engine: &Engine, stream: &StreamId) -> Result<(), TestCaseError> {
    let acts = acts(engine, stream);
    let events: Vec<Event> = engine
        .journal()
        .read_stream(stream.as_str(), None)
        .expect("the stream reads")
        .iter()
        .map(|e| {
            Claim::decode_stored(&e.event_type, e.schema_version, &e.payload).expect("decodes")
        })
        .collect();
    // The current grant's holding, as the history says: its token and
    // [acquired_at, released_at or its latest expiry).
    let mut holding: Option<(u64, Timestamp, Timestamp)> = None;
    let mut state = Claim::initial_state();
    let mut highest_act = 0;
    for version in 0..=events.len() {
        if version > 0 {
            let e = &events[version - 1];
            match e {
                Event::Acquired { grant } | Event::TakenOver { grant, .. } => {
                    if let Some((last, _, end)) = &holding {
                        prop_assert!(
                            grant.token.get() > *last,
                            "tokens strictly increase: {:?}",
                            events
                        );
                        prop_assert!(
                            grant.acquired_at >= *end,
                            "two holders at once: {:?}",
                            events
                        );
                    }
                    if let Event::TakenOver { expired, .. } = e {
                        prop_assert_eq!(
                            Some(expired),
                            state.last_grant(),
                            "a take-over names the grant it replaced"
                        );
                    }
                    holding = Some((
                        grant.token.get(),
                        grant.acquired_at.clone(),
                        grant.expires_at.clone(),
                    ));
                }
                Event::Renewed {
                    token,
                    renewed_at,
                    expires_at,
                    ..
                } => {
                    let Some((t, _, until)) = &mut holding else {
                        return Err(TestCaseError::fail("a renew with nothing held"));
                    };
                    prop_assert!(
                        *t == token.get() && renewed_at < until,
                        "a renew with a stale token or an expired lease: {:?}",
                        events
                    );
                    *until = expires_at.clone();
                }
                Event::Released {
                    token, released_at, ..
                } => {
                    let Some((t, _, until)) = &mut holding else {
                        return Err(TestCaseError::fail("a release with nothing held"));
                    };
                    prop_assert_eq!(*t, token.get(), "a release with a stale token");
                    *until = until.clone().min(released_at.clone());
                }
            }
            state = Claim::evolve(state, e);
        }
        // Every act that went ahead at this version with a token did so inside that
        // token's holding; tokens of acts never go back.
        for (_, now, token) in acts.iter().filter(|(v, _, _)| *v == version as u64) {
            let Some(t) = token else {
                // No token: only where no lease held at that instant.
                prop_assert!(
                    !holding
                        .as_ref()
                        .is_some_and(|(_, from, until)| from <= now && now < until),
                    "an act without a token at {} inside a lease: {:?}",
                    now,
                    holding
                );
                continue;
            };
            let inside = holding
                .as_ref()
                .is_some_and(|(ht, from, until)| ht == t && from <= now && now < until);
            prop_assert!(
                inside,
                "an act with token {} at {} outside its lease: {:?}",
                t,
                now,
                holding
            );
            prop_assert!(
                *t >= highest_act,
                "an act with an older token after a newer one"
            );
            highest_act = *t;
        }
    }
    let report = engine.audit(None).expect("the audit runs");
    prop_assert!(report.ok, "{:?}", report.findings);
    Ok(())
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn at_most_one_holder_and_no_stale_token_ever_accepted(ops in proptest::collection::vec(op(), 1..48)) {
        let (engine, stream) = run(&ops)?;
        check_history(&engine, &stream)?;
    }
}
