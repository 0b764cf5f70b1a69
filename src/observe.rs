//! Evidence cairn observes itself: bound git readings of a workspace, recorded
//! with argv, exit status, output and time. This is IO, so it lives here and not
//! in `cairn-machines`; its output is the machines' typed evidence.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use cairn_machines::evidence::git::{observer_env, INHERITED};
use cairn_machines::evidence::CommandRun;
use cairn_machines::Timestamp;
use serde_json::{json, Value};

/// The time now, as cairn records it.
pub fn now() -> Timestamp {
    Timestamp::from_instant(chrono::Utc::now().fixed_offset())
}

/// The environment an observation runs with: [`INHERITED`] from cairn's own
/// process, then the fixed [`observer_env`]. Nothing else of the caller's
/// environment (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_CONFIG_*`, …) reaches the process.
pub fn observation_env() -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for name in INHERITED {
        if let Some(v) = std::env::var_os(name) {
            env.insert((*name).to_owned(), v.to_string_lossy().into_owned());
        }
    }
    env.extend(observer_env());
    env
}

/// Runs one argv (no shell) as an observation: the caller's environment cleared
/// and replaced by [`observation_env`] (recorded with the run), stdin closed. A
/// program that cannot start is a run with no exit status and the error on stderr.
pub fn run(argv: &[String]) -> CommandRun {
    let env = observation_env();
    let started_at = now();
    let out = match argv.split_first() {
        Some((program, rest)) => Command::new(program)
            .args(rest)
            .env_clear()
            .envs(&env)
            .stdin(std::process::Stdio::null())
            .output(),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an empty argv",
        )),
    };
    let finished_at = now();
    match out {
        Ok(o) => CommandRun {
            argv: argv.to_vec(),
            env: Some(env),
            exit_status: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            started_at,
            finished_at,
        },
        Err(e) => CommandRun {
            argv: argv.to_vec(),
            env: Some(env),
            exit_status: None,
            stdout: String::new(),
            stderr: format!(
                "cannot run `{}`: {e}",
                argv.first().map_or("", String::as_str)
            ),
            started_at,
            finished_at,
        },
    }
}

/// `git -C <dir> <rest…>`: the one way cairn builds a bound git argv.
pub use cairn_machines::evidence::git::git;

fn line(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

struct Recorder {
    runs: Vec<CommandRun>,
}

impl Recorder {
    fn run(&mut self, argv: Vec<String>) -> CommandRun {
        let r = run(&argv);
        self.runs.push(r.clone());
        r
    }
}

fn check(name: &str, category: &str, outcome: &str, evidence: Value, at: &Timestamp) -> Value {
    json!({ "name": name, "category": category, "outcome": outcome, "evidence": evidence, "observed_at": at })
}

/// The three bound VCS checks of the park machine for the workspace at `root`:
/// `no_vcs_operation_or_conflict`, `tree_preserved`,
/// `commits_reachable_or_checkpoint_resolvable`. Unreadable state is `unknown`,
/// never `pass`; a jj workspace is `unknown` (cairn does not run jj in v1).
pub fn park_vcs_checks(root: &str) -> Vec<Value> {
    let at = now();
    let unknown_all = |backend: &str, error: &str, runs: &[CommandRun]| -> Vec<Value> {
        let obs = json!(runs);
        vec![
            check(
                "no_vcs_operation_or_conflict",
                "quiescence",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "error": error, "observations": obs}),
                &at,
            ),
            check(
                "tree_preserved",
                "preservation",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "workspace": root, "state": "unknown", "error": error, "observations": obs}),
                &at,
            ),
            check(
                "commits_reachable_or_checkpoint_resolvable",
                "preservation",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "workspace": root, "state": "unknown", "error": error, "observations": obs}),
                &at,
            ),
        ]
    };
    if Path::new(root).join(".jj").is_dir() {
        let probe = run(&["jj".to_owned(), "--version".to_owned()]);
        let why = if probe.exit_status == Some(0) {
            "a jj workspace: cairn v1 does not run jj's observations itself, so they are unknown"
        } else {
            "a jj workspace, and jj is not installed: its observations are unknown"
        };
        return unknown_all("jj", why, &[probe]);
    }
    let mut rec = Recorder { runs: Vec::new() };
    let top = rec.run(git(root, &["rev-parse", "--show-toplevel"]));
    if top.exit_status != Some(0) {
        return unknown_all(
            "git",
            "git rev-parse --show-toplevel failed: not a readable git workspace",
            &rec.runs,
        );
    }
    if line(&top.stdout) != root {
        return unknown_all(
            "git",
            &format!(
                "the bound root is not the workspace top level (`{}`)",
                line(&top.stdout)
            ),
            &rec.runs,
        );
    }
    let status = rec.run(git(root, &["status", "--porcelain=v2", "--branch"]));
    let unmerged = rec.run(git(root, &["diff", "--name-only", "--diff-filter=U"]));
    let mut operations = Vec::new();
    let mut unreadable = status.exit_status != Some(0) || unmerged.exit_status != Some(0);
    for (name, op) in [
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("REBASE_HEAD", "rebase"),
    ] {
        let r = rec.run(git(root, &["rev-parse", "-q", "--verify", name]));
        match r.exit_status {
            Some(0) => operations.push(op.to_owned()),
            Some(1) => {}
            _ => unreadable = true,
        }
    }
    for dir in ["rebase-merge", "rebase-apply"] {
        let r = rec.run(git(
            root,
            &["rev-parse", "--path-format=absolute", "--git-path", dir],
        ));
        match r.exit_status {
            Some(0)
                if Path::new(line(&r.stdout)).is_dir()
                    && !operations.contains(&"rebase".to_owned()) =>
            {
                operations.push("rebase".to_owned())
            }
            Some(0) => {}
            _ => unreadable = true,
        }
    }
    let conflicts: Vec<String> = unmerged
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let commands: Vec<Vec<String>> = rec.runs.iter().map(|r| r.argv.clone()).collect();
    let vcs = if unreadable {
        check(
            "no_vcs_operation_or_conflict",
            "quiescence",
            "unknown",
            json!({"source": "git", "detail": "git could not report the operation state", "backend": "git", "bound_root": root, "error": "a bound git reading failed", "observations": rec.runs}),
            &at,
        )
    } else {
        let clean = conflicts.is_empty() && operations.is_empty();
        check(
            "no_vcs_operation_or_conflict",
            "quiescence",
            if clean { "pass" } else { "fail" },
            json!({"source": "git", "detail": if clean { "no merge, rebase, cherry-pick or revert in progress; no unresolved path" } else { "an operation is in progress or a path is unresolved" }, "backend": "git", "bound_root": root, "commands": commands, "conflicts": conflicts, "operations": operations, "observations": rec.runs}),
            &at,
        )
    };

    let mut prec = Recorder { runs: Vec::new() };
    let head = prec.run(git(root, &["rev-parse", "HEAD"]));
    let head_id = line(&head.stdout).to_owned();
    let dirty: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let resolver = git(root, &["cat-file", "-e", &format!("{head_id}^{{commit}}")]);
    let preservation = |name: &str, outcome: &str, mut evidence: Value, runs: &[CommandRun]| {
        evidence["observations"] = json!(runs);
        check(name, "preservation", outcome, evidence, &at)
    };
    let base = |detail: &str| json!({"source": "git", "detail": detail, "backend": "git", "bound_root": root, "workspace": root});
    if head.exit_status != Some(0) || status.exit_status != Some(0) || unreadable {
        let mut e = base("HEAD or the working tree could not be read");
        e["state"] = json!("unknown");
        e["error"] = json!("a bound git reading failed");
        let tree = preservation("tree_preserved", "unknown", e.clone(), &prec.runs);
        let commits = preservation(
            "commits_reachable_or_checkpoint_resolvable",
            "unknown",
            e,
            &prec.runs,
        );
        return vec![vcs, tree, commits];
    }
    let resolved = prec.run(resolver.clone());
    let durable = |detail: &str| {
        let mut e = base(detail);
        e["state"] = json!("durable");
        e["reference"] = json!(head_id);
        e["resolved_head"] = json!(head_id);
        e["resolver_command"] = json!(resolver);
        e
    };
    let unpreserved = |detail: &str, error: String| {
        let mut e = base(detail);
        e["state"] = json!("unpreserved");
        e["error"] = json!(error);
        e
    };
    let tree = if resolved.exit_status != Some(0) {
        let mut e = base("HEAD does not resolve to a commit");
        e["state"] = json!("unknown");
        e["error"] = json!("git cat-file -e HEAD^{commit} failed");
        preservation("tree_preserved", "unknown", e, &prec.runs)
    } else if dirty.is_empty() {
        preservation(
            "tree_preserved",
            "pass",
            durable("the working tree is clean: HEAD preserves it"),
            &prec.runs,
        )
    } else {
        preservation(
            "tree_preserved",
            "fail",
            unpreserved(
                "the working tree differs from HEAD",
                format!("{} uncommitted or untracked entries", dirty.len()),
            ),
            &prec.runs,
        )
    };
    let upstream = prec.run(git(root, &["rev-parse", "@{upstream}"]));
    let commits = if upstream.exit_status != Some(0) {
        preservation(
            "commits_reachable_or_checkpoint_resolvable",
            "fail",
            unpreserved(
                "no upstream: HEAD is not reachable from a remote-tracking ref",
                "no upstream is configured; a checkpoint is needed".into(),
            ),
            &prec.runs,
        )
    } else {
        let ancestor = prec.run(git(
            root,
            &["merge-base", "--is-ancestor", "HEAD", "@{upstream}"],
        ));
        match ancestor.exit_status {
            Some(0) if resolved.exit_status == Some(0) => preservation(
                "commits_reachable_or_checkpoint_resolvable",
                "pass",
                durable("HEAD is an ancestor of its upstream"),
                &prec.runs,
            ),
            Some(1) => preservation(
                "commits_reachable_or_checkpoint_resolvable",
                "fail",
                unpreserved(
                    "HEAD has commits its upstream does not",
                    "HEAD is not reachable from its upstream; a checkpoint is needed".into(),
                ),
                &prec.runs,
            ),
            _ => {
                let mut e = base("reachability could not be read");
                e["state"] = json!("unknown");
                e["error"] = json!("git merge-base --is-ancestor failed");
                preservation(
                    "commits_reachable_or_checkpoint_resolvable",
                    "unknown",
                    e,
                    &prec.runs,
                )
            }
        }
    };
    vec![vcs, tree, commits]
}

/// Runs every argv of a plan, in order, recording each.
pub fn run_all(plan: &[Vec<String>]) -> Vec<CommandRun> {
    plan.iter().map(|argv| run(argv)).collect()
}

/// The parameters of a read-only ship preflight.
#[derive(Debug, Clone)]
pub struct ShipParams {
    /// `REPO_ROOT` (absolute).
    pub repo_root: String,
    /// `EXPECTED_REPO_BASENAME`.
    pub expected_basename: String,
    /// `BRANCH`.
    pub branch: String,
    /// `WORKTREE_PATH` (absolute).
    pub worktree_path: String,
    /// `TARGET_BRANCH`.
    pub target_branch: String,
}

/// Reads the §preflight-classifier facts with the bound git commands of the ship
/// machine's plan (argv, exit status, output and time recorded) and classifies them.
pub fn ship_preflight(
    p: &ShipParams,
) -> (cairn_machines::ship::preflight::Preflight, Vec<CommandRun>) {
    use cairn_machines::ship::{gates, preflight::classify, Params};
    // Only the preflight's parameters are read by its plan and facts.
    let params = Params {
        short_id: "classify".into(),
        expected_basename: p.expected_basename.clone(),
        branch: p.branch.clone(),
        worktree_path: p.worktree_path.clone(),
        target_branch: p.target_branch.clone(),
        intent_field: "intent_excerpt".into(),
        files_max: 0,
        deletions_max: 0,
        tiebreaker_4: "n/a".into(),
        tiebreaker_5: false,
        close_step: "n/a".into(),
    };
    let runs = run_all(&gates::preflight_plan(&params, &p.repo_root));
    let facts = gates::preflight_facts(&params, &p.repo_root, &runs);
    (classify(&facts), runs)
}
