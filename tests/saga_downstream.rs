//! Every saga gate blocks the step it guards downstream (issue #17, finding 1): no
//! QA on an unmerged thread, no release over a blocking review, PR-ready only for
//! the revision the build loop went green at, no build-start move over an open
//! P0/P1 plan-review finding, no merge turn on a `plan-only` thread.

use serde_json::json;

use crate::support::saga::{messages, predicates, run_record, Thread};

fn work(t: &Thread, extra: &[&str]) {
    let mut a = vec![
        "saga",
        "save",
        "--id",
        "issue-42",
        "--lifecycle-phase",
        "work",
    ];
    a.extend_from_slice(extra);
    let (code, out) = t.cairn(&a);
    assert_eq!(code, 0, "{out}");
}

/// Takes the merge turn for U1 and records its merge at `HEAD`.
fn merge(t: &Thread) {
    crate::support::saga::unit_work(&t.repo, "work/42-u1");
    t.ready();
    let wt = t.repo.with_file_name("merge-wt");
    let take = t.mt(
        "take",
        &[
            "--unit",
            "U1",
            "--branch",
            "work/42-u1",
            "--merge-worktree",
            wt.to_str().unwrap(),
            "--holder",
            "h",
        ],
    );
    assert_eq!(take.0, 0, "{}", take.1);
    crate::support::saga::merge_branch(&t.repo, "work/42-u1");
    let head = t.head();
    let repo = t.repo_str().to_owned();
    let merged = t.mt(
        "merged",
        &[
            "--unit",
            "U1",
            "--holder",
            "h",
            "--merged-tip",
            &head,
            "--repo",
            &repo,
            "--target",
            "main",
        ],
    );
    assert_eq!(merged.0, 0, "{}", merged.1);
}

#[test]
fn qa_never_runs_on_an_unmerged_thread() {
    let t = Thread::new();
    work(&t, &[]);
    let before = t.bytes();
    let (code, out) = t.s("qa", &["--scenario", "checkout=passed"]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-first".to_owned()]),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "nothing recorded");
    let (_, show) = t.s("show", &[]);
    assert_eq!(show["lifecycle_phase"], "work");

    merge(&t);
    let (code, out) = t.s("qa", &["--scenario", "checkout=passed"]);
    assert_eq!(
        (code, out["lifecycle_phase"].as_str()),
        (0, Some("qa")),
        "{out}"
    );
    // QA ran on a merge with no release recorded: admitted, and the audit's
    // cross-lifecycle invariants say the story skipped the release (a notice).
    let (code, audit) = t.cairn(&["journal", "audit"]);
    let notices: Vec<&serde_json::Value> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "cross-invariant")
        .collect();
    assert_eq!((code, notices.len()), (0, 1), "{audit}");
    assert_eq!(notices[0]["stream"], "saga/issue-42", "{audit}");
    assert!(
        notices[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no release recorded"),
        "{audit}"
    );
}

#[test]
fn a_release_waits_for_the_review_gate_and_pr_ready() {
    let t = Thread::new();
    let head = t.reviewed("repairs_requested");
    let release = |t: &Thread| {
        t.s(
            "release",
            &[
                "--destination",
                "merge",
                "--reviewed-head",
                &head,
                "--landed-commit",
                &head,
                "--repo",
                t.repo_str(),
                "--target",
                "main",
            ],
        )
    };
    let before = t.bytes();
    let (code, out) = release(&t);
    assert_eq!(
        (code, predicates(&out)),
        (
            2,
            vec![
                "merged-first".to_owned(),
                "review-gate".to_owned(),
                "pr-ready".to_owned()
            ]
        ),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // Accepted but PR-ready never passed: still no release.
    assert_eq!(
        t.s(
            "review",
            &["--outcome", "accepted", "--reviewed-sha", &head]
        )
        .0,
        0
    );
    let (code, out) = release(&t);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-first".to_owned(), "pr-ready".to_owned()]),
        "{out}"
    );
    assert_eq!(t.pr_ready().0, 0);
    crate::support::saga::turn_merged_at(&t.journal.path(), "issue-42", &t.repo, &head);
    // The release is bound to the reviewed head: a typed one the recorded
    // review contradicts is refused (left out, it is the review's own).
    let other = "0".repeat(40);
    let (code, out) = t.s(
        "release",
        &[
            "--destination",
            "merge",
            "--reviewed-head",
            &other,
            "--landed-commit",
            &head,
            "--repo",
            t.repo_str(),
            "--target",
            "main",
        ],
    );
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["reviewed-head".to_owned()]),
        "{out}"
    );
    let (code, out) = release(&t);
    assert_eq!(code, 0, "{out}");
    // A new review that requests repairs clears PR-ready: the release waits again.
    assert_eq!(
        t.s(
            "review",
            &["--outcome", "review_incomplete", "--reviewed-sha", &head]
        )
        .0,
        0
    );
    let (code, out) = release(&t);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["review-gate".to_owned(), "pr-ready".to_owned()]),
        "{out}"
    );
    t.audit_clean();
}

#[test]
fn pr_ready_reviews_only_the_revision_the_build_loop_went_green_at() {
    let t = Thread::with_record(run_record(
        json!(["test -f ok.txt"]),
        json!([{"id": "U1", "branch": "work/42-u1"}]),
    ));
    work(&t, &[]);
    assert_eq!(
        t.s(
            "doc-review",
            &["--unresolved-p0-p1", "0", "--source", "review_cycles"]
        )
        .0,
        0
    );
    let b = t.commit("b.txt");
    assert_eq!(
        t.s("review", &["--outcome", "accepted", "--reviewed-sha", &b])
            .0,
        0
    );
    let (code, out) = t.pr_ready();
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["build-loop-green".to_owned()]),
        "no iteration ever went green: {out}"
    );
    assert!(messages(&out).contains("back to the build loop"), "{out}");
    // The loop runs at b and is not green: still nothing handed to code review.
    assert_eq!(t.build_loop(&[]).0, 4);
    assert_eq!(predicates(&t.pr_ready().1), ["build-loop-green"]);
    // Green at c: the review of b is a review of a revision the loop never passed.
    let c = t.commit("ok.txt");
    assert_eq!(t.build_loop(&[]).0, 0);
    let (code, out) = t.pr_ready();
    assert_eq!(code, 2, "{out}");
    assert!(
        predicates(&out).contains(&"build-loop-green".to_owned()),
        "{out}"
    );
    assert!(
        messages(&out).contains(&c),
        "the handed revision is named: {out}"
    );
    // A review-gate override does not waive it: unchecked work is never reviewed.
    let o = t.s(
        "override",
        &[
            "--gate",
            "review-gate",
            "--rationale",
            "r",
            "--operator",
            "ana",
        ],
    );
    assert_eq!(o.0, 0, "{}", o.1);
    assert!(predicates(&t.pr_ready().1).contains(&"build-loop-green".to_owned()));
    assert_eq!(
        t.s("review", &["--outcome", "accepted", "--reviewed-sha", &c])
            .0,
        0
    );
    let (code, out) = t.pr_ready();
    assert_eq!(code, 0, "{out}");
    t.audit_clean();
}

#[test]
fn the_build_start_move_waits_for_the_plan_review() {
    let t = Thread::new();
    let (code, _) = t.cairn(&[
        "saga",
        "save",
        "--id",
        "issue-42",
        "--lifecycle-phase",
        "plan",
    ]);
    assert_eq!(code, 0);
    let board = |t: &Thread, boundary: &str| {
        t.s(
            "board",
            &["--boundary", boundary, "--written-field", "Stage+Status"],
        )
    };
    let before = t.bytes();
    for boundary in ["build-start", "plan-review-pass"] {
        let (code, out) = board(&t, boundary);
        assert_eq!(
            (code, predicates(&out)),
            (2, vec!["doc-review-gate".to_owned()]),
            "no plan review recorded: {out}"
        );
    }
    assert_eq!(t.bytes(), before);
    assert_eq!(
        t.s(
            "doc-review",
            &["--unresolved-p0-p1", "1", "--source", "docs/reviews/p.md"]
        )
        .0,
        0
    );
    let (code, out) = board(&t, "build-start");
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["doc-review-gate".to_owned()]),
        "an open P1: {out}"
    );
    assert_eq!(
        board(&t, "admission-exit").0,
        0,
        "admission needs no plan review"
    );
    let o = t.s(
        "override",
        &[
            "--gate",
            "doc-review",
            "--rationale",
            "tracked in #12",
            "--operator",
            "ana",
        ],
    );
    assert_eq!(o.0, 0, "{}", o.1);
    assert_eq!(board(&t, "plan-review-pass").0, 0);
    assert_eq!(board(&t, "build-start").0, 0);
    t.audit_clean();
}

#[test]
fn a_plan_only_thread_takes_no_merge_turn() {
    let t = Thread::new();
    let (code, out) = t.cairn(&[
        "saga",
        "save",
        "--id",
        "issue-42",
        "--destination",
        "plan_only",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["destination".to_owned()]),
        "a misspelt destination never slips past the gate: {out}"
    );
    work(&t, &["--destination", "plan-only"]);
    let wt = t.repo.with_file_name("merge-wt");
    let before = t.bytes();
    let (code, out) = t.mt(
        "take",
        &[
            "--unit",
            "U1",
            "--branch",
            "work/42-u1",
            "--merge-worktree",
            wt.to_str().unwrap(),
            "--holder",
            "h",
        ],
    );
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["destination".to_owned()]),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    work(&t, &["--destination", "pr"]);
    merge(&t);
    t.audit_clean();
}

#[test]
fn the_doc_review_gate_blocks_execution_until_overridden() {
    let t = crate::support::TempJournal::new();
    let run = |args: &[&str]| {
        let mut full = vec!["saga"];
        full.extend_from_slice(args);
        let (code, out, _) = crate::park::park(&full, "", Some(&t.path()));
        (code, out)
    };
    assert_eq!(
        run(&["save", "--id", "issue-8", "--lifecycle-phase", "plan"]).0,
        0
    );
    run(&[
        "doc-review",
        "--saga-id",
        "issue-8",
        "--unresolved-p0-p1",
        "2",
        "--source",
        "docs/reviews/plan.md",
    ]);
    let (code, out) = run(&["save", "--id", "issue-8", "--lifecycle-phase", "work"]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["doc-review-gate".to_owned()]),
        "{out}"
    );
    // The review-gate override does not waive the doc-review gate: one gate per override.
    let (code, _) = run(&[
        "override",
        "--saga-id",
        "issue-8",
        "--gate",
        "review-gate",
        "--rationale",
        "r",
        "--operator",
        "ana",
    ]);
    assert_eq!(code, 2, "no review to waive yet");
    assert_eq!(
        run(&[
            "override",
            "--saga-id",
            "issue-8",
            "--gate",
            "doc-review",
            "--rationale",
            "the P1s are tracked in #12",
            "--operator",
            "ana"
        ])
        .0,
        0
    );
    assert_eq!(
        run(&["save", "--id", "issue-8", "--lifecycle-phase", "work"]).0,
        0
    );
    // A submitted pair outside the table is refused.
    let (code, out) = run(&[
        "board",
        "--saga-id",
        "issue-8",
        "--boundary",
        "build-start",
        "--written-field",
        "Stage+Status",
        "--stage",
        "Active",
        "--status",
        "Shipped",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["board-pair".to_owned()]),
        "{out}"
    );
    let (code, _) = run(&[
        "board",
        "--saga-id",
        "issue-8",
        "--boundary",
        "build-start",
        "--written-field",
        "Stage+Status",
        "--stage",
        "Active",
        "--status",
        "Implementing",
    ]);
    assert_eq!(code, 0);
}
