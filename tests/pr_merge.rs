//! A merge is recorded from cairn's own observation, never from a flag: a `gh pr
//! view` reading (a stand-in `gh` on `PATH`) showing `MERGED` with `mergedAt`, or
//! git showing the target branch contains the merged head. And the reading's
//! source (stdin or gh) is recorded and shown.

use std::path::Path;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::pr_findings::{fresh_doc, violation};
use crate::support::git::git;
use crate::support::pr::*;
use crate::support::TempJournal;

/// A journal whose loop was offered the merge of `reviewed` (fresh in `repo`) and
/// the operator confirmed it.
fn confirmed(t: &TempJournal, repo: &Path, reviewed: &str) {
    confirmed_with(t, repo, fresh_doc(reviewed, "merge"));
}

/// [`confirmed`] from the observation `doc`, its reading read by cairn (a
/// stand-in `gh` printing it).
fn confirmed_with(t: &TempJournal, repo: &Path, doc: Value) {
    let gh = StandInGh::new();
    gh.answer(&doc["reading"]);
    let mut rest = doc;
    rest.as_object_mut().unwrap().remove("reading");
    let (code, out, _) = cairn_with(
        &[
            "pr",
            "observe",
            "--pr",
            PR,
            "--repo",
            repo.to_str().unwrap(),
        ],
        &rest.to_string(),
        &t.path(),
        Some(gh.dir.path()),
        &[],
    );
    assert_eq!(out["reading_source"], "gh", "{out}");
    confirm_merge(t, code, &out);
}

/// [`confirmed`] from the observation `doc`, its reading on stdin.
fn confirmed_on_stdin(t: &TempJournal, repo: &Path, doc: Value) {
    let (code, out, _) = cairn(
        &["pr", "observe", "--repo", repo.to_str().unwrap()],
        &doc.to_string(),
        Some(&t.path()),
    );
    assert_eq!(out["reading_source"], "stdin", "{out}");
    confirm_merge(t, code, &out);
}

/// The operator confirms the merge the observation (exit `code`, output `out`)
/// offered.
fn confirm_merge(t: &TempJournal, code: i32, out: &Value) {
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("merge-offered")),
        "{out}"
    );
    let (code, out, _) = cairn(
        &[
            "pr",
            "confirm",
            "--pr",
            PR,
            "--what",
            "merge",
            "--operator",
            "alice",
        ],
        "",
        Some(&t.path()),
    );
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("merge-confirmed")),
        "{out}"
    );
}

fn merged_reading(head: &str) -> Value {
    let mut r = reading("merged");
    r["headRefOid"] = json!(head);
    r
}

fn audit_ok(db: &Path) {
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(db));
    assert_eq!((code, audit["ok"].clone()), (0, json!(true)), "{audit}");
}

#[test]
fn record_merge_takes_no_merge_time_on_the_callers_word() {
    let (_tmp, repo, ids) = three_commit_repo();
    let t = TempJournal::new();
    confirmed(&t, &repo, &ids[2]);
    let before = t.bytes();
    let (code, _, _) = cairn(
        &[
            "pr",
            "record-merge",
            "--pr",
            PR,
            "--merged-at",
            "1999-01-01T00:00:00Z",
        ],
        "",
        Some(&t.path()),
    );
    assert_eq!(code, 2);
    assert_eq!(t.bytes(), before);
    let (_, state, _) = cairn(
        &["state", "pr-loop/github.com/example/project/pull/7"],
        "",
        Some(&t.path()),
    );
    assert_eq!(state["state_name"], "merge-confirmed");
}

#[test]
fn a_merge_is_recorded_from_a_gh_reading_that_shows_it() {
    let (_tmp, repo, ids) = three_commit_repo();
    let t = TempJournal::new();
    let gh = StandInGh::new();
    confirmed(&t, &repo, &ids[2]);
    let record = || {
        cairn_with(
            &["pr", "record-merge", "--pr", PR],
            "",
            &t.path(),
            Some(gh.dir.path()),
            &[],
        )
    };
    // Still open: no merge to record, nothing written.
    let before = t.bytes();
    let mut open = reading("approved-fresh");
    open["headRefOid"] = json!(ids[2]);
    gh.answer(&open);
    let (code, out, _) = record();
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merge-observed")),
        "{out}"
    );
    // Merged, but another head than the one reviewed and confirmed: not this merge.
    gh.answer(&merged_reading(&ids[1]));
    let (code, out, _) = record();
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merged-head")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    gh.answer(&merged_reading(&ids[2]));
    let (code, out, _) = record();
    assert_eq!(
        (
            code,
            out["state"].clone(),
            out["events"].clone(),
            out["merged_at"].clone()
        ),
        (
            0,
            json!("complete"),
            json!(["merged-by-loop"]),
            json!("2026-11-30T05:00:00Z")
        ),
        "{out}"
    );
    assert!(
        gh.calls()
            .iter()
            .all(|c| c.starts_with(&format!("pr view {PR} --json state,"))),
        "{:?}",
        gh.calls()
    );
    audit_ok(&t.path());
}

#[test]
fn a_merge_is_recorded_from_git_showing_the_target_contains_the_head() {
    let (_tmp, repo, ids) = three_commit_repo();
    // The PR's branch is `feature` (ids[2]); `main` is one commit behind.
    git(&repo, &["branch", "feature"]);
    git(&repo, &["reset", "-q", "--hard", &ids[1]]);
    git(&repo, &["checkout", "-q", "feature"]);
    let t = TempJournal::new();
    confirmed(&t, &repo, &ids[2]);
    let record = |target: &str| {
        let flag = if target.starts_with("--target=") {
            target.to_owned()
        } else {
            format!("--target={target}")
        };
        cairn(
            &["pr", "record-merge", "--pr", PR, &flag],
            "",
            Some(&t.path()),
        )
    };
    let before = t.bytes();
    let (code, out, _) = record("main");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merge-observed")),
        "{out}"
    );
    let (code, out, _) = record("--target=--all");
    assert_eq!(
        (
            code,
            out["error"]["field"].clone(),
            out["error"]["rule"].clone()
        ),
        (2, json!("target"), json!("option-like")),
        "{out}"
    );
    // The PR's own head branch holds the head by construction: a merge is read
    // only on the branch the reading says the PR merges into (`main`).
    let (code, out, _) = record("feature");
    assert_eq!(
        (code, violation(&out)),
        (2, ("merge-target", "target")),
        "{out}"
    );
    // A tag named like the base at the head: the branch is read by its full ref
    // (found by a hostile pass: a bare `main` read the tag, and nothing merged).
    git(&repo, &["tag", "main", &ids[2]]);
    let (code, out, _) = record("main");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merge-observed")),
        "{out}"
    );
    git(&repo, &["tag", "-d", "main"]);
    assert_eq!(t.bytes(), before);
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["merge", "-q", "--ff-only", "feature"]);
    let (code, out, _) = record("main");
    assert_eq!(
        (code, out["state"].clone(), out["merged_at"].clone()),
        (0, json!("complete"), Value::Null),
        "{out}"
    );
    audit_ok(&t.path());
}

#[test]
fn a_merged_reading_on_stdin_ends_nothing_and_one_cairn_read_does() {
    let t = TempJournal::new();
    let before_any = t.path().exists();
    let (code, out, _) = cairn(
        &["pr", "observe"],
        &doc("merged", "pr").to_string(),
        Some(&t.path()),
    );
    assert_eq!(
        (code, violation(&out)),
        (2, ("merge-unobserved", "reading")),
        "{out}"
    );
    assert_eq!(t.path().exists(), before_any);
    // Read by cairn with gh: recorded as such, and the loop completes.
    let gh = StandInGh::new();
    gh.answer(&doc("await-review", "pr")["reading"]);
    let mut rest = doc("await-review", "pr");
    rest.as_object_mut().unwrap().remove("reading");
    let observe = |rest: &Value| {
        cairn_with(
            &["pr", "observe", "--pr", PR],
            &rest.to_string(),
            &t.path(),
            Some(gh.dir.path()),
            &[],
        )
    };
    let (code, out, _) = observe(&rest);
    assert_eq!(
        (code, out["reading_source"].clone()),
        (0, json!("gh")),
        "{out}"
    );
    gh.answer(&reading("merged"));
    let (code, out, _) = observe(&rest);
    assert_eq!(
        (code, out["state"].clone(), out["reading_source"].clone()),
        (0, json!("complete"), json!("gh")),
        "{out}"
    );
    audit_ok(&t.path());
    // A stdin reading says so.
    let t2 = TempJournal::new();
    let (_, out, _) = cairn(
        &["pr", "observe"],
        &doc("await-review", "pr").to_string(),
        Some(&t2.path()),
    );
    assert_eq!(out["reading_source"], "stdin", "{out}");
}

#[test]
fn a_merge_is_read_from_git_only_on_a_base_a_reading_named() {
    // No reading named the branch the PR merges into: git's word on any target
    // is no merge of this PR (unknown never passes), nothing written.
    let (_tmp, repo, ids) = three_commit_repo();
    let t = TempJournal::new();
    let mut doc = fresh_doc(&ids[2], "merge");
    doc["reading"]
        .as_object_mut()
        .unwrap()
        .remove("baseRefName");
    confirmed_with(&t, &repo, doc);
    let before = t.bytes();
    let (code, out, _) = cairn(
        &["pr", "record-merge", "--pr", PR, "--target", "main"],
        "",
        Some(&t.path()),
    );
    assert_eq!(
        (code, violation(&out)),
        (2, ("merge-target", "target")),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote");
}

#[test]
fn a_base_only_a_reading_on_stdin_named_bears_no_merge_read_from_git() {
    // The reading on stdin is the caller's word: naming the PR's own head branch
    // as its base would let git "show" a merge where nothing merged (found by a
    // hostile probe). Only cairn's gh reading names the base a merge is read on.
    let (_tmp, repo, ids) = three_commit_repo();
    git(&repo, &["branch", "feature"]);
    git(&repo, &["reset", "-q", "--hard", &ids[1]]);
    git(&repo, &["checkout", "-q", "feature"]);
    let t = TempJournal::new();
    let mut doc = fresh_doc(&ids[2], "merge");
    doc["reading"]["baseRefName"] = json!("feature");
    confirmed_on_stdin(&t, &repo, doc.clone());
    let before = t.bytes();
    let record = || {
        cairn(
            &["pr", "record-merge", "--pr", PR, "--target", "feature"],
            "",
            Some(&t.path()),
        )
    };
    let (code, out, _) = record();
    assert_eq!(
        (code, violation(&out)),
        (2, ("merge-target", "target")),
        "{out}"
    );
    assert!(
        out["error"]["violations"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stdin")),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote");
    // cairn's own reading of the same PR says it merges into `main`: `feature` is
    // refused as another branch, and `main` is read once git holds the head.
    let t = TempJournal::new();
    confirmed(&t, &repo, &ids[2]);
    let (code, out, _) = cairn(
        &["pr", "record-merge", "--pr", PR, "--target", "feature"],
        "",
        Some(&t.path()),
    );
    assert_eq!(
        (code, violation(&out)),
        (2, ("merge-target", "target")),
        "{out}"
    );
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["merge", "-q", "--ff-only", "feature"]);
    let (code, out, _) = cairn(
        &["pr", "record-merge", "--pr", PR, "--target", "main"],
        "",
        Some(&t.path()),
    );
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("complete")),
        "{out}"
    );
    audit_ok(&t.path());
}
