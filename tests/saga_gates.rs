//! The saga's gates on real git: the PR-ready gate (doc review, typed review
//! outcome, staleness counted by cairn), labelled overrides, the adjustment
//! envelope, the merge turn under two racing writers and its release after a dead
//! turn, release, and board boundary moves.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::{git, try_git};
use crate::support::TempJournal;

struct G {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    t: TempJournal,
}

impl G {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let units = serde_json::json!([{"id": "U1", "branch": "work/u1", "merge_state": "ready"}]);
        let record = crate::support::saga::run_record(serde_json::json!(["true"]), units);
        let (repo, _) = crate::support::saga::record_repo(tmp.path(), "issue-42", &record);
        let g = G {
            _tmp: tmp,
            repo,
            t: TempJournal::new(),
        };
        assert_eq!(
            g.run(&["save", "--id", "issue-42", "--lifecycle-phase", "work"])
                .0,
            0
        );
        g
    }
    /// The gates the merge turn follows: plan review, U1's build loop, code
    /// review, PR-ready.
    fn ready(&self) {
        crate::support::saga::ready_in(&self.t.path(), "issue-42", &self.repo);
    }
    fn run(&self, args: &[&str]) -> (i32, Value) {
        let mut full = vec!["saga"];
        full.extend_from_slice(args);
        let (code, out, _) = cairn(&full, "", Some(&self.t.path()));
        (code, out)
    }
    fn s(&self, args: &[&str]) -> (i32, Value) {
        let mut a = args.to_vec();
        a.insert(1, "--saga-id");
        a.insert(2, "issue-42");
        self.run(&a)
    }
    /// `saga merge-turn VERB --saga-id issue-42 …`.
    fn mt(&self, args: &[&str]) -> (i32, Value) {
        let mut a = vec!["merge-turn", args[0], "--saga-id", "issue-42"];
        a.extend_from_slice(&args[1..]);
        self.run(&a)
    }
    fn head(&self) -> String {
        git(&self.repo, &["rev-parse", "HEAD"])
    }
    /// A clone of the repository beside it: its path, and that path as text.
    fn clone_beside(&self) -> (PathBuf, String) {
        let clone = self.repo.with_file_name("clone");
        let clone_s = clone.to_str().unwrap().to_owned();
        git(
            self.repo.parent().unwrap(),
            &["clone", "-q", self.repo.to_str().unwrap(), &clone_s],
        );
        (clone, clone_s)
    }
    /// A run record for issue 42 (baseline `true`) and one build-loop iteration: green
    /// at `HEAD`, the revision handed to code review.
    fn green(&self) {
        let dir = self.repo.join(".claude/saga/runs");
        std::fs::create_dir_all(&dir).unwrap();
        let record = crate::support::saga::run_record(json!(["true"]), json!([{"id": "U1"}]));
        std::fs::write(dir.join("issue-42.json"), record.to_string()).unwrap();
        let repo = self.repo.to_str().unwrap().to_owned();
        let (code, out, _) = cairn(
            &["build-loop", "--issue", "42", "--repo-root", &repo],
            "",
            Some(&self.t.path()),
        );
        assert_eq!(code, 0, "{out}");
    }
    fn pr_ready(&self) -> (i32, Value) {
        let repo = self.repo.to_str().unwrap().to_owned();
        self.s(&["pr-ready", "--repo", &repo])
    }
}

fn predicates(out: &Value) -> Vec<String> {
    out["error"]["violations"].as_array().map_or(vec![], |v| {
        v.iter()
            .map(|x| x["predicate"].as_str().unwrap().to_owned())
            .collect()
    })
}

#[test]
fn the_pr_ready_gate_reads_the_outcome_and_counts_staleness_itself() {
    let g = G::new();
    g.green();
    let (code, out) = g.pr_ready();
    assert_eq!(
        (code, predicates(&out)),
        (
            2,
            vec!["doc-review-gate".to_owned(), "review-gate".to_owned()]
        ),
        "{out}"
    );
    g.s(&[
        "doc-review",
        "--unresolved-p0-p1",
        "1",
        "--source",
        "run record review_cycles",
    ]);
    let head = g.head();
    g.s(&[
        "review",
        "--outcome",
        "repairs_requested",
        "--reviewed-sha",
        &head,
    ]);
    let (code, out) = g.pr_ready();
    assert_eq!(
        (code, predicates(&out)),
        (
            2,
            vec!["doc-review-gate".to_owned(), "review-gate".to_owned()]
        ),
        "{out}"
    );
    // A doc-review override waives that gate only.
    assert_eq!(
        g.s(&[
            "override",
            "--gate",
            "doc-review",
            "--rationale",
            "P1 is a wording nit, tracked in #99",
            "--operator",
            "ana"
        ])
        .0,
        0
    );
    let (code, out) = g.pr_ready();
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["review-gate".to_owned()]),
        "{out}"
    );
    g.s(&["review", "--outcome", "accepted", "--reviewed-sha", &head]);
    let (code, out) = g.pr_ready();
    assert_eq!(
        (code, out["events"].clone()),
        (0, json!(["ready-for-pr"])),
        "{out}"
    );

    // A commit after the review: stale, counted by cairn with git.
    std::fs::write(g.repo.join("b.txt"), "b\n").unwrap();
    git(&g.repo, &["add", "."]);
    git(&g.repo, &["commit", "-q", "-m", "after review"]);
    let (code, out) = g.pr_ready();
    assert_eq!(code, 2, "{out}");
    assert!(
        out["error"]["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("1 commit(s) since"),
        "{out}"
    );
    // The review-gate override, for that reviewed SHA, labelled by its gate.
    assert_eq!(
        g.s(&[
            "override",
            "--gate",
            "review-gate",
            "--rationale",
            "a docs-only commit",
            "--operator",
            "ana"
        ])
        .0,
        0
    );
    let (code, out) = g.pr_ready();
    assert_eq!(code, 0, "{out}");
    let gates: Vec<&str> = out["gates"]["overrides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["gate"].as_str().unwrap())
        .collect();
    assert_eq!(gates, ["doc-review", "review-gate"]);
    let (code, out) = g.s(&[
        "override",
        "--gate",
        "review-gate",
        "--rationale",
        " ",
        "--operator",
        "ana",
    ]);
    assert_eq!(code, 2, "never a silent override: {out}");
}

#[test]
fn the_adjustment_envelope_holds_pauses_and_fails_closed() {
    let g = G::new();
    let (code, out) = g.s(&["adjust", "--directive", "speed-up"]);
    assert_eq!(code, 2);
    assert!(
        out["error"]["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`speed-up`"),
        "{out}"
    );
    assert_eq!(
        g.s(&["adjust", "--directive", "continue"]).0,
        2,
        "nothing is paused"
    );
    assert_eq!(g.s(&["adjust", "--directive", "pause_after:phase-2"]).0, 0);
    assert_eq!(g.s(&["boundary", "--boundary", "phase-1"]).0, 0);
    let (code, out) = g.s(&["boundary", "--boundary", "phase-2"]);
    assert_eq!(
        (code, out["events"].clone()),
        (4, json!(["paused-at-boundary"])),
        "{out}"
    );
    assert_eq!(
        g.s(&["boundary", "--boundary", "phase-3"]).0,
        4,
        "paused until an explicit continue"
    );
    assert_eq!(g.s(&["adjust", "--directive", "continue"]).0, 0);
    assert_eq!(g.s(&["boundary", "--boundary", "phase-3"]).0, 0);
    assert_eq!(g.s(&["adjust", "--directive", "quiesce"]).0, 0);
    let (code, out) = g.s(&["boundary", "--boundary", "phase-4"]);
    assert_eq!(
        (code, out["events"].clone()),
        (4, json!(["boundary-held"])),
        "{out}"
    );
}

#[test]
fn one_unit_holds_the_merge_turn_even_with_racing_writers() {
    for _ in 0..3 {
        let g = G::new();
        g.ready();
        let children: Vec<_> = ["U1", "U2", "U3"]
            .iter()
            .map(|u| {
                std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
                    .args([
                        "saga",
                        "merge-turn",
                        "take",
                        "--saga-id",
                        "issue-42",
                        "--unit",
                        u,
                        "--branch",
                        &format!("work/{u}"),
                        "--merge-worktree",
                        "/nonexistent/wt",
                        "--holder",
                        u,
                        "--db",
                    ])
                    .arg(g.t.path())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let codes: Vec<i32> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
            .collect();
        assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
        assert!(codes.iter().all(|c| [0, 2, 3].contains(c)), "{codes:?}");
        let (_, out) = g.run(&["show", "--saga-id", "issue-42"]);
        let merging = out["gates"]["units"]
            .as_object()
            .unwrap()
            .values()
            .filter(|u| u["merge_state"] == "merging")
            .count();
        assert_eq!(merging, 1, "{out}");
    }
}

#[test]
fn a_dead_turn_is_released_only_from_what_git_shows() {
    let g = G::new();
    g.ready();
    let repo = g.repo.to_str().unwrap().to_owned();
    git(&g.repo, &["branch", "work/u1"]);
    let wt = g.repo.with_file_name("merge-wt");
    let wt_s = wt.to_str().unwrap().to_owned();
    assert_eq!(
        g.mt(&[
            "take",
            "--unit",
            "U1",
            "--branch",
            "work/u1",
            "--merge-worktree",
            &wt_s,
            "--holder",
            "turn-1"
        ])
        .0,
        0
    );
    // The branch has a commit main lacks, and a merge is in progress in the worktree: a live holder.
    git(&g.repo, &["worktree", "add", "-q", &wt_s, "work/u1"]);
    std::fs::write(wt.join("u1.txt"), "u1\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-q", "-m", "u1"]);
    std::fs::write(g.repo.join("main.txt"), "m\n").unwrap();
    git(&g.repo, &["add", "."]);
    git(&g.repo, &["commit", "-q", "-m", "main moves"]);
    git(&wt, &["merge", "--no-commit", "--no-ff", "main"]);
    assert!(
        try_git(&wt, &["rev-parse", "-q", "--verify", "MERGE_HEAD"])
            .status
            .success(),
        "no merge in progress in the worktree"
    );
    let (code, out) = g.mt(&[
        "release", "--unit", "U1", "--repo", &repo, "--target", "main",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["live-holder".to_owned()]),
        "{out}"
    );
    // The holder died and its worktree is gone: not merged → back to ready.
    git(&g.repo, &["worktree", "remove", "--force", &wt_s]);
    let (code, out) = g.mt(&[
        "release", "--unit", "U1", "--repo", &repo, "--target", "main",
    ]);
    assert_eq!(
        (code, out["gates"]["units"]["U1"]["merge_state"].as_str()),
        (0, Some("ready")),
        "{out}"
    );
    // Taken again and merged for real, then the holder dies: git shows the merge.
    assert_eq!(
        g.mt(&[
            "take",
            "--unit",
            "U1",
            "--branch",
            "work/u1",
            "--merge-worktree",
            &wt_s,
            "--holder",
            "turn-2"
        ])
        .0,
        0
    );
    git(&g.repo, &["merge", "-q", "--no-edit", "work/u1"]);
    // git shows the merge: the release refuses (saga rules 11; helper-81), and
    // `merged` is the way to record it, with the readings that check what merged.
    let bytes = g.t.bytes();
    let (code, out) = g.mt(&[
        "release", "--unit", "U1", "--repo", &repo, "--target", "main",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
    assert!(out.to_string().contains("--holder turn-2"), "{out}");
    assert_eq!(g.t.bytes(), bytes);
    let (code, out) = g.mt(&[
        "release", "--unit", "U1", "--repo", &repo, "--target", "work/u1",
    ]);
    assert_eq!(code, 2, "the branch on itself: {out}");
    let tip = g.head();
    let (code, out) = g.mt(&[
        "merged",
        "--unit",
        "U1",
        "--holder",
        "turn-2",
        "--merged-tip",
        &tip,
        "--repo",
        &repo,
        "--target",
        "main",
    ]);
    // Here the branch holds `u1`, committed after the review: `merged` refuses
    // it, where the dead turn's release had credited it (helper-81).
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-observed".to_owned()]),
        "{out}"
    );
}

#[test]
fn release_and_the_board_never_fabricate() {
    let g = G::new();
    let head = g.head();
    g.s(&[
        "doc-review",
        "--unresolved-p0-p1",
        "0",
        "--source",
        "review_cycles",
    ]);
    let (code, out) = g.s(&["release", "--destination", "none"]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["absence-recorded".to_owned()]),
        "{out}"
    );
    let (code, out) = g.s(&[
        "release",
        "--destination",
        "merge",
        "--reviewed-head",
        &head,
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["landed-commit".to_owned()]),
        "{out}"
    );
    g.s(&["review", "--outcome", "accepted", "--reviewed-sha", &head]);
    let other = "0".repeat(40);
    let repo = g.repo.to_str().unwrap().to_owned();
    let (code, out) = g.s(&[
        "release",
        "--destination",
        "merge",
        "--reviewed-head",
        &other,
        "--landed-commit",
        &head,
        "--repo",
        &repo,
        "--target",
        "main",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (
            2,
            vec![
                "merged-first".to_owned(),
                "pr-ready".to_owned(),
                "reviewed-head".to_owned()
            ]
        ),
        "{out}"
    );
    g.green();
    assert_eq!(g.pr_ready().0, 0);

    // Board: the table, the half-write, Verify only after merge and deployment.
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "build-start",
        "--written-field",
        "Stage+Status",
    ]);
    assert_eq!(
        (code, out["events"].clone()),
        (0, json!(["board-moved"])),
        "{out}"
    );
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "plan-review-pass",
        "--written-field",
        "Status",
    ]);
    assert_eq!(
        (code, out["events"].clone()),
        (4, json!(["board-half-write"])),
        "{out}"
    );
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "review-accepted",
        "--written-field",
        "Stage+Status",
    ]);
    assert_eq!((code, out["submits"].clone()), (0, json!(false)), "{out}");
    assert_eq!(
        g.s(&[
            "board",
            "--boundary",
            "ship-it",
            "--written-field",
            "Stage+Status"
        ])
        .0,
        2
    );
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "merge-and-deploy",
        "--written-field",
        "Stage+Status",
        "--deployment",
        "succeeded",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-first".to_owned()]),
        "{out}"
    );
    // A landed commit is recorded only as git shows it on the branch it landed on:
    // not on the caller's word (no reading), not a commit git does not know, not
    // one that is elsewhere.
    let release = |landed: &str, place: &[&str]| {
        let before = g.t.bytes();
        let mut args = vec![
            "release",
            "--destination",
            "merge",
            "--reviewed-head",
            &head,
            "--landed-commit",
            landed,
        ];
        args.extend_from_slice(place);
        let out = g.s(&args);
        if out.0 != 0 {
            assert_eq!(g.t.bytes(), before, "a refusal writes nothing: {}", out.1);
        }
        out
    };
    let (code, out) = release(&head, &[]);
    assert_eq!(
        (code, &out["error"]["field"], &out["error"]["rule"]),
        (2, &json!("repo"), &json!("landed-observed")),
        "{out}"
    );
    let at_main = ["--repo", repo.as_str(), "--target", "main"];
    // A release follows the merge turn (helper-80: a release with no turn taken,
    // on the unit's own branch as the target, began QA); and the unit's own
    // branch is no target a release lands on.
    let (code, out) = release(&head, &at_main);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["merged-first".to_owned()]),
        "{out}"
    );
    crate::support::saga::turn_merged_at(&g.t.path(), "issue-42", &g.repo, &head);
    let at_unit = ["--repo", repo.as_str(), "--target", "work/u1"];
    let (code, out) = release(&head, &at_unit);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["branch-is-target".to_owned()]),
        "{out}"
    );
    let (code, out) = release(&"1".repeat(40), &at_main);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["landed-observed".to_owned()]),
        "a fabricated commit: {out}"
    );
    git(&g.repo, &["checkout", "-q", "-b", "elsewhere"]);
    std::fs::write(g.repo.join("b.txt"), "b\n").unwrap();
    git(&g.repo, &["add", "."]);
    git(&g.repo, &["commit", "-q", "-m", "elsewhere"]);
    let elsewhere = git(&g.repo, &["rev-parse", "HEAD"]);
    git(&g.repo, &["checkout", "-q", "main"]);
    let (code, out) = release(&elsewhere, &at_main);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["landed-observed".to_owned()]),
        "a commit that is not on main: {out}"
    );
    // The target is a branch: the commit itself, a tag on it or `HEAD` named as
    // the target shows nothing (git reads `refs/heads/<target>`).
    git(&g.repo, &["tag", "tx", &elsewhere]);
    for target in [elsewhere.as_str(), "tx", "HEAD"] {
        let (code, out) = release(&elsewhere, &["--repo", repo.as_str(), "--target", target]);
        assert_eq!(
            (code, predicates(&out)),
            (2, vec!["landed-observed".to_owned()]),
            "--target {target}: {out}"
        );
    }
    let landed = head.clone();
    assert_eq!(release(&landed, &at_main).0, 0);
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "merge-and-deploy",
        "--written-field",
        "Stage+Status",
        "--deployment",
        "failed",
    ]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["deployed-first".to_owned()]),
        "{out}"
    );
    let (code, out) = g.s(&[
        "board",
        "--boundary",
        "merge-and-deploy",
        "--written-field",
        "Stage+Status",
        "--deployment",
        "no-deployable-software",
    ]);
    assert_eq!(code, 0, "{out}");
    let (_, out) = g.run(&["show", "--saga-id", "issue-42"]);
    assert_eq!(out["gates"]["release"]["reviewed_head"], head.as_str());
    assert_eq!(out["gates"]["release"]["landed_commit"], landed.as_str());
    let (code, out, _) = cairn(&["journal", "audit"], "", Some(&g.t.path()));
    assert_eq!(code, 0, "{out}");
}

/// A short or symbolic commit id is refused at input (exit 2) under the rule the
/// machine used to refuse it with, and nothing is recorded: the commands carry
/// checked ids only.
#[test]
fn a_short_commit_id_is_refused_at_input_under_its_rule() {
    let g = G::new();
    for (args, field, rule) in [
        (
            vec![
                "review",
                "--outcome",
                "accepted",
                "--reviewed-sha",
                "abc123",
            ],
            "reviewed_sha",
            "full-sha",
        ),
        (
            vec![
                "release",
                "--destination",
                "merge",
                "--landed-commit",
                "HEAD",
            ],
            "landed_commit",
            "landed-commit",
        ),
    ] {
        let (code, out) = g.s(&args);
        assert_eq!(
            (code, &out["error"]["field"], &out["error"]["rule"]),
            (2, &json!(field), &json!(rule)),
            "{out}"
        );
    }
    let (_, shown) = g.run(&["show", "--saga-id", "issue-42"]);
    let gates = shown["gates"]
        .as_object()
        .expect("the thread shows its gates");
    assert_eq!(
        (gates.get("review"), gates.get("release")),
        (Some(&Value::Null), Some(&Value::Null)),
        "{shown}"
    );
}

/// The merge turn follows PR-ready (issue 21): a take before it is refused with
/// nothing written; after code review and PR-ready it is taken, and while it is
/// held nothing is released as absent.
#[test]
fn the_merge_turn_is_taken_only_after_pr_ready() {
    let g = G::new();
    let take = |unit: &str| {
        g.mt(&[
            "take",
            "--unit",
            unit,
            "--branch",
            &format!("work/{unit}"),
            "--merge-worktree",
            "/nonexistent/wt",
            "--holder",
            "h",
        ])
    };
    let before = g.t.bytes();
    let (code, out) = take("U1");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("pr-ready-first")),
        "{out}"
    );
    assert_eq!(g.t.bytes(), before, "a refusal wrote");
    g.ready();
    // PR-ready passed for U1's revision: no other unit takes the turn on it, and a
    // branch named as a ref path is refused (no reading could release it).
    for (unit, branch, rule) in [
        ("U9", "work/U9", "pr-ready-unit"),
        ("U1", "refs/heads/work/U1", "branch-name"),
    ] {
        let (code, out) = g.mt(&[
            "take",
            "--unit",
            unit,
            "--branch",
            branch,
            "--merge-worktree",
            "/nonexistent/wt",
            "--holder",
            "h",
        ]);
        assert_eq!(
            (code, out["error"]["violations"][0]["predicate"].as_str()),
            (2, Some(rule)),
            "{out}"
        );
    }
    let (code, out) = take("U1");
    assert_eq!(code, 0, "{out}");
    // Nothing is released as absent while the turn's merge may land yet.
    let before = g.t.bytes();
    let (code, out) = g.s(&[
        "release",
        "--destination",
        "none",
        "--absence-reason",
        "plan-only run",
    ]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("turn-held")),
        "{out}"
    );
    assert_eq!(g.t.bytes(), before, "a refusal wrote");
}

/// A merge is the thread's only where PR-ready read the review fresh (saga rules
/// 9; helper-79, HIGH): the unit's branch merged in a clone, and `merged`,
/// `release` and a dead turn's release read there, had the unit recorded merged,
/// the release recorded and QA begun while the thread's own `main` never moved.
/// Each is refused now (`same-repository`), the journal's bytes unchanged; read
/// in the thread's repository after the real merge, both pass.
#[test]
fn a_merge_seen_in_another_repository_is_not_the_threads() {
    let g = G::new();
    crate::support::saga::unit_work(&g.repo, "work/u1");
    g.ready();
    crate::support::saga::take_u1(&g.t.path(), "issue-42");
    let (clone, clone_s) = g.clone_beside();
    git(&clone, &["checkout", "-q", "main"]);
    git(
        &clone,
        &["merge", "-q", "--no-ff", "--no-edit", "origin/work/u1"],
    );
    let elsewhere = git(&clone, &["rev-parse", "HEAD"]);
    let bytes = g.t.bytes();
    let refused = |(code, out): (i32, Value), what: &str| {
        assert_eq!(code, 2, "{what}: {out}");
        assert!(
            predicates(&out).contains(&"same-repository".to_owned()),
            "{what}: {out}"
        );
        assert_eq!(g.t.bytes(), bytes, "{what}: nothing written");
    };
    refused(
        g.mt(&[
            "merged",
            "--unit",
            "U1",
            "--holder",
            "h",
            "--merged-tip",
            &elsewhere,
            "--repo",
            &clone_s,
            "--target",
            "main",
        ]),
        "merged",
    );
    refused(
        g.mt(&[
            "release", "--unit", "U1", "--repo", &clone_s, "--target", "main",
        ]),
        "a dead turn's release",
    );
    refused(
        g.s(&[
            "release",
            "--destination",
            "pr",
            "--landed-commit",
            &elsewhere,
            "--repo",
            &clone_s,
            "--target",
            "main",
        ]),
        "release",
    );
    // The thread's own repository, merged for real.
    crate::support::saga::merge_branch(&g.repo, "work/u1");
    let tip = g.head();
    let repo = g.repo.to_str().unwrap().to_owned();
    let (code, out) = g.mt(&[
        "merged",
        "--unit",
        "U1",
        "--holder",
        "h",
        "--merged-tip",
        &tip,
        "--repo",
        &repo,
        "--target",
        "main",
    ]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = g.s(&[
        "release",
        "--destination",
        "pr",
        "--landed-commit",
        &tip,
        "--repo",
        &repo,
        "--target",
        "main",
    ]);
    assert_eq!(code, 0, "{out}");
}

/// PR-ready reads the review fresh in the repository the build loop went green in
/// (saga rules 10; helper-80): PR-ready, the turn, the merge and the release all
/// read in a throwaway clone credited the thread with a merge its repository never
/// saw. A linked worktree of the same repository is the same repository.
#[test]
fn pr_ready_reads_where_the_build_loop_went_green() {
    let g = G::new();
    crate::support::saga::reviewed_in(&g.t.path(), "issue-42", &g.repo, "accepted");
    let (_, clone_s) = g.clone_beside();
    let bytes = g.t.bytes();
    let (code, out) = g.s(&["pr-ready", "--repo", &clone_s]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["same-repository".to_owned()]),
        "{out}"
    );
    assert_eq!(g.t.bytes(), bytes, "nothing written");
    let linked = g.repo.with_file_name("linked");
    let linked_s = linked.to_str().unwrap().to_owned();
    git(&g.repo, &["worktree", "add", "-q", "--detach", &linked_s]);
    let (code, out) = g.s(&["pr-ready", "--repo", &linked_s]);
    assert_eq!(code, 0, "a linked worktree of the same repository: {out}");
}

/// The thread keeps the repository its first PR-ready read (saga rules 11;
/// helper-81): the build loop, review and PR-ready run again in a clone had moved
/// the anchor there, and the merge, the release and QA followed in the clone.
#[test]
fn the_thread_keeps_the_repository_of_its_first_pr_ready() {
    let g = G::new();
    g.ready();
    let (clone, clone_s) = g.clone_beside();
    let runs = ".claude/saga/runs";
    std::fs::create_dir_all(clone.join(runs)).unwrap();
    let record = format!("{runs}/issue-42.json");
    std::fs::copy(g.repo.join(&record), clone.join(&record)).unwrap();
    crate::support::saga::reviewed_in(&g.t.path(), "issue-42", &clone, "accepted");
    let bytes = g.t.bytes();
    let (code, out) = g.s(&["pr-ready", "--repo", &clone_s]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["same-repository".to_owned()]),
        "{out}"
    );
    assert!(out.to_string().contains("first PR-ready"), "{out}");
    assert_eq!(g.t.bytes(), bytes, "nothing written");
}
