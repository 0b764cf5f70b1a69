//! `decide`: the claim's guards, one function per command (`acquire`, `renew`,
//! `release`), all judged against the context's one clock reading; and which
//! refusals are contention (another holds the lease, or the caller's claim is
//! stale or expired: exit 3 at the CLI) rather than a malformed request.

mod acquire;
mod release;
mod renew;

use chrono::TimeDelta;

use super::command::Command;
use super::event::Event;
use super::names::Ttl;
use super::state::{state_name, ClaimState, Grant};
use super::NAME;
use crate::{Context, Rejection, Timestamp, Violation};

pub use crate::reads::{CURRENT_TOKEN, HELD, HELD_BY_ANOTHER, LEASE_LIVE};

/// The predicate of a renew or release naming a claim id that is not the current grant's.
pub const CURRENT_CLAIM: &str = "current-claim";

/// Why a claim command lost to the lease's current state: what the CLI answers
/// with exit 3 (nothing written), as it answers a lost optimistic-concurrency race.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contention {
    /// Another claim holds a live lease.
    Held,
    /// The caller's claim id or token is not the current grant's, or nothing is held.
    Stale,
    /// The caller's grant is current but has expired: acquire again for a new token.
    Expired,
}

impl Contention {
    /// The error kind the CLI reports.
    pub fn kind(self) -> &'static str {
        match self {
            Contention::Held => "claim-held",
            Contention::Stale => "stale-claim",
            Contention::Expired => "claim-expired",
        }
    }
}

/// The contention a claim rejection records, if every violation is one: `None`
/// for another machine's rejection or a request no state could accept (a token
/// or an instant past its range).
pub fn contention(rejection: &Rejection) -> Option<Contention> {
    if rejection.machine != NAME || rejection.violations.is_empty() {
        return None;
    }
    let mut found = Contention::Expired;
    for v in &rejection.violations {
        let this = match v.predicate.as_str() {
            HELD_BY_ANOTHER => Contention::Held,
            HELD | CURRENT_CLAIM | CURRENT_TOKEN => Contention::Stale,
            LEASE_LIVE => Contention::Expired,
            _ => return None,
        };
        found = match (found, this) {
            (Contention::Held, _) | (_, Contention::Held) => Contention::Held,
            (Contention::Stale, _) | (_, Contention::Stale) => Contention::Stale,
            (Contention::Expired, Contention::Expired) => Contention::Expired,
        };
    }
    Some(found)
}

/// The events `command` produces in `state` at `context.now`, or why it is refused.
pub(super) fn decide(
    state: &ClaimState,
    command: &Command,
    context: &Context,
) -> Result<Vec<Event>, Rejection> {
    let now = &context.now;
    match command {
        Command::Acquire {
            owner,
            claim_id,
            ttl_seconds,
        } => acquire::acquire(state, owner, claim_id, *ttl_seconds, now),
        Command::Renew {
            claim_id,
            token,
            ttl_seconds,
        } => renew::renew(state, claim_id, *token, *ttl_seconds, now),
        Command::Release { claim_id, token } => release::release(state, claim_id, *token, now),
    }
}

/// A rejection of `command` in `state` naming `violations`.
fn refuse(state: &ClaimState, command: &str, violations: Vec<Violation>) -> Rejection {
    Rejection {
        machine: NAME.to_owned(),
        command: command.to_owned(),
        state: state_name(state).to_owned(),
        violations,
    }
}

/// `now + ttl`, or a `time-range` violation past the calendar's end.
fn expiry(now: &Timestamp, ttl: Ttl) -> Result<Timestamp, Violation> {
    now.instant()
        .checked_add_signed(TimeDelta::seconds(i64::from(ttl.seconds())))
        .map(Timestamp::from_instant)
        .ok_or_else(|| {
            Violation::new(
                "time-range",
                Some("ttl_seconds"),
                format!(
                    "{now} plus {} s is past the last instant a timestamp can name",
                    ttl.seconds()
                ),
            )
        })
}

/// Who holds `grant` and until when, for a refusal's message.
fn describe(grant: &Grant) -> String {
    format!(
        "`{}` holds it under claim `{}` (token {}) until {}",
        grant.owner, grant.claim_id, grant.token, grant.expires_at
    )
}

/// The violations of a renew or release naming `claim_id` and `token` against the
/// last grant (every one that fails: the claim id and the token are independent facts).
fn stale(
    grant: &Grant,
    claim_id: &super::names::ClaimId,
    token: super::names::Token,
) -> Vec<Violation> {
    let mut out = vec![];
    if grant.claim_id != *claim_id {
        out.push(Violation::new(
            CURRENT_CLAIM,
            Some("claim_id"),
            format!(
                "claim `{claim_id}` is not the current grant's: {}",
                describe(grant)
            ),
        ));
    }
    if grant.token != token {
        out.push(Violation::new(
            CURRENT_TOKEN,
            Some("token"),
            format!(
                "token {token} is not the current grant's (token {}): a lease taken over or granted again has a greater token",
                grant.token
            ),
        ));
    }
    out
}
