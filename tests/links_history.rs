//! `failed-work-absent` against the bypasses a hostile pass found (helper-44): a
//! node's failed commit reaching the run from a clone, under a made-up squash
//! report, from a `merged` node re-verified to a failure, or hidden by a
//! `shallow` file. On real parts: a consumer repository shipped by `cairn ship`,
//! work nodes verified in other worktrees and clones, one journal.

use serde_json::{json, Value};

use crate::links_work::Node;
use crate::support::git::git;
use crate::support::ship_repo::{gate, phase1, premerge, refine, Repo};

/// Open, create, one in-scope commit, verify, refine: phase 3 (the run's own
/// work, nothing of the node's yet).
fn at_phase3(r: &Repo) {
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    refined_at(r, &head);
}

/// Verify and refine the run's worktree at `head`: phase 3.
fn refined_at(r: &Repo, head: &str) {
    let (code, out) = r.verb("verify", &phase1(head, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    let (code, out) = r.verb("refine", &refine(head).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
}

/// A worktree `side` of the run's repository, on `main`.
fn sibling(r: &Repo) -> std::path::PathBuf {
    let side = r.root.join(".claude/worktrees/side");
    git(
        &r.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            side.to_str().unwrap(),
            "main",
        ],
    );
    side
}

/// `node` dispatched to `wt`, one commit there, its verification failed: the
/// node's stream and the failed commit.
fn failed_in(r: &Repo, node: &Node, wt: &std::path::Path) -> (String, String) {
    let stream = node.dispatched_to(r, wt);
    let failed = r.commit_in(wt, &[("src.txt", "broken\n")], "feat: half done");
    node.failing(true);
    assert_eq!(node.verify_in(r, wt, &failed), "rejected");
    (stream, failed)
}

/// After a failure in `wt`: remediated, fixed on top, verified: the fix.
fn fixed_in(r: &Repo, node: &Node, wt: &std::path::Path) -> String {
    node.failing(false);
    let path = wt.to_str().unwrap().to_owned();
    node.work(r, "remediate", &["--run-id", "r-2", "--worktree", &path]);
    let fixed = r.commit_in(wt, &[("src.txt", "fixed\n")], "fix: finish it");
    assert_eq!(node.verify_in(r, wt, &fixed), "verified");
    fixed
}

/// A node's failed work reaches a run through another worktree (helper-42
/// finding 2): a node dispatched to a sibling worktree fails on a commit, and
/// the run's branch is reset to it. `failed-work-absent` reads, in the run's
/// worktree, whether the shipped commit holds that commit: it stops pre-merge
/// while the node stands rejected, and while the shipped commit holds the
/// failure without the node's later verified fix.
#[test]
fn a_nodes_failed_work_from_another_worktree_does_not_ship() {
    let r = Repo::new();
    let node = Node::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let side = sibling(&r);
    let (stream, failed) = failed_in(&r, &node, &side);
    git(&r.wt(), &["reset", "-q", "--hard", &failed]);
    refined_at(&r, &failed);
    // The node is not the run's (placed elsewhere, not named): no
    // `work-nodes-verified` gate, but its failed commit stops the run.
    let (_, out) = r.verb("pre-merge", &premerge().to_string());
    let gates = out["gates"].as_array().unwrap();
    assert!(
        !gates.iter().any(|g| g["name"] == "work-nodes-verified"),
        "{out}"
    );
    let (code, resumed) = r.verb("resume", "");
    assert_eq!(code, 0, "{resumed}");
    stopped(&r, &premerge(), "fail", &[&stream, &failed]);
    // Fixed and verified on top in its own worktree: the run that ships only
    // the failure still stops.
    let fixed = fixed_in(&r, &node, &side);
    stopped(&r, &premerge(), "fail", &[&stream, &fixed]);
}

/// …and with the node's fix on top of its failure the run is merge-ready (the
/// gate passes on cairn's readings); a failure on the fix since refuses the
/// merge before git runs, nothing written.
#[test]
fn a_fixed_failure_ships_with_its_fix_until_the_fix_fails() {
    let r = Repo::new();
    let node = Node::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let side = sibling(&r);
    let (stream, _) = failed_in(&r, &node, &side);
    let fixed = fixed_in(&r, &node, &side);
    git(&r.wt(), &["reset", "-q", "--hard", &fixed]);
    refined_at(&r, &fixed);
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    assert_eq!(gate(&out, "failed-work-absent")["outcome"], "pass", "{out}");
    node.failing(true);
    assert_eq!(node.verify_in(&r, &side, &fixed), "rejected");
    let base = r.main_head();
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    let refusal = &out["error"]["violations"][0];
    assert_eq!(
        (code, refusal["predicate"].as_str()),
        (2, Some("failed-work-absent")),
        "{out}"
    );
    assert!(refusal.to_string().contains(&stream), "{out}");
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    assert_eq!(r.main_head(), base, "nothing merged");
    r.audit_ok();
}

/// `git merge -X theirs` of `what` into the run's worktree: the tip holds it.
fn merge_in(r: &Repo, what: &str) {
    git(&r.wt(), &["merge", "-q", "--no-edit", "-X", "theirs", what]);
}

/// Pre-merge with `report` stopped on `failed-work-absent` with `outcome`, the
/// detail naming `names`; resumed to phase 3.
fn stopped(r: &Repo, report: &Value, outcome: &str, names: &[&str]) {
    let (_, out) = r.verb("pre-merge", &report.to_string());
    let g = gate(&out, "failed-work-absent");
    assert_eq!(g["outcome"], outcome, "{out}");
    let detail = g["detail"].as_str().unwrap();
    for n in names {
        assert!(detail.contains(n), "{n}: {detail}");
    }
    assert_eq!(
        out["code"].as_str().or(out["failure_code"].as_str()),
        Some("stopped:pre-merge:failed-work-absent"),
        "{out}"
    );
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
}

/// A node dispatched in a clone (another repository) fails on a commit that is
/// then fetched into the run: read by id in the run's repository, it stops the
/// run; so it does under a squash report whose made-up pre-squash commit (the
/// same tree, a clean history) the tip does not match; and a `shallow` file,
/// which hides ancestry from git, makes every reading unknown.
#[test]
fn failed_work_from_a_clone_does_not_ship_under_any_report() {
    let r = Repo::new();
    let node = Node::new();
    at_phase3(&r);
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().canonicalize().unwrap().join("clone");
    git(
        &r.root,
        &[
            "clone",
            "-q",
            r.root.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let (stream, failed) = failed_in(&r, &node, &clone);
    git(&r.wt(), &["fetch", "-q", clone.to_str().unwrap(), "HEAD"]);
    merge_in(&r, "FETCH_HEAD");
    stopped(&r, &premerge(), "fail", &[&stream, &failed]);
    // A "squash" whose pre-squash commit is made up: the tip merged holds F.
    let made_up = git(
        &r.wt(),
        &[
            "commit-tree",
            "HEAD^{tree}",
            "-p",
            "main",
            "-m",
            "fix: the thing",
        ],
    );
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let mut squashed = premerge();
    squashed["squash"] = json!("squashed");
    squashed["pre_squash_sha"] = json!(made_up);
    squashed["rollups"] = json!([format!("{made_up} fix: the thing")]);
    stopped(&r, &squashed, "fail", &[&stream, &tip]);
    // A shallow file any worktree can write: nothing git reads of ancestry holds.
    let base = git(&r.root, &["rev-parse", "main"]);
    std::fs::write(r.root.join(".git/shallow"), format!("{base}\n")).unwrap();
    stopped(&r, &premerge(), "unknown", &[&failed]);
    std::fs::remove_file(r.root.join(".git/shallow")).unwrap();
    r.audit_ok();
}

/// A `merged` node whose integration verification fails stays `merged`, but
/// its latest verification failed: it vouches for nothing, and a run that
/// merges the integration commit stops (found: the check compared the failed
/// commit with itself).
#[test]
fn a_merged_node_reverified_to_a_failure_vouches_for_nothing() {
    let r = Repo::new();
    let node = Node::new();
    at_phase3(&r);
    let side = sibling(&r);
    let stream = node.dispatched_to(&r, &side);
    let good = r.commit_in(&side, &[("src.txt", "good\n")], "feat: done");
    assert_eq!(node.verify_in(&r, &side, &good), "verified");
    let integ = r.root.join(".claude/worktrees/integ");
    git(
        &r.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "integ",
            integ.to_str().unwrap(),
            "side",
        ],
    );
    let merged = r.commit_in(&integ, &[("src.txt", "broken\n")], "merge: integrate");
    let integ_s = integ.to_str().unwrap().to_owned();
    let out = node.work(
        &r,
        "merge",
        &["--merged-tree", &integ_s, "--commit", &merged],
    );
    assert_eq!(out["state"], "merged", "{out}");
    node.failing(true);
    assert_eq!(node.verify_in(&r, &integ, &merged), "merged");
    node.failing(false);
    merge_in(&r, "integ");
    stopped(&r, &premerge(), "fail", &[&stream, &merged]);
}

/// A failed commit whose object is moved away during pre-merge is not "a commit
/// this repository lacks": the tip's whole history cannot be read without it, so
/// the reading is unknown and the run stops (found: with a commit-graph file
/// git walked past the missing object, the commit read as not held, and the
/// merge carried it once the object was put back). cairn's git never reads the
/// commit-graph file.
#[test]
fn a_failed_commit_hidden_from_the_object_store_reads_unknown() {
    let r = Repo::new();
    let node = Node::new();
    at_phase3(&r);
    let side = sibling(&r);
    let (stream, failed) = failed_in(&r, &node, &side);
    merge_in(&r, "side");
    r.commit_in(&r.wt(), &[("src.txt", "broken\nmore\n")], "feat: more");
    git(&r.root, &["commit-graph", "write", "--reachable"]);
    let object = r
        .root
        .join(format!(".git/objects/{}/{}", &failed[..2], &failed[2..]));
    let away = r.root.join("hidden-object");
    std::fs::rename(&object, &away).unwrap();
    let (_, out) = r.verb("pre-merge", &premerge().to_string());
    let g = gate(&out, "failed-work-absent");
    assert_eq!(g["outcome"], "unknown", "{out}");
    assert_ne!(out["state"], "merge-ready", "{out}");
    std::fs::rename(&away, &object).unwrap();
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    stopped(&r, &premerge(), "fail", &[&stream, &failed]);
}

/// A criterion's contract changes only by amendment (work-node rules 5): the
/// spec's command edited by hand after a failure is refused at the next
/// verification, nothing written (found: the node then verified the very
/// commit it had failed on, and the run shipped it).
#[test]
fn a_criterion_edited_by_hand_after_a_failure_is_refused() {
    let r = Repo::new();
    let node = Node::new();
    at_phase3(&r);
    let side = sibling(&r);
    let (_, failed) = failed_in(&r, &node, &side);
    let sib = side.to_str().unwrap().to_owned();
    node.work(&r, "remediate", &["--run-id", "r-2", "--worktree", &sib]);
    node.edit_run_by_hand("printf 'test result: ok\\n'");
    let before = r.journal.bytes();
    let sib_commit = failed.clone();
    let (code, out) = node.try_work(
        &r,
        "verify",
        &[
            "--worktree",
            &sib,
            "--expected-commit",
            &sib_commit,
            "--session",
            "s1",
        ],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("criteria-unchanged")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
}

/// A racing second process: a node outside the run fails on a new commit while
/// pre-merge's git runs. The decision plans the ancestries from its own read of
/// the journal, so the runs the CLI made no longer match; pre-merge reads the
/// journal and the world again and decides again (found: it exited 2,
/// `evidence-complete`, as if the caller's input were at fault). Real
/// processes; the spy holds pre-merge's first `cat-file` until the node has
/// failed.
#[test]
fn a_node_failing_while_pre_merge_reads_git_is_read_again() {
    let r = Repo::spied();
    let node = Node::new();
    at_phase3(&r);
    let side = sibling(&r);
    let (stream, _) = failed_in(&r, &node, &side);
    // Outside the repository: the primary checkout must stay clean.
    let signal = tempfile::tempdir().unwrap();
    let go = signal.path().join("go");
    r.spy().before(
        "cat-file -e",
        &format!("while [ ! -e '{}' ]; do sleep 0.05; done", go.display()),
    );
    let packet = r.wt().join(".run-ship/ship-abc.json");
    std::fs::create_dir_all(packet.parent().unwrap()).unwrap();
    std::fs::write(&packet, premerge().to_string()).unwrap();
    let child = r.spawn(&["pre-merge", "--short-id", "abc", "--packet"]);
    r.spy().wait_for("cat-file -e", 0);
    // The node fails again, on a commit the journal did not hold when
    // pre-merge planned its readings.
    let wt = side.to_str().unwrap().to_owned();
    node.work(&r, "remediate", &["--run-id", "r-2", "--worktree", &wt]);
    let again = r.commit_in(&side, &[("src.txt", "broken again\n")], "feat: still half");
    assert_eq!(node.verify_in(&r, &side, &again), "rejected");
    std::fs::write(&go, "").unwrap();
    let (code, out, stderr) = crate::support::ship_repo::finished(child);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out} {stderr}"
    );
    // Read again, both failed commits: neither is in the run's commits.
    let g = gate(&out, "failed-work-absent");
    assert_eq!(g["outcome"], "pass", "{out}");
    assert!(
        r.spy()
            .count(&format!("cat-file -e --end-of-options {again}"))
            >= 1
    );
    assert!(
        g["detail"].as_str().unwrap().contains("1 node"),
        "{out} {stream}"
    );
    r.audit_ok();
}
