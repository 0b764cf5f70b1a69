//! `cairn claim …`: the arguments of the embedded lease's verbs (values may start
//! with `-`, so an option-like owner or claim id reaches its check and is refused
//! naming its field, not as a usage error).

use clap::Subcommand;

use super::ClaimKey;

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum ClaimCommand {
    /// Take the lease on a resource if it is free, released or expired: a new fencing token
    #[command(
        after_help = "Exit 0 granted (or already held by this owner under this claim id: the grant is read back, unchanged); 3 held by another live claim (the error names who and until when) or a lost race; 2 bad input. Nothing is written unless granted.\n\nExample:\n  cairn claim acquire --owner a --claim-id c1 --ttl 30s \\\n    --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Acquire {
        /// The claimed thing's own stream id (`park/ep-…`): the claim is stream `claim/<resource>`
        #[arg(long, value_name = "STREAM", allow_hyphen_values = true)]
        resource: String,
        /// Who asks (an agent or session name; visible text, not option-like)
        #[arg(long, value_name = "OWNER", allow_hyphen_values = true)]
        owner: String,
        /// The caller-stable id of this claim: the same id again while it holds reads the grant back
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        claim_id: String,
        /// The lease's time to live: whole seconds, an optional `s` (`30`, `30s`); 1 ..= 86400
        #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
        ttl: String,
        #[command(flatten)]
        key: ClaimKey,
    },
    /// Extend the live lease to now + TTL: needs the current claim id and token
    #[command(
        after_help = "Exit 0 renewed; 3 stale (another claim id or token, nothing held) or expired (acquire again for a new token); 2 bad input.\n\nExample:\n  cairn claim renew --claim-id c1 --token 1 --ttl 30s \\\n    --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Renew {
        /// The claimed thing's own stream id
        #[arg(long, value_name = "STREAM", allow_hyphen_values = true)]
        resource: String,
        /// The current grant's claim id
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        claim_id: String,
        /// The current grant's fencing token
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        token: String,
        /// The new time to live from now: whole seconds, an optional `s`; 1 ..= 86400
        #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
        ttl: String,
        #[command(flatten)]
        key: ClaimKey,
    },
    /// Give the lease up: needs the current claim id and token
    #[command(
        after_help = "Exit 0 released (or already released under this claim id and token); 3 stale; 2 bad input.\n\nExample:\n  cairn claim release --claim-id c1 --token 1 \\\n    --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Release {
        /// The claimed thing's own stream id
        #[arg(long, value_name = "STREAM", allow_hyphen_values = true)]
        resource: String,
        /// The current grant's claim id
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        claim_id: String,
        /// The current grant's fencing token
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        token: String,
        #[command(flatten)]
        key: ClaimKey,
    },
    /// The authoritative readback: holder, claim id, token, expiry, live now, and the stream version
    #[command(
        after_help = "Reads only (never creates a journal). `live` is judged at `as_of`, the journal's clock now (this host's for a SQLite file, the server's on PostgreSQL).\n\nExample:\n  cairn claim show --resource park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Show {
        /// The claimed thing's own stream id
        #[arg(long, value_name = "STREAM", allow_hyphen_values = true)]
        resource: String,
    },
}
