//! `cairn ship classify` on real repositories: every classifier outcome produced for
//! real (a live linked worktree, dead-lock debris, branch only, path only, a dirty
//! primary, the primary on another branch, a drifted anchor, the wrong repository).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::git;

/// `<tmp>/consumer-repo` on `main`, with `.claude/` ignored (as the seed assumes).
struct Primary {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Primary {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("consumer-repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join(".gitignore"), ".claude/\n").unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "init"]);
        Self { _tmp: tmp, root }
    }
    fn wt(&self) -> PathBuf {
        self.root.join(".claude/worktrees/abc")
    }
    fn preflight_at(&self, root: &Path, basename: &str) -> Value {
        let (code, out, _) = cairn(
            &[
                "ship",
                "classify",
                "--repo-root",
                root.to_str().unwrap(),
                "--expected-basename",
                basename,
                "--branch",
                "worktree-abc",
                "--worktree-path",
                self.wt().to_str().unwrap(),
                "--target-branch",
                "main",
            ],
            "",
            None,
        );
        assert_eq!(code, 0, "{out}");
        out
    }
    fn outcome(&self) -> String {
        self.preflight_at(&self.root, "consumer-repo")["outcome"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

#[test]
fn a_clean_primary_may_create_the_worktree_and_records_its_readings() {
    let p = Primary::new();
    let out = p.preflight_at(&p.root, "consumer-repo");
    assert_eq!(
        (
            out["outcome"].as_str(),
            out["may_create_worktree"].as_bool()
        ),
        (Some("clean"), Some(true))
    );
    let runs = out["observations"].as_array().unwrap();
    assert!(!runs.is_empty(), "{out}");
    for run in runs {
        // Every git reading is `git -C REPO_ROOT …`; the path probe is `test -e
        // WORKTREE_PATH`; the identity is `stat` of REPO_ROOT's `.git` and refs.
        let root = p.root.to_str().unwrap();
        let bound = if run["argv"][0] == "git" {
            (&run["argv"][1], &run["argv"][2]) == (&json!("-C"), &json!(root))
        } else if run["argv"][0] == "stat" {
            run["argv"]
                == json!([
                    "stat",
                    "-L",
                    "--format=%d:%i",
                    format!("{root}/.git"),
                    format!("{root}/.git/refs")
                ])
        } else {
            run["argv"] == json!(["test", "-e", p.wt().to_str().unwrap()])
        };
        assert!(bound, "bound to REPO_ROOT: {run}");
        assert!(
            run["started_at"].is_string() && run["exit_status"].is_i64(),
            "{run}"
        );
    }
}

#[test]
fn a_live_linked_worktree_on_the_branch_is_never_stripped() {
    let p = Primary::new();
    git(
        &p.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "worktree-abc",
            p.wt().to_str().unwrap(),
            "main",
        ],
    );
    let out = p.preflight_at(&p.root, "consumer-repo");
    assert_eq!(out["outcome"], "stopped:worktree-live:worktree-abc");
    assert_eq!(out["may_create_worktree"], false);
}

#[test]
fn debris_is_classified_for_reclaim() {
    // Branch and path, no linked worktree: a crashed session's dead lock.
    let p = Primary::new();
    git(&p.root, &["branch", "worktree-abc"]);
    std::fs::create_dir_all(p.wt()).unwrap();
    assert_eq!(p.outcome(), "reclaimable:dead-lock:worktree-abc");
    // Branch only.
    let p = Primary::new();
    git(&p.root, &["branch", "worktree-abc"]);
    assert_eq!(p.outcome(), "reclaimable:branch-only:worktree-abc");
    // Path only.
    let p = Primary::new();
    std::fs::create_dir_all(p.wt()).unwrap();
    assert_eq!(
        p.outcome(),
        format!("reclaimable:path-only:{}", p.wt().display())
    );
    // A worktree removed by hand leaves a prunable registration: still live to git, never stripped.
    let p = Primary::new();
    git(
        &p.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "worktree-abc",
            p.wt().to_str().unwrap(),
            "main",
        ],
    );
    std::fs::remove_dir_all(p.wt()).unwrap();
    assert_eq!(p.outcome(), "stopped:worktree-live:worktree-abc");
}

#[test]
fn the_primary_must_be_clean_on_the_target_branch() {
    let p = Primary::new();
    std::fs::write(p.root.join("a.txt"), "changed\n").unwrap();
    assert_eq!(p.outcome(), "stopped:primary-dirty");
    let p = Primary::new();
    git(&p.root, &["checkout", "-q", "-b", "elsewhere"]);
    assert_eq!(p.outcome(), "stopped:primary-off-branch");
    // Dirty and off-branch with debris: the earliest check wins.
    git(&p.root, &["branch", "worktree-abc"]);
    std::fs::write(p.root.join("b.txt"), "untracked\n").unwrap();
    assert_eq!(p.outcome(), "stopped:primary-dirty");
}

#[test]
fn a_drifted_or_wrong_anchor_stops_first() {
    let p = Primary::new();
    std::fs::create_dir(p.root.join("sub")).unwrap();
    // An anchor that is not the top level (a subdirectory named like the repo).
    let sub = p.root.join("sub");
    std::fs::rename(&sub, p.root.join("consumer-repo")).unwrap();
    let nested = p.root.join("consumer-repo");
    std::fs::write(nested.join("keep"), "x").unwrap();
    let out = p.preflight_at(&nested, "consumer-repo");
    assert_eq!(out["outcome"], "stopped:repo-anchor-drift", "{out}");
    let out = p.preflight_at(&p.root, "another-repo");
    assert_eq!(
        out["outcome"],
        format!("stopped:wrong-repo:{}", p.root.display())
    );
    // Not a repository at all: git cannot report the top level.
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().canonicalize().unwrap().join("consumer-repo");
    std::fs::create_dir(&plain).unwrap();
    let out = p.preflight_at(&plain, "consumer-repo");
    assert_eq!(out["outcome"], "stopped:unreadable:toplevel");
}

#[test]
fn bad_parameters_exit_2() {
    let (code, out, _) = cairn(
        &[
            "ship",
            "classify",
            "--repo-root",
            "relative",
            "--expected-basename",
            "x",
            "--branch",
            "b",
            "--worktree-path",
            "/w",
            "--target-branch",
            "main",
        ],
        "",
        None,
    );
    // `--repo-root` is the older spelling of `--repo`: the field is the flag's name.
    assert_eq!(
        (code, out["error"]["field"].clone()),
        (2, serde_json::json!("repo"))
    );
    let (code, out, _) = cairn(
        &[
            "ship",
            "classify",
            "--repo-root",
            "/r",
            "--expected-basename",
            "x",
            "--branch",
            " ",
            "--worktree-path",
            "/w",
            "--target-branch",
            "main",
        ],
        "",
        None,
    );
    assert_eq!(
        (code, out["error"]["field"].clone()),
        (2, serde_json::json!("branch"))
    );
}
