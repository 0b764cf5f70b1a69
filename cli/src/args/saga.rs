//! `cairn saga …` and `cairn build-loop`: the saga work thread's arguments.

use clap::Subcommand;

use super::Key;

#[derive(Debug, Clone, clap::Args)]
pub struct BuildLoopArgs {
    /// The run record
    #[arg(long, value_name = "PATH", conflicts_with = "issue")]
    pub record: Option<String>,
    /// The issue: the record is <primary>/.claude/saga/runs/issue-<N>.json
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub issue: Option<u64>,
    /// The directory holding issue-<N>.json (instead of the primary checkout's)
    #[arg(long, value_name = "DIR")]
    pub store_root: Option<String>,
    /// The repository the criterion runs in [default: the current directory]
    /// (`--repo-root`, build_loop.py's spelling, is accepted)
    #[arg(long = "repo", alias = "repo-root", value_name = "DIR")]
    pub repo_root: Option<String>,
    /// The repository profile [default: <repo>/.saga-profile.json]
    #[arg(long, value_name = "PATH")]
    pub profile: Option<String>,
    /// The unit (needed unless the record has one row)
    #[arg(long, value_name = "ID")]
    pub unit: Option<String>,
    /// Milliseconds per check [default: 1800000, 30 minutes]
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "MS",
        conflicts_with = "timeout"
    )]
    pub timeout_ms: Option<u64>,
    /// Seconds per check: build_loop.py's spelling of --timeout-ms
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECONDS",
        hide = true
    )]
    pub timeout: Option<u64>,
    /// Print the criterion; run nothing, write nothing
    #[arg(long, conflicts_with_all = ["idempotency_key", "fencing_token"])]
    pub dry_run: bool,
    #[command(flatten)]
    pub key: Key,
}

impl BuildLoopArgs {
    /// The time a check may take: --timeout-ms, else --timeout seconds, else 30 minutes.
    pub fn timeout(&self) -> std::time::Duration {
        match (self.timeout_ms, self.timeout) {
            (Some(ms), _) => std::time::Duration::from_millis(ms),
            (None, Some(s)) => std::time::Duration::from_secs(s),
            (None, None) => std::time::Duration::from_secs(1800),
        }
    }
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum SagaCommand {
    /// Save a tick: list flags are full snapshots (`a|b`; omitted = carried forward, "" = cleared)
    #[command(
        after_help = "The saga id is `issue-<N>` from `--kind issue --id N`, `task-<slug>` from `--kind task --id TEXT` (slugified), or `--id` itself when it is one. The branch and HEAD are read with git in --repo (default:\nthe current directory); a default branch never overwrites a recorded work branch. `next_round` is derived (max(rounds_seen) + 1) and never set; a bad --gate-verdict refuses the whole save (exit 2, nothing written); `lifecycle_phase` never moves past `work` here.\n\nExample:\n  cairn saga save --kind issue --saga-id 42 --issue-ref acme/widgets#42 \\\n    --lifecycle-phase work --phase-status in_progress \\\n    --plan-path docs/plans/p.md --destination pr --orchestration-mode inline \\\n    --orchestration-recommended inline --rounds-seen 1"
    )]
    Save(Box<SagaSave>),
    /// Rebuild a thread from the journal: round, phase, checks run, next step (writes nothing)
    #[command(after_help = "Example:\n  cairn saga restore --saga-id issue-42")]
    Restore {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
    },
    /// Threads to resume, matched by issue ref, plan path or branch, newest first (writes nothing)
    #[command(after_help = "Example:\n  cairn saga scan --issue-ref acme/widgets#42")]
    Scan {
        /// Match threads of this issue reference (`owner/repo#N`)
        #[arg(long)]
        issue_ref: Option<String>,
        /// Match threads with this plan path
        #[arg(long)]
        plan_path: Option<String>,
        /// Match threads on this branch
        #[arg(long)]
        branch: Option<String>,
        /// At most this many threads
        #[arg(allow_negative_numbers = true, long, default_value_t = 10)]
        max_candidates: usize,
    },
    /// The whole thread: ticks, gate verdicts, rounds, the QA allowance (writes nothing)
    #[command(after_help = "Example:\n  cairn saga show --saga-id issue-42")]
    Show {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
    },
    /// Record the plan review's result: an unresolved P0/P1 finding blocks execution
    #[command(
        after_help = "Example:\n  cairn saga doc-review --saga-id issue-42 --unresolved-p0-p1 0 \\\n    --source 'run record review_cycles'"
    )]
    DocReview {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// How many P0/P1 findings of the plan review are unresolved
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
        after_help = "With --from build-loop/ID:UNIT the reviewed SHA is the revision that unit's build loop handed to code review (its last green iteration), read from the journal: a typed --reviewed-sha that differs, a loop of another thread or one that handed nothing is refused (exit 2, journal-agrees).\n\nExample:\n  cairn saga review --saga-id issue-42 --outcome accepted --reviewed-sha \\\n    \"$(git rev-parse HEAD)\"\n  cairn saga review --saga-id issue-42 --outcome accepted \\\n    --from build-loop/issue-42:U1"
    )]
    Review {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// Code review's typed outcome
        #[arg(long, value_parser = ["accepted", "cycle_cap_best_available", "repairs_requested", "review_incomplete"])]
        outcome: String,
        /// The full commit id (40 hex) that was reviewed; with --from, the build
        /// loop's handed revision
        #[arg(long, required_unless_present = "from")]
        reviewed_sha: Option<String>,
        /// The unit's build loop whose handed revision was reviewed
        /// (`build-loop/<saga id>:<unit>`)
        #[arg(long, value_name = "STREAM")]
        from: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// An operator override of ONE gate, with its recorded rationale
    #[command(
        after_help = "Example:\n  cairn saga override --saga-id issue-42 --gate review-gate \\\n    --rationale 'docs-only follow-up' --operator ana"
    )]
    Override {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The one gate overridden
        #[arg(long, value_parser = ["doc-review", "review-gate"])]
        gate: String,
        /// Why: recorded with the override
        #[arg(long)]
        rationale: String,
        /// Who decided (recorded)
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// The PR-ready gate: doc review, review outcome, and freshness read by cairn with git
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options <reviewed_sha> HEAD` and `git -C REPO rev-list --count --end-of-options <reviewed_sha>..HEAD` itself: fresh only when the reviewed commit is HEAD's ancestor and nothing landed since. The reviewed SHA must be a revision the build loop went green at (its journaled handed_to_code_review): with none, back to the build loop. Refused (exit 2) with every blocking gate named.\n\nExample:\n  cairn saga pr-ready --saga-id issue-42 --repo /abs/repo"
    )]
    PrReady {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The repository cairn reads freshness in (absolute path)
        #[arg(long, value_name = "DIR")]
        repo: String,
        /// Whose build loop handed the revision to code review [default: N of an `issue-N` thread]
        #[arg(allow_negative_numbers = true, long, value_name = "N")]
        issue: Option<u64>,
        #[command(flatten)]
        key: Key,
    },
    /// Set the adjustment envelope's directive: drain | halt | pause_after:<boundary> | continue
    #[command(
        after_help = "A malformed or unknown directive fails closed and names it (exit 2).\n\nExample:\n  cairn saga adjust --saga-id issue-42 --directive pause_after:phase-2"
    )]
    Adjust {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// `drain`, `halt`, `pause_after:<boundary>` or `continue`
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
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The phase boundary reached (e.g. `phase-2`)
        #[arg(long)]
        boundary: String,
        #[command(flatten)]
        key: Key,
    },
    /// The merge turn: exactly one unit holds `merging` (take | release | merged)
    #[command(
        subcommand,
        after_help = "Example:\n  cairn saga merge-turn take --saga-id issue-42 --unit U1 \\\n    --branch work/42-u1 --merge-worktree /abs/wt --holder turn-7"
    )]
    MergeTurn(MergeTurnCommand),
    /// Record the release: reviewed head and landed commit apart; destination `none` with its reason
    #[command(
        after_help = "A landed commit is recorded only as cairn reads it: `git -C REPO merge-base --is-ancestor --end-of-options LANDED TARGET` must show it on the branch it landed on (else exit 2, landed-observed). With --from ship/SHORT_ID the commit, repository and target come from that ship run's recorded merge (a value also typed must agree: journal-agrees). The reviewed head defaults to the thread's recorded code review.\n\nExample:\n  cairn saga release --saga-id issue-42 --destination merge \\\n    --reviewed-head \"$(git rev-parse HEAD)\" \\\n    --landed-commit \"$(git rev-parse HEAD)\" --repo \"$PWD\" --target main\n  cairn saga release --saga-id issue-42 --destination merge \\\n    --from ship/42-u1\n  cairn saga release --saga-id issue-42 --destination none \\\n    --absence-reason 'plan-only run'"
    )]
    Release {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// `merge`, `pr`, `nonprod-deploy` or `none`
        #[arg(long)]
        destination: String,
        /// The reviewed head (full commit id); default: the thread's recorded
        /// code review's
        #[arg(long)]
        reviewed_head: Option<String>,
        /// The commit that landed (full commit id); with --from, the ship run's
        /// merged commit
        #[arg(long)]
        landed_commit: Option<String>,
        /// Why nothing is released (destination `none`)
        #[arg(long)]
        absence_reason: Option<String>,
        /// The repository the landed commit is read in (absolute); with --from,
        /// the ship run's
        #[arg(long, value_name = "DIR")]
        repo: Option<String>,
        /// The branch the commit landed on; with --from, the ship run's target
        #[arg(long)]
        target: Option<String>,
        /// The ship run that merged the landed commit (`ship/<SHORT_ID>`)
        #[arg(long, value_name = "STREAM")]
        from: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// A board boundary move: the allowed (Stage, Status) pair; a bare `Status` record is a half-write
    #[command(
        after_help = "Boundaries: admission-exit, plan-review-pass, build-start, review-accepted (submits nothing), merge-and-deploy (only after the merge and a succeeded non-production deployment, or none to deploy), close. Exit 0 moved, 4 half-write (recorded as a failure).\n\nExample:\n  cairn saga board --saga-id issue-42 --boundary build-start \\\n    --written-field Stage+Status"
    )]
    Board {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The board boundary: admission-exit, plan-review-pass, build-start, review-accepted, merge-and-deploy or close
        #[arg(long)]
        boundary: String,
        /// The lifecycle record's `field`
        #[arg(long)]
        written_field: String,
        /// The non-production deployment's result (merge-and-deploy)
        #[arg(long, value_parser = ["succeeded", "failed", "not-run", "no-deployable-software"])]
        deployment: Option<String>,
        /// The retro trigger fired (close moves to Retro)
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
        after_help = "Scenarios: NAME=passed | NAME=failed | NAME=not-run | NAME=blocked:CAUSE. Only a failure counts against the allowance: 3 standard + 2 escalated failed cycles (or the run record's standard_cycle_allowance / escalated_cycle_allowance, with --record), then exactly one --extension. A blocked scenario outranks a failure; a failure past the allowance is recorded `exhausted`. Exit 0 on a PASS, 4 otherwise (recorded).\n\nExample:\n  cairn saga qa --saga-id issue-42 --scenario checkout=passed \\\n    --scenario refund=blocked:sandbox-down"
    )]
    Qa {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// One scenario result: NAME=passed|failed|not-run|blocked:CAUSE (repeatable)
        #[arg(long = "scenario", value_name = "NAME=RESULT")]
        scenarios: Vec<String>,
        /// Take the one extension past the allowance
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
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum MergeTurnCommand {
    /// Claim the turn (refused while another unit holds `merging`)
    #[command(
        after_help = "Example:\n  cairn saga merge-turn take --saga-id issue-42 --unit U1 --branch work/42-u1 \\\n    --merge-worktree /abs/wt --holder turn-7"
    )]
    Take {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The unit claiming the turn
        #[arg(long)]
        unit: String,
        /// The unit's branch
        #[arg(long)]
        branch: String,
        /// The worktree the merge runs in (absolute)
        #[arg(long, value_name = "DIR")]
        merge_worktree: String,
        /// The holder's token (who holds the turn)
        #[arg(long)]
        holder: String,
        #[command(flatten)]
        key: Key,
    },
    /// Release a turn left by a dead holder, after checking git (never trusted)
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options BRANCH TARGET` and, when the merge worktree exists, `git -C WT rev-parse -q --verify --end-of-options MERGE_HEAD`. A target that starts with `-` is refused (exit 2, rule option-like).\n\nExample:\n  cairn saga merge-turn release --saga-id issue-42 --unit U1 --repo /abs/repo \\\n    --target main"
    )]
    Release {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The unit whose turn is released
        #[arg(long)]
        unit: String,
        /// The repository git reads (absolute path)
        #[arg(long, value_name = "DIR")]
        repo: String,
        /// The branch the unit merges onto
        #[arg(long)]
        target: String,
        #[command(flatten)]
        key: Key,
    },
    /// The holder records its merge, as git shows it
    #[command(
        after_help = "cairn runs `git -C REPO merge-base --is-ancestor --end-of-options BRANCH TIP` (the unit's work is in the merged tip) and `… --end-of-options TIP TARGET` (the merge landed on the target): only then is the unit `merged`. A tip git does not show there is refused (exit 2, merged-observed).\n\nWith --from ship/SHORT_ID the merge is the one that ship run recorded: the tip, repository and target are read from the journal (a value also typed must agree), the run must have shipped the unit's branch, and cairn must have seen its merge land; a disagreement is refused (exit 2, journal-agrees) naming the field.\n\nExample:\n  cairn saga merge-turn merged --saga-id issue-42 --unit U1 --holder turn-7 \\\n    --merged-tip \"$(git rev-parse HEAD)\" --repo /abs/repo --target main\n  cairn saga merge-turn merged --saga-id issue-42 --unit U1 --holder turn-7 \\\n    --from ship/42-u1"
    )]
    Merged {
        /// The saga thread: `issue-<N>` or `task-<slug>`
        #[arg(long)]
        saga_id: String,
        /// The unit that merged
        #[arg(long)]
        unit: String,
        /// The holder's token from `take`
        #[arg(long)]
        holder: String,
        /// The merged tip (full commit id); with --from, the ship run's merged commit
        #[arg(long, required_unless_present = "from")]
        merged_tip: Option<String>,
        /// The repository the merge is read in; with --from, the ship run's
        #[arg(long, value_name = "DIR", required_unless_present = "from")]
        repo: Option<String>,
        /// The branch the turn merged onto (the parent issue branch or the default
        /// branch); with --from, the ship run's target
        #[arg(long, required_unless_present = "from")]
        target: Option<String>,
        /// The ship run that merged the unit (`ship/<SHORT_ID>`): its recorded merge
        /// is this one
        #[arg(long, value_name = "STREAM")]
        from: Option<String>,
        #[command(flatten)]
        key: Key,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct SagaSave {
    /// The saga id `issue-<N>` / `task-<slug>`, or with --kind the issue number or
    /// task text (`--kind task` slugifies it); `--id`, saga.py's spelling, is accepted
    #[arg(long = "saga-id", alias = "id", value_name = "ID")]
    pub id: String,
    /// `issue` or `task`: how --saga-id names the thread
    #[arg(long, value_parser = ["issue", "task"])]
    pub kind: Option<String>,
    /// The lifecycle phase (never past `work` here)
    #[arg(long, value_parser = ["ideation", "brainstorm", "plan", "review", "work", "qa", "retro"])]
    pub lifecycle_phase: Option<String>,
    /// The phase's status
    #[arg(long, value_parser = ["pending", "in_progress", "complete"])]
    pub phase_status: Option<String>,
    /// The thread's status
    #[arg(long, value_parser = ["active", "blocked", "paused", "handed-off", "done", "abandoned"])]
    pub status: Option<String>,
    /// The phase number
    #[arg(allow_negative_numbers = true, long)]
    pub phase: Option<u32>,
    /// Where the work goes: plan-only, pr, merge or nonprod-deploy
    #[arg(long)]
    pub destination: Option<String>,
    /// The issue reference (`owner/repo#N`)
    #[arg(long)]
    pub issue_ref: Option<String>,
    /// The plan's path
    #[arg(long)]
    pub plan_path: Option<String>,
    /// The work branch [default: read with git in --repo]
    #[arg(long)]
    pub branch: Option<String>,
    /// The head commit [default: read with git in --repo]
    #[arg(long)]
    pub head_sha: Option<String>,
    /// The next step, in words
    #[arg(long)]
    pub next_step: Option<String>,
    /// `1|2`: the full set of rounds seen. Once a PR loop follows the thread
    /// (`pr observe --from saga/<id>`), the loop counts them and every save takes
    /// them from it: leave this out (a list the loop contradicts is refused)
    #[arg(long)]
    pub rounds_seen: Option<String>,
    /// `a|b`: the full set of checks run
    #[arg(long)]
    pub checks_run: Option<String>,
    /// `a|b`: the full set of work session paths
    #[arg(long)]
    pub work_session_paths: Option<String>,
    /// `a|b`: the full set of files modified
    #[arg(long)]
    pub files_modified: Option<String>,
    /// `a|b`: the full set of PR references
    #[arg(long)]
    pub pr_refs: Option<String>,
    /// `a|b`: the full set of review paths
    #[arg(long)]
    pub review_paths: Option<String>,
    /// `gate:state:ref` (repeatable); state ∈ done | in-progress | blocked | failed | halted | not-reached
    #[arg(long = "gate-verdict", allow_hyphen_values = true)]
    pub gate_verdicts: Vec<String>,
    /// Refused: `next_round` is derived from `rounds_seen`
    #[arg(allow_negative_numbers = true, long)]
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
