//! `renew`: the current grant's claim id and token extend its live lease to
//! `now + ttl`; a stale claim id or token, nothing held, or a lease that has
//! already expired is refused (an expired holder acquires again, for a new token).

use super::super::event::Event;
use super::super::names::{ClaimId, Token, Ttl};
use super::super::state::ClaimState;
use super::{expiry, refuse, stale, HELD, LEASE_LIVE};
use crate::{Rejection, Timestamp, Violation};

/// The events of `renew` in `state` at `now`.
pub(super) fn renew(
    state: &ClaimState,
    claim_id: &ClaimId,
    token: Token,
    ttl: Ttl,
    now: &Timestamp,
) -> Result<Vec<Event>, Rejection> {
    let no = |v: Vec<Violation>| refuse(state, "renew", v);
    let grant = match state {
        ClaimState::Held { grant } => grant,
        ClaimState::Unclaimed => {
            return Err(no(vec![Violation::new(
                HELD,
                None,
                "nothing is held: the resource was never claimed",
            )]))
        }
        ClaimState::Released { released_at, .. } => {
            return Err(no(vec![Violation::new(
                HELD,
                None,
                format!("nothing is held: the lease was released at {released_at}"),
            )]))
        }
    };
    let violations = stale(grant, claim_id, token);
    if !violations.is_empty() {
        return Err(no(violations));
    }
    if !grant.live_at(now) {
        return Err(no(vec![Violation::new(
            LEASE_LIVE,
            Some("token"),
            format!(
                "the lease expired at {} (now {now}): acquire again for a new token",
                grant.expires_at
            ),
        )]));
    }
    Ok(vec![Event::Renewed {
        claim_id: claim_id.clone(),
        token,
        renewed_at: now.clone(),
        expires_at: expiry(now, ttl).map_err(|v| no(vec![v]))?,
    }])
}
