//! One unit's day on one journal and one repository (issue 21), with every fact
//! that passes between lifecycles named by reference, never copied by hand: the
//! saga thread, the unit's build loop, a work node verified in the ship's
//! worktree, the ship run that acts for the thread, the PR continuation loop to
//! a confirmed merge, the merge turn, the release, and the agent's episode parked
//! at the end. The SHAs that remain typed are the caller's own evidence — a leaf's
//! phase report, the commit a verification is bound to — not one lifecycle's fact
//! retyped into another; the review rounds are counted once, by the PR loop, and
//! the thread takes them from it. At the end the links form one graph and the
//! audit passes.

use serde_json::Value;

use crate::links_work::{pre_merge, Node};
use crate::park::park as cairn;
use crate::support::park::{pr_backed, ANCHOR, EPISODE, INTENT};
use crate::support::pr::PR;
use crate::support::ship_repo::{phase1, refine, Repo};

fn run(r: &Repo, args: &[&str]) -> Value {
    let (code, out, _) = cairn(args, "", Some(&r.journal.path()));
    assert!(matches!(code, 0 | 4), "{args:?}: {out}");
    out
}

#[test]
fn a_unit_is_built_verified_reviewed_shipped_merged_and_released_by_reference() {
    let r = Repo::new();
    let node = Node::new();
    let wt = r.wt().to_str().unwrap().to_owned();
    // The thread, its plan review clean.
    run(
        &r,
        &[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--lifecycle-phase",
            "work",
        ],
    );
    run(
        &r,
        &[
            "saga",
            "doc-review",
            "--saga-id",
            "issue-42",
            "--unresolved-p0-p1",
            "0",
            "--source",
            "review_cycles",
        ],
    );
    // The ship run acts for the thread; the node works in its worktree.
    assert_eq!(r.open_with(&["--for", "saga/issue-42"]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let stream = node.dispatched_in(&r);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    node.verify(&r, &head);
    // The unit's build loop goes green in the worktree and hands its revision on.
    let record = r.root.with_file_name("issue-42.json");
    let units = serde_json::json!([{"id": "U1", "branch": "worktree-abc", "merge_state": "ready"}]);
    std::fs::write(
        &record,
        crate::support::saga::run_record(serde_json::json!(["true"]), units).to_string(),
    )
    .unwrap();
    let green = run(
        &r,
        &[
            "build-loop",
            "--record",
            record.to_str().unwrap(),
            "--repo",
            &wt,
            "--unit",
            "U1",
        ],
    );
    assert_eq!(
        (
            green["green"].as_bool(),
            green["handed_to_code_review"].as_str()
        ),
        (Some(true), Some(head.as_str())),
        "{green}"
    );
    // Code review of what the loop handed, by reference; PR-ready reads it.
    let review = |outcome: &str| {
        run(
            &r,
            &[
                "saga",
                "review",
                "--saga-id",
                "issue-42",
                "--outcome",
                outcome,
                "--from",
                "build-loop/issue-42:U1",
            ],
        )
    };
    let pr_ready = || {
        let out = run(
            &r,
            &[
                "saga",
                "pr-ready",
                "--saga-id",
                "issue-42",
                "--repo",
                &wt,
                "--issue",
                "42",
            ],
        );
        assert_eq!(out["gates"]["ready_for_pr"], head.as_str(), "{out}");
    };
    let reviewed = review("accepted");
    assert_eq!(reviewed["gates"]["review"]["reviewed_sha"], head.as_str());
    pr_ready();
    // The ship carries what the node verified.
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    let (code, out) = r.verb("refine", &refine(&head).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    let (code, out) = pre_merge(&r, &[&stream]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    // The PR continuation loop names its thread: the reviewed SHA (and the
    // thread's rounds) come from the thread's recorded review, never retyped; a
    // typed one the review contradicts is refused, nothing written. cairn reads
    // the approved PR fresh at it, offers the merge, the operator confirms it.
    let observe = |doc: &Value| {
        cairn(
            &["pr", "observe", "--repo", &wt, "--from", "saga/issue-42"],
            &doc.to_string(),
            Some(&r.journal.path()),
        )
    };
    let mut doc = crate::pr_findings::fresh_doc(&head, "merge");
    let older = crate::support::git::git(&r.wt(), &["rev-parse", "HEAD~1"]);
    doc["reviewed_sha"] = Value::from(older);
    let before = r.journal.bytes();
    let (code, out, _) = observe(&doc);
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str(), v["field"].as_str()),
        (2, Some("journal-agrees"), Some("reviewed_sha")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    // The reviewer asks for changes: the loop counts the round. The thread takes
    // its rounds from the loop at its next save, never retyped: a typed list the
    // loop contradicts is refused, naming the loop, nothing written.
    let mut changes = crate::support::pr::doc("changes-requested", "merge");
    for k in ["reviewed_sha", "commits_since_review"] {
        changes.as_object_mut().unwrap().remove(k);
    }
    let (code, out, _) = observe(&changes);
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    let save = |extra: &[&str]| {
        let mut args = vec!["saga", "save", "--id", "issue-42"];
        args.extend_from_slice(extra);
        cairn(&args, "", Some(&r.journal.path()))
    };
    let before = r.journal.bytes();
    let (code, out, _) = save(&["--rounds-seen", "1|2"]);
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str(), v["field"].as_str()),
        (2, Some("journal-agrees"), Some("rounds_seen")),
        "{out}"
    );
    assert!(
        v["message"].as_str().unwrap().contains("pr-loop/"),
        "the refusal names the loop: {out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    let (code, out, _) = save(&[]);
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    doc.as_object_mut().unwrap().remove("reviewed_sha");
    // Read by cairn (gh): the base it names is one a merge may be read on.
    let gh = crate::support::pr::StandInGh::new();
    gh.answer(&doc["reading"]);
    let mut rest = doc.clone();
    rest.as_object_mut().unwrap().remove("reading");
    let (code, out, _) = crate::support::pr::cairn_with(
        &["pr", "observe", "--pr", PR, "--repo", &wt],
        &rest.to_string(),
        &r.journal.path(),
        Some(gh.dir.path()),
        &[],
    );
    assert_eq!(
        (code, out["state"].as_str(), out["reading_source"].as_str()),
        (0, Some("merge-offered"), Some("gh")),
        "{out}"
    );
    // The loop now follows the thread: an observation that leaves `--from` out
    // is still read against it (a typed older SHA is refused, nothing written).
    let mut stale = doc.clone();
    stale["reviewed_sha"] =
        Value::from(crate::support::git::git(&r.wt(), &["rev-parse", "HEAD~1"]));
    let before = r.journal.bytes();
    let (code, out, _) = cairn(
        &["pr", "observe", "--repo", &wt],
        &stale.to_string(),
        Some(&r.journal.path()),
    );
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str(), v["field"].as_str()),
        (2, Some("journal-agrees"), Some("reviewed_sha")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    // Around the CLI (a raw observation through `cairn exec`, no `from`): the
    // machine refuses an observation of the loop that does not read its thread.
    let raw = serde_json::json!({"command": "observe",
        "input": crate::support::pr::doc("changes-requested", "merge")});
    let (code, out, _) = cairn(
        &[
            "exec",
            "pr-loop",
            "pr-loop/github.com/example/project/pull/7",
        ],
        &raw.to_string(),
        Some(&r.journal.path()),
    );
    let predicates: Vec<&str> = out["error"]["violations"]
        .as_array()
        .map(|vs| vs.iter().filter_map(|v| v["predicate"].as_str()).collect())
        .unwrap_or_default();
    assert!(code == 2 && predicates.contains(&"from-thread"), "{out}");
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    let confirmed = run(
        &r,
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
    );
    assert_eq!(confirmed["state"], "merge-confirmed", "{confirmed}");
    // The agent parks its episode: not while the journal's loop has not seen the
    // merge the observation calls passed.
    let (code, prepared, _) = cairn(
        &["park", "prepare-attempt"],
        &serde_json::json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE,
            "intent_id": INTENT, "prior_receipts": []})
        .to_string(),
        Some(&r.journal.path()),
    );
    assert_eq!(code, 0, "{prepared}");
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    let evaluate = || {
        let mut v = crate::park_dispatch::bound_to(r.root.to_str().unwrap());
        let merged =
            serde_json::json!({"state": "MERGED", "mergedAt": "2026-11-30T05:00:00Z", "url": PR});
        pr_backed(&mut v, "pass", merged);
        cairn(
            &[
                "park",
                "evaluate",
                "--episode-id",
                EPISODE,
                "--intent-id",
                INTENT,
                "--attempt-id",
                &attempt,
            ],
            &v.to_string(),
            Some(&r.journal.path()),
        )
    };
    let before = r.journal.bytes();
    let (code, out, _) = evaluate();
    assert_eq!(
        (code, out["error"]["violations"][0]["field"].as_str()),
        (2, Some("checks.pr_merged")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    // The run acts for the thread: it merges only under the thread's merge turn
    // (refused before git runs, nothing written), taken after PR-ready.
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("merge-turn-held")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    let merge_wt = r.root.with_file_name("merge-wt");
    run(
        &r,
        &[
            "saga",
            "merge-turn",
            "take",
            "--saga-id",
            "issue-42",
            "--unit",
            "U1",
            "--branch",
            "worktree-abc",
            "--merge-worktree",
            merge_wt.to_str().unwrap(),
            "--holder",
            "h",
        ],
    );
    // A later review withdraws PR-ready: the held turn no longer lets the run
    // merge (refused before git runs) until PR-ready passes again.
    review("repairs_requested");
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str()),
        (2, Some("merge-turn-held")),
        "{out}"
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("PR-ready no longer stands"),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    review("accepted");
    pr_ready();
    assert_eq!(r.verb("merge", "").1["state"], "merged");
    // The loop records the merge from git: the target holds the reviewed head.
    let recorded = run(&r, &["pr", "record-merge", "--pr", PR, "--target", "main"]);
    assert_eq!(recorded["state"], "complete", "{recorded}");
    assert_eq!(r.verb("teardown", "").1["state"], "shipped");
    // Until the thread records the unit's merge, the run's merge is one the
    // thread has not credited: a cross-lifecycle notice, not a failure.
    let audit = run(&r, &["journal", "audit"]);
    let uncredited = |audit: &Value| {
        audit["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "cross-invariant" && f["stream"] == "ship/abc")
            .count()
    };
    assert_eq!(
        (audit["ok"].as_bool(), uncredited(&audit)),
        (Some(true), 1),
        "{audit}"
    );
    // The merge and the release take the merge from the ship run; the release's
    // reviewed head is the thread's own recorded review.
    let merged = run(
        &r,
        &[
            "saga",
            "merge-turn",
            "merged",
            "--saga-id",
            "issue-42",
            "--unit",
            "U1",
            "--holder",
            "h",
            "--from",
            "ship/abc",
        ],
    );
    assert_eq!(
        merged["gates"]["units"]["U1"]["merge_state"], "merged",
        "{merged}"
    );
    let released = run(
        &r,
        &[
            "saga",
            "release",
            "--saga-id",
            "issue-42",
            "--destination",
            "merge",
            "--from",
            "ship/abc",
        ],
    );
    assert_eq!(
        released["gates"]["release"]["landed_commit"],
        head.as_str(),
        "{released}"
    );
    // The episode parks: the loop saw the merge, and no node is dispatched.
    let (code, out, _) = evaluate();
    assert_eq!(
        (code, &out["eligible"]),
        (0, &serde_json::json!(true)),
        "{out}"
    );
    // One graph of streams: the thread read its build loop, its PR loop (the
    // rounds) and its ship run; the ship read its node, the thread's merge turn
    // and the PR loop (the operator confirmed the PR's merge); the PR loop read
    // the thread's review; the episode read the PR loop and the node placed in
    // its repository (what its receipt's quiescence is held against).
    let links = run(&r, &["journal", "links"]);
    let mut edges: Vec<(String, String)> = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["reader"].as_str().unwrap().to_owned(),
                l["read"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    edges.sort();
    edges.dedup();
    let episode = format!("park/{EPISODE}");
    let pr_loop = edges
        .iter()
        .find(|(reader, _)| *reader == episode)
        .map(|(_, read)| read.clone())
        .unwrap_or_else(|| panic!("the episode read its PR loop: {links}"));
    assert!(pr_loop.starts_with("pr-loop/"), "{pr_loop}");
    assert_eq!(
        edges,
        [
            (episode.clone(), pr_loop.clone()),
            (episode.clone(), stream.clone()),
            (pr_loop.clone(), "saga/issue-42".to_owned()),
            (
                "saga/issue-42".to_owned(),
                "build-loop/issue-42:U1".to_owned()
            ),
            ("saga/issue-42".to_owned(), pr_loop.clone()),
            ("saga/issue-42".to_owned(), "ship/abc".to_owned()),
            ("ship/abc".to_owned(), pr_loop.clone()),
            ("ship/abc".to_owned(), "saga/issue-42".to_owned()),
            ("ship/abc".to_owned(), stream.clone()),
        ],
        "{links}"
    );
    r.audit_ok();
    let audit = run(&r, &["journal", "audit"]);
    let notices: Vec<&Value> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "cross-invariant")
        .collect();
    assert!(notices.is_empty(), "the day's lifecycles agree: {audit}");
}
