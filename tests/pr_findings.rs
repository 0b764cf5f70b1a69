//! Issue #18 (and the pr part of #14) on real parts: freshness only from cairn's own
//! git runs, the tier from the journal's approved escalations, every enum value
//! checked, rounds on a new head or verdict, one PR identity, pause and abandon on
//! an open PR, help that runs as written. The merge's evidence is in `pr_merge.rs`.

use std::path::Path;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::git;
use crate::support::pr::*;
use crate::support::{Mutation, TempJournal};

/// An approved, clean document whose freshness cairn must observe (`--repo`).
pub fn fresh_doc(reviewed: &str, destination: &str) -> Value {
    let mut d = doc("approved-fresh", destination);
    d.as_object_mut().unwrap().remove("commits_since_review");
    d["reviewed_sha"] = json!(reviewed);
    d
}

fn observe_in(db: &Path, args: &[&str], d: &Value) -> (i32, Value) {
    let mut a = vec!["pr", "observe"];
    a.extend_from_slice(args);
    let (code, out, _) = cairn(&a, &d.to_string(), Some(db));
    (code, out)
}

fn observe(db: &Path, d: &Value) -> Value {
    let (code, out) = observe_in(db, &[], d);
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

/// The first violation of a refusal: its predicate and field.
pub fn violation(out: &Value) -> (&str, &str) {
    let v = &out["error"]["violations"][0];
    (
        v["predicate"].as_str().unwrap_or_default(),
        v["field"].as_str().unwrap_or_default(),
    )
}

fn audit_ok(db: &Path) {
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(db));
    assert_eq!((code, audit["ok"].clone()), (0, json!(true)), "{audit}");
}

fn failing(head: &str) -> Value {
    let mut d = doc("pending-or-failing-checks", "merge");
    d["reading"]["headRefOid"] = json!(head);
    d
}

fn head(n: u8) -> String {
    format!("{n:x}").repeat(40)
}

#[test]
fn an_old_checkout_behind_the_reviewed_commit_is_never_fresh() {
    let (_tmp, repo, ids) = three_commit_repo();
    let r = repo.to_str().unwrap();
    // HEAD is two commits *behind* the reviewed one: `rev-list REVIEWED..HEAD` counts 0.
    git(&repo, &["checkout", "-q", "--detach", &ids[0]]);
    let d = fresh_doc(&ids[2], "merge");
    let (code, out, _) = cairn(&["pr", "classify", "--repo", r], &d.to_string(), None);
    assert_eq!(
        (code, out["state"].clone(), out["merge_offer"].clone()),
        (0, json!("approved-stale"), json!(false)),
        "{out}"
    );
    let t = TempJournal::new();
    let (code, out) = observe_in(&t.path(), &["--repo", r], &d);
    assert_eq!(
        (
            code,
            out["state"].clone(),
            out["freshness"]["freshness"].clone()
        ),
        (0, json!("observing"), json!("not-ancestor")),
        "{out}"
    );
    // Back at the reviewed commit: fresh, offered, and the audit re-derives it.
    git(&repo, &["checkout", "-q", "--detach", &ids[2]]);
    let (code, out) = observe_in(&t.path(), &["--repo", r], &d);
    assert_eq!(
        (
            code,
            out["state"].clone(),
            out["freshness"]["freshness"].clone()
        ),
        (0, json!("merge-offered"), json!("fresh")),
        "{out}"
    );
    // The command carries both of cairn's runs: ancestry, then the count.
    let commands = t.commands();
    let last: Value = serde_json::from_str(commands.last().unwrap()).unwrap();
    let argv: Vec<Value> = last["observed"]["freshness"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["argv"][3].clone())
        .collect();
    assert_eq!(argv, vec![json!("merge-base"), json!("rev-list")], "{last}");
    audit_ok(&t.path());
}

#[test]
fn a_callers_count_can_make_a_review_stale_but_never_fresh() {
    let t = TempJournal::new();
    let mut d = doc("approved-fresh", "merge");
    d["commits_since_review"] = json!(0);
    for verb in ["classify", "observe"] {
        let (code, out, _) = cairn(&["pr", verb], &d.to_string(), Some(&t.path()));
        assert_eq!(
            (
                code,
                out["error"]["field"].clone(),
                out["error"]["rule"].clone()
            ),
            (2, json!("repo"), json!("review-freshness-unknown")),
            "{verb}: {out}"
        );
    }
    assert!(!t.path().exists(), "nothing was written");
    // A count above 0 is enough to call it stale.
    d["commits_since_review"] = json!(3);
    let out = observe(&t.path(), &d);
    assert_eq!(out["classification"]["state"], "approved-stale", "{out}");
    // A count beside cairn's own runs is refused as a second source (in the machine
    // the stale side would win: see `pr_properties`).
    let (_tmp, repo, ids) = three_commit_repo();
    let mut both = fresh_doc(&ids[2], "merge");
    both["commits_since_review"] = json!(1);
    let (code, out, _) = cairn(
        &["pr", "classify", "--repo", repo.to_str().unwrap()],
        &both.to_string(),
        None,
    );
    assert_eq!(
        (code, out["error"]["rule"].clone()),
        (2, json!("one-source")),
        "{out}"
    );
}

#[test]
fn the_callers_git_environment_does_not_steer_the_freshness_runs() {
    let (_tmp, repo, ids) = three_commit_repo();
    let (_other_tmp, other, _) = three_commit_repo();
    // Inside a hook of the other clone: GIT_DIR names it, and HEAD there is not ids[2].
    let t = TempJournal::new();
    let gitdir = other.join(".git");
    let (code, out, _) = cairn_with(
        &["pr", "observe", "--repo", repo.to_str().unwrap()],
        &fresh_doc(&ids[2], "merge").to_string(),
        &t.path(),
        None,
        &[("GIT_DIR", gitdir.to_str().unwrap())],
    );
    assert_eq!(
        (code, out["state"].clone()),
        (0, json!("merge-offered")),
        "{out}"
    );
}

#[test]
fn the_tier_is_what_the_journals_approved_escalations_make_it() {
    let t = TempJournal::new();
    let db = t.path();
    let tiers = |current: &str| json!({"ladder": ["haiku", "sonnet", "opus", "ultra"], "current": current, "ceiling": "ultra"});
    let mut d = failing(&head(1));
    d["failure_shape"] = json!("depth");
    d["tiers"] = tiers("haiku");
    let out = observe(&db, &d);
    assert_eq!(out["state"], "escalation-proposed", "{out}");
    let token = out["proposal"]["token"].as_str().unwrap().to_owned();
    let resolve = |token: &str| {
        verb(
            &db,
            &[
                "resolve-escalation",
                "--mode",
                "attended",
                "--decision",
                "apply",
                "--approval-token",
                token,
            ],
        )
    };
    // Any other token is refused: the token is the one cairn minted with the proposal.
    let (code, out) = resolve("tok-1");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("approval-token")),
        "{out}"
    );
    let (code, out) = resolve(&token);
    assert_eq!(
        (code, out["tier"].clone(), out["current_tier"].clone()),
        (0, json!("sonnet"), json!("sonnet")),
        "{out}"
    );
    // Single-use: nothing is proposed any more.
    assert_eq!(resolve(&token).0, 2);
    // A reading that claims a rung nobody approved is refused, and writes nothing.
    let before = t.bytes();
    let mut claims = failing(&head(2));
    claims["failure_shape"] = json!("depth");
    claims["tiers"] = tiers("opus");
    let (code, out) = observe_in(&db, &[], &claims);
    assert_eq!(
        (code, violation(&out)),
        (2, ("tier-from-journal", "tiers.current")),
        "{out}"
    );
    // So is a ladder other than the one the loop started with (a skipped rung).
    claims["tiers"] =
        json!({"ladder": ["sonnet", "ultra"], "current": "sonnet", "ceiling": "ultra"});
    let (code, out) = observe_in(&db, &[], &claims);
    assert_eq!(
        (code, violation(&out)),
        (2, ("tier-ladder", "tiers.ladder")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // The journal's tier proposes the next rung with a new token; the old one is spent.
    claims["tiers"] = tiers("sonnet");
    let out = observe(&db, &claims);
    assert_eq!(
        (
            out["proposal"]["from"].clone(),
            out["proposal"]["to"].clone()
        ),
        (json!("sonnet"), json!("opus")),
        "{out}"
    );
    assert_ne!(out["proposal"]["token"], json!(token));
    assert_eq!(resolve(&token).0, 2);
    audit_ok(&db);
}

#[test]
fn a_clamped_escalation_is_recorded_as_clamped() {
    let t = TempJournal::new();
    let mut d = failing(&head(1));
    d["failure_shape"] = json!("depth");
    d["tiers"] =
        json!({"ladder": ["haiku", "sonnet", "opus"], "current": "sonnet", "ceiling": "sonnet"});
    let out = observe(&t.path(), &d);
    assert_eq!(
        (out["events"].clone(), out["state"].clone()),
        (
            json!(["observed", "round-started", "escalation-clamped"]),
            json!("observing")
        ),
        "{out}"
    );
    audit_ok(&t.path());
}

#[test]
fn contradictory_or_unknown_readings_are_refused_and_write_nothing() {
    let t = TempJournal::new();
    let cases: Vec<(&str, &str, Mutation)> = vec![
        (
            "reading.mergeStateStatus",
            "contradictory-reading",
            Box::new(|d| d["reading"]["mergeStateStatus"] = json!("DRAFT")),
        ),
        (
            "reading.statusCheckRollup[1].__typename",
            "pr-enum",
            Box::new(|d| {
                d["reading"]["statusCheckRollup"][1]["__typename"] = json!("SomethingNew");
            }),
        ),
        (
            "reading.statusCheckRollup[1].status",
            "pr-enum",
            Box::new(|d| {
                d["reading"]["statusCheckRollup"] = json!([
                    check_run("test", "COMPLETED", "FAILURE"),
                    check_run("build", "SOMEDAY", "")
                ]);
            }),
        ),
        (
            "reading.statusCheckRollup[0].conclusion",
            "contradictory-reading",
            Box::new(|d| {
                d["reading"]["statusCheckRollup"] =
                    json!([check_run("test", "IN_PROGRESS", "SUCCESS")]);
            }),
        ),
        (
            "reading.mergedAt",
            "contradictory-reading",
            Box::new(|d| d["reading"]["mergedAt"] = json!("2026-11-30T05:00:00Z")),
        ),
        (
            "reading.url",
            "contradictory-reading",
            Box::new(|d| d["reading"]["url"] = json!("https://github.com/example/project/pull/8")),
        ),
        (
            "reading.headRefOid",
            "full-commit",
            Box::new(|d| d["reading"]["headRefOid"] = json!("abc123")),
        ),
    ];
    for (field, rule, mutate) in cases {
        let mut d = doc("approved-stale", "merge");
        mutate(&mut d);
        for verb in ["classify", "observe"] {
            let (code, out, _) = cairn(&["pr", verb], &d.to_string(), Some(&t.path()));
            assert_eq!(
                (
                    code,
                    out["error"]["field"].clone(),
                    out["error"]["rule"].clone()
                ),
                (2, json!(field), json!(rule)),
                "{verb}: {out}"
            );
        }
    }
    assert!(!t.path().exists(), "nothing was written");
    // `NONE` is not a value gh prints, and the error does not offer it.
    let mut d = doc("approved-stale", "merge");
    d["reading"]["reviewDecision"] = json!("NONE");
    let (code, out, _) = cairn(&["pr", "classify"], &d.to_string(), None);
    let message = out["error"]["message"].as_str().unwrap_or_default();
    let expected = message.split("expected").nth(1).unwrap_or_default();
    assert!(
        code == 2 && out["error"]["rule"] == "pr-enum" && !expected.contains("NONE"),
        "{out}"
    );
}

#[test]
fn a_round_is_a_new_head_or_a_new_verdict_not_a_new_call() {
    let t = TempJournal::new();
    let db = t.path();
    for _ in 0..3 {
        observe(&db, &failing(&head(1)));
    }
    let (_, state, _) = cairn(
        &["state", "pr-loop/github.com/example/project/pull/7"],
        "",
        Some(&db),
    );
    assert_eq!(state["state"]["l"]["rounds_seen"], json!([1]), "{state}");
    // A new head: a new round.
    assert_eq!(
        observe(&db, &failing(&head(2)))["rounds_seen"],
        json!([1, 2])
    );
    // A new verdict on the same head: a new round; the same one again is not.
    let mut changes = doc("changes-requested", "merge");
    changes["reading"]["headRefOid"] = json!(head(2));
    assert_eq!(observe(&db, &changes)["rounds_seen"], json!([1, 2, 3]));
    let out = observe(&db, &changes);
    assert_eq!(
        (out["rounds_seen"].clone(), out["events"].clone()),
        (json!([1, 2, 3]), json!(["observed"])),
        "{out}"
    );
    audit_ok(&db);
}

#[test]
fn the_loop_continues_the_saga_threads_rounds() {
    let t = TempJournal::new();
    let db = t.path();
    // The saga thread minted round 1 (the build that opened the PR).
    let mut d = doc("changes-requested", "merge");
    d["saga_rounds_seen"] = json!([1]);
    let out = observe(&db, &d);
    assert_eq!(
        (out["rounds_seen"].clone(), out["next_round"].clone()),
        (json!([1, 2]), json!(3)),
        "{out}"
    );
    // A thread that did not save round 2 disagrees with the loop: refused.
    let mut lagging = failing(&head(3));
    lagging["saga_rounds_seen"] = json!([1]);
    let (code, out) = observe_in(&db, &[], &lagging);
    assert_eq!(
        (code, violation(&out)),
        (2, ("rounds-consistent", "saga_rounds_seen")),
        "{out}"
    );
    lagging["saga_rounds_seen"] = json!([1, 2]);
    assert_eq!(observe(&db, &lagging)["rounds_seen"], json!([1, 2, 3]));
}

#[test]
fn one_pr_has_one_stream_whatever_its_url_looks_like() {
    let (_tmp, repo, ids) = three_commit_repo();
    let r = repo.to_str().unwrap();
    let t = TempJournal::new();
    let db = t.path();
    let mut offered = fresh_doc(&ids[2], "merge");
    offered["pr"] = json!("https://GitHub.com/example/project/pull/07");
    let (code, out) = observe_in(&db, &["--repo", r], &offered);
    assert_eq!(
        (
            code,
            out["stream"].clone(),
            out["pr"].clone(),
            out["state"].clone()
        ),
        (
            0,
            json!("pr-loop/github.com/example/project/pull/7"),
            json!(PR),
            json!("merge-offered")
        ),
        "{out}"
    );
    // An observation through another spelling of the same PR withdraws the offer.
    let mut moved = doc("approved-stale", "merge");
    moved["pr"] = json!("https://github.com/example/project/pull/7/files");
    assert_eq!(observe(&db, &moved)["state"], "observing");
    let (code, out, _) = cairn(
        &[
            "pr",
            "confirm",
            "--pr",
            "https://github.com/example/project/pull/7#discussion_r1",
            "--what",
            "merge",
            "--operator",
            "alice",
        ],
        "",
        Some(&db),
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].clone()),
        (2, json!("offer-pending")),
        "{out}"
    );
    // What is not a PR's URL is refused on the field `pr`, naming the form cairn wants.
    let before = t.bytes();
    for bad in [
        "https://github.com/example/project/issues/7",
        "https://github.com/example/project/pull/0",
        "https://github.com/example/project/pull/7x",
        "https://user@github.com/example/project/pull/7",
    ] {
        let mut d = doc("approved-stale", "merge");
        d["pr"] = json!(bad);
        let (code, out) = observe_in(&db, &[], &d);
        assert_eq!(
            (
                code,
                out["error"]["field"].clone(),
                out["error"]["rule"].clone()
            ),
            (2, json!("pr"), json!("pr-url")),
            "{bad}: {out}"
        );
        assert!(
            out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("https://<host>/<owner>/<repo>/pull/<number>"),
            "{out}"
        );
    }
    assert_eq!(t.bytes(), before);
}

#[test]
fn an_open_pr_can_be_paused_or_abandoned() {
    let t = TempJournal::new();
    let db = t.path();
    let dispose = |how: &str| {
        verb(
            &db,
            &[
                "dispose",
                "--as",
                how,
                "--reason",
                "waiting on upstream",
                "--operator",
                "carol",
            ],
        )
    };
    assert_eq!(dispose("paused").0, 2, "nothing observed yet");
    observe(&db, &doc("await-review", "pr"));
    assert_eq!(dispose("paused").1["state"], "paused");
    assert_eq!(dispose("paused").0, 2, "already paused");
    observe(&db, &doc("changes-requested", "pr"));
    assert_eq!(dispose("abandoned").1["state"], "abandoned");
    audit_ok(&db);
}

#[test]
fn a_depth_shaped_changes_requested_row_proposes_one_rung_and_a_conflict_none() {
    let t = TempJournal::new();
    let db = t.path();
    let tiers = json!({"ladder": ["haiku", "sonnet"], "current": "haiku", "ceiling": "sonnet"});
    let mut conflict = doc("conflicting", "merge");
    conflict["failure_shape"] = json!("depth");
    conflict["tiers"] = tiers.clone();
    let out = observe(&db, &conflict);
    assert_eq!(out["events"], json!(["observed", "round-started"]), "{out}");
    let mut changes = doc("changes-requested", "merge");
    changes["failure_shape"] = json!("depth");
    changes["tiers"] = tiers;
    let out = observe(&db, &changes);
    assert_eq!(
        out["events"],
        json!(["observed", "round-started", "escalation-proposed"]),
        "{out}"
    );
}

#[test]
fn help_examples_run_as_written() {
    let (code, help, _) = crate::cli::run(&["pr", "classify", "--help"], None);
    assert_eq!(code, 0);
    assert!(!help.contains("--repo ."), "{help}");
    assert!(help.contains("--repo \"$PWD\""), "{help}");
    let (code, help, _) = crate::cli::run(&["pr", "record-merge", "--help"], None);
    assert_eq!(code, 0);
    assert!(!help.contains("--merged-at"), "{help}");
}
