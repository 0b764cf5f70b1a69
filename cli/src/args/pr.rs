//! `cairn pr …`: the PR continuation loop's arguments.

use clap::{Subcommand, ValueEnum};

use super::Key;

/// The PR a recorded pr-loop verb acts on.
#[derive(Debug, Clone, clap::Args)]
pub struct PrRef {
    /// The PR's URL (its stream is `pr-loop/<url without scheme>`)
    #[arg(long, value_name = "URL")]
    pub pr: String,
}

#[derive(Debug, Subcommand)]
pub enum PrCommand {
    /// Classify a `gh pr view --json …` reading into exactly one of nine states (writes nothing)
    #[command(
        after_help = "Reads {pr, reading, reviewed_sha, commits_since_review, destination, …} on stdin.\nWith --repo, cairn counts `git -C REPO rev-list <reviewed_sha>..HEAD --count` itself.\n\nExample:\n  gh pr view 7 --json state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt \\\n    | jq '{pr: \"https://github.com/o/r/pull/7\", reading: ., reviewed_sha: \"…\", destination: \"pr\"}' \\\n    | cairn pr classify --repo ."
    )]
    Classify {
        /// Count the commits since `reviewed_sha` in this repository
        #[arg(long, value_name = "DIR")]
        repo: Option<String>,
    },
    /// Classify and record: rounds, offers and escalation proposals follow from the state
    #[command(
        after_help = "With --pr, cairn reads the PR with `gh pr view` itself (where gh is installed; exit 2\nwhere it is not) and stdin carries the rest of the document, without `reading`.\n\nExample:\n  cairn pr observe --repo /abs/repo < observation.json"
    )]
    Observe {
        #[arg(long, value_name = "DIR")]
        repo: Option<String>,
        /// Read the PR at this URL with gh instead of taking `reading` on stdin
        #[arg(long, value_name = "URL")]
        pr: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// Offer to re-request review (never on a draft)
    #[command(
        after_help = "Example:\n  cairn pr offer-review-request --pr https://github.com/o/r/pull/7"
    )]
    OfferReviewRequest {
        #[command(flatten)]
        pr: PrRef,
        #[command(flatten)]
        key: Key,
    },
    /// The operator confirms an offer: merge, ready or review-request
    #[command(
        after_help = "Example:\n  cairn pr confirm --pr https://github.com/o/r/pull/7 --what merge --operator alice"
    )]
    Confirm {
        #[command(flatten)]
        pr: PrRef,
        #[arg(long, value_enum)]
        what: OfferArg,
        #[arg(long, value_name = "NAME")]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// Resolve a proposed tier escalation through the intent envelope
    #[command(
        after_help = "Attended: applying needs --approval-token. Unattended: held at the default.\n\nExample:\n  cairn pr resolve-escalation --pr https://github.com/o/r/pull/7 --mode attended --decision apply --approval-token T-1"
    )]
    ResolveEscalation {
        #[command(flatten)]
        pr: PrRef,
        #[arg(long, value_enum)]
        mode: ModeArg,
        #[arg(long, value_enum)]
        decision: DecisionArg,
        #[arg(long, value_name = "TOKEN")]
        approval_token: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// Record the merge the operator confirmed
    #[command(
        after_help = "Example:\n  cairn pr record-merge --pr https://github.com/o/r/pull/7 --merged-at 2026-11-30T10:00:00Z"
    )]
    RecordMerge {
        #[command(flatten)]
        pr: PrRef,
        #[arg(long, value_name = "RFC3339")]
        merged_at: String,
        #[command(flatten)]
        key: Key,
    },
    /// The operator's answer to a closed PR: paused or abandoned
    #[command(
        after_help = "Example:\n  cairn pr dispose --pr https://github.com/o/r/pull/7 --as paused --reason \"waiting on upstream\" --operator alice"
    )]
    Dispose {
        #[command(flatten)]
        pr: PrRef,
        #[arg(long = "as", value_enum)]
        disposition: DispositionArg,
        #[arg(long)]
        reason: String,
        #[arg(long, value_name = "NAME")]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// Read the PR with `gh pr view` (where gh is installed) and print the reading
    #[command(after_help = "Example:\n  cairn pr fetch --pr https://github.com/o/r/pull/7")]
    Fetch(PrRef),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OfferArg {
    Merge,
    Ready,
    ReviewRequest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Attended,
    Unattended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecisionArg {
    Apply,
    Decline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DispositionArg {
    Paused,
    Abandoned,
}
