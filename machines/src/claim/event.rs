//! The claim's events: a grant on a free resource, a grant that takes over an
//! expired one (naming it), a renewal, a release.

use serde::{Deserialize, Serialize};

use super::names::{ClaimId, Token};
use super::state::Grant;
use crate::Timestamp;

/// Events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    /// The lease was granted on a resource never claimed or released.
    Acquired {
        /// The grant.
        grant: Grant,
    },
    /// The lease was granted over a grant that had expired (and was never released).
    TakenOver {
        /// The new grant: its token is the expired one's plus one.
        grant: Grant,
        /// The grant it replaced, which had expired by `grant.acquired_at`.
        expired: Grant,
    },
    /// The live lease was extended.
    Renewed {
        /// The grant's claim id.
        claim_id: ClaimId,
        /// The grant's token (unchanged by a renewal).
        token: Token,
        /// When.
        renewed_at: Timestamp,
        /// The new expiry: `renewed_at + ttl`.
        expires_at: Timestamp,
    },
    /// The holder gave the lease up.
    Released {
        /// The grant's claim id.
        claim_id: ClaimId,
        /// The grant's token.
        token: Token,
        /// When.
        released_at: Timestamp,
    },
}

/// The event's name as the journal and the graph spell it.
pub(super) fn event_name(event: &Event) -> &'static str {
    match event {
        Event::Acquired { .. } => "acquired",
        Event::TakenOver { .. } => "taken-over",
        Event::Renewed { .. } => "renewed",
        Event::Released { .. } => "released",
    }
}
