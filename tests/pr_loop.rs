//! The PR continuation loop through the real binary: classification of every state,
//! freshness counted on a real repository, and the recorded loop with its
//! confirmation-only merge.

use std::path::Path;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::git;
use crate::support::pr::*;
use crate::support::{Mutation, TempJournal};

fn classify(doc: &Value) -> (i32, Value) {
    let (code, out, _) = cairn(&["pr", "classify"], &doc.to_string(), None);
    (code, out)
}

/// Classifies `state`'s document; an approved-fresh one with cairn observing its
/// freshness in `fresh` (the only way a review is fresh).
fn classify_state(fresh: &FreshRepo, state: &str, destination: &str) -> (i32, Value) {
    if state == "approved-fresh" {
        let d = fresh.doc(state, destination).to_string();
        let (code, out, _) = cairn(&["pr", "classify", "--repo", fresh.repo()], &d, None);
        (code, out)
    } else {
        classify(&doc(state, destination))
    }
}

#[test]
fn every_state_is_classified_from_a_gh_reading() {
    let fresh = FreshRepo::new();
    for state in STATES {
        let (code, out) = classify_state(&fresh, state, "pr");
        assert_eq!((code, out["state"].as_str()), (0, Some(state)), "{out}");
    }
}

#[test]
fn classification_snapshots() {
    let fresh = FreshRepo::new();
    for state in STATES {
        let (code, mut out) = classify_state(&fresh, state, "merge");
        assert_eq!(code, 0);
        // The temp repository and its commit ids differ run to run.
        if let Some(f) = out.get_mut("freshness") {
            f["repo"] = json!("[REPO]");
            f["reviewed_sha"] = json!("[REVIEWED]");
        }
        insta::assert_snapshot!(
            format!("pr_classify_{state}"),
            serde_json::to_string_pretty(&out).unwrap()
        );
    }
}

#[test]
fn actions_follow_the_table() {
    let fresh = FreshRepo::new();
    let action = |state: &str, dest: &str| classify_state(&fresh, state, dest).1;
    let d = action("draft", "pr");
    assert_eq!(
        (d["action"].clone(), d["request_review"].clone()),
        (json!("offer-ready"), json!(false))
    );
    assert!(action("await-review", "pr")["next_step"]
        .as_str()
        .unwrap()
        .contains(&format!("await review on {PR}")));
    assert_eq!(
        action("pending-or-failing-checks", "merge")["action"],
        "fix-round"
    );
    assert_eq!(
        action("pending-or-failing-checks", "merge")["merge_offer"],
        false
    );
    let mut running = doc("pending-or-failing-checks", "merge");
    running["reading"]["statusCheckRollup"] = json!([
        check_run("test", "QUEUED", ""),
        status_context("lint", "PENDING")
    ]);
    assert_eq!(classify(&running).1["action"], "wait");
    assert_eq!(action("approved-stale", "merge")["action"], "re-review");
    assert_eq!(
        (
            action("approved-fresh", "merge")["action"].clone(),
            action("approved-fresh", "merge")["merge_offer"].clone()
        ),
        (json!("offer-merge"), json!(true))
    );
    assert_eq!(
        action("approved-fresh", "nonprod-deploy")["action"],
        "offer-merge"
    );
    assert_eq!(
        (
            action("approved-fresh", "pr")["action"].clone(),
            action("approved-fresh", "pr")["merge_offer"].clone()
        ),
        (json!("done-to-qa"), json!(false))
    );
    assert_eq!(action("merged", "pr")["action"], "complete-to-qa");
    assert_eq!(action("closed", "pr")["action"], "ask-operator");
    // Unresolved threads are changes requested, even on an approved PR.
    let mut threads = doc("approved-stale", "merge");
    threads["unresolved_threads"] = json!(2);
    assert_eq!(classify(&threads).1["state"], "changes-requested");
}

/// Whatever else the reading says, once `state` is MERGED with `mergedAt`. (A
/// `state` of OPEN or CLOSED beside `mergedAt` is a contradiction, refused: see
/// `pr_findings`.)
#[test]
fn a_merged_pr_is_merged_whatever_else_it_says() {
    for (k, v) in [
        ("isDraft", json!(true)),
        ("reviewDecision", json!("CHANGES_REQUESTED")),
        ("mergeable", json!("CONFLICTING")),
    ] {
        let mut d = doc("merged", "pr");
        d["reading"][k] = v;
        assert_eq!(classify(&d).1["state"], "merged", "{k}");
    }
}

#[test]
fn readings_the_table_cannot_place_are_typed_errors() {
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "pr-enum",
            Box::new(|d| d["reading"]["state"] = json!("LOCKED")),
        ),
        (
            "pr-enum",
            Box::new(|d| d["reading"]["mergeable"] = json!(null)),
        ),
        (
            "pr-enum",
            Box::new(|d| {
                d["reading"]["statusCheckRollup"] = json!([check_run("x", "COMPLETED", "MAYBE")])
            }),
        ),
        (
            "required",
            Box::new(|d| {
                d["reading"]
                    .as_object_mut()
                    .unwrap()
                    .remove("mergeStateStatus");
            }),
        ),
        (
            "merged-without-time",
            Box::new(|d| d["reading"]["state"] = json!("MERGED")),
        ),
        (
            "timestamp",
            Box::new(|d| d["reading"]["mergedAt"] = json!("yesterday")),
        ),
        (
            "review-freshness-unknown",
            Box::new(|d| {
                d["commits_since_review"] = json!(null);
            }),
        ),
        ("unknown-field", Box::new(|d| d["next_round"] = json!(4))),
        (
            "unknown-field",
            Box::new(|d| d["reading"]["surprise"] = json!(1)),
        ),
        ("pr-url", Box::new(|d| d["pr"] = json!("#7"))),
        ("full-head", Box::new(|d| d["reviewed_sha"] = json!("abc"))),
    ];
    for (rule, mutate) in cases {
        let mut d = doc("approved-stale", "pr");
        mutate(&mut d);
        let (code, out) = classify(&d);
        assert_eq!(
            (code, out["error"]["rule"].clone()),
            (2, json!(rule)),
            "{out}"
        );
    }
}

#[test]
fn cairn_counts_commits_since_the_review_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().canonicalize().unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for i in 0..3 {
        std::fs::write(repo.join("f"), i.to_string()).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    let reviewed = git(&repo, &["rev-parse", "HEAD~2"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let r = repo.to_str().unwrap();
    let mut d = doc("approved-fresh", "merge");
    d.as_object_mut().unwrap().remove("commits_since_review");
    d["reviewed_sha"] = json!(reviewed);
    let (code, out, _) = cairn(&["pr", "classify", "--repo", r], &d.to_string(), None);
    assert_eq!(
        (
            code,
            out["state"].clone(),
            out["commits_since_review"].clone()
        ),
        (0, json!("approved-stale"), json!(2)),
        "{out}"
    );
    d["reviewed_sha"] = json!(head);
    let (_, out, _) = cairn(&["pr", "classify", "--repo", r], &d.to_string(), None);
    assert_eq!(out["state"], "approved-fresh");
    // A SHA the repository does not have: unreadable, refused, never fresh.
    d["reviewed_sha"] = json!("0000000000000000000000000000000000000001");
    let (code, out, _) = cairn(&["pr", "classify", "--repo", r], &d.to_string(), None);
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("freshness-unreadable")),
        "{out}"
    );
}

fn observe(db: &Path, d: &Value) -> Value {
    let (code, out, _) = cairn(&["pr", "observe"], &d.to_string(), Some(db));
    assert_eq!(code, 0, "{out}");
    out
}

fn verb(db: &Path, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["pr"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--pr", PR]);
    let (code, out, _) = cairn(&a, "", Some(db));
    (code, out)
}

#[test]
fn the_loop_rounds_escalates_and_merges_only_on_confirmation() {
    let t = TempJournal::new();
    let db = t.path();
    let out = observe(&db, &doc("changes-requested", "merge"));
    assert_eq!(
        (
            out["events"].clone(),
            out["rounds_seen"].clone(),
            out["next_round"].clone()
        ),
        (json!(["observed", "round-started"]), json!([1]), json!(2))
    );
    // A depth-shaped failure proposes exactly one rung.
    let mut failing = doc("pending-or-failing-checks", "merge");
    failing["failure_shape"] = json!("depth");
    failing["tiers"] =
        json!({"ladder": ["haiku", "sonnet", "opus"], "current": "haiku", "ceiling": "opus"});
    let out = observe(&db, &failing);
    assert_eq!(
        (
            out["events"].clone(),
            out["state"].clone(),
            out["rounds_seen"].clone()
        ),
        (
            json!(["observed", "round-started", "escalation-proposed"]),
            json!("escalation-proposed"),
            json!([1, 2])
        )
    );
    let token = out["proposal"]["token"].as_str().unwrap().to_owned();
    // Attended: no spend increase without the approval token.
    let (code, out) = verb(
        &db,
        &[
            "resolve-escalation",
            "--mode",
            "attended",
            "--decision",
            "apply",
        ],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("approval-token")),
        "{out}"
    );
    let (code, out) = verb(
        &db,
        &[
            "resolve-escalation",
            "--mode",
            "attended",
            "--decision",
            "apply",
            "--approval-token",
            &token,
        ],
    );
    assert_eq!(
        (code, out["tier"].clone(), out["state"].clone()),
        (0, json!("sonnet"), json!("observing")),
        "{out}"
    );
    // Approved and fresh (cairn's own runs) with a merge destination: offered, not merged.
    let fresh = FreshRepo::new();
    let (code, out, _) = cairn(
        &["pr", "observe", "--repo", fresh.repo()],
        &fresh.doc("approved-fresh", "merge").to_string(),
        Some(&db),
    );
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("merge-offered")),
        "{out}"
    );
    let gh = StandInGh::new();
    let mut merged = reading("merged");
    merged["headRefOid"] = json!(fresh.head());
    gh.answer(&merged);
    let record_merge = || {
        cairn_with(
            &["pr", "record-merge", "--pr", PR],
            "",
            &db,
            Some(gh.dir.path()),
            &[],
        )
    };
    let (code, out, _) = record_merge();
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merge-confirmed")),
        "{out}"
    );
    assert!(
        gh.calls().is_empty(),
        "nothing is read before a confirmation"
    );
    let (code, out) = verb(&db, &["confirm", "--what", "merge", "--operator", "alice"]);
    assert_eq!((code, out["state"].clone()), (0, json!("merge-confirmed")));
    let (code, out, _) = record_merge();
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("complete")),
        "{out}"
    );
    // The loop has ended; the journal audits.
    let out = cairn(
        &["pr", "observe"],
        &doc("merged", "merge").to_string(),
        Some(&db),
    )
    .1;
    assert_eq!(out["error"]["violations"][0]["predicate"], "loop-open");
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&db));
    assert_eq!((code, audit["ok"].clone()), (0, json!(true)), "{audit}");
    let (_, state, _) = cairn(
        &["state", "pr-loop/github.com/example/project/pull/7"],
        "",
        Some(&db),
    );
    assert_eq!(state["state_name"], "complete");
}

#[test]
fn a_new_observation_withdraws_an_unconfirmed_or_confirmed_merge() {
    let t = TempJournal::new();
    let db = t.path();
    let fresh = FreshRepo::new();
    let (code, out, _) = cairn(
        &["pr", "observe", "--repo", fresh.repo()],
        &fresh.doc("approved-fresh", "merge").to_string(),
        Some(&db),
    );
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("merge-offered")),
        "{out}"
    );
    assert_eq!(
        verb(&db, &["confirm", "--what", "merge", "--operator", "alice"]).0,
        0
    );
    // The PR moved (new commits): the confirmation does not carry over.
    observe(&db, &doc("approved-stale", "merge"));
    let (code, out) = verb(&db, &["record-merge", "--target", "main"]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("merge-confirmed")),
        "{out}"
    );
}

#[test]
fn drafts_get_a_ready_offer_and_never_a_review_request() {
    let t = TempJournal::new();
    let db = t.path();
    let out = observe(&db, &doc("draft", "pr"));
    assert_eq!(out["state"], "ready-offered");
    assert_eq!(verb(&db, &["offer-review-request"]).0, 2);
    assert_eq!(
        verb(&db, &["confirm", "--what", "ready", "--operator", "bob"]).1["state"],
        "observing"
    );
    let (code, out) = verb(&db, &["offer-review-request"]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("not-draft"))
    );
    observe(&db, &doc("await-review", "pr"));
    assert_eq!(
        verb(&db, &["offer-review-request"]).1["state"],
        "review-request-offered"
    );
    assert_eq!(
        verb(
            &db,
            &["confirm", "--what", "review-request", "--operator", "bob"]
        )
        .0,
        0
    );
}

#[test]
fn a_closed_pr_waits_for_the_operator() {
    let t = TempJournal::new();
    let db = t.path();
    assert_eq!(
        observe(&db, &doc("closed", "pr"))["state"],
        "awaiting-operator"
    );
    assert_eq!(
        verb(
            &db,
            &[
                "dispose",
                "--as",
                "paused",
                "--reason",
                "",
                "--operator",
                "carol"
            ]
        )
        .0,
        2
    );
    assert_eq!(
        verb(
            &db,
            &[
                "dispose",
                "--as",
                "paused",
                "--reason",
                "upstream first",
                "--operator",
                "carol"
            ]
        )
        .1["state"],
        "paused"
    );
    // Reopened later: the loop resumes.
    assert_eq!(
        observe(&db, &doc("await-review", "pr"))["state"],
        "observing"
    );
    assert_eq!(
        observe(&db, &doc("closed", "pr"))["state"],
        "awaiting-operator"
    );
    assert_eq!(
        verb(
            &db,
            &[
                "dispose",
                "--as",
                "abandoned",
                "--reason",
                "superseded",
                "--operator",
                "carol"
            ]
        )
        .1["state"],
        "abandoned"
    );
}

#[test]
fn unattended_escalation_is_held_and_a_clamped_one_is_not_proposed() {
    let t = TempJournal::new();
    let db = t.path();
    let mut failing = doc("pending-or-failing-checks", "merge");
    failing["failure_shape"] = json!("depth");
    failing["tiers"] =
        json!({"ladder": ["haiku", "sonnet", "opus"], "current": "sonnet", "ceiling": "opus"});
    failing["reading"]["headRefOid"] = json!("a".repeat(40));
    assert_eq!(observe(&db, &failing)["state"], "escalation-proposed");
    let (code, out) = verb(
        &db,
        &[
            "resolve-escalation",
            "--mode",
            "unattended",
            "--decision",
            "apply",
        ],
    );
    assert_eq!(
        (code, out["events"].clone(), out["tier"].clone()),
        (0, json!(["escalation-held"]), Value::Null),
        "{out}"
    );
    // Held: the tier is still the journal's `sonnet`. At the session ceiling, a new
    // round's depth-shaped failure proposes nothing, and says so.
    failing["tiers"]["ceiling"] = json!("sonnet");
    failing["reading"]["headRefOid"] = json!("b".repeat(40));
    let out = observe(&db, &failing);
    assert_eq!(
        (out["events"].clone(), out["state"].clone()),
        (
            json!(["observed", "round-started", "escalation-clamped"]),
            json!("observing")
        ),
        "{out}"
    );
}

#[test]
fn fetch_and_observe_say_when_gh_is_missing() {
    let t = TempJournal::new();
    let mut d = doc("approved-fresh", "pr");
    d.as_object_mut().unwrap().remove("reading");
    for (args, stdin) in [
        (vec!["pr", "fetch", "--pr", PR], String::new()),
        (vec!["pr", "observe", "--pr", PR], d.to_string()),
    ] {
        let (code, out, _) = cairn(&args, &stdin, Some(&t.path()));
        assert_eq!(code, 2, "{out}");
        let rule = out["error"]["rule"].as_str().unwrap();
        assert!(rule == "gh-installed" || rule == "gh-read", "{out}");
    }
    assert!(!t.path().exists(), "nothing was written");
}

#[test]
fn the_graph_renders_as_mermaid() {
    let (code, stdout, _) = crate::cli::run(&["graph", "pr-loop", "--format", "mermaid"], None);
    assert_eq!(code, 0);
    insta::assert_snapshot!("pr_loop_mermaid", stdout);
    // The loop's section in its guide shows the graph as built.
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/pr-loop.md"))
        .unwrap();
    let section = guide
        .split("## The PR continuation loop (`cairn pr`)")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/pr-loop.md has the loop's section");
    let block = section
        .split("```mermaid\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a mermaid block");
    assert_eq!(
        block.trim_end(),
        stdout.trim_end(),
        "regenerate the block in docs/pr-loop.md with `cairn graph pr-loop --format mermaid`"
    );
}
