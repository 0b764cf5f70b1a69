//! `cairn park …`: the park-work lifecycle's arguments.

use clap::{Subcommand, ValueEnum};

use super::Key;

// Journal identity for a recorded park transition: all three, or none (then the
// verb only evaluates and writes nothing).
#[derive(Debug, Clone, clap::Args)]
pub struct ParkIdentity {
    /// The episode (`ep-<uuid>`), as prepare-attempt handed it out
    #[arg(long, value_name = "ep-UUID")]
    pub episode_id: Option<String>,
    /// The intent (`park-<uuid>`)
    #[arg(long, value_name = "park-UUID")]
    pub intent_id: Option<String>,
    /// The attempt (`attempt-<uuid>`)
    #[arg(long, value_name = "attempt-UUID")]
    pub attempt_id: Option<String>,
    #[command(flatten)]
    pub key: Key,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum ParkCommand {
    /// Stable episode/intent ids, prior-receipt dedupe, a fresh attempt id (recorded)
    #[command(
        after_help = "Reads {mode, anchor_bead, episode_id, intent_id, prior_receipts} on stdin.\n\nExample:\n  echo '{\"mode\": \"park\", \"anchor_bead\": \"rsry-1\", \"episode_id\": null,\n    \"intent_id\": null, \"prior_receipts\": []}' | cairn park prepare-attempt"
    )]
    PrepareAttempt(Key),
    /// Fold an observation; with the three ids, record a checkpoint or receipt authorization
    #[command(
        after_help = "Reads the observation on stdin. An unsafe result is a result (exit 0, eligible: false) and records nothing.\n\nEP, INTENT and ATTEMPT are prepare-attempt's episode_id, intent_id and attempt_id.\n\nExample:\n  cairn park evaluate --episode-id \"$EP\" --intent-id \"$INTENT\" \\\n    --attempt-id \"$ATTEMPT\" < observation.json"
    )]
    Evaluate(ParkIdentity),
    /// Read-only evaluate (the skill's --check): reports, never writes
    #[command(after_help = "Example:\n  cairn park check < observation.json")]
    Check,
    /// Validate receipt bytes; with the three ids, record them as validated
    #[command(
        after_help = "Reads the exact receipt bytes on stdin (one trailing newline is ignored).\n\nEP, INTENT and ATTEMPT are prepare-attempt's episode_id, intent_id and attempt_id.\n\nExample:\n  cairn park validate-receipt --episode-id \"$EP\" --intent-id \"$INTENT\" \\\n    --attempt-id \"$ATTEMPT\" < receipt.json"
    )]
    ValidateReceipt(ParkIdentity),
    /// Prove durability by comment read-back; with the three ids, record safe_to_close
    #[command(
        after_help = "Reads {receipt_bytes, comments: [{id, body}]} on stdin.\n\nEP, INTENT and ATTEMPT are prepare-attempt's episode_id, intent_id and attempt_id.\n\nExample:\n  cairn park confirm-readback --episode-id \"$EP\" --intent-id \"$INTENT\" \\\n    --attempt-id \"$ATTEMPT\" < readback.json"
    )]
    ConfirmReadback(ParkIdentity),
    /// Resolve exactly one registered repository from exact bound git observations
    #[command(
        after_help = "Reads {selector, receipt_identity, observations, registrations} on stdin.\n\nExample:\n  cairn park bind-repository < bind.json"
    )]
    BindRepository,
    /// The resume gate: v1 allows read-only inspection only; `--claim-gate v2` checks a cairn claim
    #[command(
        after_help = "Reads {episode_id, intent_id, atomic_claim} on stdin.\n\nThe default is the helper's v1 answer, byte for byte: never authorized. `--claim-gate v2` is the reviewed upgrade the park seed requires before active resume: authorized only when atomic_claim is exactly {resource, owner, claim_id, token}, the resource is the episode's stream (`park/ep-…`) and the journal's readback of `claim/park/ep-…` shows that owner holding it under that claim id and token, unexpired now; anything else is v1's refusal with the reason.\n\nExample:\n  echo '{\"episode_id\": \"ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\",\n    \"intent_id\": \"park-5d0f2c8e-9a41-4d6b-8f3e-2b7c1a9e6d40\",\n    \"atomic_claim\": null}' | cairn park resume-gate\n  echo '{\"episode_id\": \"ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\",\n    \"intent_id\": \"park-5d0f2c8e-9a41-4d6b-8f3e-2b7c1a9e6d40\",\n    \"atomic_claim\": {\"owner\": \"agent-a\", \"claim_id\": \"c1\",\n    \"resource\": \"park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b\",\n    \"token\": 1}}' | cairn park resume-gate --claim-gate v2"
    )]
    ResumeGate {
        /// Which gate answers: v1 (the helper's, never authorized) or v2 (a live cairn claim held by the caller)
        #[arg(long, value_enum, value_name = "VERSION", default_value_t = ClaimGate::V1)]
        claim_gate: ClaimGate,
    },
    /// Run the bound git observations and print the three typed VCS checks
    #[command(
        after_help = "Runs `git -C ROOT …` itself (never in the caller's directory) and records argv, exit status, output and time.\n\nExample:\n  cairn park observe-vcs --repo /abs/path/to/workspace"
    )]
    ObserveVcs {
        /// The bound root: an absolute, normalised path (`--root` before)
        #[arg(long = "repo", alias = "root", value_name = "DIR")]
        root: String,
    },
}

/// Which `resume-gate` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClaimGate {
    /// The helper's v1 answer: resume is inspection only
    V1,
    /// The reviewed upgrade: authorized on a live cairn claim held by the caller
    V2,
}
