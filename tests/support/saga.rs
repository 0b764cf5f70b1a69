//! A saga thread on real parts: a git repository with a run record for issue 42,
//! a journal, and the `cairn` binary run from a scratch directory (never from a
//! checkout, so nothing the tests do reads the workspace's own git).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use super::git::git;
use super::TempJournal;

/// A run record for issue 42 with the given units and baseline.
pub fn run_record(baseline: Value, units: Value) -> Value {
    json!({
        "schema": "run_record.v1", "issue": 42, "repo": "acme/widgets",
        "created_at": "2026-05-01T09:00:00+00:00", "updated_at": "2026-05-01T09:00:00+00:00",
        "admission": {"destination": "pr", "branch_preview": false},
        "run_configuration": {"mechanical_tool_baseline": {"value": baseline, "chosen_by": "planner", "source": "profile"}},
        "approval_scope": {}, "roster": [], "review_cycles": [], "next_step": "build",
        "units": units
    })
}

/// A repository `widgets` (branch `main`, one commit), its run record
/// `.claude/saga/runs/issue-42.json`, a journal and a scratch working directory.
pub struct Thread {
    _tmp: tempfile::TempDir,
    pub repo: PathBuf,
    pub record: PathBuf,
    pub journal: TempJournal,
    pub scratch: tempfile::TempDir,
}

impl Thread {
    /// One unit `U1` whose baseline is `true`.
    pub fn new() -> Self {
        Self::with_record(run_record(
            json!(["true"]),
            json!([{"id": "U1", "branch": "work/42-u1", "merge_state": "ready"}]),
        ))
    }

    pub fn with_record(record: Value) -> Self {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let (repo, path) = record_repo(tmp.path(), "issue-42", &record);
        Thread {
            _tmp: tmp,
            repo,
            record: path,
            journal: TempJournal::new(),
            scratch: tempfile::tempdir().expect("a temp dir"),
        }
    }

    pub fn repo_str(&self) -> &str {
        self.repo.to_str().expect("a UTF-8 path")
    }

    /// `cairn ARGS --db JOURNAL`, run in `cwd`: exit code and stdout as JSON.
    pub fn cairn_in(&self, cwd: &Path, args: &[&str]) -> (i32, Value) {
        let out = self.output_in(cwd, args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let v = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is one JSON object ({e}): {stdout}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), v)
    }

    /// The whole output of `cairn ARGS --db JOURNAL` run in `cwd`.
    pub fn output_in(&self, cwd: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .arg("--db")
            .arg(self.journal.path())
            .current_dir(cwd)
            .env_remove("CAIRN_DB")
            .output()
            .expect("cairn runs")
    }

    /// `cairn ARGS`, run from the scratch directory (not a git repository).
    pub fn cairn(&self, args: &[&str]) -> (i32, Value) {
        self.cairn_in(self.scratch.path(), args)
    }

    /// `cairn saga VERB --saga-id issue-42 REST…`.
    pub fn s(&self, verb: &str, rest: &[&str]) -> (i32, Value) {
        let mut a = vec!["saga", verb, "--saga-id", "issue-42"];
        a.extend_from_slice(rest);
        self.cairn(&a)
    }

    /// `cairn saga merge-turn VERB --saga-id issue-42 REST…`.
    pub fn mt(&self, verb: &str, rest: &[&str]) -> (i32, Value) {
        let mut a = vec!["saga", "merge-turn", verb, "--saga-id", "issue-42"];
        a.extend_from_slice(rest);
        self.cairn(&a)
    }

    /// `cairn build-loop --issue 42 --repo-root REPO REST…`.
    pub fn build_loop(&self, rest: &[&str]) -> (i32, Value) {
        let mut a = vec![
            "build-loop",
            "--issue",
            "42",
            "--repo-root",
            self.repo_str(),
        ];
        a.extend_from_slice(rest);
        self.cairn(&a)
    }

    /// `saga save --id issue-42 --lifecycle-phase work`, accepted.
    pub fn save_at_work(&self) {
        let save = [
            "saga",
            "save",
            "--id",
            "issue-42",
            "--lifecycle-phase",
            "work",
        ];
        let (code, out) = self.cairn(&save);
        assert_eq!(code, 0, "{out}");
    }

    /// `merge-turn take` for `U1` on `branch` by holder `h`, accepted; its output.
    pub fn take_turn(&self, branch: &str) -> Value {
        let wt = self.repo.with_file_name("merge-wt");
        let args = [
            "--unit",
            "U1",
            "--branch",
            branch,
            "--merge-worktree",
            wt.to_str().expect("a UTF-8 path"),
            "--holder",
            "h",
        ];
        let (code, out) = self.mt("take", &args);
        assert_eq!(code, 0, "{out}");
        out
    }

    /// `merge-turn merged` of `U1` by `h` at `tip` onto `main`, in this repository.
    pub fn merged_onto_main(&self, tip: &str) -> (i32, Value) {
        let args = [
            "--unit",
            "U1",
            "--holder",
            "h",
            "--merged-tip",
            tip,
            "--repo",
            self.repo_str(),
            "--target",
            "main",
        ];
        self.mt("merged", &args)
    }

    /// Writes `name`, commits it, and returns the new `HEAD`.
    pub fn commit(&self, name: &str) -> String {
        std::fs::write(self.repo.join(name), format!("{name}\n")).expect("a file");
        git(&self.repo, &["add", name]);
        git(&self.repo, &["commit", "-q", "-m", name]);
        self.head()
    }

    pub fn head(&self) -> String {
        git(&self.repo, &["rev-parse", "HEAD"])
    }

    /// A thread at `work` with a clean plan review, the build loop green at `HEAD`
    /// and code review's `outcome` recorded for that revision — named by reference,
    /// the revision U1's build loop handed (no SHA typed): what PR-ready reads.
    pub fn reviewed(&self, outcome: &str) -> String {
        let save = self.cairn(&[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--lifecycle-phase",
            "work",
        ]);
        assert_eq!(save.0, 0, "{}", save.1);
        reviewed_in(&self.journal.path(), "issue-42", &self.repo, outcome)
    }

    /// The gates before the merge turn on this thread (already at `work`): a
    /// clean plan review, the build loop green at `HEAD`, code review accepted
    /// by reference, PR-ready ([`ready_in`]).
    pub fn ready(&self) {
        ready_in(&self.journal.path(), "issue-42", &self.repo);
    }

    /// `saga pr-ready --repo REPO`.
    pub fn pr_ready(&self) -> (i32, Value) {
        let repo = self.repo_str().to_owned();
        self.s("pr-ready", &["--repo", &repo])
    }

    /// Every byte of the journal.
    pub fn bytes(&self) -> Vec<u8> {
        self.journal.bytes()
    }

    /// `cairn journal audit`: exit 0 and no failure.
    pub fn audit_clean(&self) {
        let (code, out) = self.cairn(&["journal", "audit"]);
        assert_eq!(code, 0, "{out}");
    }
}

impl Default for Thread {
    fn default() -> Self {
        Self::new()
    }
}

/// A unit's work: `branch` made from `HEAD` with one commit of its own, checked
/// out (built and reviewed there before it merges).
pub fn unit_work(repo: &Path, branch: &str) {
    let file = branch.replace('/', "-");
    git(repo, &["checkout", "-q", "-b", branch]);
    std::fs::write(repo.join(&file), "u\n").expect("a file");
    git(repo, &["add", &file]);
    git(repo, &["commit", "-q", "-m", branch]);
}

/// `main` checked out, and `branch` merged into it (`--no-ff`).
pub fn merge_branch(repo: &Path, branch: &str) {
    git(repo, &["checkout", "-q", "main"]);
    git(repo, &["merge", "-q", "--no-ff", "--no-edit", branch]);
}

/// The predicates of a rejection, in order.
pub fn predicates(out: &Value) -> Vec<String> {
    out["error"]["violations"].as_array().map_or(vec![], |v| {
        v.iter()
            .map(|x| x["predicate"].as_str().unwrap_or("").to_owned())
            .collect()
    })
}

/// The messages of a rejection, joined.
pub fn messages(out: &Value) -> String {
    out["error"]["violations"]
        .as_array()
        .map_or(String::new(), |v| {
            v.iter()
                .map(|x| x["message"].as_str().unwrap_or("").to_owned())
                .collect::<Vec<_>>()
                .join(" | ")
        })
}

/// A repository `widgets` under `dir` (branch `main`, one commit) holding the run
/// record `record` for thread `id` (`issue-<N>`) at `.claude/saga/runs/<id>.json`,
/// its `issue` set to N: the repository and the record's path.
pub fn record_repo(dir: &Path, id: &str, record: &Value) -> (PathBuf, PathBuf) {
    let repo = dir
        .canonicalize()
        .expect("the temp dir resolves")
        .join("widgets");
    std::fs::create_dir_all(&repo).expect("the repo dir");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join(".gitignore"), ".claude/\n").expect("a file");
    std::fs::write(repo.join("a.txt"), "a\n").expect("a file");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let dir = repo.join(".claude/saga/runs");
    std::fs::create_dir_all(&dir).expect("the record dir");
    let path = dir.join(format!("{id}.json"));
    let mut record = record.clone();
    record["issue"] = json!(issue_number(id));
    std::fs::write(&path, serde_json::to_string_pretty(&record).expect("JSON"))
        .expect("the record");
    (repo, path)
}

fn issue_number(id: &str) -> u64 {
    id.strip_prefix("issue-")
        .and_then(|n| n.parse().ok())
        .expect("an issue thread: issue-<N>")
}

/// `cairn ARGS --db DB`, run from a fresh scratch directory: exit code and JSON.
pub fn cairn_at(db: &Path, args: &[&str]) -> (i32, Value) {
    let scratch = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--db")
        .arg(db)
        .current_dir(scratch.path())
        .env_remove("CAIRN_DB")
        .output()
        .expect("cairn runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (out.status.code().unwrap_or(-1), v)
}

/// On the journal `db`, thread `id` (at `work`) whose run record `repo` holds: a
/// clean plan review, U1's build loop green at `HEAD`, and code review's
/// `outcome` for the revision the loop handed (by reference): `HEAD`.
pub fn reviewed_in(db: &Path, id: &str, repo: &Path, outcome: &str) -> String {
    doc_review_clean(db, id);
    let issue = issue_number(id).to_string();
    let repo_str = repo.to_str().expect("a UTF-8 path");
    let (code, out) = cairn_at(
        db,
        &["build-loop", "--issue", &issue, "--repo-root", repo_str],
    );
    assert_eq!(code, 0, "the build loop goes green: {out}");
    let head = git(repo, &["rev-parse", "HEAD"]);
    let from = format!("build-loop/{id}:U1");
    let review = cairn_at(
        db,
        &[
            "saga",
            "review",
            "--saga-id",
            id,
            "--outcome",
            outcome,
            "--from",
            &from,
        ],
    );
    assert_eq!(review.0, 0, "{}", review.1);
    assert_eq!(review.1["gates"]["review"]["reviewed_sha"], head.as_str());
    head
}

/// [`reviewed_in`] with `accepted`, then PR-ready: the gates the merge turn follows.
pub fn ready_in(db: &Path, id: &str, repo: &Path) {
    reviewed_in(db, id, repo, "accepted");
    let repo_str = repo.to_str().expect("a UTF-8 path");
    let (code, out) = cairn_at(
        db,
        &["saga", "pr-ready", "--saga-id", id, "--repo", repo_str],
    );
    assert_eq!(code, 0, "PR-ready passes: {out}");
}

/// [`ready_in`] in a fresh repository holding thread `id`'s run record (one unit
/// `U1` on `work/u1`), for a test about what follows PR-ready; the repository's
/// temp dir, kept alive by the caller.
pub fn ready_elsewhere(db: &Path, id: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let units = json!([{"id": "U1", "branch": "work/u1", "merge_state": "ready"}]);
    let (repo, _) = record_repo(tmp.path(), id, &run_record(json!(["true"]), units));
    ready_in(db, id, &repo);
    (tmp, repo)
}

/// On the journal `db`, thread `id` (at `work`): the gates the merge turn follows
/// ([`ready_in`], in a fresh repository holding the thread's run record), then
/// [`merge_in`] there. The repository's temp dir, kept alive by the caller.
pub fn merged_in(db: &Path, id: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let units = json!([{"id": "U1", "branch": "work/u1", "merge_state": "ready"}]);
    let (repo, _) = record_repo(tmp.path(), id, &run_record(json!(["true"]), units));
    unit_work(&repo, "work/u1");
    ready_in(db, id, &repo);
    merge_in(db, id, &repo);
    tmp
}

/// On the journal `db`, thread `id` (PR-ready passed for `work/u1`'s work, made
/// with [`unit_work`]): the turn taken for `U1` ([`take_u1`]), `work/u1` merged into `main` in
/// `repo`, and the merge recorded as git shows it.
pub fn merge_in(db: &Path, id: &str, repo: &Path) {
    take_u1(db, id);
    merge_branch(repo, "work/u1");
    merged_u1(db, id, repo, &git(repo, &["rev-parse", "HEAD"]));
}

/// On the journal `db`, thread `id` (at `work`): the gates the merge turn follows,
/// run on `tree` — a clean plan review, U1's build loop (`branch` in its run
/// record) green at the tree's `HEAD`, code review accepted by reference, PR-ready
/// read in the tree: what a ship run merging that `HEAD` for the thread needs.
pub fn ready_in_tree(db: &Path, id: &str, tree: &Path, branch: &str) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let record = dir.path().join(format!("{id}.json"));
    let units = json!([{"id": "U1", "branch": branch, "merge_state": "ready"}]);
    let mut doc = run_record(json!(["true"]), units);
    doc["issue"] = json!(issue_number(id));
    std::fs::write(&record, doc.to_string()).expect("the run record");
    doc_review_clean(db, id);
    let tree_str = tree.to_str().expect("a UTF-8 path");
    let (code, out) = cairn_at(
        db,
        &[
            "build-loop",
            "--record",
            record.to_str().expect("a UTF-8 path"),
            "--repo",
            tree_str,
            "--unit",
            "U1",
        ],
    );
    assert_eq!(code, 0, "the build loop goes green: {out}");
    let from = format!("build-loop/{id}:U1");
    let review = cairn_at(
        db,
        &[
            "saga",
            "review",
            "--saga-id",
            id,
            "--outcome",
            "accepted",
            "--from",
            &from,
        ],
    );
    assert_eq!(review.0, 0, "{}", review.1);
    let issue = issue_number(id).to_string();
    let (code, out) = cairn_at(
        db,
        &[
            "saga",
            "pr-ready",
            "--saga-id",
            id,
            "--repo",
            tree_str,
            "--issue",
            &issue,
        ],
    );
    assert_eq!(code, 0, "PR-ready passes: {out}");
}

/// `saga doc-review` of thread `id` with no unresolved P0/P1 finding.
fn doc_review_clean(db: &Path, id: &str) {
    let doc = cairn_at(
        db,
        &[
            "saga",
            "doc-review",
            "--saga-id",
            id,
            "--unresolved-p0-p1",
            "0",
            "--source",
            "review_cycles",
        ],
    );
    assert_eq!(doc.0, 0, "{}", doc.1);
}

/// On the journal `db`, thread `id` (PR-ready passed for `head`, a commit on
/// `main` in `repo`): unit `U1`'s turn taken on `work/u1` made at `head`, and its
/// merge recorded at `head` on `main` — the merge turn a release follows.
pub fn turn_merged_at(db: &Path, id: &str, repo: &Path, head: &str) {
    git(repo, &["branch", "-f", "work/u1", head]);
    take_u1(db, id);
    merged_u1(db, id, repo, head);
}

/// On the journal `db`, thread `id`: U1's merge (holder `h`) recorded at `tip` on
/// `main` in `repo`, as git shows it.
pub fn merged_u1(db: &Path, id: &str, repo: &Path, tip: &str) {
    let repo_str = repo.to_str().expect("a UTF-8 path");
    let (code, out) = cairn_at(
        db,
        &[
            "saga",
            "merge-turn",
            "merged",
            "--saga-id",
            id,
            "--unit",
            "U1",
            "--holder",
            "h",
            "--merged-tip",
            tip,
            "--repo",
            repo_str,
            "--target",
            "main",
        ],
    );
    assert_eq!(code, 0, "merged: {out}");
}

/// On the journal `db`, thread `id`: the merge turn taken for unit `U1` on
/// `work/u1` by holder `h` (PR-ready passed for U1's revision).
pub fn take_u1(db: &Path, id: &str) {
    let (code, out) = cairn_at(
        db,
        &[
            "saga",
            "merge-turn",
            "take",
            "--saga-id",
            id,
            "--unit",
            "U1",
            "--branch",
            "work/u1",
            "--merge-worktree",
            "/nonexistent/wt",
            "--holder",
            "h",
        ],
    );
    assert_eq!(code, 0, "take: {out}");
}
