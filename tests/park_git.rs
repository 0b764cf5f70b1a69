//! `cairn park observe-vcs` on real git repositories made in temp dirs, with each
//! in-progress operation created for real.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::park::park;
use crate::support::git::{git, try_git};

/// A repository with an origin (a bare repo) and `main` pushed and tracked.
struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let origin = base.join("origin.git");
        let root = base.join("work");
        std::fs::create_dir_all(&root).unwrap();
        git(
            &base,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                origin.to_str().unwrap(),
            ],
        );
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["config", "commit.gpgsign", "false"]);
        std::fs::write(root.join("file.txt"), "one\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "one"]);
        git(
            &root,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        git(&root, &["push", "-q", "-u", "origin", "main"]);
        Self { _tmp: tmp, root }
    }

    fn path(&self) -> &str {
        self.root.to_str().unwrap()
    }

    fn commit(&self, file: &str, text: &str, msg: &str) {
        std::fs::write(self.root.join(file), text).unwrap();
        git(&self.root, &["add", "."]);
        git(&self.root, &["commit", "-q", "-m", msg]);
    }

    /// Two branches that change the same line: `main` and `other`.
    fn diverge(&self) {
        git(&self.root, &["checkout", "-q", "-b", "other"]);
        self.commit("file.txt", "other\n", "other");
        git(&self.root, &["checkout", "-q", "main"]);
        self.commit("file.txt", "main\n", "main");
    }
}

/// The observe-vcs checks by name: (outcome, evidence).
fn observe(root: &str) -> Vec<(String, String, Value)> {
    let (code, out, _) = park(&["park", "observe-vcs", "--root", root], "", None);
    assert_eq!(code, 0, "{out}");
    out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["outcome"].as_str().unwrap().to_owned(),
                c["evidence"].clone(),
            )
        })
        .collect()
}

fn outcomes(root: &str) -> Vec<String> {
    observe(root).into_iter().map(|(_, o, _)| o).collect()
}

#[test]
fn a_clean_pushed_checkout_passes_with_recorded_argv() {
    let repo = Repo::new();
    let checks = observe(repo.path());
    let names: Vec<&str> = checks.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "no_vcs_operation_or_conflict",
            "tree_preserved",
            "commits_reachable_or_checkpoint_resolvable"
        ]
    );
    assert_eq!(outcomes(repo.path()), ["pass", "pass", "pass"]);
    let vcs = &checks[0].2;
    let runs = vcs["observations"].as_array().unwrap();
    assert!(!runs.is_empty(), "no git run recorded: {vcs}");
    for run in runs {
        // Every reading is bound to the root: git in it, or a `test -d` of a path
        // inside its git dir (whether a rebase is in progress).
        let argv = run["argv"].as_array().unwrap();
        let bound_git = argv[0..3] == json!(["git", "-C", repo.path()]).as_array().unwrap()[..];
        let probe = argv[0] == "test"
            && argv[1] == "-d"
            && argv[2]
                .as_str()
                .unwrap()
                .starts_with(&format!("{}/.git/", repo.path()));
        assert!(bound_git || probe, "{run}");
        assert_eq!(run["env"]["LC_ALL"], "C", "{run}");
        assert!(run["env"].get("GIT_DIR").is_none(), "{run}");
        assert!(
            run["exit_status"].is_i64()
                && run["started_at"].is_string()
                && run["finished_at"].is_string(),
            "{run}"
        );
    }
    let head = String::from_utf8(try_git(&repo.root, &["rev-parse", "HEAD"]).stdout).unwrap();
    assert_eq!(checks[1].2["resolved_head"], head.trim());
    assert_eq!(checks[1].2["state"], "durable");
}

#[test]
fn the_observed_checks_are_accepted_by_evaluate() {
    // What observe-vcs prints is valid typed evidence for the same bound root.
    let repo = Repo::new();
    let checks: Vec<Value> = {
        let (_, out, _) = park(&["park", "observe-vcs", "--root", repo.path()], "", None);
        out["checks"].as_array().unwrap().clone()
    };
    assert_eq!(checks.len(), 3, "{checks:?}");
    let mut obs = crate::support::park::observation();
    for c in checks {
        let name = c["name"].as_str().unwrap().to_owned();
        crate::support::park::set(&mut obs, &name, c);
    }
    // The fixture's other checks are bound to another root: the correlation rule must say so.
    let (code, out, _) = park(&["park", "check"], &obs.to_string(), None);
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("bound-root-mismatch")),
        "{out}"
    );
}

#[test]
fn uncommitted_changes_fail_tree_preserved() {
    let repo = Repo::new();
    std::fs::write(repo.root.join("file.txt"), "changed\n").unwrap();
    assert_eq!(outcomes(repo.path()), ["pass", "fail", "pass"]);
    std::fs::write(repo.root.join("file.txt"), "one\n").unwrap();
    std::fs::write(repo.root.join("new.txt"), "untracked\n").unwrap();
    assert_eq!(outcomes(repo.path()), ["pass", "fail", "pass"]);
}

/// An edit under a skip-worktree or assume-unchanged mark is not in `status`,
/// and HEAD does not preserve it: `tree_preserved` fails (helper-69's class).
#[test]
fn an_edit_hidden_by_an_index_mark_fails_tree_preserved() {
    for mark in ["--skip-worktree", "--assume-unchanged"] {
        let repo = Repo::new();
        std::fs::write(repo.root.join("file.txt"), "changed\n").unwrap();
        git(&repo.root, &["update-index", mark, "file.txt"]);
        assert_eq!(git(&repo.root, &["status", "--porcelain"]), "", "{mark}");
        assert_eq!(outcomes(repo.path()), ["pass", "fail", "pass"], "{mark}");
    }
}

/// A checkout whose `.git` reads another repository (a `commondir` file naming a
/// bare clone, or the `.git` swapped for a gitfile naming a clone) is not the
/// bound repository: every check is unknown (helper-77's class; bind-repository
/// holds the same relationship).
#[test]
fn a_checkout_reading_another_repository_is_unknown() {
    for swap in ["commondir", "gitfile"] {
        let repo = Repo::new();
        let other = repo.root.with_file_name(format!("other-{swap}"));
        let bare = if swap == "commondir" { "--bare" } else { "-q" };
        git(
            repo.root.parent().unwrap(),
            &["clone", "-q", bare, repo.path(), other.to_str().unwrap()],
        );
        let dot_git = repo.root.join(".git");
        if swap == "commondir" {
            std::fs::write(dot_git.join("commondir"), format!("{}\n", other.display())).unwrap();
        } else {
            std::fs::rename(&dot_git, repo.root.with_file_name("kept.git")).unwrap();
            std::fs::write(&dot_git, format!("gitdir: {}/.git\n", other.display())).unwrap();
        }
        assert_eq!(
            outcomes(repo.path()),
            ["unknown", "unknown", "unknown"],
            "{swap}"
        );
    }
}

#[test]
fn unpushed_commits_fail_reachability() {
    let repo = Repo::new();
    repo.commit("file.txt", "two\n", "two");
    assert_eq!(outcomes(repo.path()), ["pass", "pass", "fail"]);
    git(&repo.root, &["branch", "--unset-upstream"]);
    let checks = observe(repo.path());
    assert_eq!(checks[2].1, "fail");
    assert!(checks[2].2["error"]
        .as_str()
        .unwrap()
        .contains("no upstream"));
}

#[test]
fn a_conflicting_merge_fails() {
    let repo = Repo::new();
    repo.diverge();
    assert!(!try_git(&repo.root, &["merge", "other"]).status.success());
    let checks = observe(repo.path());
    assert_eq!(checks[0].1, "fail");
    assert_eq!(checks[0].2["operations"], json!(["merge"]));
    assert_eq!(checks[0].2["conflicts"], json!(["file.txt"]));
}

#[test]
fn a_stopped_rebase_fails() {
    let repo = Repo::new();
    repo.diverge();
    assert!(!try_git(&repo.root, &["rebase", "other"]).status.success());
    let checks = observe(repo.path());
    assert_eq!(checks[0].1, "fail");
    assert!(
        checks[0].2["operations"]
            .as_array()
            .unwrap()
            .contains(&json!("rebase")),
        "{}",
        checks[0].2
    );
}

#[test]
fn a_cherry_pick_conflict_fails() {
    let repo = Repo::new();
    repo.diverge();
    assert!(!try_git(&repo.root, &["cherry-pick", "other"])
        .status
        .success());
    let checks = observe(repo.path());
    assert_eq!(checks[0].1, "fail");
    assert_eq!(checks[0].2["operations"], json!(["cherry-pick"]));
}

#[test]
fn a_revert_in_progress_fails() {
    let repo = Repo::new();
    repo.commit("file.txt", "two\n", "two");
    repo.commit("file.txt", "three\n", "three");
    assert!(!try_git(&repo.root, &["revert", "--no-edit", "HEAD~1"])
        .status
        .success());
    let checks = observe(repo.path());
    assert_eq!(checks[0].1, "fail");
    assert_eq!(checks[0].2["operations"], json!(["revert"]));
}

#[test]
fn a_linked_worktree_is_observed_at_its_own_root() {
    let repo = Repo::new();
    let wt = repo.root.parent().unwrap().join("linked");
    git(
        &repo.root,
        &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
    );
    let wt = wt.canonicalize().unwrap();
    let checks = observe(wt.to_str().unwrap());
    assert_eq!(checks[0].1, "pass");
    assert_eq!(checks[1].1, "pass");
    // A new branch without an upstream: a checkpoint is needed.
    assert_eq!(checks[2].1, "fail");
    assert_eq!(checks[0].2["bound_root"], wt.to_str().unwrap());
    // And a binding proves the linked-worktree relationship from real git output.
    let read = |args: &[&str]| String::from_utf8(try_git(&wt, args).stdout).unwrap();
    let root = wt.to_str().unwrap();
    let argv = |rest: &[&str]| {
        let mut v = vec!["git", "-C", root];
        v.extend_from_slice(rest);
        json!(v)
    };
    let input = json!({
        "selector": {"kind": "bead", "value": "rsry-1"},
        "receipt_identity": {"episode_id": crate::support::park::EPISODE, "anchor_bead": "rsry-1",
            "repository": {"path": root, "vcs": "git", "branch": "side", "head": read(&["rev-parse", "HEAD"]).trim()}},
        "observations": {
            "root": {"command": argv(&["rev-parse", "--show-toplevel"]), "stdout": read(&["rev-parse", "--show-toplevel"])},
            "git_dir": {"command": argv(&["rev-parse", "--path-format=absolute", "--git-dir"]), "stdout": read(&["rev-parse", "--path-format=absolute", "--git-dir"])},
            "common_dir": {"command": argv(&["rev-parse", "--path-format=absolute", "--git-common-dir"]), "stdout": read(&["rev-parse", "--path-format=absolute", "--git-common-dir"])},
            "remote": {"command": argv(&["remote", "get-url", "origin"]), "stdout": read(&["remote", "get-url", "origin"])}
        },
        "registrations": [{"name": "local", "url": format!("ssh://host.example{}", read(&["remote", "get-url", "origin"]).trim())}]
    });
    // The origin is a local path: not a remote identity, so binding refuses (fail closed).
    let (code, out, _) = park(&["park", "bind-repository"], &input.to_string(), None);
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("remote-url")),
        "{out}"
    );
    git(
        &repo.root,
        &[
            "remote",
            "set-url",
            "origin",
            "git@github.com:example/project.git",
        ],
    );
    let mut input = input;
    input["observations"]["remote"]["stdout"] = json!(read(&["remote", "get-url", "origin"]));
    input["registrations"] =
        json!([{"name": "project", "url": "https://github.com/example/project"}]);
    let (code, out, _) = park(&["park", "bind-repository"], &input.to_string(), None);
    assert_eq!(code, 0, "{out}");
    assert!(
        out["git_dir"]
            .as_str()
            .unwrap()
            .contains("/.git/worktrees/"),
        "{out}"
    );
}

#[test]
fn unreadable_state_is_unknown_never_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().canonicalize().unwrap();
    assert_eq!(
        outcomes(plain.to_str().unwrap()),
        ["unknown", "unknown", "unknown"]
    );
    // A subdirectory of a repository is not its bound root.
    let repo = Repo::new();
    std::fs::create_dir(repo.root.join("sub")).unwrap();
    assert_eq!(
        outcomes(repo.root.join("sub").to_str().unwrap()),
        ["unknown", "unknown", "unknown"]
    );
}

#[test]
fn a_jj_workspace_without_jj_is_unknown() {
    let repo = Repo::new();
    std::fs::create_dir(repo.root.join(".jj")).unwrap();
    let checks = observe(repo.path());
    assert_eq!(checks.len(), 3, "{checks:?}");
    assert!(
        checks
            .iter()
            .all(|c| c.1 == "unknown" && c.2["backend"] == "jj"),
        "{checks:?}"
    );
}

#[test]
fn observe_vcs_refuses_a_relative_root() {
    let (code, out, _) = park(&["park", "observe-vcs", "--root", "relative/dir"], "", None);
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("absolute-path"))
    );
}

/// cairn's own index for a status reading is made at an absolute place: with a
/// relative `TMPDIR` (one inside the tree, ignored) git resolved it inside the
/// tree and the files stayed there (helper-73). The reading is made and nothing
/// is left in the tree.
#[test]
fn a_relative_tmpdir_leaves_nothing_in_the_tree() {
    let repo = Repo::new();
    std::fs::create_dir(repo.root.join(".cache")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["park", "observe-vcs", "--repo", repo.path()])
        .current_dir(&repo.root)
        .env("TMPDIR", ".cache")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let preserved = &v["checks"][1];
    assert_eq!(preserved["name"], "tree_preserved");
    assert_eq!(
        preserved["outcome"], "pass",
        "an empty directory is no change"
    );
    let left: Vec<_> = std::fs::read_dir(repo.root.join(".cache"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "files left in the tree: {left:?}");
}
