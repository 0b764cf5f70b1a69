//! `cairn ship` end to end on real git: a consumer repository with `.claude/`
//! ignored, a real linked worktree, real commits, a target that moves, real
//! `merge --ff-only` rejections and a real teardown. Every step is a real `cairn`
//! process on a real journal file.

use serde_json::{json, Value};

use crate::park::park as cairn;
use crate::support::git::{git, try_git};
use crate::support::ship_repo::{gate, phase1, premerge, refine, Repo, ID};

#[test]
fn happy_path_creates_verifies_rebases_onto_a_moved_target_merges_and_tears_down() {
    let r = Repo::new();
    let (code, out) = r.open_with(&[]);
    assert_eq!((code, out["code"].as_str()), (0, Some("clean")), "{out}");
    assert_eq!(out["repo_root"], r.root.to_str().unwrap());
    let (code, out) = r.verb("create", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    assert!(r.wt().is_dir());
    assert_eq!(git(&r.wt(), &["branch", "--show-current"]), "worktree-abc");

    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    assert_eq!(gate(&out, "in-scope-paths")["outcome"], "pass");
    assert_eq!(gate(&out, "isolation-linked")["outcome"], "pass");

    // The target moves (a peer's ff-merge); the leaf rebases onto it.
    r.commit_in(&r.root, &[("peer.txt", "peer\n")], "peer: lands first");
    git(&r.wt(), &["rebase", "-q", "main"]);
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let (code, out) = r.verb("refine", &refine(&tip).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );

    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    assert_eq!(r.main_head(), tip, "main fast-forwarded to the tip");
    assert_eq!(out["merged_sha"], tip.as_str());

    let (code, out) = r.verb("teardown", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("shipped")), "{out}");
    assert!(!r.wt().exists(), "the worktree is removed");
    assert!(!try_git(
        &r.root,
        &["show-ref", "--verify", "--quiet", "refs/heads/worktree-abc"]
    )
    .status
    .success());
    assert_eq!(out["action"], format!("CLOSE_STEP: echo --commit {tip}"));
    assert_eq!(out["next"], json!([]));
    r.audit_ok();

    // Every git gate was recorded with argv, exit status, output and time.
    let (_, log, _) = cairn(
        &["journal", "log", "--stream", "ship/abc", "--format", "json"],
        "",
        Some(&r.journal.path()),
    );
    let text = log.to_string();
    // The merge names the checked commit itself (issue 15), not the branch.
    let merge = format!("\"merge\",\"--ff-only\",\"--end-of-options\",\"{tip}\"");
    for needle in [
        merge.as_str(),
        "\"worktree\",\"add\",\"-b\"",
        "\"exit_status\"",
        "\"started_at\"",
    ] {
        assert!(text.contains(needle), "{needle} recorded");
    }
}

#[test]
fn one_out_of_scope_file_under_the_floor_trips_the_scope_gate_and_abort_tears_down() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &[("src.txt", "fix\n"), ("tests/weakened.txt", "loosened\n")],
        "fix: the thing",
    );
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("scope-tripped")),
        "{out}"
    );
    assert_eq!(
        out["stage"]["trip"]["floor_tripped"], false,
        "2 files is under the floor"
    );
    assert_eq!(
        out["stage"]["trip"]["out_of_scope"],
        json!(["tests/weakened.txt"])
    );
    assert_eq!(out["next"], json!(["answer-scope", "resume"]));

    // Proceeding is refused without an operator; abort removes worktree and branch.
    let (code, _) = r.run(
        &[
            "answer-scope",
            "--short-id",
            ID,
            "--answer",
            "abort",
            "--operator",
            " ",
        ],
        "",
    );
    assert_eq!(code, 2);
    let (code, out) = r.run(
        &[
            "answer-scope",
            "--short-id",
            ID,
            "--answer",
            "abort",
            "--operator",
            "ana",
        ],
        "",
    );
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
    assert!(!r.wt().exists());
    assert!(!try_git(
        &r.root,
        &["show-ref", "--verify", "--quiet", "refs/heads/worktree-abc"]
    )
    .status
    .success());
    r.audit_ok();
}

#[test]
fn a_missing_in_scope_list_is_the_empty_set_and_trips() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    let (code, out) = r.verb("verify", &phase1(&head, None).to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("scope-tripped")),
        "{out}"
    );
    assert_eq!(out["stage"]["trip"]["out_of_scope"], json!(["src.txt"]));
}

#[test]
fn changed_paths_with_odd_names_are_one_path_each() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &[("docs/café.md", "accent\n"), ("odd\nname.txt", "newline\n")],
        "docs: the odd names",
    );
    // Read with `diff --name-only -z`: a newline in a name is not two paths, and
    // neither name is C-quoted.
    let (code, out) = r.verb(
        "verify",
        &phase1(&head, Some(&["docs/café.md"])).to_string(),
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("scope-tripped")),
        "{out}"
    );
    assert_eq!(
        out["stage"]["trip"]["out_of_scope"],
        json!(["odd\nname.txt"]),
        "{out}"
    );
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &[("docs/café.md", "accent\n"), ("odd\nname.txt", "newline\n")],
        "docs: the odd names",
    );
    let both = phase1(&head, Some(&["docs/café.md", "odd\nname.txt"]));
    let (code, out) = r.verb("verify", &both.to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    r.audit_ok();
}

#[test]
fn the_count_floor_trips_and_needs_a_commit_body() {
    let r = Repo::new();
    assert_eq!(r.open_with(&["--files-max", "1"]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let files = [("x.txt", "x\n"), ("y.txt", "y\n")];
    let head = r.commit_in(&r.wt(), &files, "fix: two files");
    let report = phase1(&head, Some(&["x.txt", "y.txt"])).to_string();
    let (code, out) = r.verb("verify", &report);
    assert_eq!((code, out["state"].as_str()), (4, Some("stopped")), "{out}");
    assert_eq!(
        gate(&out, "body-when-floor-trips")["outcome"],
        "fail",
        "{out}"
    );
    assert_eq!(gate(&out, "scope-floor")["outcome"], "fail");

    // With a body the same floor is a scope trip the user answers.
    let r = Repo::new();
    assert_eq!(r.open_with(&["--files-max", "1"]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &files,
        "fix: two files\n\nBoth files hold the same table.",
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
    assert_eq!(out["stage"]["trip"]["floor_tripped"], true);
    let (code, out) = r.run(
        &[
            "answer-scope",
            "--short-id",
            ID,
            "--answer",
            "proceed",
            "--operator",
            "ana",
        ],
        "",
    );
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
}

#[test]
fn phase_1d_catches_a_wrong_head_no_commits_and_a_primary_path_claim() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    // No commit yet: 0 ahead, and the reported head is the target's.
    let base = r.main_head();
    let (code, out) = r.verb("verify", &phase1(&base, Some(&[])).to_string());
    assert_eq!((code, out["state"].as_str()), (4, Some("stopped")), "{out}");
    assert_eq!(gate(&out, "commits-ahead")["outcome"], "fail");
    assert!(
        out["code"]
            .as_str()
            .unwrap()
            .starts_with("stopped:phase-1d:"),
        "{out}"
    );

    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix");
    let mut report = phase1("0000000deadbeef", Some(&["src.txt"]));
    report["worktree_path"] = json!(r.root.to_str().unwrap());
    let (code, out) = r.verb("verify", &report.to_string());
    assert_eq!(code, 4, "{out}");
    assert_eq!(gate(&out, "head-matches-report")["outcome"], "fail");
    assert_eq!(
        gate(&out, "report-worktree-path")["outcome"],
        "fail",
        "a report claiming the primary fails"
    );
}

#[test]
fn a_leaf_stop_for_an_empty_result_tears_down_and_others_stop_for_resume() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let mut report = phase1("0000000", None);
    report["verdict"] = json!("stopped:empty-result");
    let (code, out) = r.verb("verify", &report.to_string());
    // A stop, if one torn down: not green (issue 15; it was exit 0).
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("teardown-pending")),
        "{out}"
    );
    assert_eq!(r.verb("teardown", "").1["state"], "torn-down");
    assert!(!r.wt().exists());

    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let mut report = phase1("0000000", None);
    report["verdict"] = json!("stopped:needs-triage:unclear");
    let (code, out) = r.verb("verify", &report.to_string());
    assert_eq!((code, out["state"].as_str()), (4, Some("stopped")), "{out}");
    assert_eq!(out["action"], "stop; --resume");
    assert!(
        r.wt().is_dir(),
        "branch and worktree stay intact for --resume"
    );
}

#[test]
fn an_ff_merge_rejected_once_is_retried_after_a_rerebase() {
    let r = Repo::new();
    r.to_merge_ready();
    r.commit_in(
        &r.root,
        &[("peer.txt", "peer\n")],
        "peer: lands during phase 3",
    );
    let before = r.main_head();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("merge-rejected")),
        "{out}"
    );
    assert_eq!(r.main_head(), before, "a rejected ff-merge changes nothing");
    git(&r.wt(), &["rebase", "-q", "main"]);
    // The re-rebased tip is a new commit: the pre-merge checks see it before the
    // retry (issue 15: only a checked tip is merged).
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    assert_eq!(out["merge_attempts"], 2);
    assert_eq!(r.main_head(), git(&r.wt(), &["rev-parse", "HEAD"]));
    r.audit_ok();
}

#[test]
fn an_ff_merge_rejected_twice_stops_and_a_third_attempt_is_refused() {
    let r = Repo::new();
    r.to_merge_ready();
    r.commit_in(&r.root, &[("peer.txt", "peer\n")], "peer");
    assert_eq!(r.verb("merge", "").1["state"], "merge-rejected");
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (4, Some("stopped")), "{out}");
    assert_eq!(out["code"], "stopped:ff-rejected-twice");
    let bytes = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("rejected")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), bytes, "a refused merge writes nothing");

    // --resume: refine passed, so phase 3, with a fresh retry budget.
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    assert_eq!(
        (out["session"].as_u64(), out["merge_attempts"].as_u64()),
        (Some(1), Some(0))
    );
    r.audit_ok();
}

#[test]
fn create_is_refused_unless_the_preflight_said_clean() {
    let r = Repo::new();
    std::fs::write(r.root.join("dirt.txt"), "dirt\n").unwrap();
    let (code, out) = r.open_with(&[]);
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:primary-dirty")),
        "{out}"
    );
    let bytes = r.journal.bytes();
    let (code, out) = r.verb("create", "");
    assert_eq!(code, 2, "{out}");
    assert_eq!(out["error"]["violations"][0]["predicate"], "stage-admits");
    assert_eq!(r.journal.bytes(), bytes);
    assert!(!r.wt().exists(), "git worktree add never ran");

    std::fs::remove_file(r.root.join("dirt.txt")).unwrap();
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "unknown"],
        "",
    );
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:not-shipped:review-status-unknown")),
        "{out}"
    );
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!((code, out["code"].as_str()), (0, Some("clean")), "{out}");
    assert_eq!(r.verb("create", "").0, 0);
}

#[test]
fn a_drifted_anchor_stops_creation_before_git_worktree_add() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    let moved = r.root.with_file_name("moved-repo");
    std::fs::rename(&r.root, &moved).unwrap();
    let (code, out) = r.verb("create", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("preflight-blocked")),
        "{out}"
    );
    assert_eq!(out["events"], json!(["anchor-drifted"]));
    assert_eq!(out["code"], "stopped:repo-anchor-drift");
    assert!(!moved.join(".claude/worktrees/abc").exists());
    assert!(!try_git(
        &moved,
        &["show-ref", "--verify", "--quiet", "refs/heads/worktree-abc"]
    )
    .status
    .success());
}

#[test]
fn a_creation_that_fails_is_not_resumable_and_never_removes_what_is_not_ours() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    // A race after the preflight: another session takes the branch.
    git(&r.root, &["branch", "worktree-abc"]);
    let (code, out) = r.verb("create", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("creation-failed")),
        "{out}"
    );
    assert!(
        try_git(
            &r.root,
            &["show-ref", "--verify", "--quiet", "refs/heads/worktree-abc"]
        )
        .status
        .success(),
        "the other session's branch is kept"
    );
    // Not a --resume candidate; the way on is the preflight again (issue 15).
    assert_eq!(out["next"], json!(["preflight", "abandon"]));
    assert_eq!(r.verb("resume", "").0, 2);
}

#[test]
fn resume_reattaches_a_branch_without_worktree_and_reruns_phase_1d() {
    let r = Repo::new();
    r.to_phase2();
    // A crash lost the worktree directory; the branch survives.
    git(
        &r.root,
        &["worktree", "remove", "--force", r.wt().to_str().unwrap()],
    );
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    assert_eq!(
        out["events"],
        json!(["resumed-phase-2", "phase-1-verified"])
    );
    assert!(r.wt().is_dir(), "re-attached");
    assert_eq!(out["session"], 1);

    // A runaway commit made before the next resume is not amnestied.
    r.commit_in(&r.wt(), &[("unrelated.txt", "cleanup\n")], "chore: tidy");
    let (code, out) = r.verb("resume", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("scope-tripped")),
        "{out}"
    );
    assert_eq!(
        out["stage"]["trip"]["out_of_scope"],
        json!(["unrelated.txt"])
    );

    // Worktree and branch both gone: resume is blocked (recorded, nothing created).
    git(
        &r.root,
        &["worktree", "remove", "--force", r.wt().to_str().unwrap()],
    );
    git(&r.root, &["branch", "-D", "worktree-abc"]);
    let (code, out) = r.verb("resume", "");
    assert_eq!(
        (code, out["events"].clone()),
        (4, json!(["resume-blocked"])),
        "{out}"
    );
    assert!(!r.wt().exists());
    r.audit_ok();
}

#[test]
fn resume_with_no_commits_goes_back_to_phase_1() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
}

#[test]
fn a_rebase_conflict_is_tiebreaker_3_and_the_answer_respawns_phase_2() {
    let r = Repo::new();
    let head = r.to_phase2();
    let mut report = refine(&head);
    report["verdict"] = json!("stopped:tiebreaker-3");
    report["rebase_outcome"] = json!("conflict");
    report["tiebreakers"] = json!([{"number": 3, "context": "src.txt conflicts with the peer's rename", "disposition": "keep ours, re-apply the rename"}]);
    let (code, out) = r.verb("refine", &report.to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("tiebreaker-pending")),
        "{out}"
    );
    let (code, _) = r.run(
        &[
            "answer-tiebreaker",
            "--short-id",
            ID,
            "--number",
            "5",
            "--disposition",
            "x",
            "--operator",
            "ana",
        ],
        "",
    );
    assert_eq!(code, 2, "only the pending tiebreaker is answered");
    let (code, out) = r.run(
        &[
            "answer-tiebreaker",
            "--short-id",
            ID,
            "--number",
            "3",
            "--disposition",
            "keep ours",
            "--operator",
            "ana",
        ],
        "",
    );
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");

    // `passed` with a conflict is contradictory evidence: refused, nothing written.
    let bytes = r.journal.bytes();
    let mut bad = refine(&head);
    bad["rebase_outcome"] = json!("conflict");
    let (code, out) = r.verb("refine", &bad.to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("consistent-evidence")),
        "{out}"
    );
    // A dismissal without grounding is refused.
    let mut bad = refine(&head);
    bad["dismissed_findings"] = json!(["job 12 HIGH"]);
    let (code, out) = r.verb("refine", &bad.to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("dismissal-grounding")),
        "{out}"
    );
    // Tiebreakers 1, 2, 4 are auto-disposed only with their grounding; 5 only where declared.
    for (number, grounding, predicate) in [
        (4, json!(null), "dismissal-grounding"),
        (2, json!(" "), "dismissal-grounding"),
        (5, json!("g"), "tiebreaker-5-declared"),
        (7, json!("g"), "tiebreaker-number"),
    ] {
        let mut bad = refine(&head);
        bad["tiebreakers"] =
            json!([{"number": number, "context": "c", "disposition": "d", "grounding": grounding}]);
        let (code, out) = r.verb("refine", &bad.to_string());
        assert_eq!(
            (code, out["error"]["violations"][0]["predicate"].as_str()),
            (2, Some(predicate)),
            "tiebreaker {number}: {out}"
        );
    }
    assert_eq!(r.journal.bytes(), bytes);
}

#[test]
fn a_report_holds_its_own_the_wire_formats_and_the_declared_fields_only() {
    let r = Repo::new();
    let head = r.to_phase2_with(&["--consumer-field", "kata_ticket"]);
    let bytes = r.journal.bytes();
    // A stop tiebreaker under another name, beside `passed`: kept unread, it
    // would let the refine pass to phase 3 (helper-54 and -55 found names no
    // rule on spelling catches). A report holds known fields only.
    let stop = json!([{"number": 3, "context": "src.txt conflicts", "disposition": "ask"}]);
    for key in [
        "tiebreaker",
        "stop_tiebreaks",
        "\u{FF54}iebreakers",
        "tiebreakers\u{200B}",
        "details",
    ] {
        let mut bad = refine(&head);
        bad[key] = if key == "details" {
            json!({ "tiebreakers": stop })
        } else {
            stop.clone()
        };
        let (code, out) = r.verb("refine", &bad.to_string());
        let v = &out["error"]["violations"][0];
        assert_eq!(
            (code, v["predicate"].as_str(), v["field"].as_str()),
            (
                2,
                Some("unknown-field"),
                Some(format!("report.{}", key.escape_debug()).as_str())
            ),
            "{key:?}: {out}"
        );
    }
    assert_eq!(r.journal.bytes(), bytes, "a refused report writes nothing");
    // The wire format's own fields and the declared one are kept.
    let mut report = refine(&head);
    report["pushed_to_kata"] = json!(true);
    report["summary_80w"] = json!("refined");
    report["kata_ticket"] = json!("K-1");
    let (code, out) = r.verb("refine", &report.to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    // A phase-3 packet's `verdict` is the wire format's: one that says the leaf
    // stopped is not merged on (helper-56: it was kept unread).
    let bytes = r.journal.bytes();
    let mut stopped = premerge();
    stopped["verdict"] = json!("stopped:test_lint_fail");
    let (code, out) = r.verb("pre-merge", &stopped.to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["field"].as_str()),
        (2, Some("report.verdict")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), bytes);
    r.audit_ok();
    // A declaration that reads like a report field is refused at open.
    // So is an INTENT_FIELD (every report holds it unread; helper-56).
    for flags in [
        ["--consumer-field", "tiebreakers_met"],
        ["--intent-field", "tiebreaker"],
    ] {
        let other = Repo::new();
        let (code, out) = other.open_with(&flags);
        assert_eq!(
            (code, out["error"]["rule"].as_str()),
            (2, Some("field-name-resembles")),
            "{flags:?}: {out}"
        );
        assert!(
            !other.journal.path().exists(),
            "a refused open writes nothing"
        );
    }
}

#[test]
fn flapping_stops_and_broadening_is_a_new_run_without_a_second_rebase() {
    let r = Repo::new();
    let head = r.to_phase2();
    let mut report = refine(&head);
    report["verdict"] = json!("flapping");
    report["remaining_findings"] = json!(["job 14 MEDIUM"]);
    let (code, out) = r.verb("refine", &report.to_string());
    assert_eq!((code, out["code"].as_str()), (4, Some("flapping")), "{out}");
    let (code, out) = r.verb("refine", &refine(&head).to_string());
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("one-rebase")),
        "{out}"
    );
    let mut broadened = refine(&head);
    broadened["rebase_already_done"] = json!(true);
    let (code, out) = r.verb("refine", &broadened.to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
}

#[test]
fn squash_post_checks_are_observed() {
    let r = Repo::new();
    r.to_phase2();
    r.commit_in(
        &r.wt(),
        &[("src.txt", "fix, reviewed\n")],
        "fix(Low): follow-up",
    );
    let pre = git(&r.wt(), &["rev-parse", "HEAD"]);
    let tip = pre.clone();
    assert_eq!(r.verb("refine", &refine(&tip).to_string()).0, 0);
    // The leaf squashed into one commit with the same tree.
    git(&r.wt(), &["reset", "-q", "--soft", "main"]);
    r.commit_in(&r.wt(), &[], "fix: the thing");
    let mut report = premerge();
    report["squash"] = json!("squashed");
    report["pre_squash_sha"] = json!(pre);
    report["rollups"] = json!(["abc1234 fix: the thing"]);
    git(&r.root, &["config", "diff.external", "/bin/false"]);
    let (code, out) = r.verb("pre-merge", &report.to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    assert_eq!(gate(&out, "squash-diff-empty")["outcome"], "pass");
}

#[test]
fn a_squash_that_changed_the_tree_stops_and_failing_tests_stop() {
    let r = Repo::new();
    r.to_phase2();
    let pre = git(&r.wt(), &["rev-parse", "HEAD"]);
    assert_eq!(r.verb("refine", &refine(&pre).to_string()).0, 0);
    git(&r.wt(), &["reset", "-q", "--soft", "main"]);
    r.commit_in(
        &r.wt(),
        &[("src.txt", "something else\n")],
        "fix: the thing",
    );
    let mut report = premerge();
    report["squash"] = json!("squashed");
    report["pre_squash_sha"] = json!(pre);
    report["rollups"] = json!(["abc1234 fix"]);
    // Whatever the repository configures as its external diff: git's own patch.
    git(&r.root, &["config", "diff.external", "/bin/false"]);
    let (code, out) = r.verb("pre-merge", &report.to_string());
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:pre-merge:squash-diff-empty")),
        "{out}"
    );
    assert_eq!(
        gate(&out, "squash-diff-empty")["outcome"],
        "fail",
        "the patch was read and is not empty: {out}"
    );

    let r = Repo::new();
    r.to_phase2();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    assert_eq!(r.verb("refine", &refine(&tip).to_string()).0, 0);
    let mut report = premerge();
    report["tests_pass"] = json!(false);
    let (code, out) = r.verb("pre-merge", &report.to_string());
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:test_lint_fail")),
        "{out}"
    );
}

#[test]
fn bad_reports_and_missing_packets_change_nothing() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix");
    let bytes = r.journal.bytes();
    let mut no_intent = phase1(&head, Some(&["src.txt"]));
    no_intent.as_object_mut().unwrap().remove("intent_excerpt");
    for (doc, field) in [
        (no_intent.to_string(), "report.intent_excerpt"),
        ("{\"verdict\": \"ok\"".to_owned(), "$"),
        (
            json!({"verdict": "maybe", "worktree_path": "x", "branch": "b", "intent_excerpt": "i"})
                .to_string(),
            "report.verdict",
        ),
    ] {
        let (code, out) = r.verb("verify", &doc);
        assert_eq!(code, 2, "{out}");
        let named = out["error"]["field"]
            .as_str()
            .or(out["error"]["violations"][0]["field"].as_str());
        assert_eq!(named, Some(field), "{out}");
    }
    let (code, out) = r.run(&["verify", "--short-id", ID, "--packet"], "");
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("packet-readable")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), bytes);

    // The leaf's packet is read from the worktree.
    let dir = r.wt().join(".run-ship");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("resolve-abc.json"),
        phase1(&head, Some(&["src.txt"])).to_string(),
    )
    .unwrap();
    let (code, out) = r.run(&["verify", "--short-id", ID, "--packet"], "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
}

#[test]
fn a_second_denial_of_an_external_operation_is_terminal() {
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    let op = |denied: bool| {
        let mut a = vec![
            "external-op",
            "--short-id",
            ID,
            "--class",
            "tracker-write",
            "--op",
            "kata close nnv8",
        ];
        if denied {
            a.push("--denied");
        }
        r.run(&a, "")
    };
    let (code, out) = op(true);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("preflight-clean")),
        "{out}"
    );
    let (code, out) = op(true);
    assert_eq!(
        (code, out["code"].as_str()),
        (4, Some("stopped:permission-boundary")),
        "{out}"
    );
    assert_eq!(op(false).0, 2, "never loop after the boundary");
}

#[test]
fn open_refuses_bad_parameters_and_a_wrong_repository_without_writing() {
    let r = Repo::new();
    let (code, out) = r.open_with(&["--branch", "main"]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("distinct-branch")),
        "{out}"
    );
    let (code, out) = r.run(
        &[
            "open",
            "--repo",
            "relative",
            "--short-id",
            ID,
            "--expected-basename",
            "x",
            "--branch",
            "b",
            "--worktree-path",
            "/x",
            "--target-branch",
            "main",
            "--tiebreaker-4",
            "t",
            "--close-step",
            "c",
            "--review-status",
            "pass",
        ],
        "",
    );
    assert_eq!(
        (code, out["error"]["field"].as_str()),
        (2, Some("repo")),
        "{out}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let (code, out) = r.run(
        &[
            "open",
            "--repo",
            r.root.to_str().unwrap(),
            "--short-id",
            ID,
            "--expected-basename",
            "consumer-repo",
            "--branch",
            "b",
            "--worktree-path",
            elsewhere.path().to_str().unwrap(),
            "--target-branch",
            "main",
            "--tiebreaker-4",
            "t",
            "--close-step",
            "c",
            "--review-status",
            "pass",
        ],
        "",
    );
    // Refused before any git runs (issue 15: the worktree path is exactly the seed's).
    assert_eq!(
        (
            code,
            out["error"]["field"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (2, Some("worktree_path"), Some("worktree-path")),
        "{out}"
    );
    assert!(!r.journal.path().exists(), "no journal file was created");

    let (code, out) = r.open_with(&["--expected-basename", "other-repo"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["code"]
            .as_str()
            .unwrap()
            .starts_with("stopped:wrong-repo:"),
        "{out}"
    );
}

#[test]
fn open_and_classify_refuse_option_like_branches_and_paths_naming_the_field() {
    let r = Repo::new();
    let root = r.root.to_str().unwrap().to_owned();
    let wt = r.wt().to_str().unwrap().to_owned();
    // `args` with the value of `flag` replaced by `flag=value` (clap takes a
    // leading `-` only in that form).
    let with = |args: &[&str], flag: &str, value: &str| -> Vec<String> {
        let mut v: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let i = v.iter().position(|a| a == flag).unwrap();
        v[i] = format!("{flag}={value}");
        v.remove(i + 1);
        v
    };
    let open = [
        "open",
        "--repo",
        &root,
        "--short-id",
        ID,
        "--expected-basename",
        "consumer-repo",
        "--branch",
        "worktree-abc",
        "--worktree-path",
        &wt,
        "--target-branch",
        "main",
        "--tiebreaker-4",
        "ask-user",
        "--close-step",
        "echo",
        "--review-status",
        "pass",
    ];
    let classify = [
        "classify",
        "--repo-root",
        &root,
        "--expected-basename",
        "consumer-repo",
        "--branch",
        "worktree-abc",
        "--worktree-path",
        &wt,
        "--target-branch",
        "main",
    ];
    let refused = |args: Vec<String>, field: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = r.run(&args, "");
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some(field), Some("option-like")),
            "{args:?}: {out}"
        );
    };
    for (flag, value, field) in [
        ("--branch", "--orphan", "branch"),
        ("--target-branch", "-main", "target_branch"),
        ("--worktree-path", "--end-of-options", "worktree_path"),
    ] {
        refused(with(&open, flag, value), field);
    }
    for (flag, value, field) in [
        ("--branch", "--all", "branch"),
        ("--target-branch", "-main", "target_branch"),
    ] {
        refused(with(&classify, flag, value), field);
    }
    assert!(!r.journal.path().exists(), "no journal file was created");
    assert!(!r.wt().exists());
}

macro_rules! snap {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", "[TIME]"),
            (r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]"),
            (r"\b[0-9a-f]{40}\b", "[OID]"),
            (r"\b[0-9a-f]{7}\b", "[SHORT]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

fn pretty(code: i32, v: &Value) -> String {
    format!(
        "exit: {code}\n{}\n",
        serde_json::to_string_pretty(v).unwrap()
    )
}

#[test]
fn snapshots_of_the_graph_a_scope_trip_and_status() {
    let (code, out) = {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["graph", "ship", "--format", "mermaid"])
            .output()
            .unwrap();
        (
            o.status.code().unwrap(),
            String::from_utf8(o.stdout).unwrap(),
        )
    };
    assert_eq!(code, 0);
    snap!("ship_graph_mermaid", out);

    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(
        &r.wt(),
        &[("src.txt", "fix\n"), ("tests/weakened.txt", "x\n")],
        "fix: the thing",
    );
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    snap!("ship_verify_scope_trip", pretty(code, &out));
    let (code, out) = r.verb("status", "");
    snap!("ship_status_scope_trip", pretty(code, &out));
}

/// Racing `cairn ship create` processes on one SHORT_ID: the step is announced in
/// the journal before git runs, so exactly one process runs `git worktree add`; the
/// others are refused (exit 2: in flight) or lose the append race (exit 3) and
/// touch nothing. The journal never says `creation-failed` for a worktree that exists.
#[test]
fn racing_creates_run_git_worktree_add_once() {
    for _ in 0..4 {
        let r = Repo::new();
        assert_eq!(r.open_with(&[]).0, 0);
        let children: Vec<_> = (0..4)
            .map(|_| {
                std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
                    .args(["ship", "create", "--short-id", ID, "--db"])
                    .arg(r.journal.path())
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
        let (_, log, _) = cairn(
            &["journal", "log", "--stream", "ship/abc", "--format", "json"],
            "",
            Some(&r.journal.path()),
        );
        let types: Vec<&str> = log["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["event_type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "opened",
                "preflight-passed",
                "step-begun",
                "worktree-created"
            ],
            "{log}"
        );
        assert!(r.wt().is_dir());
        r.audit_ok();
    }
}

/// A process that announced `create` and died (before or after `git worktree add`):
/// `create` is not re-run blindly; `resume` observes what git has.
#[test]
fn a_crashed_create_is_recovered_by_resume() {
    use cairn::machines::ship::{owner, Command, Mutation, Ship};
    // The announcing process is a real one, and it dies.
    // With `reap` false the process is left a zombie (exited, not yet reaped by
    // its parent): gone all the same (ship rules 18; helper-79), and handed back.
    let begin_as = |r: &Repo, reap: bool| {
        // The crashed process signed with the same user key the CLI uses (a signed
        // journal never goes back to unsigned).
        let key = cairn::journal::default_key_path().expect("HOME is set in tests");
        let options = cairn::journal::Options {
            signing_key: Some(cairn::journal::SigningKey::load_or_create(&key).unwrap()),
            ..cairn::journal::Options::default()
        };
        let mut engine =
            cairn::Engine::open(&r.journal.path(), &options, cairn::Registry::builtin()).unwrap();
        let stream = cairn::StreamId::new("ship", ID).unwrap();
        let mut doomed = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let claim = owner::Claim {
            pid: doomed.id(),
            me: cairn::observe::run(&owner::ps_argv(doomed.id())),
            previous: None,
        };
        engine
            .execute::<Ship>(
                &stream,
                &Command::Begin {
                    step: Mutation::Create,
                    claim: Some(claim),
                },
                &Default::default(),
            )
            .unwrap();
        doomed.kill().unwrap();
        if reap {
            doomed.wait().unwrap();
        }
        doomed
    };
    let begin = |r: &Repo| drop(begin_as(r, true));
    // Died after the add.
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    begin(&r);
    git(
        &r.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "worktree-abc",
            r.wt().to_str().unwrap(),
            "main",
        ],
    );
    let (code, out) = r.verb("create", "");
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("create-in-flight")),
        "{out}"
    );
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-1")), "{out}");
    r.audit_ok();

    // Died before the add: nothing to adopt; the clean preflight stands and create runs.
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    begin(&r);
    let (code, out) = r.verb("resume", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("preflight-clean")),
        "{out}"
    );
    assert_eq!(r.verb("create", "").1["state"], "phase-1");
    r.audit_ok();

    // Died before the add, and its parent has not reaped it: `ps` still lists
    // it, as a zombie; the step is not held in flight by it.
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    let mut zombie = begin_as(&r, false);
    let pid = zombie.id().to_string();
    let stat = || {
        let out = std::process::Command::new("ps")
            .args(["-o", "stat=", "-p", &pid])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    // SIGKILL lands asynchronously: wait (a bounded while) for the zombie.
    for _ in 0..200 {
        if stat().starts_with('Z') {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(stat().starts_with('Z'), "a zombie: {}", stat());
    let (code, out) = r.verb("resume", "");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("preflight-clean")),
        "{out}"
    );
    zombie.wait().unwrap();
    r.audit_ok();
}

#[test]
fn preflight_surfaces_local_and_upstream_divergence_without_fetching() {
    let r = Repo::new();
    let remote = r.root.with_file_name("remote.git");
    git(&r.root, &["init", "-q", "--bare", remote.to_str().unwrap()]);
    git(
        &r.root,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    git(&r.root, &["push", "-q", "-u", "origin", "main"]);
    r.commit_in(&r.root, &[("local.txt", "1\n")], "local only");
    let (code, out) = r.open_with(&[]);
    assert_eq!(code, 0, "a divergence is an advisory, not a gate: {out}");
    assert_eq!(
        out["note"],
        "note: local main 1 ahead / 0 behind origin/main (local is truth; no fetch)"
    );
    // In step: no note.
    git(&r.root, &["push", "-q", "origin", "main"]);
    let (code, out) = r.run(
        &["preflight", "--short-id", ID, "--review-status", "pass"],
        "",
    );
    assert_eq!((code, out.get("note")), (0, None), "{out}");
}

/// docs/ship.md shows `cairn graph ship --format mermaid`: it must be the graph as built.
#[test]
fn the_guides_graph_is_the_machines_graph() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ship.md")).unwrap();
    let start = guide
        .find("<summary><code>cairn graph ship --format mermaid</code></summary>")
        .expect("docs/ship.md shows the ship graph");
    let block = &guide[start..];
    let body = block
        .split("```mermaid\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a mermaid block");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["graph", "ship", "--format", "mermaid"])
        .output()
        .unwrap();
    assert_eq!(
        body.trim_end(),
        String::from_utf8(out.stdout).unwrap().trim_end(),
        "regenerate the block in docs/ship.md with `cairn graph ship --format mermaid`"
    );
}

/// A ref named like the target never stands in for the target branch (helper-69,
/// HIGH): with a tag `main` (or a ref `refs/main`) on a commit that adds an
/// out-of-scope file, `main...HEAD` spelled bare started from the tag, and the
/// scope gate saw only the in-scope commit; the ship merged the other file. Every
/// range reads `refs/heads/main`, so the out-of-scope file trips the gate.
#[test]
fn a_ref_named_like_the_target_does_not_hide_a_commit_from_the_scope_gate() {
    for shadow in [
        &["tag", "main", "HEAD"][..],
        &["update-ref", "refs/main", "HEAD"],
    ] {
        let r = Repo::new();
        assert_eq!(r.open_with(&[]).0, 0);
        assert_eq!(r.verb("create", "").0, 0);
        r.commit_in(&r.wt(), &[("secret/backdoor.sh", "evil\n")], "sneak");
        git(&r.wt(), shadow);
        let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
        let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
        assert_eq!(
            (code, out["state"].as_str()),
            (4, Some("scope-tripped")),
            "{shadow:?}: {out}"
        );
        assert_eq!(
            out["stage"]["trip"]["out_of_scope"],
            json!(["secret/backdoor.sh"]),
            "{shadow:?}"
        );
    }
}

/// An edit `status` does not show is not a clean checkout (helper-69, HIGH and
/// MEDIUM): a leaked edit in the primary marked skip-worktree passed every
/// primary-clean reading to `shipped`, and an edit in the worktree so marked
/// passed `worktree-clean`. Every clean reading is a status taken against HEAD.
#[test]
fn an_edit_hidden_by_an_index_mark_is_not_a_clean_checkout() {
    // The primary, at phase-1d.
    let r = Repo::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    std::fs::write(r.root.join("a.txt"), "LEAKED EDIT\n").unwrap();
    git(&r.root, &["update-index", "--skip-worktree", "a.txt"]);
    assert_eq!(
        git(&r.root, &["status", "--porcelain"]),
        "",
        "status is blind"
    );
    let (_, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!(gate(&out, "primary-clean")["outcome"], "fail", "{out}");
    assert_ne!(out["state"], "phase-2", "{out}");

    // The worktree, at pre-merge.
    let r = Repo::new();
    r.to_phase2();
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let (code, out) = r.verb("refine", &refine(&tip).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    std::fs::write(r.wt().join("src.txt"), "not what was reviewed\n").unwrap();
    git(&r.wt(), &["update-index", "--assume-unchanged", "src.txt"]);
    assert_eq!(
        git(&r.wt(), &["status", "--porcelain"]),
        "",
        "status is blind"
    );
    let (_, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(gate(&out, "worktree-clean")["outcome"], "fail", "{out}");
    assert_ne!(out["state"], "merge-ready", "{out}");
}
