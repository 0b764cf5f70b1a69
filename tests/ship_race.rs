//! Racing `cairn ship` processes on real git (issue 15, finding 4): a git mutation
//! in flight belongs to the process that announced it (its pid and start time are
//! recorded with `step-begun`). While that process lives, every other `merge`,
//! `teardown` or `resume` exits 3 and runs no git at all; once it is gone (killed
//! with the git it ran), exactly one later process takes the step over.

use serde_json::json;

use crate::support::git::git;
use crate::support::ship_repo::{finished, Repo, ID};

/// Starts `verb` and holds it inside the git argv containing `needle` (the spy
/// pauses there), then races `losers` more processes of `verb` against it; returns
/// the holder's exit code and every loser's (code, error kind).
fn race(r: &Repo, verb: &str, needle: &str, losers: usize) -> (i32, Vec<(i32, String)>) {
    r.spy().slow(needle);
    let seen = r.spy().count(needle);
    let holder = r.spawn(&[verb, "--short-id", ID]);
    r.spy().wait_for(needle, seen);
    let others: Vec<_> = (0..losers)
        .map(|_| r.spawn(&[verb, "--short-id", ID]))
        .collect();
    let lost: Vec<(i32, String)> = others
        .into_iter()
        .map(|c| {
            let pid = c.id();
            let (code, out, _) = finished(c);
            assert_eq!(
                r.spy().ran_by(pid),
                0,
                "a loser ran git: {:?}",
                r.spy().log()
            );
            (code, out["error"]["kind"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    let (code, out, _) = finished(holder);
    assert_eq!(code, 0, "{out}");
    (code, lost)
}

fn all_busy(lost: &[(i32, String)]) {
    for (code, kind) in lost {
        assert_eq!((*code, kind.as_str()), (3, "in-flight"), "{lost:?}");
    }
}

#[test]
fn racing_merges_run_the_merge_once() {
    let r = Repo::spied();
    r.to_merge_ready();
    let (_, lost) = race(&r, "merge", "merge --ff-only", 3);
    all_busy(&lost);
    assert_eq!(r.spy().count("merge --ff-only"), 1, "{:?}", r.spy().log());
    assert_eq!(
        r.events().iter().filter(|e| *e == "merge-accepted").count(),
        1
    );
    r.audit_ok();
}

#[test]
fn racing_teardowns_remove_once() {
    let r = Repo::spied();
    r.to_merge_ready();
    assert_eq!(r.verb("merge", "").0, 0);
    let (_, lost) = race(&r, "teardown", "worktree remove", 3);
    all_busy(&lost);
    assert_eq!(r.spy().count("worktree remove"), 1, "{:?}", r.spy().log());
    assert_eq!(r.spy().count("branch -d"), 1, "{:?}", r.spy().log());
    assert_eq!(r.verb("status", "").1["state"], "shipped");
    r.audit_ok();
}

#[test]
fn racing_resumes_reattach_once() {
    let r = Repo::spied();
    r.to_phase2();
    git(
        &r.root,
        &["worktree", "remove", "--force", r.wt().to_str().unwrap()],
    );
    let reattach = "worktree add --end-of-options";
    let (_, lost) = race(&r, "resume", reattach, 3);
    all_busy(&lost);
    assert_eq!(r.spy().count(reattach), 1, "{:?}", r.spy().log());
    assert_eq!(r.verb("status", "").1["state"], "phase-2");
    r.audit_ok();
}

/// The holder is killed (with its git) inside the step: the step stays announced,
/// its owner is gone, and the next `merge` takes it over and runs it once.
#[test]
fn a_step_whose_owner_died_is_taken_over_once() {
    let r = Repo::spied();
    r.to_merge_ready();
    r.spy().slow("merge --ff-only");
    let holder = r.spawn(&["merge", "--short-id", ID]);
    r.spy().wait_for("merge --ff-only", 0);
    let pgid = i32::try_from(holder.id()).unwrap();
    // The whole group: cairn and the paused git it started.
    std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    let (code, _, _) = finished(holder);
    assert_eq!(code, -1, "killed by a signal");
    let main_before = r.main_head();
    assert_eq!(
        r.events().last().map(String::as_str),
        Some("step-begun"),
        "the merge was announced and never recorded"
    );
    r.spy().fast();
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    assert_ne!(r.main_head(), main_before);
    // One announcement per owner: the dead one's and the one that took over.
    let types = r.events();
    assert_eq!(
        types.iter().filter(|e| *e == "step-begun").count(),
        3,
        "{types:?}"
    );
    assert_eq!(types.iter().filter(|e| *e == "merge-accepted").count(), 1);
    assert_eq!(out["next"], json!(["teardown", "resume"]));
    r.audit_ok();
}

/// A turn is released as dead only while no ship run is merging for it (issue
/// 21, found by a hostile pass): with `ship merge` held inside its `merge
/// --ff-only`, git shows the branch not merged yet, and `saga merge-turn release`
/// is refused (`merge-in-flight`, nothing written) — it scanned every run with a
/// merge in flight. The run then merges under the turn it still holds.
#[test]
fn a_turn_is_not_released_while_its_ship_run_merges() {
    let r = Repo::spied();
    let saga = under_turn(&r);
    let needle = "merge --ff-only";
    r.spy().slow(needle);
    let seen = r.spy().count(needle);
    let holder = r.spawn(&["merge", "--short-id", ID]);
    r.spy().wait_for(needle, seen);
    let before = r.journal.bytes();
    let root = r.root.to_str().unwrap().to_owned();
    let release = |target: &str| {
        saga(&[
            "merge-turn",
            "release",
            "--saga-id",
            "issue-42",
            "--unit",
            "U1",
            "--repo",
            &root,
            "--target",
            target,
        ])
    };
    let (code, out) = release("main");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("merge-in-flight")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    let (code, out, _) = finished(holder);
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    // Merged by the run: the turn's merge happened, whatever a reading on a
    // typed target says (found by a hostile pass: released on a target the
    // merge never touched, the unit took the turn again on a new branch and
    // merged twice). Refused on either target, nothing written.
    git(
        &r.root,
        &["branch", "other", &git(&r.root, &["rev-parse", "HEAD~1"])],
    );
    let before = r.journal.bytes();
    for target in ["other", "main"] {
        let (code, out) = release(target);
        let v = &out["error"]["violations"][0];
        assert_eq!(
            (code, v["predicate"].as_str()),
            (2, Some("merged-by-run")),
            "{target}: {out}"
        );
        assert!(v["message"].as_str().unwrap().contains("ship/abc"), "{out}");
        assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    }
}

/// `r`'s run, acting for thread `issue-42`, at merge-ready with U1's merge turn
/// taken on its branch (PR-ready passed in its worktree); a `cairn saga` runner
/// on its journal.
fn under_turn(r: &Repo) -> impl Fn(&[&str]) -> (i32, serde_json::Value) + '_ {
    r.to_merge_ready_with(&["--for", "saga/issue-42"]);
    let db = r.journal.path();
    let saga = move |args: &[&str]| {
        let mut full = vec!["saga"];
        full.extend_from_slice(args);
        let (code, out, _) = crate::park::park(&full, "", Some(&db));
        (code, out)
    };
    let (code, out) = saga(&["save", "--id", "issue-42", "--lifecycle-phase", "work"]);
    assert_eq!(code, 0, "{out}");
    crate::support::saga::ready_in_tree(&r.journal.path(), "issue-42", &r.wt(), "worktree-abc");
    let wt = r.root.with_file_name("merge-wt");
    let (code, out) = saga(&[
        "merge-turn",
        "take",
        "--saga-id",
        "issue-42",
        "--unit",
        "U1",
        "--branch",
        "worktree-abc",
        "--merge-worktree",
        wt.to_str().unwrap(),
        "--holder",
        "h",
    ]);
    assert_eq!(code, 0, "{out}");
    saga
}

/// A reviewed commit merges once for its thread: a second run acting for the
/// thread (another clone's, on the same branch name) that already merged the
/// commit this run ships refuses this run's merge before git runs. The journal
/// is snapshotted at merge-ready; after the merge, the merged run is written into
/// the snapshot as that second run (raw, as it would stand).
#[test]
fn a_reviewed_commit_merges_once_for_its_thread() {
    let r = Repo::new();
    let _ = under_turn(&r);
    let db = r.journal.path();
    let snapshot = db.with_file_name("at-merge-ready.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("VACUUM INTO ?1", [snapshot.to_str().unwrap()])
        .unwrap();
    // A journal is the owner's alone (cairn refuses a group- or world-readable one).
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&snapshot, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    let squashed = db.with_file_name("squashed.db");
    rusqlite::Connection::open(&snapshot)
        .unwrap()
        .execute("VACUUM INTO ?1", [squashed.to_str().unwrap()])
        .unwrap();
    std::fs::set_permissions(&squashed, std::fs::Permissions::from_mode(0o600)).unwrap();
    let snapshot_before_abd = db.with_file_name("at-merge-ready-2.db");
    rusqlite::Connection::open(&squashed)
        .unwrap()
        .execute("VACUUM INTO ?1", [snapshot_before_abd.to_str().unwrap()])
        .unwrap();
    std::fs::set_permissions(&snapshot_before_abd, std::fs::Permissions::from_mode(0o600)).unwrap();
    crate::support::copy_raw(&db, &snapshot, "ship/abc", "ship/abd", |_| {});
    let before = std::fs::read(&snapshot).unwrap();
    let (code, out, _) =
        crate::park::park(&["ship", "merge", "--short-id", ID], "", Some(&snapshot));
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str()),
        (2, Some("merged-once")),
        "{out}"
    );
    assert!(v["message"].as_str().unwrap().contains("ship/abd"), "{out}");
    assert_eq!(std::fs::read(&snapshot).unwrap(), before, "a refusal wrote");

    // The other run squashed: it merged a squash commit of the reviewed one, and
    // the commit it shipped is still this run's (found by a hostile pass: three
    // clones each merged the reviewed commit, squashed anew).
    crate::support::copy_raw_events(
        &db,
        &squashed,
        "ship/abc",
        "ship/abe",
        |_| {},
        |ty, p| {
            if ty == "merge-accepted" {
                p["merged_sha"] = "f".repeat(40).into();
            }
        },
    );
    let (code, out, _) =
        crate::park::park(&["ship", "merge", "--short-id", ID], "", Some(&squashed));
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str()),
        (2, Some("merged-once")),
        "{out}"
    );
    assert!(v["message"].as_str().unwrap().contains("ship/abe"), "{out}");

    // The other run merged another commit on the same branch (the reviewed one
    // amended and reviewed anew): the unit's branch merges once for its thread
    // (found by a hostile pass: it merged a second time under the one turn).
    let amended = db.with_file_name("amended.db");
    rusqlite::Connection::open(&snapshot_before_abd)
        .unwrap()
        .execute("VACUUM INTO ?1", [amended.to_str().unwrap()])
        .unwrap();
    std::fs::set_permissions(&amended, std::fs::Permissions::from_mode(0o600)).unwrap();
    crate::support::copy_raw_events(
        &db,
        &amended,
        "ship/abc",
        "ship/abf",
        |_| {},
        |ty, p| match ty {
            "merge-accepted" => p["merged_sha"] = "e".repeat(40).into(),
            "pre-merge-checked" => p["shipped"] = "e".repeat(40).into(),
            _ => {}
        },
    );
    let (code, out, _) =
        crate::park::park(&["ship", "merge", "--short-id", ID], "", Some(&amended));
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str()),
        (2, Some("merged-once")),
        "{out}"
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("a unit's branch merges once"),
        "{out}"
    );
}

/// A merge into the base of the thread's PR is that PR's merge: while the PR
/// loop that follows the thread has offered it and the operator has not
/// confirmed it, the run's merge is refused before git runs (helper-38 probe 4);
/// confirmed, it goes through.
/// A PR loop following the thread offers the merge of the worktree's head, on a
/// reading naming `base` as the branch the PR merges into, or none: read by cairn
/// (a stand-in `gh`) when `by_gh`, else on stdin.
fn offer_the_prs_merge(r: &Repo, base: Option<&str>, by_gh: bool) {
    let wt = r.wt().to_str().unwrap().to_owned();
    let head = git(&r.wt(), &["rev-parse", "HEAD"]);
    let mut doc = crate::pr_findings::fresh_doc(&head, "merge");
    doc.as_object_mut().unwrap().remove("reviewed_sha");
    match base {
        Some(b) => doc["reading"]["baseRefName"] = b.into(),
        None => {
            doc["reading"]
                .as_object_mut()
                .unwrap()
                .remove("baseRefName");
        }
    }
    let (code, out, _) = if by_gh {
        let gh = crate::support::pr::StandInGh::new();
        gh.answer(&doc["reading"]);
        doc.as_object_mut().unwrap().remove("reading");
        let pr = crate::support::pr::PR;
        crate::support::pr::cairn_with(
            &[
                "pr",
                "observe",
                "--pr",
                pr,
                "--repo",
                &wt,
                "--from",
                "saga/issue-42",
            ],
            &doc.to_string(),
            &r.journal.path(),
            Some(gh.dir.path()),
            &[],
        )
    } else {
        crate::park::park(
            &["pr", "observe", "--repo", &wt, "--from", "saga/issue-42"],
            &doc.to_string(),
            Some(&r.journal.path()),
        )
    };
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-offered")),
        "{out}"
    );
}

#[test]
fn a_pr_loop_that_names_no_base_holds_the_merge_and_one_on_another_base_does_not() {
    // Unknown never passes: a loop no reading told its base may merge into the
    // run's target, so the run's merge waits for the operator. A base only a
    // reading on stdin named is the caller's word: unknown too (found by a
    // hostile pass: a stdin reading naming `release` lifted the hold).
    for (base, by_gh) in [(None, true), (None, false), (Some("release"), false)] {
        let r = Repo::new();
        let _ = under_turn(&r);
        offer_the_prs_merge(&r, base, by_gh);
        let before = r.journal.bytes();
        let (code, out) = r.verb("merge", "");
        assert_eq!(
            (code, out["error"]["violations"][0]["predicate"].as_str()),
            (2, Some("merge-unconfirmed")),
            "{base:?} by gh {by_gh}: {out}"
        );
        assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    }
    // cairn's own reading shows the PR into another branch: not this merge, and
    // a later reading on stdin that names this target instead is refused.
    let r = Repo::new();
    let _ = under_turn(&r);
    offer_the_prs_merge(&r, Some("release"), true);
    let wt = r.wt().to_str().unwrap().to_owned();
    let mut doc = crate::pr_findings::fresh_doc(&git(&r.wt(), &["rev-parse", "HEAD"]), "merge");
    doc.as_object_mut().unwrap().remove("reviewed_sha");
    doc["reading"]["baseRefName"] = "main".into();
    let before = r.journal.bytes();
    let (code, out, _) = crate::park::park(
        &["pr", "observe", "--repo", &wt, "--from", "saga/issue-42"],
        &doc.to_string(),
        Some(&r.journal.path()),
    );
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str(), v["field"].as_str()),
        (2, Some("journal-agrees"), Some("reading.baseRefName")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
}

#[test]
fn a_run_merges_into_the_prs_base_only_once_the_operator_confirmed_it() {
    let r = Repo::new();
    let _ = under_turn(&r);
    let db = r.journal.path();
    offer_the_prs_merge(&r, Some("main"), false);
    let main = r.main_head();
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str()),
        (2, Some("merge-unconfirmed")),
        "{out}"
    );
    assert!(v["message"].as_str().unwrap().contains("pr-loop/"), "{out}");
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    assert_eq!(r.main_head(), main, "git merged");
    let (code, out, _) = crate::park::park(
        &[
            "pr",
            "confirm",
            "--pr",
            crate::support::pr::PR,
            "--what",
            "merge",
            "--operator",
            "alice",
        ],
        "",
        Some(&db),
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-confirmed")),
        "{out}"
    );
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
}
