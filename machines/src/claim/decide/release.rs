//! `release`: the current grant's claim id and token give the lease up (also once
//! it has expired, if no one took it over: the release makes that explicit);
//! releasing the grant that was just released is a readback (no event); any other
//! claim id or token is stale and refused.

use super::super::event::Event;
use super::super::names::{ClaimId, Token};
use super::super::state::ClaimState;
use super::{refuse, stale, HELD};
use crate::{Rejection, Timestamp, Violation};

/// The events of `release` in `state` at `now`.
pub(super) fn release(
    state: &ClaimState,
    claim_id: &ClaimId,
    token: Token,
    now: &Timestamp,
) -> Result<Vec<Event>, Rejection> {
    let no = |v: Vec<Violation>| refuse(state, "release", v);
    match state {
        ClaimState::Unclaimed => Err(no(vec![Violation::new(
            HELD,
            None,
            "nothing is held: the resource was never claimed",
        )])),
        ClaimState::Released { grant, released_at } => {
            if grant.claim_id == *claim_id && grant.token == token {
                // A retry of the release that was recorded: already done.
                return Ok(vec![]);
            }
            Err(no(vec![Violation::new(
                HELD,
                None,
                format!(
                    "nothing is held: the lease of claim `{}` (token {}) was released at {released_at}",
                    grant.claim_id, grant.token
                ),
            )]))
        }
        ClaimState::Held { grant } => {
            let violations = stale(grant, claim_id, token);
            if !violations.is_empty() {
                return Err(no(violations));
            }
            Ok(vec![Event::Released {
                claim_id: claim_id.clone(),
                token,
                released_at: now.clone(),
            }])
        }
    }
}
