//! A consumer repository for the ship tests on real git: `<tmp>/consumer-repo` on
//! `main` with `.claude/` ignored, a journal of its own, the `cairn ship` verbs run
//! as real processes, and the phase reports a leaf would write.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::{git, try_git};
use crate::support::TempJournal;

/// A `git` first on the PATH of the `cairn` processes a test starts: it logs every
/// argv (one line each) and then runs the real git, after an optional pause (to
/// hold a mutation in flight while other processes race it) and an optional shell
/// command (to change the world right before a step). The test's own git calls do
/// not go through it.
pub struct Spy {
    dir: tempfile::TempDir,
}

impl Spy {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let real = String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v git"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let d = dir.path().display();
        let script = format!(
            "#!/bin/sh\n\
             printf '%s %s\\n' \"$PPID\" \"$*\" >> '{d}/log'\n\
             if [ -f '{d}/before' ]; then case \"$*\" in *\"$(cat '{d}/before-on')\"*) sh '{d}/before' ;; esac; fi\n\
             if [ -f '{d}/slow' ]; then case \"$*\" in *\"$(cat '{d}/slow')\"*) sleep 3 ;; esac; fi\n\
             exec '{}' \"$@\"\n",
            real.trim()
        );
        let git = dir.path().join("git");
        std::fs::write(&git, script).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        Spy { dir }
    }
    /// The observer's PATH the `cairn` processes get (`CAIRN_TESTING_OBSERVER_PATH`,
    /// honoured by the test build only): the spy first, then the system's.
    pub fn path(&self) -> String {
        crate::support::observer_path_with(self.dir.path())
    }
    /// Every git argv run so far, one line each: the pid of the process that ran
    /// it, then the argv (`-C DIR …`).
    pub fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
    /// How many logged argvs contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.log().iter().filter(|l| l.contains(needle)).count()
    }
    /// How many logged argvs the process `pid` ran.
    pub fn ran_by(&self, pid: u32) -> usize {
        let prefix = format!("{pid} ");
        self.log().iter().filter(|l| l.starts_with(&prefix)).count()
    }
    /// Pause 3 s before every git argv containing `needle`.
    pub fn slow(&self, needle: &str) {
        std::fs::write(self.dir.path().join("slow"), needle).unwrap();
    }
    /// No more pauses.
    pub fn fast(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("slow"));
    }
    /// Run `sh -c script` before every git argv containing `needle`.
    pub fn before(&self, needle: &str, script: &str) {
        std::fs::write(self.dir.path().join("before-on"), needle).unwrap();
        std::fs::write(self.dir.path().join("before"), script).unwrap();
    }
    /// Waits (up to 20 s) until more than `seen` logged argvs contain `needle`.
    pub fn wait_for(&self, needle: &str, seen: usize) {
        for _ in 0..400 {
            if self.count(needle) > seen {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("no git argv with `{needle}` within 20 s: {:?}", self.log());
    }
}

pub struct Repo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub journal: TempJournal,
    /// When set, every `cairn` process runs git through it.
    pub spy: Option<Spy>,
}

pub const ID: &str = "abc";

impl Repo {
    pub fn new() -> Self {
        Self::with_gitignore(".claude/\n.run-ship/\n")
    }
    /// A repository whose committed `.gitignore` is `ignore`.
    pub fn with_gitignore(ignore: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("consumer-repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        // The seed assumes `.claude/` is ignored; `.run-ship/` packets are git-invisible.
        std::fs::write(root.join(".gitignore"), ignore).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "init"]);
        Self {
            _tmp: tmp,
            root,
            journal: TempJournal::new(),
            spy: None,
        }
    }
    /// A repository whose `cairn` processes run git through a [`Spy`].
    pub fn spied() -> Self {
        Self {
            spy: Some(Spy::new()),
            ..Self::new()
        }
    }
    /// The spy (panics when the repository has none).
    pub fn spy(&self) -> &Spy {
        self.spy.as_ref().expect("a spied repository")
    }
    /// Starts `cairn ship <args>` on this journal without waiting for it, in a
    /// process group of its own (so a test can kill it with the git it runs).
    pub fn spawn(&self, args: &[&str]) -> Child {
        use std::os::unix::process::CommandExt as _;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("ship")
            .args(args)
            .arg("--db")
            .arg(self.journal.path())
            .env_remove("CAIRN_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(spy) = &self.spy {
            cmd.env(crate::support::OBSERVER_PATH_VAR, spy.path());
        }
        cmd.spawn().expect("cairn runs")
    }
    pub fn wt(&self) -> PathBuf {
        self.root.join(".claude/worktrees/abc")
    }
    pub fn run(&self, args: &[&str], stdin: &str) -> (i32, Value) {
        let (code, out, _) = self.run_full(args, stdin);
        (code, out)
    }
    /// `cairn ship <args>` with `stdin`: exit code, the one JSON object, stderr.
    pub fn run_full(&self, args: &[&str], stdin: &str) -> (i32, Value, String) {
        if self.spy.is_none() {
            let mut full = vec!["ship"];
            full.extend_from_slice(args);
            return cairn(&full, stdin, Some(&self.journal.path()));
        }
        let mut child = {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
            cmd.arg("ship")
                .args(args)
                .arg("--db")
                .arg(self.journal.path())
                .env_remove("CAIRN_DB")
                .env(crate::support::OBSERVER_PATH_VAR, self.spy().path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().expect("cairn runs")
        };
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .ok();
        finished(child)
    }
    pub fn verb(&self, verb: &str, stdin: &str) -> (i32, Value) {
        self.run(&[verb, "--short-id", ID], stdin)
    }
    pub fn open_with(&self, extra: &[&str]) -> (i32, Value) {
        let root = self.root.to_str().unwrap().to_owned();
        let wt = self.wt().to_str().unwrap().to_owned();
        let mut args = vec![
            "open",
            "--repo",
            &root,
            "--short-id",
            ID,
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
        // Each `--flag value` pair of `extra` replaces the default or is added.
        for pair in extra.chunks(2) {
            match args.iter().position(|a| *a == pair[0]) {
                Some(i) if pair.len() == 2 => args[i + 1] = pair[1],
                _ => args.extend_from_slice(pair),
            }
        }
        self.run(&args, "")
    }
    pub fn commit_in(&self, dir: &Path, files: &[(&str, &str)], msg: &str) -> String {
        for (f, body) in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        git(dir, &["add", "-A"]);
        let out = try_git(dir, &["commit", "-q", "-m", msg]);
        assert!(out.status.success(), "{out:?}");
        git(dir, &["rev-parse", "HEAD"])
    }
    /// Open, create, one in-scope commit, verify: phase 2.
    pub fn to_phase2(&self) -> String {
        self.to_phase2_with(&[])
    }
    /// [`Repo::to_phase2`], opened with `open_extra` (`--flag value` pairs).
    pub fn to_phase2_with(&self, open_extra: &[&str]) -> String {
        assert_eq!(self.open_with(open_extra).0, 0);
        assert_eq!(self.verb("create", "").0, 0);
        let head = self.commit_in(&self.wt(), &[("src.txt", "fix\n")], "fix: the thing");
        let (code, out) = self.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
        assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
        head
    }
    /// … refine passed, pre-merge checked: merge-ready.
    pub fn to_merge_ready(&self) {
        self.to_merge_ready_with(&[]);
    }
    /// [`Repo::to_merge_ready`], opened with `open_extra`.
    pub fn to_merge_ready_with(&self, open_extra: &[&str]) {
        self.to_phase2_with(open_extra);
        let tip = git(&self.wt(), &["rev-parse", "HEAD"]);
        let (code, out) = self.verb("refine", &refine(&tip).to_string());
        assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
        let (code, out) = self.verb("pre-merge", &premerge().to_string());
        assert_eq!(
            (code, out["state"].as_str()),
            (0, Some("merge-ready")),
            "{out}"
        );
    }
    pub fn main_head(&self) -> String {
        git(&self.root, &["rev-parse", "main"])
    }
    /// Whether `refs/heads/<name>` exists in the primary.
    pub fn has_branch(&self, name: &str) -> bool {
        try_git(
            &self.root,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{name}"),
            ],
        )
        .status
        .success()
    }
    /// The event types recorded on the stream, in order.
    pub fn events(&self) -> Vec<String> {
        let (_, log, _) = cairn(
            &["journal", "log", "--stream", "ship/abc", "--format", "json"],
            "",
            Some(&self.journal.path()),
        );
        log["events"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["event_type"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
    pub fn audit_ok(&self) {
        let (code, out, _) = cairn(&["journal", "audit"], "", Some(&self.journal.path()));
        assert_eq!(code, 0, "{out}");
        let (code, out, _) = cairn(&["journal", "verify"], "", Some(&self.journal.path()));
        assert_eq!(code, 0, "{out}");
    }
}

/// A spawned `cairn` process's exit code, its one JSON object and its stderr.
pub fn finished(child: Child) -> (i32, Value, String) {
    let out = child.wait_with_output().expect("cairn exits");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // A process killed by a signal printed nothing.
    let v: Value = if stdout.is_empty() {
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

pub fn phase1(head: &str, in_scope: Option<&[&str]>) -> Value {
    let mut v = json!({
        "verdict": "ok",
        "worktree_path": ".claude/worktrees/abc",
        "branch": "worktree-abc",
        "head_sha": &head[..7],
        "commit_subject": "fix: the thing",
        "intent_excerpt": "Fix the thing the kata names.",
        "cited_refs": [],
    });
    if let Some(p) = in_scope {
        v["in_scope_paths"] = json!(p);
    }
    v
}

pub fn refine(tip: &str) -> Value {
    json!({
        "verdict": "passed",
        "rebase_outcome": "clean",
        "iterations_run": 2,
        "tip_sha": &tip[..7],
        "commits_added": [format!("{} fix: the thing", &tip[..7])],
        "dismissed_findings": ["job 12 HIGH nil deref — guarded at src.txt::load since the fix"],
        "lint_clean": true,
        "tiebreakers": [{"number": 1, "context": "HIGH finding looked like a false positive", "disposition": "dismissed", "grounding": "RDR-3 §2 scopes it out"}],
    })
}

pub fn premerge() -> Value {
    json!({
        "rebase_outcome_3_2": "unchanged",
        "tests_pass": true,
        "lint_clean": true,
        "squash": "n/a",
        "open_review_jobs": 0,
    })
}

pub fn gate<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["gates"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["name"] == name))
        .unwrap_or_else(|| panic!("no gate {name}: {out}"))
}
