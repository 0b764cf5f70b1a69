//! `cairn pr …`: the PR continuation loop's arguments.

use clap::{Subcommand, ValueEnum};

use super::Key;

// The PR a recorded pr-loop verb acts on.
#[derive(Debug, Clone, clap::Args)]
pub struct PrRef {
    /// The PR's URL (its stream is `pr-loop/<url without scheme>`)
    #[arg(long, value_name = "URL")]
    pub pr: String,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum PrCommand {
    /// Classify a `gh pr view --json …` reading into exactly one of nine states (writes nothing)
    #[command(
        after_help = "Reads {pr, reading, reviewed_sha, destination, …} on stdin. An approved, clean PR is fresh only on cairn's own runs: with --repo (absolute), cairn checks `git merge-base --is-ancestor <reviewed_sha> HEAD` and counts `git rev-list --count <reviewed_sha>..HEAD` itself; a caller's commits_since_review can only make a review stale.\n\nExample:\n  F=state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup\n  gh pr view 7 --json \"$F,isDraft,mergedAt\" \\\n    | jq --arg sha \"$REVIEWED_SHA\" '{pr: \"https://github.com/o/r/pull/7\",\n        reading: ., reviewed_sha: $sha, destination: \"pr\"}' \\\n    | cairn pr classify --repo \"$PWD\""
    )]
    Classify {
        /// Observe the review's freshness in this repository (an absolute path)
        #[arg(long, value_name = "DIR")]
        repo: Option<String>,
    },
    /// Classify and record: rounds, offers and escalation proposals follow from the state
    #[command(
        after_help = "With --pr, cairn reads the PR with `gh pr view` itself (where gh is installed; exit 2 where it is not) and stdin carries the rest of the document, without `reading`; the output's `reading_source` says which it was. Only a reading cairn made ends the loop as merged.\n\nExample:\n  cairn pr observe --repo /abs/repo --pr https://github.com/o/r/pull/7 \\\n    < observation.json"
    )]
    Observe {
        /// Observe the review's freshness in this repository (an absolute path)
        #[arg(long, value_name = "DIR")]
        repo: Option<String>,
        /// Read the PR at this URL with gh instead of taking `reading` on stdin
        #[arg(long, value_name = "URL")]
        pr: Option<String>,
        /// The saga thread the PR is for (`saga/<saga id>`): its recorded code
        /// review gives `reviewed_sha` and its rounds `saga_rounds_seen` (a value
        /// also typed must agree: journal-agrees)
        #[arg(long, value_name = "STREAM")]
        from: Option<String>,
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
        after_help = "Example:\n  cairn pr confirm --pr https://github.com/o/r/pull/7 --what merge \\\n    --operator alice"
    )]
    Confirm {
        #[command(flatten)]
        pr: PrRef,
        /// The offer confirmed
        #[arg(long, value_enum)]
        what: OfferArg,
        /// Who decided (recorded)
        #[arg(long, value_name = "NAME")]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// Resolve a proposed tier escalation through the intent envelope
    #[command(
        after_help = "Attended: applying needs the approval token cairn minted with the proposal (the `proposal.token` of the observation that proposed it; single-use). Unattended: held at the default.\n\nExample:\n  cairn pr resolve-escalation --pr https://github.com/o/r/pull/7 \\\n    --mode attended --decision apply \\\n    --approval-token esc-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    ResolveEscalation {
        #[command(flatten)]
        pr: PrRef,
        /// Attended (an operator decides) or unattended (held at the default)
        #[arg(long, value_enum)]
        mode: ModeArg,
        /// Apply the proposed tier, or decline it
        #[arg(long, value_enum)]
        decision: DecisionArg,
        /// The proposal's single-use token (attended apply)
        #[arg(long, value_name = "TOKEN")]
        approval_token: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// Record the merge the operator confirmed, as cairn observes it
    #[command(
        after_help = "cairn reads the PR with `gh pr view` and records the merge when it shows MERGED with mergedAt and the reviewed head; with --target, git checks that the branch contains the reviewed head instead (in the repository the review was observed in, or --repo).\n\nExample:\n  cairn pr record-merge --pr https://github.com/o/r/pull/7\n  cairn pr record-merge --pr https://github.com/o/r/pull/7 --target main"
    )]
    RecordMerge {
        #[command(flatten)]
        pr: PrRef,
        /// Check with git that this branch contains the reviewed head (instead of gh)
        #[arg(long, value_name = "BRANCH")]
        target: Option<String>,
        /// The repository git checks in (an absolute path; default: where the review was
        /// observed); only with --target
        #[arg(long, value_name = "DIR", requires = "target")]
        repo: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// The operator pauses or abandons the loop (a closed PR, or an open one)
    #[command(
        after_help = "Example:\n  cairn pr dispose --pr https://github.com/o/r/pull/7 --as paused \\\n    --reason \"waiting on upstream\" --operator alice"
    )]
    Dispose {
        #[command(flatten)]
        pr: PrRef,
        /// Pause the loop, or abandon it
        #[arg(long = "as", value_enum)]
        disposition: DispositionArg,
        /// Why (recorded)
        #[arg(long)]
        reason: String,
        /// Who decided (recorded)
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
