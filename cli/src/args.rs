//! The raw command line (clap). Converted once into domain values by the verbs.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// cairn: agent-work lifecycles as typed state machines on an SQLite journal.
///
/// Machine-facing verbs print exactly one JSON object on stdout and human
/// detail on stderr. Exit codes: 0 accepted; 1 internal or IO failure; 2 bad
/// input, schema, evidence or correlation error (nothing written); 3
/// concurrency conflict or busy journal (nothing written); 4 not green yet;
/// 5 the journal failed verify or audit.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, propagate_version = true)]
#[command(after_help = "Example:\n  cairn --db ./journal.db journal verify")]
pub struct Cli {
    /// The journal file [default: $CAIRN_DB, else $XDG_STATE_HOME/cairn/journal.db,
    /// else ~/.local/state/cairn/journal.db]
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// How long a writer waits for another writer's lock before giving up with exit 3
    #[arg(
        long,
        global = true,
        value_name = "MS",
        env = "CAIRN_BUSY_TIMEOUT_MS",
        hide_env_values = true,
        default_value_t = 5000
    )]
    pub busy_timeout_ms: u64,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the registered machines with their states and events
    #[command(after_help = "Example:\n  cairn machines")]
    Machines,
    /// Export a machine's transition graph
    #[command(after_help = "Example:\n  cairn graph park --format mermaid")]
    Graph {
        /// The machine's name (see `cairn machines`)
        machine: String,
        #[arg(long, value_enum, default_value_t = GraphFormat::Json)]
        format: GraphFormat,
    },
    /// Rebuild a stream's state by replaying its events
    #[command(
        after_help = "Example:\n  cairn state park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b --at 2"
    )]
    State {
        /// The stream id, `<machine>/<instance>`
        stream: String,
        /// Replay only the first VERSION events (time travel)
        #[arg(long, value_name = "VERSION")]
        at: Option<u64>,
    },
    /// Read, verify and audit the journal
    #[command(subcommand)]
    Journal(JournalCommand),
    /// The worktree ship pipeline: preflight, worktree, phase gates, merge, teardown, resume
    #[command(subcommand)]
    Ship(ShipCommand),
    /// The PR continuation loop: classify readings, rounds, confirmed offers
    #[command(subcommand)]
    Pr(PrCommand),
    /// Work nodes: validate a workspec, status, plan, dispatch, verify, merge, done
    #[command(subcommand)]
    Work(WorkCommand),
    /// The saga work thread: ticks, scan, restore, show, QA
    #[command(subcommand)]
    Saga(SagaCommand),
    /// One build-loop iteration: run the unit's written exit criterion, record it
    #[command(
        after_help = "Runs every command of the criterion without a shell (split into words; globs expanded by\ncairn from the repo root), each with a timeout, and appends the iteration to the unit's\nbuild_loop block in the run record and to the journal. Exit 0 green (the block records\nhanded_to_code_review with the full revision) or dry run; 4 not green yet (an iteration, not a\nrefusal); 2 refusal; 3 record version not one this build writes; 1 internal error.\n\nExample:\n  cairn build-loop --issue 42 --unit U1 --dry-run\n  cairn build-loop --record .claude/saga/runs/issue-42.json --unit U1 --timeout 600"
    )]
    BuildLoop(BuildLoopArgs),
    /// The park-work lifecycle: a drop-in for the park skill's `fold.py` helper
    Park {
        /// Retry-safe recording: the same key with the same input returns the first
        /// recorded result and writes nothing; with another input it is refused (exit 2)
        #[arg(long, global = true, value_name = "KEY")]
        idempotency_key: Option<String>,
        #[command(subcommand)]
        verb: ParkCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ShipCommand {
    /// §preflight-classifier, read-only: exactly one outcome, first match wins (writes nothing)
    #[command(
        after_help = "Runs `git -C REPO_ROOT …` itself (argv, exit status, output and time recorded). Exit 0 with\nthe outcome; only `clean` may proceed to `git worktree add`.\n\nExample:\n  cairn ship classify --repo-root /srv/consumer-repo --expected-basename consumer-repo \\\n    --branch worktree-abc --worktree-path /srv/consumer-repo/.claude/worktrees/abc --target-branch main"
    )]
    Classify {
        /// REPO_ROOT, captured from `git rev-parse --show-toplevel` (absolute)
        #[arg(long, value_name = "DIR")]
        repo_root: String,
        /// EXPECTED_REPO_BASENAME
        #[arg(long, value_name = "NAME")]
        expected_basename: String,
        /// BRANCH
        #[arg(long)]
        branch: String,
        /// WORKTREE_PATH (absolute)
        #[arg(long, value_name = "DIR")]
        worktree_path: String,
        /// TARGET_BRANCH
        #[arg(long)]
        target_branch: String,
    },
    /// Open a ship run: capture REPO_ROOT, record the parameters and the preflight
    #[command(
        after_help = "REPO_ROOT is captured once with `git -C DIR rev-parse --show-toplevel` and asserted against\n--expected-basename. Exit 0 when the preflight is `clean`, 4 when it is not (recorded).\n\nExample:\n  cairn ship open --repo /srv/consumer-repo --short-id abc --expected-basename consumer-repo \\\n    --branch worktree-abc --worktree-path /srv/consumer-repo/.claude/worktrees/abc \\\n    --target-branch main --intent-field intent_excerpt --files-max 10 --deletions-max 300 \\\n    --tiebreaker-4 ask-user --close-step echo --review-status pass"
    )]
    Open(ShipOpen),
    /// Re-run the recorded preflight (after a blocked outcome was dealt with)
    #[command(
        after_help = "Exit 0 when the outcome is `clean`, 4 when it is not (recorded either way).\n\nExample:\n  cairn ship preflight --short-id abc --review-status pass"
    )]
    Preflight {
        #[command(flatten)]
        id: ShipId,
        #[command(flatten)]
        review: ShipReview,
    },
    /// §phase-1b: `git worktree add -b BRANCH WORKTREE_PATH TARGET_BRANCH` and its four verifications
    #[command(
        after_help = "cairn re-asserts the anchor, runs `git -C REPO_ROOT worktree add -b BRANCH WORKTREE_PATH TARGET_BRANCH`\nand the four verifications; a failed verification removes the partial worktree (not resumable).\nAdmitted only after a `clean` preflight.\n\nExample:\n  cairn ship create --short-id abc"
    )]
    Create(ShipId),
    /// The phase-1 report (stdin or --packet) and §phase-1d verification by cairn
    #[command(
        after_help = "Reads the phase-1 report ({verdict, worktree_path, branch, head_sha, in_scope_paths, <INTENT_FIELD>, …}).\nExit 0 when verified, 4 on a scope trip or a failed gate (recorded).\n\nExample:\n  cairn ship verify --short-id abc < resolve-abc.json\n  cairn ship verify --short-id abc --packet"
    )]
    Verify(ShipReport),
    /// The user's answer to a scope-gate trip
    #[command(
        after_help = "Example:\n  cairn ship answer-scope --short-id abc --answer abort --operator ana"
    )]
    AnswerScope {
        #[command(flatten)]
        id: ShipId,
        #[arg(long, value_enum)]
        answer: ScopeAnswerArg,
        /// Who answered
        #[arg(long)]
        operator: String,
    },
    /// The phase-2 (rebase + refine) report and the worktree re-verify
    #[command(
        after_help = "Reads the phase-2 report ({verdict, rebase_outcome, iterations_run, tip_sha, dismissed_findings, …}).\n\nExample:\n  cairn ship refine --short-id abc --packet"
    )]
    Refine(ShipReport),
    /// The phase-3 pre-merge report (re-rebase, tests, lint, squash) and cairn's pre-merge checks
    #[command(
        after_help = "Reads {rebase_outcome_3_2, tests_pass, lint_clean, squash, pre_squash_sha, rollups, open_review_jobs}.\n\nExample:\n  cairn ship pre-merge --short-id abc < ship-abc.json"
    )]
    PreMerge(ShipReport),
    /// `git merge --ff-only BRANCH` in REPO_ROOT: one retry after a rejection, a stop on the second
    #[command(
        after_help = "Exit 0 merged, 4 rejected (re-rebase, then one retry) or stopped on the second rejection.\n\nExample:\n  cairn ship merge --short-id abc"
    )]
    Merge(ShipId),
    /// `git worktree remove` and `git branch -d` (`-D` and `--force` on an abort teardown)
    #[command(after_help = "Example:\n  cairn ship teardown --short-id abc")]
    Teardown(ShipId),
    /// §resume-mechanics: re-capture the anchor, locate or re-attach, pick the phase from the tip
    #[command(after_help = "Example:\n  cairn ship resume --short-id abc")]
    Resume(ShipId),
    /// The operator's disposition of a stop tiebreaker (3 or 5)
    #[command(
        after_help = "Example:\n  cairn ship answer-tiebreaker --short-id abc --number 3 --disposition \"keep ours\" --operator ana"
    )]
    AnswerTiebreaker {
        #[command(flatten)]
        id: ShipId,
        #[arg(long)]
        number: u8,
        #[arg(long)]
        disposition: String,
        #[arg(long)]
        operator: String,
    },
    /// One attempt of an external operation (bounded retry: a second denial is terminal)
    #[command(
        after_help = "At most one retry after a denial; the second denial is terminal (exit 4).\n\nExample:\n  cairn ship external-op --short-id abc --class tracker-write --op \"kata close abc\" --denied"
    )]
    ExternalOp {
        #[command(flatten)]
        id: ShipId,
        #[arg(long, value_enum)]
        class: OpClassArg,
        /// The operation, e.g. `kata close nnv8`
        #[arg(long)]
        op: String,
        /// The attempt was denied
        #[arg(long)]
        denied: bool,
    },
    /// Abandon a blocked preflight or a stopped run
    #[command(
        after_help = "Example:\n  cairn ship abandon --short-id abc --reason \"superseded\" --operator ana"
    )]
    Abandon {
        #[command(flatten)]
        id: ShipId,
        #[arg(long)]
        reason: String,
        #[arg(long)]
        operator: String,
    },
    /// The run's state, its stop code and what may happen next (writes nothing)
    #[command(after_help = "Example:\n  cairn ship status --short-id abc")]
    Status(ShipId),
}

/// The ship run a verb acts on.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipId {
    /// SHORT_ID (the stream is `ship/<SHORT_ID>`)
    #[arg(long, value_name = "ID")]
    pub short_id: String,
}

/// A phase report: stdin, or the leaf's packet file.
#[derive(Debug, Clone, clap::Args)]
pub struct ShipReport {
    #[command(flatten)]
    pub id: ShipId,
    /// Read the leaf's packet `<WORKTREE_PATH>/.run-ship/<phase>-<SHORT_ID>.json` instead of stdin
    #[arg(long)]
    pub packet: bool,
}

/// §preflight-shared gate 3, observed by the caller.
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
    /// EXPECTED_REPO_BASENAME
    #[arg(long, value_name = "NAME")]
    pub expected_basename: String,
    /// BRANCH
    #[arg(long)]
    pub branch: String,
    /// WORKTREE_PATH (absolute, under REPO_ROOT)
    #[arg(long, value_name = "DIR")]
    pub worktree_path: String,
    /// TARGET_BRANCH
    #[arg(long)]
    pub target_branch: String,
    /// INTENT_FIELD
    #[arg(long, default_value = "intent_excerpt")]
    pub intent_field: String,
    /// FILES_MAX
    #[arg(long, default_value_t = 10)]
    pub files_max: u64,
    /// DELETIONS_MAX
    #[arg(long, default_value_t = 300)]
    pub deletions_max: u64,
    /// TIEBREAKER_4: the out-of-scope-finding protocol
    #[arg(long = "tiebreaker-4", value_name = "PROTOCOL")]
    pub tiebreaker_4: String,
    /// TIEBREAKER_5: multi-target auto-mode applies
    #[arg(long = "tiebreaker-5")]
    pub tiebreaker_5: bool,
    /// CLOSE_STEP
    #[arg(long)]
    pub close_step: String,
    #[command(flatten)]
    pub review: ShipReview,
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
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum SagaCommand {
    /// Save a tick: list flags are full snapshots (`a|b`; omitted = carried forward, "" = cleared)
    #[command(
        after_help = "`next_round` is derived (max(rounds_seen) + 1) and never set; a bad --gate-verdict refuses\nthe whole save (exit 2, nothing written); `lifecycle_phase` never moves past `work` here.\n\nExample:\n  cairn saga save --id issue-42 --issue-ref acme/widgets#42 --lifecycle-phase work \\\n    --phase-status in_progress --plan-path docs/plans/p.md --rounds-seen 1 --gate-verdict 'tests:done:ci#7'"
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
    },
    /// The PR-ready gate: doc review, review outcome, and staleness counted by cairn with git
    #[command(
        after_help = "cairn runs `git -C REPO rev-list <reviewed_sha>..HEAD --count` itself. Refused (exit 2) with every\nblocking gate named.\n\nExample:\n  cairn saga pr-ready --saga-id issue-42 --repo /abs/repo"
    )]
    PrReady {
        #[arg(long)]
        saga_id: String,
        #[arg(long, value_name = "DIR")]
        repo: String,
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
    },
    /// Record one QA cycle after merge: only an all-passed cycle moves the thread to `qa`
    #[command(
        after_help = "Scenarios: NAME=passed | NAME=failed | NAME=not-run | NAME=blocked:CAUSE. The allowance is 3 standard\n+ 2 escalated cycles, then exactly one --extension. Exit 0 on a PASS, 4 otherwise (recorded).\n\nExample:\n  cairn saga qa --saga-id issue-42 --scenario checkout=passed --scenario refund=blocked:sandbox-down"
    )]
    Qa {
        #[arg(long)]
        saga_id: String,
        #[arg(long = "scenario", value_name = "NAME=RESULT")]
        scenarios: Vec<String>,
        #[arg(long)]
        extension: bool,
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
    },
    /// Release a turn left by a dead holder, after checking git (never trusted)
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor BRANCH TARGET` and, when the merge worktree\nexists, `git -C WT rev-parse -q --verify MERGE_HEAD`.\n\nExample:\n  cairn saga merge-turn release --saga-id issue-42 --unit U1 --repo /abs/repo --target main"
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
    },
    /// The holder records its merge
    #[command(
        after_help = "Example:\n  cairn saga merge-turn merged --saga-id issue-42 --unit U1 --holder turn-7 --merged-tip <40 hex>"
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
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct SagaSave {
    /// `issue-<N>` or `task-<slug>`
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
}

/// A workspec and one of its nodes.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkNodeRef {
    /// The workspec (YAML or JSON)
    #[arg(long, value_name = "FILE")]
    pub spec: String,
    /// The node: a bare id (refused when ambiguous) or a qualified address `["a","b"]`
    #[arg(long, value_name = "ID|ADDRESS")]
    pub node: String,
}

/// The session that evidence is bound to.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkSession {
    /// The current session (only this session's evidence opens a gate)
    #[arg(long, env = "CAIRN_SESSION", value_name = "ID")]
    pub session: String,
}

#[derive(Debug, Subcommand)]
pub enum WorkCommand {
    /// Validate a workspec: every finding with its stable code and path (writes nothing)
    #[command(
        after_help = "Exit 0 when the spec has no error, 2 when it has (the report lists every finding).\n\nExample:\n  cairn work validate .work/specs/cache.yaml"
    )]
    Validate {
        /// The workspec
        spec: String,
    },
    /// The ready set: nodes whose dependencies are done this session, with every other node's blockers
    #[command(
        after_help = "Only `done` recorded in the current session satisfies a dependency; a cached, replayed or\nother-session result never does. Writes nothing.\n\nExample:\n  cairn work ready .work/specs/cache.yaml --session s-42"
    )]
    Ready {
        /// The workspec
        spec: String,
        #[command(flatten)]
        session: WorkSession,
    },
    /// Lifecycle and verification provenance of every node, and the ready set (writes nothing)
    #[command(
        after_help = "Only `done` recorded in the current session satisfies a dependency.\n\nExample:\n  cairn work status .work/specs/cache.yaml --session s-42"
    )]
    Status {
        /// The workspec
        spec: String,
        #[command(flatten)]
        session: WorkSession,
    },
    /// Plan one node: write its brief by reference and record path, SHA-256 and the delegate contract
    #[command(
        after_help = "Example:\n  cairn work plan --spec .work/specs/cache.yaml --node core"
    )]
    Plan {
        #[command(flatten)]
        node: WorkNodeRef,
        /// Other nodes planned in the same wave (for the touch-overlap advisory)
        #[arg(long = "with", value_name = "ID|ADDRESS")]
        with: Vec<String>,
    },
    /// Record work_dispatch's outcome: a receipt, or a degraded not-dispatched result
    #[command(
        after_help = "Example:\n  cairn work dispatch --spec s.yaml --node core --run-id r-1 --worktree /abs/lane --expected-commit <40 hex>\n  cairn work dispatch --spec s.yaml --node core --not-dispatched delegate-client-unavailable"
    )]
    Dispatch {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        run_id: Option<String>,
        /// The persistent worker tree (absolute)
        #[arg(long, value_name = "DIR", default_value = "")]
        worktree: String,
        #[arg(long, value_name = "SHA", default_value = "")]
        expected_commit: String,
        /// Remediation rounds allowed (default 2)
        #[arg(long)]
        budget: Option<u32>,
        /// The degraded result's finding (the plan comes back; nothing advances)
        #[arg(long, value_name = "FINDING")]
        not_dispatched: Option<String>,
    },
    /// cairn runs every criterion in the tree (after checking its HEAD) and records the evidence
    #[command(
        after_help = "Command criteria run as `sh -c` in the tree, in their own process group, killed as a group\nat their timeout. A user criterion needs --confirm ID=WORDS; an agent criterion is agent-unavailable.\nExit 0 when every criterion and the checklist passed, 4 when not (recorded).\n\nExample:\n  cairn work verify --spec s.yaml --node core --worktree /abs/lane --expected-commit <40 hex> \\\n    --checklist '[{\"index\":0,\"done\":true}]' --session s-42"
    )]
    Verify {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long, value_name = "DIR")]
        worktree: String,
        #[arg(long, value_name = "SHA")]
        expected_commit: String,
        /// `[{"index": 0, "done": true}, …]`
        #[arg(long, value_name = "JSON", default_value = "[]")]
        checklist: String,
        /// The host's explicit confirmation of a user criterion: `ID=WORDS`
        #[arg(long, value_name = "ID=WORDS")]
        confirm: Vec<String>,
        #[command(flatten)]
        session: WorkSession,
    },
    /// Record a review (reporting data: never verification)
    #[command(
        after_help = "Example:\n  cairn work review --spec s.yaml --node core --verdict reject --failed C1 --concern 'src/cache.rs:12 misses eviction'"
    )]
    Review {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long, value_enum)]
        verdict: VerdictArg,
        #[arg(long = "failed", value_name = "CRITERION")]
        failed: Vec<String>,
        #[arg(long = "concern")]
        concerns: Vec<String>,
    },
    /// Redispatch after a rejection, in the same persistent worktree (within the budget)
    #[command(
        after_help = "Example:\n  cairn work remediate --spec s.yaml --node core --run-id r-2 --worktree /abs/lane"
    )]
    Remediate {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        run_id: String,
        #[arg(long, value_name = "DIR")]
        worktree: String,
    },
    /// Escalate to the user when the remediation budget is spent
    #[command(
        after_help = "Example:\n  cairn work escalate --spec s.yaml --node core --reason 'two rounds spent'"
    )]
    Escalate {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        reason: String,
    },
    /// Record the merge: every pre-merge green stops counting
    #[command(
        after_help = "Example:\n  cairn work merge --spec s.yaml --node core --merged-tree /abs/integration --commit <40 hex>"
    )]
    Merge {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long, value_name = "DIR")]
        merged_tree: String,
        #[arg(long, value_name = "SHA")]
        commit: String,
    },
    /// Change one criterion's accepted text, with its authority: a chain entry in the spec
    #[command(
        after_help = "Refuses a stale `before`, an unknown criterion, a no-op, an invalid prior chain, an\nunavailable draft (criterion-draft-unavailable) or one lacking the criterion, and splitting or\nmerging criteria (not-an-amendment). The spec is rewritten as block YAML (the draft marker\nline is kept; other comments are not).\n\nExample:\n  cairn work amend-criterion --spec s.yaml --criterion A1 --before 'The exact current statement' \\\n    --after 'The replacement' --reason 'Why it changed' --authority 'ADR-7'"
    )]
    AmendCriterion {
        #[arg(long, value_name = "FILE")]
        spec: String,
        #[arg(long, value_name = "ID")]
        criterion: String,
        /// The exact current text
        #[arg(long, allow_hyphen_values = true)]
        before: String,
        /// The authority-approved replacement
        #[arg(long, allow_hyphen_values = true)]
        after: String,
        #[arg(long)]
        reason: String,
        #[arg(long)]
        authority: String,
    },
    /// Raise a scope amendment: a worker needs literal paths outside `touches`
    #[command(
        after_help = "Example:\n  cairn work raise-scope --spec s.yaml --node core --target lane-1 --add-touch reports/published \\\n    --change 'Add reports/published to touches' --rationale 'The publication step writes there'"
    )]
    RaiseScope {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        target: String,
        /// A literal relative path the change adds to `touches` (repeatable)
        #[arg(long = "add-touch", value_name = "PATH")]
        add_touches: Vec<String>,
        #[arg(long)]
        change: String,
        #[arg(long)]
        rationale: String,
    },
    /// Pass a pending scope amendment up to the user, with context and a recommendation
    #[command(
        after_help = "Example:\n  cairn work pass-up --spec s.yaml --node core --request-id amend-… --context '…' --recommendation '…'"
    )]
    PassUp {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        request_id: String,
        #[arg(long)]
        context: String,
        #[arg(long)]
        recommendation: String,
    },
    /// Resolve a scope amendment: 0 Approve, 1 Approve with modifications (see note), 2 Reject, 3 custom
    #[command(
        after_help = "A user-held request needs --on-behalf-of-user and the operator's explicit choice. Approval adds\nthe touches to the spec; then re-validate, re-plan and redispatch in the same worktree.\n\nExample:\n  cairn work resolve-scope --spec s.yaml --node core --request-id amend-… --selected 0 --operator ana"
    )]
    ResolveScope {
        #[command(flatten)]
        node: WorkNodeRef,
        #[arg(long)]
        request_id: String,
        /// The zero-based option index (no default: an explicit choice)
        #[arg(long, required = true)]
        selected: Vec<usize>,
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long)]
        custom_instruction: Option<String>,
        #[arg(long)]
        on_behalf_of_user: bool,
        #[arg(long)]
        operator: String,
    },
    /// Record done, only when every terminal-truth item holds (else each failing item, exit 2)
    #[command(after_help = "Example:\n  cairn work done --spec s.yaml --node core --session s-42")]
    Done {
        #[command(flatten)]
        node: WorkNodeRef,
        #[command(flatten)]
        session: WorkSession,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum VerdictArg {
    Approve,
    Reject,
}

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
    },
    /// Offer to re-request review (never on a draft)
    #[command(
        after_help = "Example:\n  cairn pr offer-review-request --pr https://github.com/o/r/pull/7"
    )]
    OfferReviewRequest(PrRef),
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

/// Journal identity for a recorded park transition: all three, or none (then the
/// verb only evaluates and writes nothing).
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
}

#[derive(Debug, Subcommand)]
pub enum ParkCommand {
    /// Stable episode/intent ids, prior-receipt dedupe, a fresh attempt id (recorded)
    #[command(
        after_help = "Reads {mode, anchor_bead, episode_id, intent_id, prior_receipts} on stdin.\n\nExample:\n  echo '{\"mode\":\"park\",\"anchor_bead\":\"rsry-1\",\"episode_id\":null,\"intent_id\":null,\"prior_receipts\":[]}' | cairn park prepare-attempt"
    )]
    PrepareAttempt,
    /// Fold an observation; with the three ids, record a checkpoint or receipt authorization
    #[command(
        after_help = "Reads the observation on stdin. An unsafe result is a result (exit 0, eligible: false) and records nothing.\n\nExample:\n  cairn park evaluate --episode-id ep-… --intent-id park-… --attempt-id attempt-… < observation.json"
    )]
    Evaluate(ParkIdentity),
    /// Read-only evaluate (the skill's --check): reports, never writes
    #[command(after_help = "Example:\n  cairn park check < observation.json")]
    Check,
    /// Validate receipt bytes; with the three ids, record them as validated
    #[command(
        after_help = "Reads the exact receipt bytes on stdin (one trailing newline is ignored).\n\nExample:\n  cairn park validate-receipt --episode-id ep-… --intent-id park-… --attempt-id attempt-… < receipt.json"
    )]
    ValidateReceipt(ParkIdentity),
    /// Prove durability by comment read-back; with the three ids, record safe_to_close
    #[command(
        after_help = "Reads {receipt_bytes, comments: [{id, body}]} on stdin.\n\nExample:\n  cairn park confirm-readback --episode-id ep-… --intent-id park-… --attempt-id attempt-… < readback.json"
    )]
    ConfirmReadback(ParkIdentity),
    /// Resolve exactly one registered repository from exact bound git observations
    #[command(
        after_help = "Reads {selector, receipt_identity, observations, registrations} on stdin.\n\nExample:\n  cairn park bind-repository < bind.json"
    )]
    BindRepository,
    /// The resume gate: v1 allows read-only inspection only
    #[command(
        after_help = "Reads {episode_id, intent_id, atomic_claim} on stdin.\n\nExample:\n  echo '{\"episode_id\":\"ep-…\",\"intent_id\":\"park-…\",\"atomic_claim\":null}' | cairn park resume-gate"
    )]
    ResumeGate,
    /// Run the bound git observations and print the three typed VCS checks
    #[command(
        after_help = "Runs `git -C ROOT …` itself (never in the caller's directory) and records argv, exit status, output and time.\n\nExample:\n  cairn park observe-vcs --root /abs/path/to/workspace"
    )]
    ObserveVcs {
        /// The bound root: an absolute, normalised path
        #[arg(long, value_name = "DIR")]
        root: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Show events in sequence order
    #[command(
        after_help = "Example:\n  cairn journal log --stream park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b --format json"
    )]
    Log {
        /// Only this stream
        #[arg(long, value_name = "STREAM")]
        stream: Option<String>,
        /// Only events after this sequence number
        #[arg(long, value_name = "SEQ", default_value_t = 0)]
        since: i64,
        /// At most this many events
        #[arg(long, value_name = "N", default_value_t = 1000)]
        limit: u64,
        #[arg(long, value_enum, default_value_t = LogFormat::Table)]
        format: LogFormat,
    },
    /// Check the hash chain, every stream's versions and every transition record
    #[command(
        after_help = "Exit 0 when intact, 5 naming the first broken event otherwise. A chain cannot\nprove its own tail: keep the reported head outside the journal and pass it back\nwith --expect-head to detect a truncated or rewritten tail.\n\nExample:\n  cairn journal verify --expect-head 42:5f1c…"
    )]
    Verify {
        /// A head reported by an earlier verify, `SEQ:HASH`: the journal must still contain it
        #[arg(long, value_name = "SEQ:HASH")]
        expect_head: Option<String>,
    },
    /// Replay every stream, check each event is an edge of its machine's graph,
    /// and re-decide every recorded transition
    #[command(
        after_help = "Exit 0 when every transition re-decides to its recorded events, 5 otherwise.\n\nExample:\n  cairn journal audit --stream park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"
    )]
    Audit {
        /// Only this stream
        #[arg(long, value_name = "STREAM")]
        stream: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Mermaid,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Table,
    Json,
}
