//! Every ship stop leaves a verb that works, and `next` names it (issue 15,
//! finding 3), and the smaller findings (6): the reactive-only daemon start, the
//! exit code of an empty result, commit trailers read as git reads them, a partial
//! teardown that says why, refusals that name the verb the user typed.

use serde_json::{json, Value};

use crate::support::git::git;
use crate::support::ship_repo::{gate, phase1, Repo, ID};

fn external_op(r: &Repo, class: &str, denied: bool) -> (i32, Value) {
    let mut a = vec![
        "external-op",
        "--short-id",
        ID,
        "--class",
        class,
        "--op",
        "kata close nnv8",
    ];
    if denied {
        a.push("--denied");
    }
    r.run(&a, "")
}

fn abandon(r: &Repo) -> (i32, Value) {
    r.run(
        &[
            "abandon",
            "--short-id",
            ID,
            "--reason",
            "give up",
            "--operator",
            "ana",
        ],
        "",
    )
}

fn to_permission_boundary(r: &Repo) -> Value {
    assert_eq!(external_op(r, "tracker-write", true).0, 0);
    let (code, out) = external_op(r, "tracker-write", true);
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:permission-boundary")),
        "{out}"
    );
    out
}

#[test]
fn a_permission_boundary_is_a_resume_stop() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let out = to_permission_boundary(&r);
    assert_eq!(out["next"], json!(["resume", "abandon"]), "{out}");
    assert_eq!(
        external_op(&r, "tracker-write", false).0,
        2,
        "never loop at the boundary"
    );
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    assert_eq!(out["session"], 1);
    // A fresh session, a fresh retry budget.
    let (code, out) = external_op(&r, "tracker-write", true);
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    r.audit_ok();
}

#[test]
fn abandoning_at_a_permission_boundary_removes_the_worktree_and_branch() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    to_permission_boundary(&r);
    let (code, out) = abandon(&r);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("teardown-pending")),
        "{out}"
    );
    assert_eq!(out["next"], json!(["teardown"]), "{out}");
    let (code, out) = r.verb("teardown", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("torn-down")),
        "{out}"
    );
    assert!(!r.wt().exists() && !r.has_branch("worktree-abc"));
    r.audit_ok();

    // Before any worktree exists, the way on is the preflight again.
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    let out = to_permission_boundary(&r);
    assert_eq!(out["next"], json!(["preflight", "abandon"]), "{out}");
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!((code, out["code"].as_str()), (0, Some("clean")), "{out}");
    assert_eq!(r.verb("create", "").1["state"], "phase-1");
    r.audit_ok();
}

/// `.claude/` not ignored: the new worktree dirties the primary, creation fails and
/// removes what it made; once the ignore is committed, the preflight runs again and
/// the same SHORT_ID creates its worktree.
#[test]
fn a_failed_creation_can_be_tried_again_after_the_cause_is_fixed() {
    let r = Repo::with_gitignore(".run-ship/\n");
    assert_eq!(r.open_with(&[]).0, 0);
    let (code, out) = r.verb("create", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("creation-failed")),
        "{out}"
    );
    assert!(
        !r.wt().exists() && !r.has_branch("worktree-abc"),
        "the partial worktree is removed"
    );
    assert_eq!(out["next"], json!(["preflight", "abandon"]), "{out}");
    assert!(
        out["action"]
            .as_str()
            .unwrap()
            .contains("cairn ship preflight"),
        "{out}"
    );
    std::fs::write(r.root.join(".gitignore"), ".claude/\n.run-ship/\n").unwrap();
    git(&r.root, &["commit", "-q", "-am", "ignore .claude/"]);
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!((code, out["code"].as_str()), (0, Some("clean")), "{out}");
    let (code, out) = r.verb("create", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    r.audit_ok();
}

/// Debris appears at the path after the preflight: `git worktree add -b` makes the
/// branch, then fails on the path. The branch it made is removed (the directory,
/// not ours, is kept), and the preflight names the debris.
#[test]
fn a_failed_worktree_add_removes_the_branch_it_made() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    std::fs::create_dir_all(r.wt()).unwrap();
    std::fs::write(r.wt().join("theirs.txt"), "not ours\n").unwrap();
    let (code, out) = r.verb("create", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("creation-failed")),
        "{out}"
    );
    assert!(
        !r.has_branch("worktree-abc"),
        "the branch the add made is removed"
    );
    assert!(
        r.wt().join("theirs.txt").exists(),
        "what is not ours is kept"
    );
    assert_eq!(out["next"], json!(["preflight", "abandon"]), "{out}");
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!(code, 4, "{out}");
    assert!(
        out["code"]
            .as_str()
            .unwrap()
            .starts_with("reclaimable:path-only:"),
        "{out}"
    );
    std::fs::remove_dir_all(r.wt()).unwrap();
    let (code, _) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(r.verb("create", "").1["state"], "phase-1");
    r.audit_ok();
}

/// After the merge, an untracked file keeps `git worktree remove` from removing the
/// worktree (and so the branch it holds): the partial teardown says why with git's
/// own words; `abandon` then tears both down (forced) instead of leaving them.
#[test]
fn a_partial_teardown_says_why_and_abandon_still_cleans_up() {
    let r = Repo::new();
    r.to_merge_ready();
    assert_eq!(r.verb("merge", "").0, 0);
    let merged = r.main_head();
    std::fs::write(r.wt().join("notes.txt"), "scratch\n").unwrap();
    let (code, out, stderr) = r.run_full(&["teardown", "--short-id", ID], "");
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("partial:worktree,branch")),
        "{out}"
    );
    let why = out["why"].to_string();
    assert!(
        why.contains("contains modified or untracked files"),
        "{out}"
    );
    assert!(
        stderr.contains("contains modified or untracked files"),
        "{stderr}"
    );
    assert!(
        out["next"].as_array().unwrap().contains(&json!("abandon")),
        "{out}"
    );
    let (code, out) = abandon(&r);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("teardown-pending")),
        "{out}"
    );
    let (code, out) = r.verb("teardown", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("torn-down")),
        "{out}"
    );
    assert!(!r.wt().exists() && !r.has_branch("worktree-abc"));
    assert_eq!(r.main_head(), merged, "the merge stands");
    r.audit_ok();
}

#[test]
fn a_daemon_start_is_reactive_only() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    let bytes = r.journal.bytes();
    let (code, out) = external_op(&r, "daemon-management", false);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("reactive-only")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), bytes);
    assert_eq!(
        external_op(&r, "tracker-read", true).0,
        0,
        "a normal command failed"
    );
    let (code, out) = external_op(&r, "daemon-management", false);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_empty_result_is_not_green() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let mut report = phase1("0000000", None);
    report["verdict"] = json!("stopped:empty-result");
    let (code, out) = r.verb("verify", &report.to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("teardown-pending")),
        "{out}"
    );
}

/// A body paragraph that starts `Why:` is a body (git's trailer block is the last
/// paragraph only): the floor trips and the user answers, the run does not stop.
#[test]
fn trailers_are_read_as_git_reads_them() {
    let r = Repo::new();
    assert_eq!(r.open_with(&["--files-max", "1"]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &[("x.txt", "x\n"), ("y.txt", "y\n")],
        "fix: two files\n\nWhy: both files hold the same table.\n\nSigned-off-by: t <t@example.com>",
    );
    let (code, out) = r.verb(
        "verify",
        &phase1(&head, Some(&["x.txt", "y.txt"])).to_string(),
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("scope-tripped")),
        "{out}"
    );
    assert_eq!(
        gate(&out, "body-when-floor-trips")["outcome"],
        "pass",
        "{out}"
    );
}

#[test]
fn refusals_name_the_verb_the_user_typed() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    for verb in ["teardown", "merge"] {
        let (code, out) = r.verb(verb, "");
        assert_eq!(code, 2, "{out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("ship refused `{verb}`")),
            "{out}"
        );
        assert!(message.contains("next: verify, resume"), "{out}");
    }
}
