//! `cairn saga …` and `cairn build-loop`: the saga work thread's arguments.

use clap::Subcommand;

use super::Key;

#[derive(Debug, Clone, clap::Args)]
pub struct BuildLoopArgs {
    /// The run record
    #[arg(long, value_name = "PATH", conflicts_with = "issue")]
    pub record: Option<String>,
    /// The issue: the record is <primary>/.claude/saga/runs/issue-<N>.json
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
    /// The directory holding issue-<N>.json (instead of the primary checkout's)
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<String>,
    /// The repository the criterion runs in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<String>,
    /// The repository profile [default: <repo>/.saga-profile.json]
    #[arg(long, value_name = "PATH")]
    pub profile: Option<String>,
    /// The unit (needed unless the record has one row)
    #[arg(long, value_name = "ID")]
    pub unit: Option<String>,
    /// Seconds per check
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Print the criterion; run nothing, write nothing
    #[arg(long, conflicts_with_all = ["idempotency_key", "fencing_token"])]
    pub dry_run: bool,
    #[command(flatten)]
    pub key: Key,
}

#[derive(Debug, Subcommand)]
pub enum SagaCommand {
    /// Save a tick: list flags are full snapshots (`a|b`; omitted = carried forward, "" = cleared)
    #[command(
        after_help = "The saga id is `issue-<N>` from `--kind issue --id N`, `task-<slug>` from `--kind task --id TEXT`\n(slugified), or `--id` itself when it is one. The branch and HEAD are read with git in --repo (default:\nthe current directory); a default branch never overwrites a recorded work branch.\n`next_round` is derived (max(rounds_seen) + 1) and never set; a bad --gate-verdict refuses\nthe whole save (exit 2, nothing written); `lifecycle_phase` never moves past `work` here.\n\nExample:\n  cairn saga save --kind issue --id 42 --issue-ref acme/widgets#42 --lifecycle-phase work \\\n    --phase-status in_progress --plan-path docs/plans/p.md --destination pr \\\n    --orchestration-mode inline --orchestration-recommended inline --rounds-seen 1"
    )]
    Save(Box<SagaSave>),
    /// Rebuild a thread from the journal: round, phase, checks run, next step (writes nothing)
    #[command(after_help = "Example:\n  cairn saga restore --saga-id issue-42")]
    Restore {
        #[arg(long)]
        saga_id: String,
    },
    /// Threads to resume, matched by issue ref, plan path or branch, newest first (writes nothing)
    #[command(after_help = "Example:\n  cairn saga scan --issue-ref acme/widgets#42")]
    Scan {
        #[arg(long)]
        issue_ref: Option<String>,
        #[arg(long)]
        plan_path: Option<String>,
        #[arg(long)]
        branch: Option<String>,
        #[arg(long, default_value_t = 10)]
        max_candidates: usize,
    },
    /// The whole thread: ticks, gate verdicts, rounds, the QA allowance (writes nothing)
    #[command(after_help = "Example:\n  cairn saga show --saga-id issue-42")]
    Show {
        #[arg(long)]
        saga_id: String,
    },
    /// Record the plan review's result: an unresolved P0/P1 finding blocks execution
    #[command(
        after_help = "Example:\n  cairn saga doc-review --saga-id issue-42 --unresolved-p0-p1 0 --source 'run record review_cycles'"
    )]
    DocReview {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        unresolved_p0_p1: u32,
        /// Where the result was read
        #[arg(long)]
        source: String,
        #[command(flatten)]
        key: Key,
    },
    /// Record code review's typed outcome for the full reviewed SHA
    #[command(
        after_help = "Example:\n  cairn saga review --saga-id issue-42 --outcome accepted --reviewed-sha <40 hex>"
    )]
    Review {
        #[arg(long)]
        saga_id: String,
        #[arg(long, value_parser = ["accepted", "cycle_cap_best_available", "repairs_requested", "review_incomplete"])]
        outcome: String,
        #[arg(long)]
        reviewed_sha: String,
        #[command(flatten)]
        key: Key,
    },
    /// An operator override of ONE gate, with its recorded rationale
    #[command(
        after_help = "Example:\n  cairn saga override --saga-id issue-42 --gate review-gate --rationale 'docs-only follow-up' --operator ana"
    )]
    Override {
        #[arg(long)]
        saga_id: String,
        #[arg(long, value_parser = ["doc-review", "review-gate"])]
        gate: String,
        #[arg(long)]
        rationale: String,
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// The PR-ready gate: doc review, review outcome, and freshness read by cairn with git
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options <reviewed_sha> HEAD` and\n`git -C REPO rev-list --count --end-of-options <reviewed_sha>..HEAD` itself: fresh only when the\nreviewed commit is HEAD's ancestor and nothing landed since. The reviewed SHA must be a revision the\nbuild loop went green at (its journaled handed_to_code_review): with none, back to the build loop.\nRefused (exit 2) with every blocking gate named.\n\nExample:\n  cairn saga pr-ready --saga-id issue-42 --repo /abs/repo"
    )]
    PrReady {
        #[arg(long)]
        saga_id: String,
        #[arg(long, value_name = "DIR")]
        repo: String,
        /// Whose build loop handed the revision to code review [default: N of an `issue-N` thread]
        #[arg(long, value_name = "N")]
        issue: Option<u64>,
        #[command(flatten)]
        key: Key,
    },
    /// Set the adjustment envelope's directive: drain | halt | pause_after:<boundary> | continue
    #[command(
        after_help = "A malformed or unknown directive fails closed and names it (exit 2).\n\nExample:\n  cairn saga adjust --saga-id issue-42 --directive pause_after:phase-2"
    )]
    Adjust {
        #[arg(long)]
        saga_id: String,
        #[arg(long, allow_hyphen_values = true)]
        directive: String,
        #[command(flatten)]
        key: Key,
    },
    /// Poll the envelope at a phase boundary: exit 0 proceed, 4 hold (drain/halt) or paused
    #[command(
        after_help = "Example:\n  cairn saga boundary --saga-id issue-42 --boundary phase-2"
    )]
    Boundary {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        boundary: String,
        #[command(flatten)]
        key: Key,
    },
    /// The merge turn: exactly one unit holds `merging` (take | release | merged)
    #[command(subcommand)]
    MergeTurn(MergeTurnCommand),
    /// Record the release: reviewed head and landed commit apart; destination `none` with its reason
    #[command(
        after_help = "Example:\n  cairn saga release --saga-id issue-42 --destination merge --reviewed-head <40 hex> --landed-commit <40 hex>\n  cairn saga release --saga-id issue-42 --destination none --absence-reason 'plan-only run'"
    )]
    Release {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        destination: String,
        #[arg(long)]
        reviewed_head: Option<String>,
        #[arg(long)]
        landed_commit: Option<String>,
        #[arg(long)]
        absence_reason: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// A board boundary move: the allowed (Stage, Status) pair; a bare `Status` record is a half-write
    #[command(
        after_help = "Boundaries: admission-exit, plan-review-pass, build-start, review-accepted (submits nothing),\nmerge-and-deploy (only after the merge and a succeeded non-production deployment, or none to\ndeploy), close. Exit 0 moved, 4 half-write (recorded as a failure).\n\nExample:\n  cairn saga board --saga-id issue-42 --boundary build-start --written-field Stage+Status"
    )]
    Board {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        boundary: String,
        /// The lifecycle record's `field`
        #[arg(long)]
        written_field: String,
        #[arg(long, value_parser = ["succeeded", "failed", "not-run", "no-deployable-software"])]
        deployment: Option<String>,
        #[arg(long)]
        retro_trigger_fired: bool,
        /// The Stage half of a submitted pair (refused unless it is the table's)
        #[arg(long, requires = "status")]
        stage: Option<String>,
        /// The Status half of a submitted pair
        #[arg(long, requires = "stage")]
        status: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// Record one QA cycle after merge: only an all-passed cycle moves the thread to `qa`
    #[command(
        after_help = "Scenarios: NAME=passed | NAME=failed | NAME=not-run | NAME=blocked:CAUSE. Only a failure counts\nagainst the allowance: 3 standard + 2 escalated failed cycles (or the run record's\nstandard_cycle_allowance / escalated_cycle_allowance, with --record), then exactly one --extension.\nA blocked scenario outranks a failure; a failure past the allowance is recorded `exhausted`.\nExit 0 on a PASS, 4 otherwise (recorded).\n\nExample:\n  cairn saga qa --saga-id issue-42 --scenario checkout=passed --scenario refund=blocked:sandbox-down"
    )]
    Qa {
        #[arg(long)]
        saga_id: String,
        #[arg(long = "scenario", value_name = "NAME=RESULT")]
        scenarios: Vec<String>,
        #[arg(long)]
        extension: bool,
        /// The run record whose run configuration carries the allowance's limits
        #[arg(long, value_name = "PATH")]
        record: Option<String>,
        #[command(flatten)]
        key: Key,
    },
}

#[derive(Debug, Subcommand)]
pub enum MergeTurnCommand {
    /// Claim the turn (refused while another unit holds `merging`)
    #[command(
        after_help = "Example:\n  cairn saga merge-turn take --saga-id issue-42 --unit U1 --branch work/42-u1 --merge-worktree /abs/wt --holder turn-7"
    )]
    Take {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        unit: String,
        #[arg(long)]
        branch: String,
        #[arg(long, value_name = "DIR")]
        merge_worktree: String,
        #[arg(long)]
        holder: String,
        #[command(flatten)]
        key: Key,
    },
    /// Release a turn left by a dead holder, after checking git (never trusted)
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options BRANCH TARGET` and, when the\nmerge worktree exists, `git -C WT rev-parse -q --verify --end-of-options MERGE_HEAD`. A target that\nstarts with `-` is refused (exit 2, rule option-like).\n\nExample:\n  cairn saga merge-turn release --saga-id issue-42 --unit U1 --repo /abs/repo --target main"
    )]
    Release {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        unit: String,
        #[arg(long, value_name = "DIR")]
        repo: String,
        #[arg(long)]
        target: String,
        #[command(flatten)]
        key: Key,
    },
    /// The holder records its merge, as git shows it
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options BRANCH TIP` (the unit's work is in\nthe merged tip) and `… --end-of-options TIP TARGET` (the merge landed on the target): only then is the\nunit `merged`. A tip git does not show there is refused (exit 2, merged-observed).\n\nExample:\n  cairn saga merge-turn merged --saga-id issue-42 --unit U1 --holder turn-7 --merged-tip <40 hex> \\\n    --repo /abs/repo --target main"
    )]
    Merged {
        #[arg(long)]
        saga_id: String,
        #[arg(long)]
        unit: String,
        #[arg(long)]
        holder: String,
        #[arg(long)]
        merged_tip: String,
        /// The repository the merge is read in
        #[arg(long, value_name = "DIR")]
        repo: String,
        /// The branch the turn merged onto (the parent issue branch or the default branch)
        #[arg(long)]
        target: String,
        #[command(flatten)]
        key: Key,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct SagaSave {
    /// The issue number or task id (`--kind task` slugifies it), or a saga id `issue-<N>` / `task-<slug>`
    #[arg(long)]
    pub id: String,
    #[arg(long, value_parser = ["issue", "task"])]
    pub kind: Option<String>,
    #[arg(long, value_parser = ["ideation", "brainstorm", "plan", "review", "work", "qa", "retro"])]
    pub lifecycle_phase: Option<String>,
    #[arg(long, value_parser = ["pending", "in_progress", "complete"])]
    pub phase_status: Option<String>,
    #[arg(long, value_parser = ["active", "blocked", "paused", "handed-off", "done", "abandoned"])]
    pub status: Option<String>,
    #[arg(long)]
    pub phase: Option<u32>,
    #[arg(long)]
    pub destination: Option<String>,
    #[arg(long)]
    pub issue_ref: Option<String>,
    #[arg(long)]
    pub plan_path: Option<String>,
    #[arg(long)]
    pub branch: Option<String>,
    #[arg(long)]
    pub head_sha: Option<String>,
    #[arg(long)]
    pub next_step: Option<String>,
    /// `1|2`: the full set of rounds seen
    #[arg(long)]
    pub rounds_seen: Option<String>,
    #[arg(long)]
    pub checks_run: Option<String>,
    #[arg(long)]
    pub work_session_paths: Option<String>,
    #[arg(long)]
    pub files_modified: Option<String>,
    #[arg(long)]
    pub pr_refs: Option<String>,
    #[arg(long)]
    pub review_paths: Option<String>,
    /// `gate:state:ref` (repeatable); state ∈ done | in-progress | blocked | failed | halted | not-reached
    #[arg(long = "gate-verdict", allow_hyphen_values = true)]
    pub gate_verdicts: Vec<String>,
    /// Refused: `next_round` is derived from `rounds_seen`
    #[arg(long)]
    pub next_round: Option<u32>,
    /// The backend that runs: `inline` (the only one since #1030; never defaulted)
    #[arg(long)]
    pub orchestration_mode: Option<String>,
    /// What the recommender said [default with a mode: inline]
    #[arg(long)]
    pub orchestration_recommended: Option<String>,
    /// The operator's pick [default: the mode]
    #[arg(long)]
    pub orchestration_operator_choice: Option<String>,
    /// Where the branch and HEAD are read with git [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<String>,
    #[command(flatten)]
    pub key: Key,
}
