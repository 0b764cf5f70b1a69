//! `cairn ship …`: the worktree ship pipeline's arguments.

use clap::Subcommand;

use super::Key;

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum ShipCommand {
    /// §preflight-classifier, read-only: exactly one outcome, first match wins (writes nothing)
    #[command(
        after_help = "Runs `git -C REPO_ROOT …` itself (argv, exit status, output and time recorded). Exit 0 with the outcome; only `clean` may proceed to `git worktree add`.\n\nExample:\n  cairn ship classify --repo /srv/consumer-repo \\\n    --expected-basename consumer-repo --branch worktree-abc \\\n    --worktree-path /srv/consumer-repo/.claude/worktrees/abc \\\n    --target-branch main"
    )]
    Classify {
        /// REPO_ROOT, captured from `git rev-parse --show-toplevel` (absolute;
        /// `--repo-root` before)
        #[arg(long = "repo", alias = "repo-root", value_name = "DIR")]
        repo_root: String,
        /// EXPECTED_REPO_BASENAME: the repo this consumer ships; REPO_ROOT must end in it
        #[arg(long, value_name = "NAME")]
        expected_basename: String,
        /// BRANCH: the branch the run's worktree is created on
        #[arg(long)]
        branch: String,
        /// WORKTREE_PATH (absolute)
        #[arg(long, value_name = "DIR")]
        worktree_path: String,
        /// TARGET_BRANCH: the primary checkout's branch, the rebase and merge target
        #[arg(long)]
        target_branch: String,
    },
    /// Open a ship run: capture REPO_ROOT, record the parameters and the preflight
    #[command(
        after_help = "REPO_ROOT is captured once with `git -C DIR rev-parse --show-toplevel` and asserted against --expected-basename. Exit 0 when the preflight is `clean`, 4 when it is not (recorded). The repository must ignore `.claude/` (and `.run-ship/`): a worktree under `.claude/worktrees/` would otherwise leave the primary tree unclean, and `create` stops at `primary-clean`.\n\nExample:\n  cairn ship open --repo /srv/consumer-repo --short-id abc \\\n    --expected-basename consumer-repo --branch worktree-abc \\\n    --worktree-path /srv/consumer-repo/.claude/worktrees/abc \\\n    --target-branch main --intent-field intent_excerpt --files-max 10 \\\n    --deletions-max 300 --tiebreaker-4 ask-user --close-step echo \\\n    --review-status pass"
    )]
    Open(Box<ShipOpen>),
    /// Re-run the recorded preflight (after a blocked outcome was dealt with)
    #[command(
        after_help = "Exit 0 when the outcome is `clean`, 4 when it is not (recorded either way).\n\nExample:\n  cairn ship preflight --short-id abc --review-status pass"
    )]
    Preflight {
        #[command(flatten)]
        id: ShipId,
        #[command(flatten)]
        review: ShipReview,
        #[command(flatten)]
        key: Key,
    },
    /// §phase-1b: `git worktree add -b BRANCH WORKTREE_PATH TARGET_BRANCH` and its four verifications
    #[command(
        after_help = "cairn re-asserts the anchor, runs `git -C REPO_ROOT worktree add -b BRANCH WORKTREE_PATH TARGET_BRANCH` and the four verifications; a failed verification removes the partial worktree (not resumable). Admitted only after a `clean` preflight. The primary tree must stay clean with the worktree in it: ignore `.claude/` in the repository.\n\nExample:\n  cairn ship create --short-id abc"
    )]
    Create(ShipStep),
    /// The phase-1 report (stdin or --packet) and §phase-1d verification by cairn
    #[command(
        after_help = "Reads the phase-1 report ({verdict, worktree_path, branch, head_sha, in_scope_paths, <INTENT_FIELD>, …}). Exit 0 when verified, 4 on a scope trip or a failed gate (recorded).\n\nExample:\n  cairn ship verify --short-id abc < resolve-abc.json\n  cairn ship verify --short-id abc --packet"
    )]
    Verify(ShipReport),
    /// The user's answer to a scope-gate trip
    #[command(
        after_help = "Example:\n  cairn ship answer-scope --short-id abc --answer abort --operator ana"
    )]
    AnswerScope {
        #[command(flatten)]
        id: ShipId,
        /// Proceed with the out-of-scope paths, or abort the run
        #[arg(long, value_enum)]
        answer: ScopeAnswerArg,
        /// Who answered
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// The phase-2 (rebase + refine) report and the worktree re-verify
    #[command(
        after_help = "Reads the phase-2 report ({verdict, rebase_outcome, iterations_run, tip_sha, dismissed_findings, …}).\n\nExample:\n  cairn ship refine --short-id abc --packet"
    )]
    Refine(ShipReport),
    /// The phase-3 pre-merge report (re-rebase, tests, lint, squash) and cairn's pre-merge checks
    #[command(
        after_help = "Reads {rebase_outcome_3_2, tests_pass, lint_clean, squash, pre_squash_sha, rollups, open_review_jobs}.\n\nWith --work-node, each named work node must vouch for the commit shipped (the pre-squash commit a squash kept the tree of, else the tip): its latest verification of exactly that commit passed and it is verified, merged or done. Otherwise the gate work-nodes-verified fails (unknown for a node the journal does not hold) and the run stops for resume.\n\nExample:\n  cairn ship pre-merge --short-id abc < ship-abc.json\n  cairn ship pre-merge --short-id abc --work-node \"$NODE\" < ship-abc.json"
    )]
    PreMerge(ShipPreMerge),
    /// `git merge --ff-only BRANCH` in REPO_ROOT: one retry after a rejection, a stop on the second
    #[command(
        after_help = "Exit 0 merged, 4 rejected (re-rebase, then one retry) or stopped on the second rejection.\n\nExample:\n  cairn ship merge --short-id abc"
    )]
    Merge(ShipStep),
    /// `git worktree remove` and `git branch -d` (`-D` and `--force` on an abort teardown)
    #[command(after_help = "Example:\n  cairn ship teardown --short-id abc")]
    Teardown(ShipStep),
    /// §resume-mechanics: re-capture the anchor, locate or re-attach, pick the phase from the tip
    #[command(after_help = "Example:\n  cairn ship resume --short-id abc")]
    Resume(ShipStep),
    /// The operator's disposition of a stop tiebreaker (3 or 5)
    #[command(
        after_help = "Example:\n  cairn ship answer-tiebreaker --short-id abc --number 3 \\\n    --disposition \"keep ours\" --operator ana"
    )]
    AnswerTiebreaker {
        #[command(flatten)]
        id: ShipId,
        /// The tiebreaker (3 or 5)
        #[arg(long)]
        number: u8,
        /// What to do, in words
        #[arg(long)]
        disposition: String,
        /// Who decided (recorded)
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// One attempt of an external operation (bounded retry: a second denial is terminal)
    #[command(
        after_help = "At most one retry after a denial; the second denial is terminal (exit 4).\n\nExample:\n  cairn ship external-op --short-id abc --class tracker-write \\\n    --op \"kata close abc\" --denied"
    )]
    ExternalOp {
        #[command(flatten)]
        id: ShipId,
        /// The operation's class (§external-op-classification)
        #[arg(long, value_enum)]
        class: OpClassArg,
        /// The operation, e.g. `kata close nnv8`
        #[arg(long)]
        op: String,
        /// The attempt was denied
        #[arg(long)]
        denied: bool,
        #[command(flatten)]
        key: Key,
    },
    /// Abandon a blocked preflight or a stopped run
    #[command(
        after_help = "Example:\n  cairn ship abandon --short-id abc --reason \"superseded\" --operator ana"
    )]
    Abandon {
        #[command(flatten)]
        id: ShipId,
        /// Why the run is abandoned
        #[arg(long)]
        reason: String,
        /// Who decided (recorded)
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// The run's state, its stop code and what may happen next (writes nothing)
    #[command(after_help = "Example:\n  cairn ship status --short-id abc")]
    Status(ShipId),
}

// The ship run a verb acts on.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipId {
    /// SHORT_ID (the stream is `ship/<SHORT_ID>`)
    #[arg(long, value_name = "ID")]
    pub short_id: String,
}

// A ship step cairn runs git for, by SHORT_ID.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipStep {
    #[command(flatten)]
    pub id: ShipId,
    #[command(flatten)]
    pub key: Key,
}

// A phase report: stdin, or the leaf's packet file.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipReport {
    #[command(flatten)]
    pub id: ShipId,
    /// Read the leaf's packet instead of stdin: `.run-ship/<phase>-<SHORT_ID>.json` in
    /// the worktree
    #[arg(long)]
    pub packet: bool,
    #[command(flatten)]
    pub key: Key,
}

// The phase-3 report, and the work nodes whose verified commit ships.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipPreMerge {
    #[command(flatten)]
    pub report: ShipReport,
    /// A work node whose verified commit this run ships (`work-node/<spec>:<address>`,
    /// repeatable): it must vouch for the commit merged, or the run stops
    #[arg(long = "work-node", value_name = "STREAM")]
    pub work_nodes: Vec<String>,
}

// §preflight-shared gate 3, observed by the caller.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipReview {
    /// The review tool's status (`roborev status` exit 0 = pass)
    #[arg(long, value_enum)]
    pub review_status: ReviewStatusArg,
    /// What the status command said
    #[arg(long, default_value = "")]
    pub review_detail: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ShipOpen {
    /// The repository (absolute); REPO_ROOT is its `git rev-parse --show-toplevel`
    #[arg(long, value_name = "DIR")]
    pub repo: String,
    #[command(flatten)]
    pub id: ShipId,
    /// EXPECTED_REPO_BASENAME: the repo this consumer ships; REPO_ROOT must end in it
    #[arg(long, value_name = "NAME")]
    pub expected_basename: String,
    /// BRANCH: the branch the run's worktree is created on
    #[arg(long)]
    pub branch: String,
    /// WORKTREE_PATH (absolute, under REPO_ROOT)
    #[arg(long, value_name = "DIR")]
    pub worktree_path: String,
    /// TARGET_BRANCH: the primary checkout's branch, the rebase and merge target
    #[arg(long)]
    pub target_branch: String,
    /// INTENT_FIELD: the name of the 1–3 sentence intent field in phase-1 reports
    #[arg(long, default_value = "intent_excerpt")]
    pub intent_field: String,
    /// FILES_MAX: the phase-1d scope gate's floor on changed files
    #[arg(allow_negative_numbers = true, long, default_value_t = 10)]
    pub files_max: u64,
    /// DELETIONS_MAX: the phase-1d scope gate's floor on deleted lines
    #[arg(allow_negative_numbers = true, long, default_value_t = 300)]
    pub deletions_max: u64,
    /// TIEBREAKER_4: the out-of-scope-finding protocol
    #[arg(long = "tiebreaker-4", value_name = "PROTOCOL")]
    pub tiebreaker_4: String,
    /// TIEBREAKER_5: multi-target auto-mode applies
    #[arg(long = "tiebreaker-5")]
    pub tiebreaker_5: bool,
    /// CLOSE_STEP: the consumer's post-merge work (phase 3b), recorded, not run
    #[arg(long)]
    pub close_step: String,
    /// A report field of the consumer's own beyond the wire format's (repeat
    /// it): a phase report holds no field but its own, the wire format's and
    /// these
    #[arg(long = "consumer-field", value_name = "NAME")]
    pub consumer_fields: Vec<String>,
    /// The saga thread the run acts for (`saga/issue-<N>` or `saga/task-<slug>`):
    /// only that thread may credit its merge to a unit (`saga merge-turn merged
    /// --from`, `saga release --from`)
    #[arg(long = "for", value_name = "STREAM")]
    pub acts_for: Option<String>,
    #[command(flatten)]
    pub review: ShipReview,
    #[command(flatten)]
    pub key: Key,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReviewStatusArg {
    Pass,
    Fail,
    Unknown,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ScopeAnswerArg {
    Proceed,
    Abort,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OpClassArg {
    TrackerRead,
    ReviewStatusRead,
    TrackerWrite,
    TrackerCreate,
    ReviewMutation,
    DaemonManagement,
}
