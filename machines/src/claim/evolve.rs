//! `evolve`: a grant holds, a renewal moves its expiry, a release keeps the grant
//! as the last one. Total: it validates nothing.

use super::event::Event;
use super::state::ClaimState;

/// The state after `event`.
pub(super) fn evolve(state: ClaimState, event: &Event) -> ClaimState {
    match event {
        Event::Acquired { grant } | Event::TakenOver { grant, .. } => ClaimState::Held {
            grant: grant.clone(),
        },
        Event::Renewed { expires_at, .. } => match state {
            ClaimState::Held { mut grant } => {
                grant.expires_at = expires_at.clone();
                ClaimState::Held { grant }
            }
            other @ (ClaimState::Unclaimed | ClaimState::Released { .. }) => other,
        },
        Event::Released { released_at, .. } => match state {
            ClaimState::Held { grant } => ClaimState::Released {
                grant,
                released_at: released_at.clone(),
            },
            other @ (ClaimState::Unclaimed | ClaimState::Released { .. }) => other,
        },
    }
}
