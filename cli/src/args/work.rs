//! `cairn work …`: the work-node arguments.

use clap::Subcommand;

use super::Key;

// A workspec and one of its nodes.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkNodeRef {
    /// The workspec (YAML or JSON)
    #[arg(long, value_name = "FILE")]
    pub spec: String,
    /// The node: a bare id (refused when ambiguous) or a qualified address `["a","b"]`
    #[arg(long, value_name = "ID|ADDRESS")]
    pub node: String,
}

// The workspec a read verb reads: `--spec FILE`, as every work verb names it
// (a bare `SPEC`, the older spelling, is accepted).
#[derive(Debug, Clone, clap::Args)]
#[group(required = true, multiple = false)]
pub struct SpecFile {
    /// The workspec (YAML or JSON)
    #[arg(long = "spec", value_name = "FILE")]
    flag: Option<String>,
    /// The workspec, as a bare argument (the older spelling of --spec)
    #[arg(value_name = "SPEC", hide = true)]
    positional: Option<String>,
}

impl SpecFile {
    /// The path given.
    pub fn path(&self) -> &str {
        // The group is required: clap refuses a command line with neither.
        self.flag
            .as_deref()
            .or(self.positional.as_deref())
            .unwrap_or_default()
    }
}

// The session that evidence is bound to.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkSession {
    /// The current session (only this session's evidence opens a gate)
    // The value is not shown: help would print `[env: CAIRN_SESSION=]` when unset.
    #[arg(long, env = "CAIRN_SESSION", hide_env_values = true, value_name = "ID")]
    pub session: String,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // built when parsed: see `args::Command`
pub enum WorkCommand {
    /// Validate a workspec: every finding with its stable code and path (writes nothing)
    #[command(
        override_usage = "cairn work validate --spec <FILE>",
        after_help = "Exit 0 when the spec has no error, 2 when it has (the report lists every finding).\n\nExample:\n  cairn work validate --spec .work/specs/cache.yaml"
    )]
    Validate {
        #[command(flatten)]
        spec: SpecFile,
    },
    /// The ready set: nodes whose dependencies are done this session, with every other node's blockers
    #[command(
        override_usage = "cairn work ready [OPTIONS] --spec <FILE> --session <ID>",
        after_help = "Only `done` recorded in the current session satisfies a dependency; a cached, replayed or other-session result never does. Writes nothing.\n\nExample:\n  cairn work ready --spec .work/specs/cache.yaml --session s-42"
    )]
    Ready {
        #[command(flatten)]
        spec: SpecFile,
        #[command(flatten)]
        session: WorkSession,
    },
    /// Lifecycle and verification provenance of every node, and the ready set (writes nothing)
    #[command(
        override_usage = "cairn work status [OPTIONS] --spec <FILE> --session <ID>",
        after_help = "Only `done` recorded in the current session satisfies a dependency.\n\nExample:\n  cairn work status --spec .work/specs/cache.yaml --session s-42"
    )]
    Status {
        #[command(flatten)]
        spec: SpecFile,
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
        #[command(flatten)]
        key: Key,
    },
    /// Record work_dispatch's outcome: a receipt, or a degraded not-dispatched result
    #[command(
        after_help = "Example:\n  cairn work dispatch --spec s.yaml --node core --run-id r-1 \\\n    --worktree /abs/lane --expected-commit \"$(git rev-parse HEAD)\"\n  cairn work dispatch --spec s.yaml --node core \\\n    --not-dispatched delegate-client-unavailable"
    )]
    Dispatch {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The delegate's run id (a dispatched receipt)
        #[arg(long)]
        run_id: Option<String>,
        /// The persistent worker tree (absolute)
        #[arg(long, value_name = "DIR", default_value = "")]
        worktree: String,
        /// The commit the worker tree must be at (full id)
        #[arg(long, value_name = "SHA", default_value = "")]
        expected_commit: String,
        /// Remediation rounds allowed (default 2)
        #[arg(allow_negative_numbers = true, long)]
        budget: Option<u32>,
        /// The degraded result's finding (the plan comes back; nothing advances)
        #[arg(long, value_name = "FINDING")]
        not_dispatched: Option<String>,
        #[command(flatten)]
        key: Key,
    },
    /// cairn runs every criterion in the tree (after checking its HEAD) and records the evidence
    #[command(
        after_help = "Command criteria run as `sh -c` in the tree, in their own process group, killed as a group at their timeout, with the tree watched: a criterion that changes the tree (even if it restores it) fails. A user criterion is confirmed on the controlling terminal only: cairn prints a one-time challenge there and reads `I confirm <challenge>`; without a terminal it fails (user-confirmation-unavailable). An agent criterion is agent-unavailable. A done node is re-verified in a later session in a tree that contains its merged commit. Exit 0 when every criterion and the checklist passed, 4 when not (recorded).\n\nExample:\n  cairn work verify --spec s.yaml --node core --worktree /abs/lane \\\n    --expected-commit \"$(git rev-parse HEAD)\" \\\n    --checklist '[{\"index\":0,\"done\":true}]' --session s-42"
    )]
    Verify {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The worker tree the criteria run in (absolute)
        #[arg(long, value_name = "DIR")]
        worktree: String,
        /// The tree's HEAD, checked before anything runs (full id)
        #[arg(long, value_name = "SHA")]
        expected_commit: String,
        /// `[{"index": 0, "done": true}, …]`
        #[arg(long, value_name = "JSON", default_value = "[]")]
        checklist: String,
        #[command(flatten)]
        session: WorkSession,
        #[command(flatten)]
        key: Key,
    },
    /// Record a review (reporting data: never verification)
    #[command(
        after_help = "Example:\n  cairn work review --spec s.yaml --node core --verdict reject --failed C1 \\\n    --concern 'src/cache.rs:12 misses eviction'"
    )]
    Review {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The reviewer's verdict
        #[arg(long, value_enum)]
        verdict: VerdictArg,
        /// A criterion the review failed (repeatable)
        #[arg(long = "failed", value_name = "CRITERION")]
        failed: Vec<String>,
        /// A concern, in words (repeatable)
        #[arg(long = "concern")]
        concerns: Vec<String>,
        #[command(flatten)]
        key: Key,
    },
    /// Redispatch after a rejection, in the same persistent worktree (within the budget)
    #[command(
        after_help = "Example:\n  cairn work remediate --spec s.yaml --node core --run-id r-2 \\\n    --worktree /abs/lane"
    )]
    Remediate {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The redispatch's run id
        #[arg(long)]
        run_id: String,
        /// The same persistent worker tree (absolute)
        #[arg(long, value_name = "DIR")]
        worktree: String,
        #[command(flatten)]
        key: Key,
    },
    /// Escalate to the user when the remediation budget is spent
    #[command(
        after_help = "Example:\n  cairn work escalate --spec s.yaml --node core --reason 'two rounds spent'"
    )]
    Escalate {
        #[command(flatten)]
        node: WorkNodeRef,
        /// Why the user must decide
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        key: Key,
    },
    /// Record the merge: cairn checks the merged commit contains the verified worker commit; every pre-merge green stops counting
    #[command(
        after_help = "cairn reads the merged tree: its top level, its HEAD (= --commit) and whether --commit contains the worker commit the last passing worker-tree verification proved; else refused, nothing written.\n\nExample:\n  cairn work merge --spec s.yaml --node core --merged-tree /abs/integration \\\n    --commit \"$(git rev-parse HEAD)\""
    )]
    Merge {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The integration tree the merge is in (absolute)
        #[arg(long, value_name = "DIR")]
        merged_tree: String,
        /// The merged tree's HEAD (full commit id)
        #[arg(long, value_name = "SHA")]
        commit: String,
        #[command(flatten)]
        key: Key,
    },
    /// Change one criterion's accepted text, with its authority: a chain entry in the spec
    #[command(
        after_help = "Refuses a stale `before`, an unknown criterion, a no-op, an invalid prior chain, an unavailable draft (criterion-draft-unavailable) or one lacking the criterion, and splitting or merging criteria (not-an-amendment). The spec is rewritten as block YAML (the draft marker line is kept; other comments are not).\n\nExample:\n  cairn work amend-criterion --spec s.yaml --criterion A1 \\\n    --before 'The exact current statement' --after 'The replacement' \\\n    --reason 'Why it changed' --authority 'ADR-7'"
    )]
    AmendCriterion {
        /// The workspec
        #[arg(long, value_name = "FILE")]
        spec: String,
        /// The criterion's id
        #[arg(long, value_name = "ID")]
        criterion: String,
        /// The exact current text
        #[arg(long, allow_hyphen_values = true)]
        before: String,
        /// The authority-approved replacement
        #[arg(long, allow_hyphen_values = true)]
        after: String,
        /// Why it changed
        #[arg(long)]
        reason: String,
        /// Who or what approved it (e.g. an ADR)
        #[arg(long)]
        authority: String,
        #[command(flatten)]
        key: Key,
    },
    /// Raise a scope amendment: a worker needs literal paths outside `touches`
    #[command(
        after_help = "Example:\n  cairn work raise-scope --spec s.yaml --node core --target lane-1 \\\n    --add-touch reports/published --change 'Add reports/published to touches' \\\n    --rationale 'The publication step writes there'"
    )]
    RaiseScope {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The lane or node the amendment is for
        #[arg(long)]
        target: String,
        /// A literal relative path the change adds to `touches` (repeatable)
        #[arg(long = "add-touch", value_name = "PATH")]
        add_touches: Vec<String>,
        /// The change, in words
        #[arg(long)]
        change: String,
        /// Why the worker needs it
        #[arg(long)]
        rationale: String,
        #[command(flatten)]
        key: Key,
    },
    /// Pass a pending scope amendment up to the user, with context and a recommendation
    #[command(
        after_help = "Example:\n  cairn work pass-up --spec s.yaml --node core --request-id amend-… \\\n    --context '…' --recommendation '…'"
    )]
    PassUp {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The pending amendment request (`amend-…`)
        #[arg(long)]
        request_id: String,
        /// What the user needs to know
        #[arg(long)]
        context: String,
        /// What to choose, and why
        #[arg(long)]
        recommendation: String,
        #[command(flatten)]
        key: Key,
    },
    /// Resolve a scope amendment: 0 Approve, 1 Approve with modifications (see note), 2 Reject, 3 custom
    #[command(
        after_help = "A user-held request needs --on-behalf-of-user and the operator's explicit choice. Approval adds the touches to the spec; then re-validate, re-plan and redispatch in the same worktree.\n\nExample:\n  cairn work resolve-scope --spec s.yaml --node core --request-id amend-… \\\n    --selected 0 --operator ana"
    )]
    ResolveScope {
        #[command(flatten)]
        node: WorkNodeRef,
        /// The amendment request (`amend-…`)
        #[arg(long)]
        request_id: String,
        /// The zero-based option index (no default: an explicit choice)
        #[arg(long, required = true)]
        selected: Vec<usize>,
        /// The modification (option 1)
        #[arg(long, default_value = "")]
        note: String,
        /// The custom instruction (option 3)
        #[arg(long)]
        custom_instruction: Option<String>,
        /// The operator resolves a user-held request with the user's explicit choice
        #[arg(long)]
        on_behalf_of_user: bool,
        /// Who decided (recorded)
        #[arg(long)]
        operator: String,
        #[command(flatten)]
        key: Key,
    },
    /// Record done, only when every terminal-truth item holds (else each failing item, exit 2)
    #[command(after_help = "Example:\n  cairn work done --spec s.yaml --node core --session s-42")]
    Done {
        #[command(flatten)]
        node: WorkNodeRef,
        #[command(flatten)]
        session: WorkSession,
        #[command(flatten)]
        key: Key,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum VerdictArg {
    Approve,
    Reject,
}
