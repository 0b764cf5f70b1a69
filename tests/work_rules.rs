//! The work-node's hard rules on real parts (issue #16): a spent remediation
//! budget, later sessions, lineage on every gating verb, vacuous and unwatched
//! greens, merge provenance, the proof shown, an amendment after a merge. Each
//! test drives the real `cairn` binary over real git repositories and worktrees
//! and a real SQLite journal.

use serde_json::json;

use crate::support::git::git;
use crate::support::work_repo::{axes, spec_text, Work, CHECKLIST, DRAFT, DRAFT_MARKER, OK};

/// The criterion passes only once the lane's file says `green`.
const GREEN: &str = "grep -q green src/cache/mod.rs && printf 'test result: ok\\n'";

#[test]
fn an_exhausted_budget_leaves_escalation_as_the_only_way_on() {
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched_with("core", Some("1"));
    let lane = w.lane.to_str().unwrap().to_owned();
    let red = w.commit_lane_with("// red\n");
    let check = ["--checklist", CHECKLIST];
    assert_eq!(w.verify("core", &w.lane, &red, &check).0, 4);
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-2", "--worktree", &lane],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(w.verify("core", &w.lane, &red, &check).0, 4);
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-3", "--worktree", &lane],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("budget")),
        "{out}"
    );
    // The worker fixes it anyway, at a new commit: no verify, no scope change, no
    // re-plan moves the node on. Only escalation.
    let green = w.commit_lane_with("// green\n");
    let before = w.journal.bytes();
    let (code, out) = w.verify("core", &w.lane, &green, &check);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("budget")),
        "{out}"
    );
    let (code, out) = w.node(
        "raise-scope",
        "core",
        &[
            "--target",
            "t",
            "--add-touch",
            "docs",
            "--change",
            "c",
            "--rationale",
            "r",
        ],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("budget")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), before, "nothing written");
    let (code, out) = w.node("escalate", "core", &["--reason", "one round spent"]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("escalated")),
        "{out}"
    );
    let (code, _) = w.verify("core", &w.lane, &green, &check);
    assert_eq!(code, 2, "an escalated node is the user's");
    w.assert_audits();
}

#[test]
fn a_rejected_node_is_redispatched_before_its_tree_is_verified_again() {
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    let red = w.commit_lane_with("// red\n");
    assert_eq!(
        w.verify("core", &w.lane, &red, &["--checklist", CHECKLIST])
            .0,
        4
    );
    // New work at a new commit without a recorded redispatch is an uncounted retry.
    let green = w.commit_lane_with("// green\n");
    let (code, out) = w.verify("core", &w.lane, &green, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("remediate-first")),
        "{out}"
    );
    let lane = w.lane.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-2", "--worktree", &lane],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = w.verify("core", &w.lane, &green, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
}

#[test]
fn a_later_session_re_verifies_a_done_node_and_that_unblocks_its_dependents() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let merged = w.core_done();
    assert_eq!(w.ready("s1"), json!([["docs"]]));
    // Session s2: core stays done (lifecycle), its evidence is s1's (provenance), and
    // that cannot satisfy docs' dependency.
    let s = w.status("s2");
    assert_eq!(
        axes(&s, "core"),
        ("done", "observed-green-not-verified-this-session")
    );
    assert_eq!(axes(&s, "docs").0, "blocked");
    assert_eq!(w.ready("s2"), json!([]), "a done node is not ready again");
    // Main moves on; s2 re-verifies core in a tree that contains the merged commit.
    std::fs::write(w.root.join("NOTES"), "later\n").unwrap();
    git(&w.root, &["add", "NOTES"]);
    git(&w.root, &["commit", "-q", "-m", "later"]);
    let later = w.head(&w.root);
    // A tree that does not contain the merged commit is refused, nothing run.
    let other = w.scratch("other");
    let base = git(&w.root, &["rev-parse", "HEAD~2"]);
    git(
        &w.root,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            other.to_str().unwrap(),
            &base,
        ],
    );
    let before = w.journal.bytes();
    let (code, out) = w.verify_in("s2", "core", &other, &base, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("contains-merge")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), before);
    let (code, out) = w.verify_in("s2", "core", &w.root, &later, &["--checklist", CHECKLIST]);
    assert_eq!((code, out["state"].as_str()), (0, Some("done")), "{out}");
    let s = w.status("s2");
    assert_eq!(axes(&s, "core"), ("done", "verified-this-session"));
    assert_eq!(w.ready("s2"), json!([["docs"]]));
    // s1 is unchanged; a third session still needs its own re-verification.
    assert_eq!(axes(&w.status("s3"), "docs").0, "blocked");
    let _ = merged;
    w.assert_audits();
}

#[test]
fn every_gating_verb_runs_the_full_validation_with_lineage() {
    let text = format!("{DRAFT_MARKER}{}", spec_text(OK, "test result: ok", 30_000));
    let w = Work::with_files(&text, &[("docs/cache.md", DRAFT)]);
    let merged = w.core_merged();
    let spec = w.spec.to_str().unwrap().to_owned();
    let silently_edited = text.replace(
        "statement: Cache hits skip the backend",
        "statement: Cache hits are fast",
    );
    let draft = w.root.join("docs/cache.md");
    let root = w.root.to_str().unwrap().to_owned();
    for (label, spec_now, draft_now, rule) in [
        (
            "a silent edit",
            silently_edited.as_str(),
            Some(DRAFT),
            "criterion-text-unrecorded",
        ),
        (
            "the draft deleted",
            text.as_str(),
            None,
            "criterion-draft-unavailable",
        ),
    ] {
        std::fs::write(&w.spec, spec_now).unwrap();
        match draft_now {
            Some(d) => std::fs::write(&draft, d).unwrap(),
            None => std::fs::remove_file(&draft).unwrap(),
        }
        let (code, out) = w.run(&["validate", &spec]);
        assert_eq!(
            (code, out["error"]["rule"].as_str()),
            (2, Some(rule)),
            "{label}: {out}"
        );
        let before = w.journal.bytes();
        for (verb, extra) in [
            (
                "verify",
                vec![
                    "--worktree",
                    root.as_str(),
                    "--expected-commit",
                    merged.as_str(),
                    "--checklist",
                    CHECKLIST,
                    "--session",
                    "s1",
                ],
            ),
            (
                "merge",
                vec!["--merged-tree", root.as_str(), "--commit", merged.as_str()],
            ),
            ("done", vec!["--session", "s1"]),
            ("plan", vec![]),
        ] {
            let (code, out) = w.node(verb, "core", &extra);
            assert_eq!(
                (code, out["error"]["rule"].as_str()),
                (2, Some(rule)),
                "{label}: {verb}: {out}"
            );
        }
        assert_eq!(w.journal.bytes(), before, "{label}: nothing written");
    }
}

#[test]
fn a_node_with_no_criterion_is_never_green() {
    let text = "title: t\ndescription: d\nintent: i\nwork:\n  - id: epic\n    task: The whole\n    work:\n      - id: core\n        task: t\n        acceptance: [{id: C1, statement: s, evidence: {kind: command, run: \"printf ok\", expect: {exit: 0, output_includes: ok}}}]\n";
    let w = Work::new(text);
    w.dispatched("epic");
    let head = w.head(&w.lane);
    let (code, out) = w.verify("epic", &w.lane, &head, &[]);
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("rejected")),
        "{out}"
    );
    assert!(
        out["proof"]["failures"]
            .to_string()
            .contains("no-execution-evidence"),
        "{out}"
    );
}

#[test]
fn a_criterion_that_changes_the_tree_fails_even_when_it_restores_it() {
    let floor = "test result: ok";
    let ok = "printf 'test result: ok\\n'";
    for (label, run, passes) in [
        (
            "dirty and restore a tracked file",
            format!("f=src/cache/mod.rs; cp $f /tmp/cairn-keep.$$; echo junk >> $f; cat /tmp/cairn-keep.$$ > $f; rm /tmp/cairn-keep.$$; {ok}"),
            false,
        ),
        ("leave an untracked file", format!("touch leftover.txt; {ok}"), false),
        ("create and delete a file", format!("touch src/tmp.x; rm src/tmp.x; {ok}"), false),
        ("commit in the tree", format!("git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x; {ok}"), false),
        ("write only under an ignored directory", format!("mkdir -p target && echo x > target/out; {ok}"), true),
    ] {
        let w = Work::new(&spec_text(&run, floor, 30_000));
        w.dispatched("core");
        let (code, out) = w.verify_lane("core");
        if passes {
            assert_eq!(code, 0, "{label}: {out}");
        } else {
            assert_eq!(code, 4, "{label}: {out}");
            assert!(
                out["proof"]["failures"].to_string().contains("tree-changed"),
                "{label}: {out}"
            );
        }
        w.assert_audits();
    }
}

#[test]
fn a_merge_must_contain_the_verified_worker_commit() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.core_verified();
    let root = w.root.to_str().unwrap().to_owned();
    let base = w.head(&w.root);
    let before = w.journal.bytes();
    // main has not merged the lane: its HEAD does not contain the worker commit.
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &base],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("contains-worker-commit")),
        "{out}"
    );
    // A commit that is not the merged tree's HEAD.
    git(&w.root, &["merge", "-q", "--ff-only", "lane"]);
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &base],
    );
    assert_eq!(code, 2, "{out}");
    // A path that is not a git tree.
    let nowhere = w.scratch("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let merged = w.head(&w.root);
    let (code, out) = w.node(
        "merge",
        "core",
        &[
            "--merged-tree",
            nowhere.to_str().unwrap(),
            "--commit",
            &merged,
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(w.journal.bytes(), before, "nothing written");
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &merged],
    );
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    w.assert_audits();
}

#[test]
fn verify_status_and_done_show_the_captured_output_and_the_containment() {
    let w = Work::new(&spec_text(
        "printf 'test result: ok\\n'; printf 'warned\\n' >&2",
        "test result: ok",
        30_000,
    ));
    let merged = w.core_merged();
    let (code, out) = w.verify("core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert_eq!(code, 0, "{out}");
    let c = &out["proof"]["criteria"][0];
    assert_eq!(c["statement"], "Cache hits skip the backend", "{out}");
    assert_eq!(c["containment"], "process-group", "{out}");
    assert_eq!(c["run"]["stdout"], "test result: ok\n", "{out}");
    assert_eq!(c["run"]["stderr"], "warned\n", "{out}");
    assert_eq!(c["run"]["exit_status"], 0, "{out}");
    let s = w.status("s1");
    let core = &s["nodes"][0];
    assert_eq!(
        core["containment"],
        json!([{"criterion": "C1", "method": "process-group"}]),
        "{s}"
    );
    assert_eq!(
        core["proof"]["criteria"][0]["run"]["stdout"], "test result: ok\n",
        "{s}"
    );
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out["containment"],
        json!([{"criterion": "C1", "method": "process-group"}]),
        "{out}"
    );
}

#[test]
fn an_amendment_after_the_merge_is_proved_in_the_merged_tree() {
    let text = format!("{DRAFT_MARKER}{}", spec_text(OK, "test result: ok", 30_000));
    let w = Work::with_files(&text, &[("docs/cache.md", DRAFT)]);
    let merged = w.core_merged();
    let spec = w.spec.to_str().unwrap().to_owned();
    let (code, out) = w.run(&[
        "amend-criterion",
        "--spec",
        &spec,
        "--criterion",
        "C1",
        "--before",
        "Cache hits skip the backend",
        "--after",
        "Cache hits skip the backend entirely",
        "--reason",
        "narrowed",
        "--authority",
        "ADR-7",
    ]);
    assert_eq!(code, 0, "{out}");
    // The spec is rewritten in main's tree: commit it, so main is clean, then prove
    // the new contract there.
    git(&w.root, &["commit", "-q", "-am", "amend C1"]);
    let amended = w.head(&w.root);
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "the new contract is not proved yet: {out}");
    let (code, out) = w.verify("core", &w.root, &amended, &["--checklist", CHECKLIST]);
    assert_eq!(
        code, 2,
        "the merged tree is at the merged commit only: {out}"
    );
    let root = w.root.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &amended],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = w.verify("core", &w.root, &amended, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["proof"]["integration"].clone()),
        (0, json!(true)),
        "{out}"
    );
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!((code, out["state"].as_str()), (0, Some("done")), "{out}");
    let _ = merged;
    w.assert_audits();
}

#[test]
fn done_before_the_merge_names_only_what_is_missing() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.core_verified();
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "{out}");
    let violations = out["error"]["violations"].to_string();
    assert!(violations.contains("no merge recorded"), "{out}");
    assert!(
        !violations.contains("verify ran in the worker's tree"),
        "the worker-tree verification just passed: {out}"
    );
}

#[test]
fn a_verb_without_a_session_claims_no_lifecycle() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.core_done();
    assert_eq!(axes(&w.status("s1"), "docs").0, "ready");
    // `plan` takes no session: it cannot know that docs is ready in s1, so it
    // claims no lifecycle and no provenance rather than "blocked".
    let (code, out) = w.node("plan", "docs", &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["session"], json!(null), "{out}");
    for axis in ["lifecycle", "blockers", "verification"] {
        assert!(out.get(axis).is_none(), "no session, no {axis}: {out}");
    }
}

#[test]
fn the_plan_receipt_is_the_paste_ready_delegate_and_a_profile_is_refused() {
    let text = spec_text(OK, "test result: ok", 30_000).replace(
        "    checklist: [describe eviction]\n",
        "    checklist: [describe eviction]\n    worker: { agent: implementer, skills: [implement-rust] }\n",
    );
    let w = Work::new(&text);
    let (code, out) = w.run(&["validate", w.spec.to_str().unwrap()]);
    assert_eq!(code, 0, "a worker without profile or model is valid: {out}");
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let r = &out["receipt"];
    let brief = r["briefPath"].as_str().unwrap();
    assert_eq!(brief, out["plan"]["brief_path"].as_str().unwrap());
    let sha = cairn::machines::work::node::sha256_hex(std::fs::read(brief).unwrap());
    assert_eq!(r["briefSha256"], sha.as_str(), "{out}");
    assert_eq!(
        (r["nodeId"].clone(), r["nodeAddress"].clone()),
        (json!("core"), json!(["core"]))
    );
    assert_eq!(r["schemaPath"], w.spec.to_str().unwrap());
    let d = &r["delegate"];
    assert_eq!(d["agent"], "implementer", "{out}");
    assert_eq!(d["skills"], json!(["implement-rust"]));
    assert!(
        d.get("model").is_none(),
        "an absent model is omitted: {out}"
    );
    assert_eq!(d["reads"], json!([brief]));
    assert!(d["task"].as_str().unwrap().contains(brief), "{out}");
    assert_eq!(d["writableRoots"], json!(["src/cache/"]));
    assert_eq!(
        (
            d["confineWrites"].clone(),
            d["escalation"].clone(),
            d["worktree"].clone()
        ),
        (json!(true), json!("off"), json!(false))
    );
    // No worker: the default agent; no touches: no writable roots.
    let (code, out) = w.node("plan", "docs", &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["receipt"]["delegate"]["agent"], "worker", "{out}");
    assert!(
        out["receipt"]["delegate"].get("writableRoots").is_none(),
        "{out}"
    );

    // A profile is blocked in v1: refused, never dropped silently; nothing written.
    let text = spec_text(OK, "test result: ok", 30_000).replace(
        "    checklist: [describe eviction]\n",
        "    checklist: [describe eviction]\n    worker: { profile: fast }\n",
    );
    let w = Work::new(&text);
    let (code, out) = w.run(&["validate", w.spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("worker-profile-unsupported")),
        "{out}"
    );
    assert!(
        !w.root.join(".work/.cache/briefs").exists(),
        "no brief written"
    );
    assert!(!w.journal.path().exists(), "no journal written");
}

/// `verify` of the lane at `red` refused before anything ran (exit 2,
/// `tree-at-commit`), the journal's bytes unchanged; the refusal.
fn refused_at_red(w: &Work, red: &str, what: &str) -> serde_json::Value {
    let before = w.journal.bytes();
    let (code, out) = w.verify("core", &w.lane, red, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("tree-at-commit")),
        "{what}: {out}"
    );
    assert_eq!(w.journal.bytes(), before, "{what}: nothing written");
    out
}

/// An edit `status` does not show is not a clean tree (helper-69, HIGH): the
/// lane's committed file says `red`, and the working copy, marked skip-worktree
/// (or assume-unchanged), says `green`. The criterion would pass on the working
/// copy while the commit fails it; `verify` read the status clean and recorded
/// `verified`. Read against HEAD itself, the edit shows: refused, nothing run,
/// nothing written.
#[test]
fn an_edit_hidden_by_an_index_mark_is_not_a_clean_tree() {
    for mark in ["--skip-worktree", "--assume-unchanged"] {
        let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
        w.dispatched("core");
        let red = w.commit_lane_with("// red\n");
        git(&w.lane, &["update-index", mark, "src/cache/mod.rs"]);
        std::fs::write(w.lane.join("src/cache/mod.rs"), "// green\n").unwrap();
        assert_eq!(
            git(&w.lane, &["status", "--porcelain"]),
            "",
            "{mark}: status is blind"
        );
        let out = refused_at_red(&w, &red, mark);
        // Read against HEAD itself, the edit shows in status.
        assert!(
            out["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("uncommitted")),
            "{mark}: {out}"
        );
        // Without the mark the edit shows and the tree is dirty as ever; committed,
        // the commit is green.
        git(
            &w.lane,
            &[
                "update-index",
                &mark.replace("--", "--no-"),
                "src/cache/mod.rs",
            ],
        );
        let green = w.commit_lane_with("// green\n");
        let (code, out) = w.verify("core", &w.lane, &green, &["--checklist", CHECKLIST]);
        assert_eq!(
            (code, out["state"].as_str()),
            (0, Some("verified")),
            "{mark}: {out}"
        );
        w.assert_audits();
    }
}

/// The worker's own tree is not a merged tree (helper-69, HIGH/MEDIUM): it holds
/// the worker commit trivially, so `merge --merged-tree <lane>` recorded a merge
/// that never happened, and a second verification there counted as integration
/// evidence on the way to `done`. Nor is a detached checkout of the worker commit
/// or a clone (helper-71), or a directory posing as a worktree (helper-73).
/// Refused, nothing written; the real merge into main is recorded as before.
#[test]
fn the_workers_own_tree_is_not_a_merged_tree() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.core_verified();
    let commit = w.head(&w.lane);
    let lane = w.lane.to_str().unwrap().to_owned();
    let before = w.journal.bytes();
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &lane, "--commit", &commit],
    );
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("merged-tree")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), before);
    // Nor is another checkout of the worker commit: a worktree detached at it,
    // or a clone (helper-71: either led to `done` with main untouched).
    let detached = w.scratch("detached");
    git(
        &w.root,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            detached.to_str().unwrap(),
            &commit,
        ],
    );
    let clone = w.scratch("clone");
    git(
        w.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--branch",
            "lane",
            w.lane.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    // Nor a directory whose `.git` file names the worker tree's git dir: git
    // reads it as the worker tree under another path (helper-73).
    let fake = w.scratch("fake");
    std::fs::create_dir(&fake).unwrap();
    let admin = git(&w.lane, &["rev-parse", "--absolute-git-dir"]);
    std::fs::write(fake.join(".git"), format!("gitdir: {admin}\n")).unwrap();
    for (tree, rule) in [
        (&detached, "merged-branch"),
        (&clone, "merged-repository"),
        (&fake, "merged-tree"),
    ] {
        let t = tree.to_str().unwrap().to_owned();
        let (code, out) = w.node("merge", "core", &["--merged-tree", &t, "--commit", &commit]);
        assert_eq!(
            (code, out["error"]["rule"].as_str()),
            (2, Some(rule)),
            "{t}: {out}"
        );
    }
    assert_eq!(w.journal.bytes(), before);
    git(&w.root, &["merge", "-q", "--ff-only", "lane"]);
    let root = w.root.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &commit],
    );
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    w.assert_audits();
}

/// What the repository's index or settings say never makes an edit read clean
/// (helper-71, HIGH): each tree below holds a working copy that says `green`
/// where the commit says `red`, and `status` on the repository's own index read
/// it clean. cairn reads status against HEAD itself (an index of its own, no
/// cached file times) with the settings that decide what an edit is pinned.
#[test]
fn no_index_trick_or_setting_makes_an_edit_read_clean() {
    use std::os::unix::fs::PermissionsExt as _;
    type Hide = fn(&Work, &std::path::Path, &str);
    let laundered: Hide = |w, file, commit| {
        // The edited file's stat recorded beside the committed blob, through a
        // one-off clean filter that is gone again.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let attributes = w.root.join(".git/info/attributes");
        std::fs::write(&attributes, "src/cache/mod.rs filter=h\n").unwrap();
        let filter = format!("filter.h.clean=git cat-file blob {commit}:src/cache/mod.rs");
        git(
            &w.lane,
            &["-c", &filter, "update-index", "--really-refresh"],
        );
        std::fs::remove_file(&attributes).unwrap();
        let _ = file;
    };
    let same_time: Hide = |w, file, _| {
        git(&w.root, &["config", "core.checkStat", "minimal"]);
        git(&w.root, &["config", "core.trustctime", "false"]);
        let before = std::fs::metadata(file).unwrap().modified().unwrap();
        std::fs::write(file, "// green\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(before)
            .unwrap();
    };
    let mode: Hide = |w, file, _| {
        git(&w.root, &["config", "core.fileMode", "false"]);
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    for (name, hide, edit) in [
        ("laundered stat", laundered, true),
        ("checkStat=minimal", same_time, false),
        ("fileMode=false", mode, false),
    ] {
        let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
        w.dispatched("core");
        let red = w.commit_lane_with("// red..\n");
        let file = w.lane.join("src/cache/mod.rs");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        git(&w.lane, &["update-index", "--refresh"]);
        if edit {
            std::fs::write(&file, "// green\n").unwrap();
        }
        hide(&w, &file, &red);
        assert_eq!(
            git(&w.lane, &["status", "--porcelain"]),
            "",
            "{name}: the repository's own status is blind"
        );
        refused_at_red(&w, &red, name);
    }
}

/// What the repository's own `.git` says of how its files read is not trusted
/// (helper-71, helper-73): an `ident` or `text` attribute in `.git/info/
/// attributes` made git read an edited file as the committed one, and a filter
/// driver in `.git/config` ran its program during cairn's reading and answered
/// with the committed blob. Neither can be turned off in git, so such a tree is
/// not read: the status reading is `unknown`, and `verify` refuses.
#[test]
fn a_tree_whose_git_steers_how_files_read_is_not_read() {
    for (attribute, config) in [
        ("src/cache/mod.rs ident\n", None),
        ("src/cache/mod.rs text\n", None),
        ("", Some(("filter.h.clean", "cat"))),
    ] {
        let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
        w.dispatched("core");
        let red = w.commit_lane_with("// red..\n");
        std::fs::write(w.root.join(".git/info/attributes"), attribute).unwrap();
        if let Some((k, v)) = config {
            git(&w.root, &["config", k, v]);
        }
        refused_at_red(&w, &red, &format!("{attribute:?} {config:?}"));
    }
    // An `info/attributes` cairn cannot read (a directory there) fails closed.
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    let red = w.commit_lane_with("// red..\n");
    std::fs::create_dir(w.root.join(".git/info/attributes")).unwrap();
    refused_at_red(&w, &red, "an unreadable info/attributes");
    // Nor is a fifo there waited on, by cairn or by the git it would run
    // (helper-77: every clean reading hung).
    std::fs::remove_dir(w.root.join(".git/info/attributes")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(w.root.join(".git/info/attributes"))
        .status()
        .unwrap();
    assert!(made.success());
    refused_at_red(&w, &red, "a fifo at info/attributes");
}

/// What `.gitattributes` say never converts a file before it is compared with
/// the commit (helper-74): an untracked `.gitattributes` git ignores, or one the
/// commit carries, with `ident`, made an edit inside `$Id$` read as the
/// committed file; a byte of `.git/info/attributes` that is not UTF-8 made that
/// file read as absent; a submodule's own index hid an edit. Each is refused.
#[test]
fn no_attribute_or_submodule_index_hides_an_edit() {
    let committed = "printf 'test result: $Id$\\n'; grep -q green src/cache/mod.rs\n";
    let edited = "printf 'test result: $Id: ok; exit 0; $\\n'; grep -q green src/cache/mod.rs\n";
    type Setup = fn(&Work);
    let ignored: Setup = |w| {
        std::fs::write(w.lane.join("src/.gitattributes"), "check.sh ident\n").unwrap();
    };
    let carried: Setup = |_| {};
    let not_utf8: Setup = |w| {
        std::fs::write(
            w.root.join(".git/info/attributes"),
            b"src/check.sh ident\n# \xff\n",
        )
        .unwrap();
    };
    for (name, setup, ignore_file, commit_file) in [
        ("ignored .gitattributes", ignored, ".gitattributes\n", None),
        (
            "committed .gitattributes",
            carried,
            "",
            Some("check.sh ident\n"),
        ),
        ("info/attributes not UTF-8", not_utf8, "", None),
    ] {
        let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
        w.dispatched("core");
        std::fs::create_dir_all(w.lane.join("src")).unwrap();
        std::fs::write(w.lane.join("src/check.sh"), committed).unwrap();
        std::fs::write(w.lane.join("src/.gitignore"), ignore_file).unwrap();
        if let Some(a) = commit_file {
            std::fs::write(w.lane.join("src/.gitattributes"), a).unwrap();
        }
        let red = w.commit_lane_with("// red..\n");
        std::fs::write(w.lane.join("src/check.sh"), edited).unwrap();
        setup(&w);
        refused_at_red(&w, &red, name);
    }
    // A repository with submodules is not read: their files are read against
    // their own index.
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    std::fs::write(
        w.lane.join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ./lib\n",
    )
    .unwrap();
    let red = w.commit_lane_with("// red..\n");
    refused_at_red(&w, &red, "submodules");
    // Nor is one holding a gitlink that no `.gitmodules` names.
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    let link = format!("160000,{},lib", w.head(&w.lane));
    git(&w.lane, &["update-index", "--add", "--cacheinfo", &link]);
    // Not checked out: an empty directory, as git leaves an uninitialised one.
    std::fs::create_dir(w.lane.join("lib")).unwrap();
    let red = w.commit_lane_with("// red..\n");
    refused_at_red(&w, &red, "a gitlink");
}

/// Moves a clone of the repository (every branch, the worker tree's admin entry)
/// into its place, the repository's own `.git` set aside: every path reads as
/// before (helper-78). Returns the clone and where the own `.git` is kept.
fn clone_moved_into_place(w: &Work) -> (std::path::PathBuf, std::path::PathBuf) {
    let other = w.root.with_file_name("other-clone");
    let root = w.root.to_str().unwrap();
    git(
        w.root.parent().unwrap(),
        &["clone", "-q", root, other.to_str().unwrap()],
    );
    git(
        &other,
        &[
            "fetch",
            "-q",
            "--update-head-ok",
            root,
            "+refs/heads/*:refs/heads/*",
        ],
    );
    let admin = std::fs::read_dir(w.root.join(".git/worktrees"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::create_dir_all(other.join(".git/worktrees")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&admin)
        .arg(other.join(".git/worktrees"))
        .status()
        .unwrap();
    assert!(copied.success());
    let kept = w.root.with_file_name("kept.git");
    std::fs::rename(w.root.join(".git"), &kept).unwrap();
    std::fs::rename(other.join(".git"), w.root.join(".git")).unwrap();
    (other, kept)
}

/// Another clone's `.git` moved into the repository's place after dispatch keeps
/// every path the worker tree's reading names; the verification sees the
/// repository is not, on disk, the one dispatch read, and fails (work-node rules
/// 10; helper-78: the node was recorded `verified`, `merged` and `done` on a
/// commit its own repository never held). Moved in after the verification, the
/// merge is refused (rules 11).
#[test]
fn a_repository_moved_into_place_after_dispatch_is_not_the_dispatched_one() {
    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    let green = w.commit_lane_with("// green\n");
    let (other, kept) = clone_moved_into_place(&w);
    let (code, out) = w.verify("core", &w.lane, &green, &["--checklist", CHECKLIST]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.to_string()
            .contains("not, on disk, the one its dispatch read"),
        "{out}"
    );
    assert_eq!(out["state"], "rejected", "never verified: {out}");
    std::fs::rename(w.root.join(".git"), other.join(".git")).unwrap();
    std::fs::rename(&kept, w.root.join(".git")).unwrap();

    let w = Work::new(&spec_text(GREEN, "test result: ok", 30_000));
    w.dispatched("core");
    let green = w.commit_lane_with("// green\n");
    let (code, out) = w.verify("core", &w.lane, &green, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    git(&w.root, &["merge", "-q", "--ff-only", "lane"]);
    let merged = w.head(&w.root);
    let _moved = clone_moved_into_place(&w);
    let before = w.journal.bytes();
    let root = w.root.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &root, "--commit", &merged],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("merged-repository")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), before, "nothing recorded");
}

/// The merged tree's integration evidence is taken on the branch the merge landed
/// on (work-node rules 12; helper-79): `main` reset after the merge and the merged
/// commit checked out detached had the node verified and `done` while no branch
/// held the work. Now that verification fails (the tree is not on `main`), `done`
/// is refused, and on `main` at the merged commit both go through.
#[test]
fn a_merge_no_branch_holds_is_not_verified_or_done() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let merged = w.core_merged();
    git(&w.root, &["reset", "-q", "--hard", "HEAD~1"]);
    git(&w.root, &["checkout", "-q", "--detach", &merged]);
    let (code, out) = w.verify("core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.to_string().contains("HEAD is detached"),
        "the failure names the detached HEAD: {out}"
    );
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "{out}");
    // Another branch at the merged commit is no better.
    git(&w.root, &["checkout", "-q", "-b", "elsewhere"]);
    let (code, out) = w.verify("core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert!(
        code == 4 && out.to_string().contains("`elsewhere` checked out"),
        "{out}"
    );
    // `main` holds the merge again: verified, then done.
    git(&w.root, &["checkout", "-q", "main"]);
    git(&w.root, &["merge", "-q", "--ff-only", &merged]);
    let (code, out) = w.verify("core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert_eq!((code, &out["events"]), (0, &json!(["verified"])), "{out}");
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!((code, out["state"].as_str()), (0, Some("done")), "{out}");
    w.assert_audits();
}

/// `done` reads the merge's branch again, and a done node's later re-verification
/// is on that branch too (helper-80): `main` reset after the integration
/// verification had `done` recorded while no branch held the work, and the
/// worker's own branch, or a worktree detached at the merged commit, re-verified
/// a done node.
#[test]
fn done_and_its_re_verification_need_the_merge_on_its_branch() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let merged = w.core_merged();
    let (code, out) = w.verify("core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert_eq!((code, &out["events"]), (0, &json!(["verified"])), "{out}");
    git(&w.root, &["reset", "-q", "--hard", "HEAD~1"]);
    let bytes = w.journal.bytes();
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.to_string().contains("merge-held"), "{out}");
    assert_eq!(w.journal.bytes(), bytes, "nothing written");
    git(&w.root, &["merge", "-q", "--ff-only", &merged]);
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!((code, out["state"].as_str()), (0, Some("done")), "{out}");
    // A later session re-verifies it only on `main` at a commit holding the merge.
    let detached = w.scratch("detached");
    let detached_s = detached.to_str().unwrap().to_owned();
    git(
        &w.root,
        &["worktree", "add", "-q", "--detach", &detached_s, &merged],
    );
    let (code, out) = w.verify_in(
        "s2",
        "core",
        &detached,
        &merged,
        &["--checklist", CHECKLIST],
    );
    assert!(
        code == 4 && out.to_string().contains("HEAD is detached"),
        "{out}"
    );
    let (code, out) = w.verify_in("s2", "core", &w.lane, &merged, &["--checklist", CHECKLIST]);
    assert!(
        code == 4 && out.to_string().contains("`lane` checked out"),
        "the worker's own branch: {out}"
    );
    let (code, out) = w.verify_in("s2", "core", &w.root, &merged, &["--checklist", CHECKLIST]);
    assert_eq!((code, &out["events"]), (0, &json!(["verified"])), "{out}");
    w.assert_audits();
}

/// `done` reads the merged tree's repository again (work-node rules 14;
/// helper-81): the merged worktree removed, a clone holding the branch put at its
/// path and the branch deleted from the repository had `done` recorded while the
/// repository held no branch with the work.
#[test]
fn done_reads_the_merged_trees_repository_again() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.core_verified();
    let mt = w.scratch("merged-tree");
    let mt_s = mt.to_str().unwrap().to_owned();
    git(
        &w.root,
        &["worktree", "add", "-q", "-b", "integ", &mt_s, "main"],
    );
    git(&mt, &["merge", "-q", "--ff-only", "lane"]);
    let merged = w.head(&mt);
    let (code, out) = w.node(
        "merge",
        "core",
        &["--merged-tree", &mt_s, "--commit", &merged],
    );
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    let (code, out) = w.verify("core", &mt, &merged, &["--checklist", CHECKLIST]);
    assert_eq!((code, &out["events"]), (0, &json!(["verified"])), "{out}");
    git(&w.root, &["worktree", "remove", "--force", &mt_s]);
    git(
        w.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "-b",
            "integ",
            w.root.to_str().unwrap(),
            &mt_s,
        ],
    );
    git(&w.root, &["branch", "-q", "-D", "integ"]);
    let bytes = w.journal.bytes();
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.to_string().contains("merged-repository"), "{out}");
    assert_eq!(w.journal.bytes(), bytes, "nothing written");
}
