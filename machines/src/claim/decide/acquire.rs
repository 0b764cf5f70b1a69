//! `acquire`: a grant when the resource is unclaimed, released or its lease has
//! expired (a take-over naming the expired grant), with the next fencing token; a
//! readback (no event) when the same owner and claim id already hold it live;
//! refused while another claim holds a live lease, naming who and until when.

use super::super::event::Event;
use super::super::names::{ClaimId, Owner, Token, Ttl};
use super::super::state::{ClaimState, Grant};
use super::{describe, expiry, refuse, HELD_BY_ANOTHER};
use crate::{Rejection, Timestamp, Violation};

/// The events of `acquire` in `state` at `now`.
pub(super) fn acquire(
    state: &ClaimState,
    owner: &Owner,
    claim_id: &ClaimId,
    ttl: Ttl,
    now: &Timestamp,
) -> Result<Vec<Event>, Rejection> {
    let no = |v: Violation| refuse(state, "acquire", vec![v]);
    // A new grant's names have one spelling (claim rules 2; helper-76: an owner
    // of a lone U+0301, and NFD spellings of one visible name as two owners).
    // Their types read back every name recorded before, so this is the decision's.
    for (field, name) in [("owner", owner.as_str()), ("claim_id", claim_id.as_str())] {
        let what = field.replace('_', " ");
        crate::evidence::names::label(&what, name, super::super::names::NAME_MAX)
            .map_err(|(rule, m)| no(Violation::new(rule, Some(field), m)))?;
    }
    if let Some(holder) = state.holder_at(now) {
        if holder.claim_id == *claim_id && holder.owner == *owner {
            // The holder asking again (a retry that lost its answer): the grant it
            // holds, unchanged. Extending it is `renew`, which needs the token.
            return Ok(vec![]);
        }
        return Err(no(Violation::new(
            HELD_BY_ANOTHER,
            Some("claim_id"),
            format!("the lease is live: {}", describe(holder)),
        )));
    }
    let token = match state.last_token() {
        None => Token::FIRST,
        Some(last) => last.next().ok_or_else(|| {
            no(Violation::new(
                "token-exhausted",
                None,
                "every fencing token this resource can grant has been granted",
            ))
        })?,
    };
    let grant = Grant {
        owner: owner.clone(),
        claim_id: claim_id.clone(),
        token,
        acquired_at: now.clone(),
        expires_at: expiry(now, ttl).map_err(no)?,
    };
    Ok(vec![match state {
        ClaimState::Held { grant: expired } => Event::TakenOver {
            grant,
            expired: expired.clone(),
        },
        ClaimState::Unclaimed | ClaimState::Released { .. } => Event::Acquired { grant },
    }])
}
