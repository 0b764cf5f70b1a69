//! PR-loop fixtures: `gh pr view --json
//! state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt`
//! readings in the shape gh prints them, one per state.

use serde_json::{json, Value};

pub const PR: &str = "https://github.com/example/project/pull/7";
/// The nine PR states, in the table's order.
pub const STATES: [&str; 9] = [
    "draft",
    "await-review",
    "changes-requested",
    "pending-or-failing-checks",
    "conflicting",
    "approved-stale",
    "approved-fresh",
    "merged",
    "closed",
];

pub const SHA: &str = "89abcdef0123456789abcdef0123456789abcdef";

pub fn check_run(name: &str, status: &str, conclusion: &str) -> Value {
    json!({"__typename": "CheckRun", "name": name, "workflowName": "ci", "status": status, "conclusion": conclusion,
           "startedAt": "2026-11-30T03:00:00Z", "completedAt": "2026-11-30T03:05:00Z", "detailsUrl": "https://github.com/example/project/actions/runs/1"})
}

pub fn status_context(context: &str, state: &str) -> Value {
    json!({"__typename": "StatusContext", "context": context, "state": state, "targetUrl": "https://ci.example/1", "startedAt": "2026-11-30T03:00:00Z"})
}

fn base() -> Value {
    json!({
        "state": "OPEN",
        "reviewDecision": "APPROVED",
        "mergeable": "MERGEABLE",
        "mergeStateStatus": "CLEAN",
        "statusCheckRollup": [check_run("test", "COMPLETED", "SUCCESS"), status_context("lint", "SUCCESS")],
        "isDraft": false,
        "mergedAt": null,
        "baseRefName": "main"
    })
}

/// A reading for each of the nine states (approved ones need a freshness count).
pub fn reading(state: &str) -> Value {
    let mut r = base();
    match state {
        "draft" => {
            r["isDraft"] = json!(true);
            r["reviewDecision"] = json!("");
            r["mergeStateStatus"] = json!("DRAFT");
        }
        "await-review" => r["reviewDecision"] = json!("REVIEW_REQUIRED"),
        "changes-requested" => r["reviewDecision"] = json!("CHANGES_REQUESTED"),
        "pending-or-failing-checks" => {
            r["statusCheckRollup"] = json!([
                check_run("test", "COMPLETED", "FAILURE"),
                check_run("build", "IN_PROGRESS", "")
            ]);
            r["mergeStateStatus"] = json!("UNSTABLE");
        }
        "conflicting" => {
            r["mergeable"] = json!("CONFLICTING");
            r["mergeStateStatus"] = json!("DIRTY");
        }
        "approved-stale" | "approved-fresh" => {}
        "merged" => {
            r["state"] = json!("MERGED");
            r["mergedAt"] = json!("2026-11-30T05:00:00Z");
            r["mergeable"] = json!("UNKNOWN");
            r["mergeStateStatus"] = json!("UNKNOWN");
        }
        "closed" => {
            r["state"] = json!("CLOSED");
            r["mergeable"] = json!("UNKNOWN");
            r["mergeStateStatus"] = json!("UNKNOWN");
        }
        other => panic!("no fixture for {other}"),
    }
    r
}

/// The observe/classify document for a state: the caller's count is 0, except for
/// `approved-stale` (2); an approved-fresh PR is fresh only on cairn's own runs
/// (`--repo`, or [`freshness_runs`] in process).
pub fn doc(state: &str, destination: &str) -> Value {
    let commits = if state == "approved-stale" { 2 } else { 0 };
    json!({"pr": PR, "reading": reading(state), "reviewed_sha": SHA, "commits_since_review": commits, "destination": destination})
}

/// Runs the real `cairn` with `path_first` put before the observer's PATH (where a
/// stand-in `gh` lives) and `env` set: exit code, stdout as JSON (`null` when empty), stderr.
pub fn cairn_with(
    args: &[&str],
    stdin: &str,
    db: &std::path::Path,
    path_first: Option<&std::path::Path>,
    env: &[(&str, &str)],
) -> (i32, Value, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .arg("--db")
        .arg(db)
        .env_remove("CAIRN_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = path_first {
        cmd.env(
            crate::support::OBSERVER_PATH_VAR,
            crate::support::observer_path_with(dir),
        );
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("cairn runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .ok();
    let out = child.wait_with_output().expect("cairn exits");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {stdout}"))
    };
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A stand-in `gh` on the observer's PATH: `gh pr view URL --json FIELDS` prints the reading
/// last given to [`StandInGh::answer`] and appends its argv to `calls`.
pub struct StandInGh {
    pub dir: tempfile::TempDir,
}

impl StandInGh {
    pub fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a temp dir");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{d}/calls'\nif [ -f '{d}/fail' ]; then echo 'gh: not found' >&2; exit 1; fi\ncat '{d}/reading.json'\n",
            d = dir.path().display()
        );
        let gh = dir.path().join("gh");
        std::fs::write(&gh, script).expect("the stand-in is written");
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755))
            .expect("the stand-in is executable");
        Self { dir }
    }

    /// What the next `gh pr view` prints.
    pub fn answer(&self, reading: &Value) {
        std::fs::write(self.dir.path().join("reading.json"), reading.to_string())
            .expect("the reading is written");
    }

    /// The argv (after `gh`) of every call so far, one line each.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("calls"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// A real repository with three commits: its absolute path and the ids of the
/// commits, oldest first. The temp dir is returned so the caller keeps it alive.
pub fn three_commit_repo() -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    use crate::support::git::git;
    let tmp = tempfile::tempdir().expect("a temp dir");
    let repo = tmp.path().canonicalize().expect("canonical").join("r");
    std::fs::create_dir(&repo).expect("the repo dir");
    git(&repo, &["init", "-q", "-b", "main"]);
    let mut ids = vec![];
    for i in 0..3 {
        std::fs::write(repo.join("f"), i.to_string()).expect("a file");
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
        ids.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    (tmp, repo, ids)
}

/// The repository the in-process fixtures say cairn observed freshness in.
pub const REPO: &str = "/srv/repo";

/// A recorded run of `argv` (fixed times).
pub fn recorded(
    argv: Vec<String>,
    exit_status: Option<i32>,
    stdout: &str,
) -> cairn::machines::evidence::CommandRun {
    let at = cairn::Timestamp::parse("2026-11-30T04:00:00Z").expect("a fixed time parses");
    cairn::machines::evidence::CommandRun {
        argv,
        env: None,
        exit_status,
        stdout: stdout.to_owned(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at,
    }
}

/// What cairn's freshness runs of [`SHA`] in [`REPO`] recorded: the ancestry exit
/// status and the count printed.
pub fn freshness_runs(ancestor: i32, count: u64) -> cairn::machines::pr_loop::Observed {
    use cairn::machines::evidence::{fresh, AbsPath, FullCommit};
    let repo = AbsPath::parse(REPO).expect("a fixed absolute path");
    let plan = fresh::plan(&repo, &FullCommit::parse(SHA).expect("a full id"));
    let runs = vec![
        recorded(plan[0].clone(), Some(ancestor), ""),
        recorded(plan[1].clone(), Some(0), &format!("{count}\n")),
    ];
    cairn::machines::pr_loop::Observed {
        gh: None,
        freshness: Some(cairn::machines::pr_loop::FreshnessRuns { repo, runs }),
    }
}

/// cairn's `gh pr view` run of [`PR`] printing `reading`.
pub fn gh_run(reading: &Value) -> cairn::machines::evidence::CommandRun {
    recorded(
        cairn::machines::pr_loop::plan::gh_view(PR),
        Some(0),
        &reading.to_string(),
    )
}

/// A real repository whose `HEAD` is the reviewed commit: where cairn observes an
/// approved PR fresh.
pub struct FreshRepo {
    _tmp: tempfile::TempDir,
    pub path: std::path::PathBuf,
    pub ids: Vec<String>,
}

impl FreshRepo {
    pub fn new() -> Self {
        let (tmp, path, ids) = three_commit_repo();
        Self {
            _tmp: tmp,
            path,
            ids,
        }
    }

    /// The repository, for `--repo`.
    pub fn repo(&self) -> &str {
        self.path.to_str().expect("a UTF-8 temp path")
    }

    /// The reviewed commit (`HEAD`).
    pub fn head(&self) -> &str {
        &self.ids[2]
    }

    /// The document for `state`, reviewed at `HEAD` and with no caller's count, to
    /// observe with `--repo`.
    pub fn doc(&self, state: &str, destination: &str) -> Value {
        let mut d = doc(state, destination);
        d.as_object_mut()
            .expect("a document")
            .remove("commits_since_review");
        d["reviewed_sha"] = json!(self.head());
        d
    }
}
