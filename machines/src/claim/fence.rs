//! The fence an act on a claimed resource passes: the pure check of a presented
//! fencing token against the claim's state at the act's instant. A live lease
//! admits only its own token; a token of a lease that expired, was released or
//! was superseded is stale; with no live lease an act presenting no token is not
//! fenced at all. (The verbs that act on a claimed resource check it inside the
//! transaction that records the act; `tests/claim_properties.rs` drives it.)

use super::decide::{CURRENT_TOKEN, HELD, HELD_BY_ANOTHER, LEASE_LIVE};
use super::names::Token;
use super::state::ClaimState;
use crate::{Timestamp, Violation};

/// Whether an act presenting `token` (or none) may go ahead at `now`.
pub fn fence(state: &ClaimState, token: Option<Token>, now: &Timestamp) -> Result<(), Violation> {
    let field = Some("fencing_token");
    match (state.holder_at(now), token) {
        (Some(holder), Some(t)) if t == holder.token => Ok(()),
        (Some(holder), Some(t)) => Err(Violation::new(
            CURRENT_TOKEN,
            field,
            format!(
                "token {t} is stale: the live lease is `{}`'s, token {}, until {}",
                holder.owner, holder.token, holder.expires_at
            ),
        )),
        (Some(holder), None) => Err(Violation::new(
            HELD_BY_ANOTHER,
            field,
            format!(
                "`{}` holds a live lease (token {}) until {}: an act needs its token",
                holder.owner, holder.token, holder.expires_at
            ),
        )),
        (None, None) => Ok(()),
        (None, Some(t)) => Err(match state {
            ClaimState::Held { grant } if grant.token == t => Violation::new(
                LEASE_LIVE,
                field,
                format!("the lease of token {t} expired at {}", grant.expires_at),
            ),
            ClaimState::Released { grant, released_at } if grant.token == t => Violation::new(
                HELD,
                field,
                format!("the lease of token {t} was released at {released_at}"),
            ),
            ClaimState::Unclaimed | ClaimState::Held { .. } | ClaimState::Released { .. } => {
                Violation::new(
                    CURRENT_TOKEN,
                    field,
                    format!(
                        "token {t} is not the last one granted ({})",
                        state
                            .last_token()
                            .map_or_else(|| "none was".to_owned(), |l| format!("token {l}"))
                    ),
                )
            }
        }),
    }
}
