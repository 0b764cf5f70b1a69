//! The hardened observer on real repositories: the caller's `GIT_*` environment,
//! user and repository config, and odd file names cannot change what cairn's own
//! git readings mean (`cairn park observe-vcs`, `cairn::observe`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::git::git;

/// A clean repository with `main` pushed to a bare origin and tracked.
fn pushed_repo(base: &Path, name: &str) -> PathBuf {
    let origin = base.join(format!("{name}-origin.git"));
    let root = base.join(name);
    std::fs::create_dir_all(&root).unwrap();
    git(
        base,
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
    root
}

/// `cairn park observe-vcs --root ROOT` with extra environment; the checks by name.
fn observe_with(root: &Path, env: &[(&str, &str)]) -> Vec<(String, String, Value)> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(["park", "observe-vcs", "--root", root.to_str().unwrap()])
        .env("CAIRN_DB", "/nonexistent/cairn-test/journal.db")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["checks"]
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

fn outcome(checks: &[(String, String, Value)], name: &str) -> String {
    checks.iter().find(|c| c.0 == name).unwrap().1.clone()
}

#[test]
fn a_callers_git_dir_never_reaches_the_observation() {
    // Found inside a git hook: GIT_DIR/GIT_WORK_TREE of another clone made cairn
    // read that clone. The observed repository is clean and pushed; the other one
    // is dirty with an unpushed commit.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let clean = pushed_repo(&base, "clean");
    let other = pushed_repo(&base, "other");
    std::fs::write(other.join("file.txt"), "dirty\n").unwrap();
    std::fs::write(other.join("new.txt"), "x\n").unwrap();
    let git_dir = other.join(".git");
    let index = git_dir.join("index");
    let env = [
        ("GIT_DIR", git_dir.to_str().unwrap()),
        ("GIT_WORK_TREE", other.to_str().unwrap()),
        ("GIT_INDEX_FILE", index.to_str().unwrap()),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "status.showUntrackedFiles"),
        ("GIT_CONFIG_VALUE_0", "no"),
    ];
    let checks = observe_with(&clean, &env);
    assert_eq!(outcome(&checks, "tree_preserved"), "pass");
    assert_eq!(
        outcome(&checks, "commits_reachable_or_checkpoint_resolvable"),
        "pass"
    );
    // And the other way round: the dirty clone is seen dirty whatever GIT_DIR says.
    let clean_dir = clean.join(".git");
    let checks = observe_with(
        &other,
        &[
            ("GIT_DIR", clean_dir.to_str().unwrap()),
            ("GIT_WORK_TREE", clean.to_str().unwrap()),
        ],
    );
    assert_eq!(outcome(&checks, "tree_preserved"), "fail");
    // Each run records the environment it ran with, and no GIT_DIR is in it.
    for run in checks[1].2["observations"].as_array().unwrap() {
        let env = run["env"].as_object().unwrap();
        assert!(
            !env.contains_key("GIT_DIR") && !env.contains_key("GIT_WORK_TREE"),
            "{run}"
        );
        assert_eq!(env["GIT_CONFIG_NOSYSTEM"], "1", "{run}");
    }
}

#[test]
fn an_untracked_file_is_seen_whatever_the_config_says() {
    // `status.showUntrackedFiles=no` in the repository, and in a global config.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = pushed_repo(&base, "repo");
    git(&root, &["config", "status.showUntrackedFiles", "no"]);
    std::fs::write(root.join("untracked.txt"), "x\n").unwrap();
    // Plain git would call this tree clean: the setting is live.
    assert_eq!(git(&root, &["status", "--porcelain=v2"]), "");
    let checks = observe_with(&root, &[]);
    assert_eq!(outcome(&checks, "tree_preserved"), "fail");

    let home = base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[status]\n\tshowUntrackedFiles = no\n",
    )
    .unwrap();
    git(&root, &["config", "--unset", "status.showUntrackedFiles"]);
    let checks = observe_with(&root, &[("HOME", home.to_str().unwrap())]);
    assert_eq!(outcome(&checks, "tree_preserved"), "fail");
}

#[test]
fn a_configured_fsmonitor_never_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = pushed_repo(&base, "repo");
    let marker = base.join("fsmonitor-ran");
    let hook = base.join("fsmonitor.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    git(&root, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    // The hook is live: plain git status runs it.
    git(&root, &["status", "--porcelain=v2"]);
    assert!(
        marker.exists(),
        "the fsmonitor hook should run under plain git"
    );
    std::fs::remove_file(&marker).unwrap();

    let checks = observe_with(&root, &[]);
    assert_eq!(outcome(&checks, "tree_preserved"), "pass");
    assert!(
        !marker.exists(),
        "cairn's observation ran the configured fsmonitor"
    );
}

#[test]
fn conflicted_paths_with_newlines_and_non_ascii_are_one_path_each() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = pushed_repo(&base, "repo");
    let names = ["docs/café.md", "two\nlines.txt"];
    std::fs::create_dir_all(root.join("docs")).unwrap();
    for n in names {
        std::fs::write(root.join(n), "base\n").unwrap();
    }
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "base"]);
    git(&root, &["checkout", "-q", "-b", "other"]);
    for n in names {
        std::fs::write(root.join(n), "other\n").unwrap();
    }
    git(&root, &["commit", "-q", "-am", "other"]);
    git(&root, &["checkout", "-q", "main"]);
    for n in names {
        std::fs::write(root.join(n), "main\n").unwrap();
    }
    git(&root, &["commit", "-q", "-am", "main"]);
    let merge = crate::support::git::try_git(&root, &["merge", "-q", "other"]);
    assert!(!merge.status.success(), "the merge conflicts");

    let checks = observe_with(&root, &[]);
    assert_eq!(outcome(&checks, "no_vcs_operation_or_conflict"), "fail");
    let vcs = &checks[0].2;
    let mut conflicts: Vec<&str> = vcs["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    conflicts.sort_unstable();
    assert_eq!(conflicts, ["docs/café.md", "two\nlines.txt"]);
    assert_eq!(vcs["operations"], serde_json::json!(["merge"]));
}

#[test]
fn the_runner_records_argv_environment_status_output_and_times() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = pushed_repo(&base, "repo");
    let argv = cairn::observe::git(root.to_str().unwrap(), &["rev-parse", "HEAD"]);
    let run = cairn::observe::run(&argv);
    assert_eq!(run.argv, argv);
    assert_eq!(run.exit_status, Some(0));
    assert_eq!(run.stdout.trim(), git(&root, &["rev-parse", "HEAD"]));
    let env = run.env.as_ref().unwrap();
    assert_eq!(env["GIT_CONFIG_GLOBAL"], "/dev/null");
    assert_eq!(env["LC_ALL"], "C");
    assert!(env.keys().all(|k| !k.starts_with("GIT_")
        || k.starts_with("GIT_CONFIG")
        || k == "GIT_OPTIONAL_LOCKS"
        || k == "GIT_TERMINAL_PROMPT"
        || k == "GIT_NO_REPLACE_OBJECTS"
        || k == "GIT_GRAFT_FILE"));
    // git's own object graph: no replace refs, no grafts file.
    assert_eq!(env["GIT_NO_REPLACE_OBJECTS"], "1");
    assert_eq!(env["GIT_GRAFT_FILE"], "/dev/null");
    assert!(run.started_at <= run.finished_at);
    let missing = cairn::observe::run(&["/nonexistent/program".to_owned()]);
    assert_eq!(missing.exit_status, None);
    assert!(missing.stderr.contains("cannot run"));
}
