//! `cairn ship merge` on real git: `merged` (and then `shipped`) only when cairn's
//! own readings after the merge show TARGET_BRANCH holding the merged commit; the
//! primary must be on TARGET_BRANCH and clean right before the merge; and exactly
//! the tip the pre-merge checks saw is merged (issue 15, findings 1 and 2).

use serde_json::json;

use crate::support::git::git;
use crate::support::ship_repo::{premerge, Repo};

/// The refs that hold `sha` (`git for-each-ref --contains`).
fn refs_containing(r: &Repo, sha: &str) -> Vec<String> {
    git(
        &r.root,
        &["for-each-ref", "--format=%(refname)", "--contains", sha],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// After a refused merge: main did not move, the branch and worktree are intact,
/// `teardown` is refused, and the way on is `resume`.
fn nothing_merged(r: &Repo, main_before: &str, tip: &str) {
    assert_eq!(r.main_head(), main_before, "main is untouched");
    assert!(r.has_branch("worktree-abc"), "the branch is kept");
    assert!(r.wt().is_dir(), "the worktree is kept");
    assert!(
        refs_containing(r, tip).contains(&"refs/heads/worktree-abc".to_owned()),
        "the tip is still on its branch"
    );
    let (code, out) = r.verb("teardown", "");
    assert_eq!(code, 2, "no teardown of an unmerged run: {out}");
    assert!(!r.events().iter().any(|e| e == "merge-accepted"));
}

/// The way back after the primary is put right: resume → phase 3 → pre-merge →
/// merge → teardown → shipped, with main at the tip.
fn ships_after_resume(r: &Repo, tip: &str) {
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    assert_eq!(r.main_head(), tip);
    let (code, out) = r.verb("teardown", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("shipped")), "{out}");
    r.audit_ok();
}

#[test]
fn a_detached_primary_is_never_merged_into() {
    let r = Repo::new();
    r.to_merge_ready();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let main_before = r.main_head();
    git(&r.root, &["checkout", "-q", "--detach"]);
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (4, Some("stopped")), "{out}");
    assert_eq!(out["code"], "stopped:primary-off-branch", "{out}");
    assert_eq!(out["merged_sha"], json!(null));
    assert_eq!(
        git(&r.root, &["rev-parse", "HEAD"]),
        main_before,
        "the detached HEAD did not move"
    );
    nothing_merged(&r, &main_before, &tip);
    assert_eq!(out["next"], json!(["resume", "abandon"]), "{out}");
    git(&r.root, &["checkout", "-q", "main"]);
    ships_after_resume(&r, &tip);
}

#[test]
fn a_primary_on_another_branch_is_never_fast_forwarded() {
    let r = Repo::new();
    r.to_merge_ready();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let main_before = r.main_head();
    git(&r.root, &["checkout", "-q", "-b", "other"]);
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:primary-off-branch")),
        "{out}"
    );
    assert_eq!(
        git(&r.root, &["rev-parse", "other"]),
        main_before,
        "`other` did not move"
    );
    nothing_merged(&r, &main_before, &tip);
    git(&r.root, &["checkout", "-q", "main"]);
    ships_after_resume(&r, &tip);
}

#[test]
fn a_dirty_primary_is_never_merged_into() {
    let r = Repo::new();
    r.to_merge_ready();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let main_before = r.main_head();
    std::fs::write(r.root.join("stray.txt"), "a leaf wrote here\n").unwrap();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:primary-dirty")),
        "{out}"
    );
    nothing_merged(&r, &main_before, &tip);
    std::fs::remove_file(r.root.join("stray.txt")).unwrap();
    ships_after_resume(&r, &tip);
}

/// The primary leaves TARGET_BRANCH between cairn's readings and `git merge` (a
/// race): the merge lands on a detached HEAD, and the readings after it show main
/// without the commit, so nothing says `merged`.
#[test]
fn a_merge_that_did_not_land_on_the_target_is_not_merged() {
    let r = Repo::spied();
    r.to_merge_ready();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let main_before = r.main_head();
    r.spy().before(
        "merge --ff-only",
        &format!("git -C '{}' checkout -q --detach", r.root.display()),
    );
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:merge-unverified")),
        "{out}"
    );
    assert_eq!(r.main_head(), main_before, "main does not hold the commit");
    assert!(
        !refs_containing(&r, &tip).contains(&"refs/heads/main".to_owned()),
        "main does not hold the tip"
    );
    assert_eq!(out["merged_sha"], json!(null));
    assert!(!r.events().iter().any(|e| e == "merge-accepted"));
    let (code, _) = r.verb("teardown", "");
    assert_eq!(code, 2, "never `shipped` for a commit main does not hold");
    r.audit_ok();
}

/// A bare clone of the primary at `other`, named by a `commondir` file in the
/// primary's `.git`: git then reads refs in the clone (helper-77).
fn commondir_at_bare_clone(r: &Repo, other: &std::path::Path) {
    let (root, to) = (r.root.to_str().unwrap(), other.to_str().unwrap());
    git(
        r.root.parent().unwrap(),
        &["clone", "-q", "--bare", root, to],
    );
    std::fs::write(r.root.join(".git/commondir"), format!("{to}\n")).unwrap();
}

/// The primary pointed at another repository's git data after `pre-merge` — its
/// `.git` swapped for a gitfile naming a clone, or a `commondir` file naming a
/// bare clone — is no primary of the run's repository: the merge is blocked
/// before git merges anything (helper-77: both had `merged` and `shipped`
/// recorded while the run's main never moved, and the audit passed).
#[test]
fn a_primary_pointed_at_another_repository_is_never_merged_into() {
    for swap in ["gitfile", "commondir", "moved", "refs-link"] {
        let r = Repo::new();
        r.to_merge_ready();
        let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
        let main_before = r.main_head();
        let other = r.root.with_file_name(format!("other-{swap}"));
        let dot_git = r.root.join(".git");
        let kept = r.root.with_file_name("kept.git");
        match swap {
            "gitfile" => {
                git(
                    r.root.parent().unwrap(),
                    &[
                        "clone",
                        "-q",
                        r.root.to_str().unwrap(),
                        other.to_str().unwrap(),
                    ],
                );
                git(
                    &other,
                    &["branch", "-q", "worktree-abc", "origin/worktree-abc"],
                );
                std::fs::rename(&dot_git, &kept).unwrap();
                std::fs::write(&dot_git, format!("gitdir: {}/.git\n", other.display())).unwrap();
            }
            // Another clone's real `.git` directory moved into REPO_ROOT: every
            // path reads as before (helper-78).
            "moved" => {
                let root = r.root.to_str().unwrap();
                git(
                    r.root.parent().unwrap(),
                    &["clone", "-q", root, other.to_str().unwrap()],
                );
                git(
                    &other,
                    &["branch", "-q", "worktree-abc", "origin/worktree-abc"],
                );
                std::fs::rename(&dot_git, &kept).unwrap();
                std::fs::rename(other.join(".git"), &dot_git).unwrap();
            }
            // The refs made a link to a copy of them (helper-78).
            "refs-link" => {
                let copy = r.root.with_file_name("refs-copy");
                std::fs::create_dir(&other).unwrap();
                let refs = dot_git.join("refs");
                let copied = std::process::Command::new("cp")
                    .args(["-a", refs.to_str().unwrap(), copy.to_str().unwrap()])
                    .status()
                    .unwrap();
                assert!(copied.success());
                std::fs::rename(&refs, other.join("refs")).unwrap();
                std::os::unix::fs::symlink(&copy, &refs).unwrap();
            }
            _ => commondir_at_bare_clone(&r, &other),
        }
        let (code, out) = r.verb("merge", "");
        let wrong = format!("stopped:wrong-repo:{}", r.root.display());
        assert_eq!(
            (code, out["code"].as_str()),
            (4, Some(wrong.as_str())),
            "{swap}: {out}"
        );
        // Put back, the run's own repository is untouched and ships after resume.
        match swap {
            "gitfile" => {
                std::fs::remove_file(&dot_git).unwrap();
                std::fs::rename(&kept, &dot_git).unwrap();
            }
            "moved" => {
                std::fs::rename(&dot_git, other.join(".git")).unwrap();
                std::fs::rename(&kept, &dot_git).unwrap();
            }
            "refs-link" => {
                std::fs::remove_file(dot_git.join("refs")).unwrap();
                std::fs::rename(other.join("refs"), dot_git.join("refs")).unwrap();
            }
            _ => std::fs::remove_file(dot_git.join("commondir")).unwrap(),
        }
        if swap != "refs-link" {
            let other_main = git(&other, &["rev-parse", "main"]);
            assert_ne!(
                other_main, tip,
                "{swap}: nothing merged in the other repository"
            );
        }
        nothing_merged(&r, &main_before, &tip);
        ships_after_resume(&r, &tip);
        r.audit_ok();
    }
}

/// After the merge, a teardown reading another repository's target is no proof
/// that the run's target holds the commit: `merge-lost`, never `shipped`.
#[test]
fn a_teardown_reading_another_repository_does_not_ship() {
    let r = Repo::new();
    r.to_merge_ready();
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    commondir_at_bare_clone(&r, &r.root.with_file_name("other-bare"));
    let dot_git = r.root.join(".git");
    let (code, out) = r.verb("teardown", "");
    let wrong = format!("stopped:wrong-repo:{}", r.root.display());
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some(wrong.as_str())),
        "{out}"
    );
    assert!(!r.events().iter().any(|e| e == "torn-down"), "{out}");
    assert!(r.wt().is_dir(), "nothing removed");
    std::fs::remove_file(dot_git.join("commondir")).unwrap();
    r.audit_ok();
}

/// A commit made in the worktree after `pre-merge` (outside the declared scope) is
/// never merged: `merge` sees the branch moved and sends the run back to phase 3,
/// whose checks catch the out-of-scope path.
#[test]
fn a_tip_nobody_checked_is_never_merged() {
    let r = Repo::new();
    r.to_merge_ready();
    let checked = git(&r.wt(), &["rev-parse", "HEAD"]);
    let main_before = r.main_head();
    let late = r.commit_in(&r.wt(), &[("unrelated.txt", "late\n")], "chore: late");
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (4, Some("phase-3")), "{out}");
    assert_eq!(out["events"], json!(["merge-tip-moved"]), "{out}");
    assert!(
        out["next"]
            .as_array()
            .unwrap()
            .contains(&json!("pre-merge")),
        "{out}"
    );
    assert_eq!(r.main_head(), main_before, "nothing was merged");
    assert!(
        refs_containing(&r, &late) == ["refs/heads/worktree-abc"],
        "the late commit is on its branch only"
    );

    // Phase 3 again: the late path is outside the declared scope.
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:pre-merge:in-scope-paths")),
        "{out}"
    );
    // The operator drops the late commit; resume, re-check, merge exactly the checked tip.
    git(&r.wt(), &["reset", "-q", "--hard", &checked]);
    ships_after_resume(&r, &checked);
    let (_, log, _) = crate::park::park(
        &["journal", "log", "--stream", "ship/abc", "--format", "json"],
        "",
        Some(&r.journal.path()),
    );
    let merge = format!("\"merge\",\"--ff-only\",\"--end-of-options\",\"{checked}\"");
    assert!(
        log.to_string().contains(&merge),
        "the checked commit itself is merged"
    );
}

/// The caller's `PATH` never chooses the program cairn observes with (helper-69,
/// HIGH): a `git` first on it that answers every call with success used to
/// answer `merge --ff-only` and the containment check, and the run was recorded
/// `merged` and `shipped` while main never got the commit. Observations find git
/// on the system's own directories: the stand-in never runs, and the merge and
/// teardown cairn records are real.
#[test]
fn a_git_first_on_the_callers_path_is_not_the_git_cairn_runs() {
    use std::os::unix::fs::PermissionsExt as _;
    let r = Repo::new();
    r.to_merge_ready();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let fake = tempfile::tempdir().unwrap();
    let ran = fake.path().join("ran");
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\nexit 0\n", ran.display());
    let stand_in = fake.path().join("git");
    std::fs::write(&stand_in, script).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (verb, state) in [("merge", "merged"), ("teardown", "shipped")] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["ship", verb, "--short-id", "abc", "--db"])
            .arg(r.journal.path())
            .env("PATH", &path)
            .env_remove("CAIRN_DB")
            .env_remove("CAIRN_TESTING_OBSERVER_PATH")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (out.status.code(), v["state"].as_str()),
            (Some(0), Some(state)),
            "{verb}: {v}"
        );
    }
    assert!(
        !ran.exists(),
        "the caller's git ran: {:?}",
        std::fs::read_to_string(&ran)
    );
    assert_eq!(
        r.main_head(),
        tip,
        "main holds the commit: the merge was real"
    );
    assert!(!r.has_branch("worktree-abc"));
    r.audit_ok();
}

/// A `commondir` file present when the run creates its worktree: the worktree
/// would be made in the bare clone it names, and every phase pass there until the
/// merge; create's verifications read which repository REPO_ROOT is and stop
/// there (ship rules 16; helper-78).
#[test]
fn a_worktree_is_not_created_in_another_repository() {
    let r = Repo::new();
    let (code, out) = r.open_with(&[]);
    assert_eq!(code, 0, "{out}");
    commondir_at_bare_clone(&r, &r.root.with_file_name("other-at-create"));
    let (code, out) = r.verb("create", "");
    assert_eq!(code, 4, "{out}");
    assert!(
        out.to_string().contains("primary-repository"),
        "the failing gate is named: {out}"
    );
    assert!(!r.events().iter().any(|e| e == "worktree-created"), "{out}");
    std::fs::remove_file(r.root.join(".git/commondir")).unwrap();
    r.audit_ok();
}

/// A primary whose git data is kept elsewhere when the run is opened — `.git` a
/// link to the real directory, a gitfile naming it, or a `commondir` file naming
/// a bare clone — is not the primary checkout of REPO_ROOT's own repository: open's
/// preflight stops with `wrong-repo` and nothing is created (ship rules 17;
/// helper-78 F5: the link was opened and refused only at create, as "not the
/// repository the run was opened in").
#[test]
fn a_primary_keeping_its_git_data_elsewhere_is_not_opened() {
    for how in ["link", "gitfile", "commondir"] {
        let r = Repo::new();
        let dot_git = r.root.join(".git");
        let kept = r.root.with_file_name(format!("kept-{how}.git"));
        match how {
            "link" => {
                std::fs::rename(&dot_git, &kept).unwrap();
                std::os::unix::fs::symlink(&kept, &dot_git).unwrap();
            }
            "gitfile" => {
                std::fs::rename(&dot_git, &kept).unwrap();
                std::fs::write(&dot_git, format!("gitdir: {}\n", kept.display())).unwrap();
            }
            _ => commondir_at_bare_clone(&r, &kept),
        }
        // git itself still works in the primary: only where its data lives differs.
        assert_eq!(
            git(&r.root, &["rev-parse", "--show-toplevel"]),
            r.root.to_str().unwrap()
        );
        let (code, out) = r.open_with(&[]);
        let wrong = format!("stopped:wrong-repo:{}", r.root.display());
        assert_eq!(
            (code, out["code"].as_str()),
            (4, Some(wrong.as_str())),
            "{how}: {out}"
        );
        let (code, out) = r.verb("create", "");
        assert_eq!(code, 2, "{how}: {out}");
        assert!(!r.wt().exists(), "{how}: git worktree add never ran");
        r.audit_ok();
    }
}
