//! `cairn claim acquire|renew|release|show`: the embedded lease with fencing
//! tokens, one `claim/<resource>` stream per claimed resource. The recording
//! verbs go through the one recording path (`Recorder::record`); a refusal that
//! is contention (held by another, stale, expired) is exit 3 with the readback.
//!
//! # Format
//!
//! Every verb prints the claim's readback, one JSON object:
//!
//! ```text
//! {"resource": "park/ep-…", "stream": "claim/park/ep-…", "version": 1,
//!  "state": "unclaimed" | "held" | "released", "live": true, "as_of": "<RFC3339>",
//!  "holder": "agent-a", "claim_id": "c1", "token": 1,
//!  "acquired_at": "<RFC3339>", "expires_at": "<RFC3339>", "released_at": null}
//! ```
//!
//! `holder`, `claim_id`, `token`, `acquired_at` and `expires_at` are the last
//! grant's (`null` when the resource was never claimed); `live` is whether that
//! grant holds the lease at `as_of` (held, and `as_of < expires_at`); `version` is
//! the claim stream's version the readback is of. `as_of` is the decision's one
//! reading of the journal's clock for `acquire`, `renew` and `release`, and the
//! journal's clock now for `show` (the host's for a SQLite file, the server's on
//! PostgreSQL). The recording verbs add `events`: the event types this call
//! recorded (`[]` when it read an existing grant back).

use cairn::journal::Options;
use cairn::machines::claim::{
    self, contention, Claim, ClaimId, ClaimState, Contention, Owner, Token, Ttl,
};
use cairn::machines::evidence::Invalid;
use cairn::machines::park::{self, EpisodeId};
use cairn::machines::work::node;
use cairn::machines::{build_loop, pr_loop, reads, saga, ship};
use cairn::{Machine, Registry, Rejection, StreamId, Timestamp};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::ClaimCommand;
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Outcome, Recorded, Recorder, Step};

/// Runs one claim verb; `writing` gives the options of a verb that records (it
/// makes the signing key on first use, so it runs only once the input is valid).
pub fn run(
    verb: &ClaimCommand,
    db: &Db,
    writing: &dyn Fn() -> Result<Options, Failure>,
    reading: &Options,
    registry: &Registry,
) -> Result<Done, Failure> {
    let (resource, command, key) = match verb {
        ClaimCommand::Show { resource } => {
            let stream = stream(resource, registry)?;
            // No journal at that location is an error, as for `cairn state` (a
            // mistyped --db must not read back as "free"); a journal where the
            // resource was never claimed is the answer `unclaimed`. The clock
            // is read on the session the state was read on.
            let engine = crate::verbs::reader(&db.clone()?, reading, Registry::builtin())?;
            let (state, version) = engine.load::<Claim>(&stream)?;
            let now = engine.now()?;
            crate::output::stderr_line(format_args!("cairn: {}", summary(&stream, &state, &now)));
            output::json(&readback(resource, &stream, &state, version, &now));
            return Ok(Done::Ok);
        }
        ClaimCommand::Acquire {
            resource,
            owner,
            claim_id,
            ttl,
            key,
        } => (
            resource,
            claim::Command::Acquire {
                owner: checked("owner", Owner::parse(owner))?,
                claim_id: checked("claim_id", ClaimId::parse(claim_id))?,
                ttl_seconds: checked("ttl", Ttl::parse(ttl))?,
            },
            key,
        ),
        ClaimCommand::Renew {
            resource,
            claim_id,
            token,
            ttl,
            key,
        } => (
            resource,
            claim::Command::Renew {
                claim_id: checked("claim_id", ClaimId::parse(claim_id))?,
                token: checked("token", Token::parse(token))?,
                ttl_seconds: checked("ttl", Ttl::parse(ttl))?,
            },
            key,
        ),
        ClaimCommand::Release {
            resource,
            claim_id,
            token,
            key,
        } => (
            resource,
            claim::Command::Release {
                claim_id: checked("claim_id", ClaimId::parse(claim_id))?,
                token: checked("token", Token::parse(token))?,
            },
            key,
        ),
    };
    let stream = stream(resource, registry)?;
    let options = writing()?;
    let key = key.key();
    let rec = Recorder::new(db, &options, &key)?;
    // The clock is read as the step records, on the session it appends on (one
    // PostgreSQL session for the verb, where reading it first opened two).
    let attempt = || rec.record(Step::<Claim>::new(&stream, &command));
    // A lost race (the stream moved between this decision and its append) is
    // decided once more against the state that won: the answer then names the
    // winner. Each attempt is a whole decision appended at the version it read.
    let result = match attempt() {
        Err(e) if lost_race(&e) => attempt(),
        other => other,
    };
    match result {
        Ok(r) if matches!(r.outcome, Outcome::Replayed(_)) => replayed(
            resource,
            &stream,
            &command,
            r,
            &Recorder::reader(db, reading),
        ),
        Ok(r) => {
            print(resource, &r, &r.at);
            Ok(Done::Recorded(r.outcome))
        }
        Err(Failure::Cairn(cairn::Error::Rejected(rejection))) => {
            match contention(&rejection) {
                Some(c) => {
                    // What holds now, read again (labelled with its version and instant).
                    let (state, version, now) = load(&Recorder::reader(db, reading), &stream)?;
                    Err(Failure::Contended {
                        kind: c.kind(),
                        claim: json!(readback(resource, &stream, &state, version, &now)),
                        rejection: Box::new(rejection),
                    })
                }
                None => Err(Failure::Cairn(cairn::Error::Rejected(rejection))),
            }
        }
        Err(e) if lost_race(&e) => {
            let (state, version, now) = load(&Recorder::reader(db, reading), &stream)?;
            Err(Failure::WithClaim {
                inner: Box::new(e),
                claim: json!(readback(resource, &stream, &state, version, &now)),
            })
        }
        Err(e) => Err(e),
    }
}

/// A retry (the idempotency key's first result) answered with what holds now:
/// the readback is authoritative, so a replay never shows a lease as it was. An
/// acquire or renew answers only while the replayed grant (its claim id and
/// token) still holds the lease — the first result if the stream has not moved
/// since, else the current readback with `events: []` — and otherwise exit 3
/// (`claim-held` by another, `claim-expired`, or `stale-claim`), as a fresh
/// request would be refused now; a release stays done.
fn replayed(
    resource: &str,
    stream: &StreamId,
    command: &claim::Command,
    first: Recorded<Claim>,
    reader: &Recorder,
) -> Result<Done, Failure> {
    let (state, version, now) = load(reader, stream)?;
    let granted = first.state.last_grant().map(|g| (&g.claim_id, g.token));
    let holds = state.holder_at(&now).map(|g| (&g.claim_id, g.token));
    let still_held = granted.is_some() && holds == granted;
    let release = matches!(command, claim::Command::Release { .. });
    if version == first.version && (release || still_held) {
        print(resource, &first, &now);
        return Ok(Done::Recorded(first.outcome));
    }
    let mut current = readback(resource, stream, &state, version, &now);
    current.events = Some(Vec::new());
    if release || still_held {
        output::json(&current);
        return Ok(Done::Recorded(first.outcome));
    }
    let released = matches!(state, ClaimState::Released { .. });
    let (kind, predicate, why) = match (holds, granted) {
        (Some(_), _) => (
            Contention::Held,
            claim::HELD_BY_ANOTHER,
            "another claim holds the lease now",
        ),
        (None, Some((_, token))) if released && state.last_token() == Some(token) => (
            Contention::Stale,
            claim::HELD,
            "the grant it returned was released",
        ),
        (None, Some((_, token))) if state.last_token() == Some(token) => (
            Contention::Expired,
            claim::LEASE_LIVE,
            "the grant it returned has expired",
        ),
        (None, _) => (
            Contention::Stale,
            claim::CURRENT_TOKEN,
            "the grant it returned is no longer the lease",
        ),
    };
    let rejection = Rejection::single(
        claim::NAME,
        Claim::command_name(command),
        Claim::state_name(&state),
        cairn::Violation::new(
            predicate,
            Some("idempotency_key"),
            format!(
                "the key's first result (version {}) is out of date: {why} (version {version})",
                first.version
            ),
        ),
    );
    Err(Failure::Contended {
        kind: kind.kind(),
        claim: json!(current),
        rejection: Box::new(rejection),
    })
}

/// A fence's refusal of an act on `resource` (any verb's: `reads::fence`) as
/// exit 3, with the kind a claim verb answers for the same predicate
/// (`claim-held`: a live lease and no token; `stale-claim`: another token, or one
/// released; `claim-expired`: the caller's own lease lapsed), the rejection, and
/// the claim's readback as it is now.
pub(crate) fn fenced(reader: &Recorder, resource: &StreamId, rejection: Rejection) -> Failure {
    let kind = match rejection.violations.first().map(|v| v.predicate.as_str()) {
        Some(reads::HELD_BY_ANOTHER) => Contention::Held,
        Some(reads::LEASE_LIVE) => Contention::Expired,
        _ => Contention::Stale,
    }
    .kind();
    // A lease stream whose name cannot be a stream id was never granted: its
    // readback is `null` (the refusal is of a token where nothing was claimed).
    let claim = match StreamId::new(claim::NAME, resource.as_str()) {
        Err(_) => Value::Null,
        Ok(stream) => match load(reader, &stream) {
            Ok((state, version, now)) => {
                json!(readback(resource.as_str(), &stream, &state, version, &now))
            }
            Err(e) => return e,
        },
    };
    Failure::Contended {
        kind,
        rejection: Box::new(rejection),
        claim,
    }
}

/// `claim/<resource>`, where the resource is a stream some verb acts on: a stream
/// id of a registered machine other than `claim`, with no empty, `.` or `..`
/// segment, and — for the built-in machines whose verbs key their streams by a
/// canonical spelling (park's episode id, the PR loop's URL, the saga's id) — in
/// exactly that spelling. A lease on any other spelling (`park/EP-…`,
/// `pr-loop/github.com/O/R/pull/7`) would fence nothing, so it is refused.
fn stream(resource: &str, registry: &Registry) -> Result<StreamId, Failure> {
    let lease = checked_stream(resource)?;
    let claimed = lease
        .claimed_resource()
        .map_err(|e| input("resource", "claimable", &e.to_string()))?;
    let machine = claimed.machine();
    if registry.get(machine).is_none() {
        let known: Vec<&str> = registry
            .iter()
            .map(|m| m.name())
            .filter(|n| *n != claim::NAME)
            .collect();
        return Err(input(
            "resource",
            "known-machine",
            &format!(
                "no machine `{machine}` records here, so nothing acts on `{resource}`: the machines are {}",
                known.join(", ")
            ),
        ));
    }
    canonical("resource", &claimed)?;
    Ok(lease)
}

/// Whether `stream` is in the spelling its machine's verbs key it by, for the
/// built-in machines that have one (park's lower-case episode id, the PR loop's
/// canonical URL, the saga's id, the build loop's `issue-<N>:<unit>`; every
/// instance segment non-empty and not `.`/`..`); exit 2 under `field`
/// (`canonical-resource`) naming the spelling to use. A lease on, or an `exec`
/// onto, another spelling would sit beside the stream the verbs fence.
pub(crate) fn canonical(field: &str, stream: &StreamId) -> Result<(), Failure> {
    let machine = stream.machine();
    let instance = &stream.as_str()[machine.len() + 1..];
    let plain = |i: &str| {
        i.split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
            .then(|| i.to_owned())
    };
    let canonical = match machine {
        m if m == park::NAME => EpisodeId::parse(instance).ok().map(|e| e.to_string()),
        m if m == pr_loop::NAME => pr_loop::stream_instance(&format!("https://{instance}")),
        m if m == saga::NAME => saga::valid_saga_id(instance).then(|| instance.to_owned()),
        m if m == build_loop::NAME => build_loop_instance(instance),
        // A ship run's `ship/<SHORT_ID>`; a work node's `work-node/<key>:<address>`
        // (helper-70, LOW: `ship/x:y` and `work-node/garbage` were leased).
        m if m == ship::NAME => reads::is_ship_stream(stream.as_str()).then(|| instance.to_owned()),
        m if m == node::NAME => {
            reads::is_work_node_stream(stream.as_str()).then(|| instance.to_owned())
        }
        _ => plain(instance),
    };
    match canonical {
        Some(c) if c == instance => Ok(()),
        Some(c) => Err(input(
            field,
            "canonical-resource",
            &format!("`{stream}` is not the stream {machine}'s verbs act on: use `{machine}/{c}`"),
        )),
        None => Err(input(
            field,
            "canonical-resource",
            &format!("`{stream}` names no {machine} instance any verb acts on"),
        )),
    }
}

/// A build loop's `issue-<N>:<unit>` (`issue-none:<unit>` for a record naming no
/// issue): N digits without a leading zero, the unit `[A-Za-z0-9._-]`, not `.`/`..`.
pub(crate) fn build_loop_instance(instance: &str) -> Option<String> {
    let (issue, unit) = instance.strip_prefix("issue-")?.split_once(':')?;
    let issue_ok = issue == "none"
        || (!issue.is_empty()
            && !issue.starts_with('0')
            && issue.bytes().all(|b| b.is_ascii_digit()));
    let unit_ok = !unit.is_empty()
        && unit != "."
        && unit != ".."
        && unit
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    (issue_ok && unit_ok).then(|| instance.to_owned())
}

/// `claim/<resource>`, where the resource is a stream id and not a claim's own.
fn checked_stream(resource: &str) -> Result<StreamId, Failure> {
    let claimed = StreamId::parse(resource).map_err(|e| {
        input(
            "resource",
            "stream-id",
            &format!("--resource must be the claimed thing's stream id: {e}"),
        )
    })?;
    if claimed.machine() == claim::NAME {
        return Err(input(
            "resource",
            "not-a-claim",
            "--resource names a claim's own stream: claim the resource itself",
        ));
    }
    StreamId::new(claim::NAME, resource).map_err(|e| {
        input(
            "resource",
            "length",
            &format!("the claim's stream `claim/{resource}` is not a stream id: {e}"),
        )
    })
}

/// A checked value, or the input error naming `field` and the rule it broke.
fn checked<T>(field: &str, value: Result<T, Invalid>) -> Result<T, Failure> {
    value.map_err(|e| input(field, e.rule, &e.message))
}

/// A conflict of the optimistic append (another transition won the version),
/// or a decision made at an instant before the claimed stream's last act.
fn lost_race(e: &Failure) -> bool {
    matches!(
        e,
        Failure::Cairn(
            cairn::Error::Journal(cairn::journal::Error::Conflict { .. })
                | cairn::Error::DecidedBefore { .. }
        )
    )
}

/// A claim stream's state and version, and the journal's clock, read on one
/// session (`Unclaimed` at version 0 when there is no journal or no such
/// stream: reading never creates one).
fn load(rec: &Recorder, stream: &StreamId) -> Result<(ClaimState, u64, Timestamp), Failure> {
    match rec.existing_engine()? {
        None => Ok((ClaimState::Unclaimed, 0, rec.now()?)),
        Some(engine) => {
            let (state, version) = engine.load::<Claim>(stream)?;
            Ok((state, version, engine.now()?))
        }
    }
}

fn print(resource: &str, r: &Recorded<Claim>, now: &Timestamp) {
    let mut v = readback(resource, &r.stream, &r.state, r.version, now);
    v.events = Some(r.names());
    output::json(&v);
}

/// A claim's readback (see the module's "Format"): what every claim verb prints,
/// and `claim` in a contention error.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Readback {
    /// The claimed resource (a stream id).
    pub resource: String,
    /// The claim's own stream, `claim/<resource>`.
    pub stream: String,
    /// The claim stream's version this readback is of.
    pub version: u64,
    /// `unclaimed`, `held` or `released`.
    pub state: &'static str,
    /// Whether the last grant holds the lease at `as_of`.
    pub live: bool,
    /// The instant the readback judges at (the journal's clock).
    pub as_of: Timestamp,
    /// The last grant's owner (`null`: never claimed).
    pub holder: Option<String>,
    /// The last grant's claim id.
    pub claim_id: Option<String>,
    /// The last grant's fencing token.
    pub token: Option<u64>,
    /// When the last grant was made.
    pub acquired_at: Option<Timestamp>,
    /// When the last grant lapses unless renewed.
    pub expires_at: Option<Timestamp>,
    /// When it was released (`released` only).
    pub released_at: Option<Timestamp>,
    /// The event types this call recorded (the recording verbs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<&'static str>>,
}

/// The readback (see the module's "Format").
fn readback(
    resource: &str,
    stream: &StreamId,
    state: &ClaimState,
    version: u64,
    now: &Timestamp,
) -> Readback {
    let grant = state.last_grant();
    let released_at = match state {
        ClaimState::Released { released_at, .. } => Some(released_at.clone()),
        ClaimState::Unclaimed | ClaimState::Held { .. } => None,
    };
    Readback {
        resource: resource.to_owned(),
        stream: stream.as_str().to_owned(),
        version,
        state: Claim::state_name(state),
        live: state.holder_at(now).is_some(),
        as_of: now.clone(),
        holder: grant.map(|g| g.owner.as_str().to_owned()),
        claim_id: grant.map(|g| g.claim_id.as_str().to_owned()),
        token: grant.map(|g| u64::from(g.token)),
        acquired_at: grant.map(|g| g.acquired_at.clone()),
        expires_at: grant.map(|g| g.expires_at.clone()),
        released_at,
        events: None,
    }
}

/// `show`'s stderr line.
fn summary(stream: &StreamId, state: &ClaimState, now: &Timestamp) -> String {
    match (state.holder_at(now), state) {
        (Some(g), _) => format!(
            "{stream}: held by `{}` under claim `{}` (token {}) until {}",
            g.owner, g.claim_id, g.token, g.expires_at
        ),
        (None, ClaimState::Unclaimed) => format!("{stream}: never claimed"),
        (None, ClaimState::Released { grant, released_at }) => format!(
            "{stream}: free (token {} released at {released_at})",
            grant.token
        ),
        (None, ClaimState::Held { grant }) => format!(
            "{stream}: free (token {} expired at {})",
            grant.token, grant.expires_at
        ),
    }
}
