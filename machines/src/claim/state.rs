//! A claimed resource's state: never claimed, held by one grant (live or expired
//! as judged at a given instant), or released. The last grant is kept after a
//! release, so the next token is always greater than every token granted before.

use serde::{Deserialize, Serialize};

use super::names::{ClaimId, Owner, Token};
use crate::Timestamp;

/// One grant of the lease: who, under which claim id and token, from when, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Who holds it.
    pub owner: Owner,
    /// The caller-stable claim id it was acquired under.
    pub claim_id: ClaimId,
    /// Its fencing token.
    pub token: Token,
    /// The instant it was granted (the journal host's clock at that transition).
    pub acquired_at: Timestamp,
    /// The instant it lapses unless renewed: live while `now < expires_at`.
    pub expires_at: Timestamp,
}

impl Grant {
    /// True while the lease has not expired at `now`.
    pub fn live_at(&self, now: &Timestamp) -> bool {
        *now < self.expires_at
    }
}

/// The lease on one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "lease", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ClaimState {
    /// No grant was ever made.
    Unclaimed,
    /// The last grant, not released (it may have expired: that is judged at an
    /// instant, never recorded).
    Held {
        /// The grant.
        grant: Grant,
    },
    /// The last grant was released by its holder.
    Released {
        /// The grant that was released.
        grant: Grant,
        /// When.
        released_at: Timestamp,
    },
}

impl ClaimState {
    /// The last grant, held or released; `None` when never claimed.
    pub fn last_grant(&self) -> Option<&Grant> {
        match self {
            ClaimState::Unclaimed => None,
            ClaimState::Held { grant } | ClaimState::Released { grant, .. } => Some(grant),
        }
    }

    /// The greatest token ever granted on this resource; `None` when never claimed.
    pub fn last_token(&self) -> Option<Token> {
        self.last_grant().map(|g| g.token)
    }

    /// The grant that holds the resource at `now`: held and not expired.
    pub fn holder_at(&self, now: &Timestamp) -> Option<&Grant> {
        match self {
            ClaimState::Held { grant } if grant.live_at(now) => Some(grant),
            ClaimState::Unclaimed | ClaimState::Held { .. } | ClaimState::Released { .. } => None,
        }
    }
}

/// The state's name in the graph: `unclaimed`, `held` or `released`.
pub(super) fn state_name(state: &ClaimState) -> &'static str {
    match state {
        ClaimState::Unclaimed => "unclaimed",
        ClaimState::Held { .. } => "held",
        ClaimState::Released { .. } => "released",
    }
}
