//! Real-git fixtures for the cross-machine CLI tests (`idempotency`, `depth`): a
//! consumer repository with a ship run, a workspec with a worker lane, a run
//! record for the build loop. Every step is a real `cairn` process.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::{git, try_git};
use crate::support::TempJournal;

/// The stdout JSON and exit code of `cairn ARGS` on `journal`, with `stdin`.
pub fn run(journal: &TempJournal, args: &[&str], stdin: &str) -> (i32, Value) {
    let (code, out, stderr) = cairn(args, stdin, Some(&journal.path()));
    assert!(!stderr.contains("panicked"), "{stderr}");
    (code, out)
}

/// `{"a":{"a":…{"a":0}…}}`: `n` objects nested in each other.
pub fn nested(n: usize) -> Value {
    (0..n).fold(json!(0), |inner, _| json!({ "a": inner }))
}

/// `journal audit` and `journal verify` pass.
pub fn assert_whole(journal: &TempJournal) {
    for verb in ["audit", "verify"] {
        let (code, out) = run(journal, &["journal", verb], "");
        assert_eq!(code, 0, "journal {verb}: {out}");
    }
}

pub const SHIP_ID: &str = "abc";

/// A consumer repository (`.claude/` ignored) and a journal for one ship run.
pub struct ShipRepo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub journal: TempJournal,
}

impl ShipRepo {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("consumer-repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join(".gitignore"), ".claude/\n.run-ship/\n").unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "init"]);
        Self {
            _tmp: tmp,
            root,
            journal: TempJournal::new(),
        }
    }
    pub fn wt(&self) -> PathBuf {
        self.root.join(".claude/worktrees/abc")
    }
    /// `cairn ship VERB --short-id abc EXTRA…`.
    pub fn verb(&self, verb: &str, extra: &[&str], stdin: &str) -> (i32, Value) {
        let mut args = vec!["ship", verb, "--short-id", SHIP_ID];
        args.extend_from_slice(extra);
        run(&self.journal, &args, stdin)
    }
    pub fn open(&self, extra: &[&str]) -> (i32, Value) {
        let root = self.root.to_str().unwrap().to_owned();
        let wt = self.wt().to_str().unwrap().to_owned();
        let mut args = vec![
            "--repo",
            &root,
            "--expected-basename",
            "consumer-repo",
            "--branch",
            "worktree-abc",
            "--worktree-path",
            &wt,
            "--target-branch",
            "main",
            "--tiebreaker-4",
            "ask-user",
            "--close-step",
            "echo",
            "--review-status",
            "pass",
        ];
        args.extend_from_slice(extra);
        self.verb("open", &args, "")
    }
    /// Open, create, one in-scope commit in the worktree: phase 1, the head.
    pub fn to_phase1(&self) -> String {
        assert_eq!(self.open(&[]).0, 0);
        let (code, out) = self.verb("create", &[], "");
        assert_eq!(code, 0, "{out}");
        std::fs::write(self.wt().join("src.txt"), "fix\n").unwrap();
        git(&self.wt(), &["add", "-A"]);
        assert!(
            try_git(&self.wt(), &["commit", "-q", "-m", "fix: the thing"])
                .status
                .success()
        );
        git(&self.wt(), &["rev-parse", "HEAD"])
    }
}

/// A phase-1 report for `head`, everything in scope.
pub fn phase1(head: &str) -> Value {
    json!({
        "verdict": "ok",
        "worktree_path": ".claude/worktrees/abc",
        "branch": "worktree-abc",
        "head_sha": &head[..7],
        "in_scope_paths": ["src.txt"],
        "commit_subject": "fix: the thing",
        "intent_excerpt": "Fix the thing the kata names.",
    })
}

/// A workspec of one node whose criterion runs `run` and expects `floor`.
pub fn workspec(run: &str, floor: &str) -> String {
    format!(
        r#"title: Result cache
description: Cache lookups.
intent: Lower latency.
work:
  - id: core
    task: Implement the cache module
    touches: [src/cache/]
    acceptance:
      - id: C1
        statement: Cache hits skip the backend
        evidence:
          kind: command
          run: {run:?}
          expect: {{ exit: 0, output_includes: {floor:?} }}
          timeout_ms: 10000
"#
    )
}

/// A repository holding a workspec, a worker lane (a linked worktree) and a journal.
pub struct WorkLane {
    _tmp: tempfile::TempDir,
    pub lane: PathBuf,
    pub spec: PathBuf,
    pub journal: TempJournal,
}

impl WorkLane {
    pub fn new(spec: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(root.join(".work/specs")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join(".gitignore"), ".work/.cache/\n").unwrap();
        std::fs::write(root.join(".work/specs/cache.yaml"), spec).unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "spec"]);
        let lane = tmp.path().canonicalize().unwrap().join("lane");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "lane",
                lane.to_str().unwrap(),
            ],
        );
        WorkLane {
            spec: root.join(".work/specs/cache.yaml"),
            _tmp: tmp,
            lane,
            journal: TempJournal::new(),
        }
    }
    /// `cairn work VERB --spec SPEC --node core EXTRA…`.
    pub fn node(&self, verb: &str, extra: &[&str]) -> (i32, Value) {
        let spec = self.spec.to_str().unwrap().to_owned();
        let mut args = vec!["work", verb, "--spec", &spec, "--node", "core"];
        args.extend_from_slice(extra);
        run(&self.journal, &args, "")
    }
    /// Plan, dispatch into the lane, one commit there: the commit to verify.
    pub fn to_dispatched(&self) -> String {
        assert_eq!(self.node("plan", &[]).0, 0);
        let lane = self.lane.to_str().unwrap().to_owned();
        let base = git(&self.lane, &["rev-parse", "HEAD"]);
        let (code, out) = self.node(
            "dispatch",
            &[
                "--run-id",
                "r-1",
                "--worktree",
                &lane,
                "--expected-commit",
                &base,
            ],
        );
        assert_eq!(code, 0, "{out}");
        std::fs::create_dir_all(self.lane.join("src/cache")).unwrap();
        std::fs::write(self.lane.join("src/cache/mod.rs"), "// cache\n").unwrap();
        git(&self.lane, &["add", "."]);
        assert!(try_git(&self.lane, &["commit", "-q", "-m", "cache"])
            .status
            .success());
        git(&self.lane, &["rev-parse", "HEAD"])
    }
    /// `work verify` of the lane at `commit`, in session `s1`.
    pub fn verify(&self, commit: &str, extra: &[&str]) -> (i32, Value) {
        let lane = self.lane.to_str().unwrap().to_owned();
        let mut args = vec![
            "--worktree",
            &lane,
            "--expected-commit",
            commit,
            "--session",
            "s1",
        ];
        args.extend_from_slice(extra);
        self.node("verify", &args)
    }
}

/// A repository with a run record `issue-42.json` whose one unit's baseline is
/// `baseline`, and a journal.
pub struct BuildRecord {
    _tmp: tempfile::TempDir,
    pub repo: PathBuf,
    pub record: PathBuf,
    pub journal: TempJournal,
}

impl BuildRecord {
    pub fn new(baseline: &[&str]) -> Self {
        Self::with(&serde_json::to_string_pretty(&Self::record(baseline)).unwrap())
    }
    /// The run record itself.
    pub fn record(baseline: &[&str]) -> Value {
        json!({
            "schema": "run_record.v1", "issue": 42, "repo": "acme/widgets",
            "created_at": "2026-05-01T09:00:00+00:00", "updated_at": "2026-05-01T09:00:00+00:00",
            "admission": {"destination": "pr", "branch_preview": false},
            "run_configuration": {"mechanical_tool_baseline": {"value": baseline, "chosen_by": "planner", "source": "profile"}},
            "approval_scope": {}, "roster": [], "review_cycles": [], "next_step": "build",
            "units": [{"id": "U1", "branch": "work/42-u1", "merge_state": "ready", "functional_checks": []}]
        })
    }
    /// The same, with the record's exact text.
    pub fn with(text: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().canonicalize().unwrap().join("widgets");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join(".gitignore"), ".claude/\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "init"]);
        let dir = repo.join(".claude/saga/runs");
        std::fs::create_dir_all(&dir).unwrap();
        let record = dir.join("issue-42.json");
        std::fs::write(&record, text).unwrap();
        Self {
            _tmp: tmp,
            repo,
            record,
            journal: TempJournal::new(),
        }
    }
    pub fn run(&self, extra: &[&str]) -> (i32, Value) {
        let repo = self.repo.to_str().unwrap().to_owned();
        let mut args = vec!["build-loop", "--issue", "42", "--repo-root", &repo];
        args.extend_from_slice(extra);
        run(&self.journal, &args, "")
    }
    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.record).unwrap()
    }
}

/// A repository with three commits: (its path, the first commit).
pub fn three_commits(dir: &Path) -> String {
    git(dir, &["init", "-q", "-b", "main"]);
    for i in 0..3 {
        std::fs::write(dir.join("f"), i.to_string()).unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    git(dir, &["rev-parse", "HEAD~2"])
}
