//! The saga's own observations of git (shared-core issue #14): review freshness is
//! ancestry plus a count (an old checkout is never fresh), and a caller's value never
//! reaches git as an option (refused at input; every argv ends options first).

use serde_json::Value;

use crate::support::git::git;
use crate::support::saga::{messages, predicates, Thread};

#[test]
fn pr_ready_never_calls_an_old_checkout_fresh() {
    let t = Thread::new();
    let old = t.head();
    t.commit("b.txt");
    let reviewed = t.reviewed("accepted");
    let (code, out) = t.pr_ready();
    assert_eq!(
        (code, out["events"][0].as_str()),
        (0, Some("ready-for-pr")),
        "{out}"
    );

    // HEAD behind the reviewed commit: `rev-list REVIEWED..HEAD` counts 0, yet the
    // checkout does not hold what was reviewed.
    git(&t.repo, &["checkout", "-q", &old]);
    let before = t.bytes();
    let (code, out) = t.pr_ready();
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["review-gate".to_owned()]),
        "{out}"
    );
    assert!(messages(&out).contains("not an ancestor"), "{out}");
    assert_eq!(t.bytes(), before, "a refusal writes nothing");

    // Back at the reviewed commit: fresh again. Commits on top: stale, counted.
    git(&t.repo, &["checkout", "-q", &reviewed]);
    assert_eq!(t.pr_ready().0, 0);
    git(&t.repo, &["checkout", "-q", "-b", "later"]);
    t.commit("c.txt");
    let (code, out) = t.pr_ready();
    assert_eq!(code, 2, "{out}");
    assert!(messages(&out).contains("1 commit(s) since"), "{out}");
    t.audit_clean();
}

#[test]
fn the_freshness_readings_are_the_shared_plan_and_end_options() {
    let t = Thread::new();
    let reviewed = t.reviewed("accepted");
    assert_eq!(t.pr_ready().0, 0);
    let (_, log) = t.cairn(&[
        "journal",
        "log",
        "--stream",
        "saga/issue-42",
        "--format",
        "json",
    ]);
    let ready = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "ready-for-pr")
        .expect("a ready-for-pr event")
        .clone();
    let argvs: Vec<Vec<String>> = ready["payload"]["runs"]
        .as_array()
        .expect("the freshness runs are recorded")
        .iter()
        .map(|r| serde_json::from_value(r["argv"].clone()).unwrap())
        .collect();
    let repo = t.repo_str();
    let range = format!("{reviewed}..HEAD");
    assert_eq!(
        argvs,
        vec![
            vec![
                "git",
                "-C",
                repo,
                "merge-base",
                "--is-ancestor",
                "--end-of-options",
                &reviewed,
                "HEAD"
            ],
            vec![
                "git",
                "-C",
                repo,
                "rev-list",
                "--count",
                "--end-of-options",
                &range
            ],
        ]
    );
}

fn option_like(out: &Value, field: &str) {
    assert_eq!(out["error"]["field"], field, "{out}");
    assert_eq!(out["error"]["rule"], "option-like", "{out}");
}

#[test]
fn caller_values_never_reach_git_as_options() {
    let t = Thread::new();
    assert_eq!(
        t.cairn(&[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--lifecycle-phase",
            "work"
        ])
        .0,
        0
    );
    t.ready();
    let wt = t.repo.with_file_name("merge-wt");
    let wt = wt.to_str().unwrap();
    let before = t.bytes();
    let (code, out) = t.mt(
        "take",
        &[
            "--unit",
            "U1",
            "--branch=--all",
            "--merge-worktree",
            wt,
            "--holder",
            "h",
        ],
    );
    assert_eq!(code, 2, "{out}");
    option_like(&out, "branch");
    assert_eq!(t.bytes(), before, "nothing recorded");

    git(&t.repo, &["branch", "work/u1"]);
    let take = t.mt(
        "take",
        &[
            "--unit",
            "U1",
            "--branch",
            "work/u1",
            "--merge-worktree",
            wt,
            "--holder",
            "h",
        ],
    );
    assert_eq!(take.0, 0, "{}", take.1);
    let repo = t.repo_str().to_owned();
    let before = t.bytes();
    let (code, out) = t.mt(
        "release",
        &["--unit", "U1", "--repo", &repo, "--target=--octopus"],
    );
    assert_eq!(code, 2, "{out}");
    option_like(&out, "target");
    assert_eq!(t.bytes(), before, "git never ran, nothing recorded");

    // The reading that does run ends options before the caller's names (the
    // branch a commit main lacks: a turn that merged nothing is released).
    let tree = git(&t.repo, &["rev-parse", "HEAD^{tree}"]);
    let u1 = git(&t.repo, &["commit-tree", &tree, "-p", "HEAD", "-m", "u1"]);
    git(&t.repo, &["branch", "-f", "work/u1", &u1]);
    let (code, out) = t.mt(
        "release",
        &["--unit", "U1", "--repo", &repo, "--target", "main"],
    );
    assert_eq!(
        (code, out["gates"]["units"]["U1"]["merge_state"].as_str()),
        (0, Some("ready")),
        "{out}"
    );
    let (_, log) = t.cairn(&[
        "journal",
        "log",
        "--stream",
        "saga/issue-42",
        "--format",
        "json",
    ]);
    let released = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "turn-released")
        .expect("a turn-released event")
        .clone();
    let argv: Vec<String> =
        serde_json::from_value(released["payload"]["ancestor"]["argv"].clone()).unwrap();
    assert_eq!(
        argv,
        [
            "git",
            "-C",
            repo.as_str(),
            "merge-base",
            "--is-ancestor",
            "--end-of-options",
            "refs/heads/work/u1",
            "refs/heads/main"
        ]
    );
    t.audit_clean();
}

#[test]
fn a_merge_is_recorded_only_as_git_shows_it() {
    let t = Thread::new();
    t.save_at_work();
    // The unit's work, built and reviewed on its branch.
    git(&t.repo, &["checkout", "-q", "-b", "work/u1"]);
    let unit_tip = t.commit("u1.txt");
    t.ready();
    git(&t.repo, &["checkout", "-q", "main"]);
    t.take_turn("work/u1");
    let repo = t.repo_str().to_owned();
    let merged = |tip: &str| t.merged_onto_main(tip);
    // A tip the holder names but git does not show: never recorded as merged.
    let before = t.bytes();
    let (code, out) = merged(&"1".repeat(40));
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned(); 2]),
        "{out}"
    );
    assert!(
        messages(&out).contains("nothing is recorded on trust"),
        "{out}"
    );
    // The unit's own tip holds its work but is not on main: not merged either.
    let (code, out) = merged(&unit_tip);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    assert!(messages(&out).contains("main"), "{out}");
    assert_eq!(t.bytes(), before);
    // A commit on main grafted onto the unit's tip (a replace ref, then a grafts
    // file) makes the caller's git call it merged: cairn reads git's own object
    // graph, and the merge is not recorded.
    let grafted = t.commit("m2.txt");
    let parent = git(&t.repo, &["rev-parse", "HEAD~1"]);
    git(
        &t.repo,
        &["replace", "--graft", &grafted, &parent, &unit_tip],
    );
    let fooled = std::process::Command::new("git")
        .args([
            "-C",
            t.repo_str(),
            "merge-base",
            "--is-ancestor",
            &unit_tip,
            &grafted,
        ])
        .status()
        .unwrap();
    assert!(fooled.success(), "the replace ref fools a plain git");
    let (code, out) = merged(&grafted);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    git(&t.repo, &["replace", "-d", &grafted]);
    let grafts = t.repo.join(".git/info/grafts");
    std::fs::create_dir_all(grafts.parent().unwrap()).unwrap();
    std::fs::write(&grafts, format!("{grafted} {parent} {unit_tip}\n")).unwrap();
    let (code, out) = merged(&grafted);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    std::fs::remove_file(&grafts).unwrap();
    assert_eq!(t.bytes(), before);
    // The merge, done: main holds the branch.
    git(&t.repo, &["merge", "-q", "--no-ff", "--no-edit", "work/u1"]);
    let tip = t.head();
    let (code, out) = merged(&tip);
    assert_eq!(
        (code, out["gates"]["units"]["U1"]["merge_state"].as_str()),
        (0, Some("merged")),
        "{out}"
    );
    // The turn kept the commit PR-ready passed for, and the merge shows it too.
    let reviewed = out["gates"]["units"]["U1"]["reviewed"]
        .as_str()
        .expect("the turn states the reviewed commit")
        .to_owned();
    assert_eq!(reviewed, unit_tip);
    let (_, log) = t.cairn(&[
        "journal",
        "log",
        "--stream",
        "saga/issue-42",
        "--format",
        "json",
    ]);
    let event = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "unit-merged")
        .expect("a unit-merged event")
        .clone();
    let argvs: Vec<Vec<String>> = event["payload"]["runs"]
        .as_array()
        .expect("the readings are recorded")
        .iter()
        .map(|r| serde_json::from_value(r["argv"].clone()).unwrap())
        .collect();
    assert_eq!(
        argvs,
        vec![
            vec![
                "git",
                "-C",
                &repo,
                "merge-base",
                "--is-ancestor",
                "--end-of-options",
                "refs/heads/work/u1",
                &reviewed
            ],
            vec![
                "git",
                "-C",
                &repo,
                "merge-base",
                "--is-ancestor",
                "--end-of-options",
                &reviewed,
                &tip
            ],
            vec![
                "git",
                "-C",
                &repo,
                "merge-base",
                "--is-ancestor",
                "--end-of-options",
                &tip,
                "refs/heads/main"
            ],
        ]
    );
    t.audit_clean();
}

#[test]
fn a_unit_merged_into_its_own_branch_is_no_merge() {
    // The turn taken on the target branch itself: every commit on it is "on the
    // target", main's own included. Refused, nothing written.
    let t = Thread::new();
    t.save_at_work();
    t.ready();
    t.take_turn("main");
    let before = t.bytes();
    let (code, out) = t.merged_onto_main(&t.head());
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["branch-is-target".to_owned()]),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote");
}

#[test]
fn a_turn_on_a_copy_of_the_target_credits_no_merge_of_the_reviewed_work() {
    // PR-ready passed for the unit's own commit (built and reviewed on `work/u1`).
    // A turn taken on `stale`, a copy of `main`, names `main` as the merged tip:
    // the branch is "in" it and it is on main, but the reviewed work is not.
    let t = Thread::new();
    t.save_at_work();
    git(&t.repo, &["checkout", "-q", "-b", "work/u1"]);
    let reviewed = t.commit("u1.txt");
    crate::support::saga::ready_in_tree(&t.journal.path(), "issue-42", &t.repo, "work/u1");
    git(&t.repo, &["checkout", "-q", "main"]);
    git(&t.repo, &["branch", "stale"]);
    let take = t.take_turn("stale");
    assert_eq!(take["gates"]["units"]["U1"]["reviewed"], reviewed.as_str());
    let before = t.bytes();
    let (code, out) = t.merged_onto_main(&t.head());
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    assert!(messages(&out).contains(&reviewed), "{out}");
    assert_eq!(t.bytes(), before, "a refusal wrote");
    // The reviewed work lands on main: the merge is recorded.
    git(&t.repo, &["merge", "-q", "--no-ff", "--no-edit", "work/u1"]);
    let (code, out) = t.merged_onto_main(&t.head());
    assert_eq!(
        (code, out["gates"]["units"]["U1"]["merge_state"].as_str()),
        (0, Some("merged")),
        "{out}"
    );
    t.audit_clean();
}

#[test]
fn a_commit_added_after_the_review_does_not_merge_on_the_saga_path() {
    // The ship path refuses a commit the review did not see (`reviewed-shipped`);
    // a turn's merge recorded from git refuses it too (found by a hostile pass).
    let t = Thread::new();
    t.save_at_work();
    git(&t.repo, &["checkout", "-q", "-b", "work/u1"]);
    let reviewed = t.commit("u1.txt");
    t.ready();
    let late = t.commit("late.txt");
    git(&t.repo, &["checkout", "-q", "main"]);
    git(&t.repo, &["merge", "-q", "--no-ff", "--no-edit", "work/u1"]);
    t.take_turn("work/u1");
    let before = t.bytes();
    let (code, out) = t.merged_onto_main(&t.head());
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    assert!(
        messages(&out).contains("holds nothing the review did not see"),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "a refusal wrote");
    assert_ne!(reviewed, late);
}
