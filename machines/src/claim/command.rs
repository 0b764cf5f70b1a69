//! The claim's commands: acquire (owner, claim id, time to live), renew (the
//! current claim id and token, a new time to live), release (the current claim id
//! and token). No command carries a time: expiry is judged against the context's
//! one clock reading.

use serde::{Deserialize, Serialize};

use super::names::{ClaimId, Owner, Token, Ttl};

/// Commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    /// Take the lease if it is free, released or expired; the same claim id and
    /// owner while they hold it is a readback.
    Acquire {
        /// Who asks.
        owner: Owner,
        /// The caller-stable id of this claim.
        claim_id: ClaimId,
        /// How long the lease lives from now, unless renewed.
        ttl_seconds: Ttl,
    },
    /// Extend the live lease held under `claim_id` and `token` to `now + ttl`.
    Renew {
        /// The current grant's claim id.
        claim_id: ClaimId,
        /// The current grant's token.
        token: Token,
        /// How long the lease lives from now.
        ttl_seconds: Ttl,
    },
    /// Give the lease up.
    Release {
        /// The current grant's claim id.
        claim_id: ClaimId,
        /// The current grant's token.
        token: Token,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Acquire { .. } => "acquire",
        Command::Renew { .. } => "renew",
        Command::Release { .. } => "release",
    }
}
