//! Park trusts no `no_active_dispatch: pass` the journal contradicts (issue 21):
//! `park evaluate` reads every live work-node dispatch in the journal (a scan:
//! the append commits only if no work-node stream moved or appeared meanwhile),
//! and one whose worker tree is in the bound repository refuses the pass, naming
//! the node's stream. On real parts: a repository with a worker lane (a linked
//! worktree), a work node dispatched into it by `cairn work dispatch` (which
//! reads the lane's repository itself), and park episodes on the same journal.

use serde_json::{json, Value};

use crate::park::park;
use crate::support::park::*;
use crate::support::work_repo::{spec_text, Work, CHECKLIST, OK};

/// The fixture observation, bound to `root` instead of the fixture's root: the
/// binding, every bound argv and the bound common dir (`root/.git`) follow.
pub(crate) fn bound_to(root: &str) -> Value {
    serde_json::from_str(&observation().to_string().replace(ROOT, root))
        .expect("a path substitution keeps the JSON valid")
}

/// Prepares an attempt of `episode` on the work journal; `evaluate(v)` runs
/// `park evaluate` on it.
struct Episode<'a> {
    w: &'a Work,
    episode: String,
    attempt: String,
}

impl<'a> Episode<'a> {
    fn new(w: &'a Work, episode: &str) -> Self {
        let prepare = json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": episode,
            "intent_id": INTENT, "prior_receipts": []});
        let db = w.journal.path();
        let (code, out, _) = park(
            &["park", "prepare-attempt"],
            &prepare.to_string(),
            Some(&db),
        );
        assert_eq!(code, 0, "{out}");
        Episode {
            w,
            episode: episode.to_owned(),
            attempt: out["attempt_id"].as_str().unwrap().to_owned(),
        }
    }

    fn evaluate(&self, v: &Value) -> (i32, Value) {
        self.verb("evaluate", &v.to_string())
    }

    /// `park VERB` on this attempt, `stdin` its document.
    fn verb(&self, verb: &str, stdin: &str) -> (i32, Value) {
        let db = self.w.journal.path();
        let (code, out, _) = park(
            &[
                "park",
                verb,
                "--episode-id",
                &self.episode,
                "--intent-id",
                INTENT,
                "--attempt-id",
                &self.attempt,
            ],
            stdin,
            Some(&db),
        );
        (code, out)
    }

    /// The fixture receipt for this attempt, bound to `root`: its exact bytes
    /// and the durable read-back of them (comment `comment`).
    fn receipt(&self, root: &str, comment: u32) -> (String, String) {
        let mut r: Value = serde_json::from_str(&receipt().to_string().replace(ROOT, root))
            .expect("a path substitution keeps the JSON valid");
        r["attempt_id"] = json!(self.attempt);
        let bytes = serde_json::to_string(&r).unwrap();
        let readback =
            json!({"receipt_bytes": bytes, "comments": [{"id": comment, "body": fence(&bytes)}]});
        (bytes, readback.to_string())
    }
}

#[test]
fn a_live_dispatch_in_the_bound_repository_outranks_no_active_dispatch() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let root = w.root.to_str().unwrap().to_owned();
    w.dispatched("core");
    let ep = Episode::new(&w, EPISODE);
    let here = bound_to(&root);

    // The worker is writing in a worktree of the bound repository: refused,
    // naming the node's stream and its tree, with nothing written.
    let before = w.journal.bytes();
    let (code, out) = ep.evaluate(&here);
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, &v["predicate"], &v["field"]),
        (
            2,
            &json!("journal-agrees"),
            &json!("checks.no_active_dispatch")
        ),
        "{out}"
    );
    let message = v["message"].as_str().unwrap();
    assert!(
        message.contains("`work-node/") && message.contains(w.lane.to_str().unwrap()),
        "{message}"
    );
    assert_eq!(w.journal.bytes(), before, "a refusal wrote");

    // An episode bound to another repository: the dispatch says nothing there.
    let (code, out) = ep.evaluate(&observation());
    assert_eq!((code, &out["eligible"]), (0, &json!(true)), "{out}");

    // A `fail` (or `unknown`) is never contradicted: it opens nothing.
    let mut failing = here.clone();
    let item = failing["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == "no_active_dispatch")
        .unwrap();
    item["outcome"] = json!("fail");
    item["evidence"]["active_records"] = json!([{"id": "dispatch-1"}]);
    let (code, out) = ep.evaluate(&failing);
    assert_eq!((code, &out["eligible"]), (0, &json!(false)), "{out}");

    // The worker's result verified: the dispatch is over, and the same pass holds.
    let (code, out) = w.verify_lane("core");
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    let second = Episode::new(&w, "ep-7c1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b");
    let (code, out) = second.evaluate(&here);
    assert_eq!((code, &out["eligible"]), (0, &json!(true)), "{out}");

    // Every evaluation recorded its scan, and the audit re-checks each against
    // the work-node streams as they stood.
    let j =
        cairn::journal::Journal::open_read_only(&w.journal.path(), &Default::default()).unwrap();
    for episode in [EPISODE, second.episode.as_str()] {
        let evaluated = j.transitions(&format!("park/{episode}")).unwrap().remove(1);
        let context: Value = serde_json::from_str(&evaluated.context).unwrap();
        assert_eq!(
            context["scans"][0]["sieve"],
            json!("live-dispatch"),
            "{context}"
        );
    }
    let (code, out, _) = park(&["journal", "audit"], "", Some(&w.journal.path()));
    assert_eq!(code, 0, "{out}");
}

/// A dispatch into a tree git cannot read as a worktree is refused: it names no
/// repository a park episode could be checked against (nor a tree to verify).
#[test]
fn a_dispatch_names_a_git_worktree() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let plain = w.scratch("plain");
    std::fs::create_dir_all(&plain).unwrap();
    // The worktree named through a symlink, or by a directory inside it: git
    // reads it, but it is not the spelling every other lifecycle compares (found
    // by a hostile pass: such a worker was not seen working in a ship run's
    // worktree, nor inside a park episode's bound root). Refused, naming git's.
    let link = w.scratch("lane-link");
    std::os::unix::fs::symlink(&w.lane, &link).unwrap();
    let inside = w.lane.join("sub");
    std::fs::create_dir_all(&inside).unwrap();
    let base = w.head(&w.lane);
    let before = w.journal.bytes();
    for (tree, rule) in [
        (&plain, "git-worktree"),
        (&link, "worktree-toplevel"),
        (&inside, "worktree-toplevel"),
    ] {
        let (code, out) = w.node(
            "dispatch",
            "core",
            &[
                "--run-id",
                "r-1",
                "--worktree",
                tree.to_str().unwrap(),
                "--expected-commit",
                &base,
            ],
        );
        let v = &out["error"]["violations"][0];
        assert_eq!(
            (code, &v["predicate"], &v["field"]),
            (2, &json!(rule), &json!("worktree_path")),
            "{tree:?}: {out}"
        );
        if rule == "worktree-toplevel" {
            let message = v["message"].as_str().unwrap();
            assert!(message.contains(w.lane.to_str().unwrap()), "{out}");
        }
        assert_eq!(w.journal.bytes(), before, "a refusal wrote");
    }
}

/// The audit re-checks a scan against the journal: an evaluation that recorded
/// its scan of the work nodes but left a live dispatch out of what it carried
/// (a forged reading, appended around the engine) is a `read-mismatch`; the
/// same evaluation carrying the dispatch it read audits clean.
#[test]
fn the_audit_finds_a_scan_that_left_a_live_dispatch_out() {
    // The source: a node dispatched, an episode bound elsewhere evaluated (its
    // context carries the dispatch it read, which does not contradict it).
    let a = Work::new(&spec_text(OK, "test result: ok", 30_000));
    a.dispatched("core");
    let ep = Episode::new(&a, EPISODE);
    let (code, out) = ep.evaluate(&observation());
    assert_eq!((code, &out["eligible"]), (0, &json!(true)), "{out}");
    let stream = format!("park/{EPISODE}");
    // (leave the dispatch out of the reads, leave the scan out as well, audits clean)
    for (forge, unscanned, clean) in [
        (false, false, true),
        (true, false, false),
        (true, true, false),
    ] {
        // The same history on a second journal: a node dispatched, then the
        // episode's transitions copied raw.
        let b = Work::new(&spec_text(OK, "test result: ok", 30_000));
        b.dispatched("core");
        crate::support::copy_raw(
            &a.journal.path(),
            &b.journal.path(),
            &stream,
            &stream,
            |context| {
                if unscanned {
                    // No scan recorded at all: the audit requires the scan the
                    // command names (found by the hostile pass: it passed before).
                    context.as_object_mut().unwrap().remove("scans");
                }
                if let Some(reads) = context.get_mut("reads").and_then(Value::as_array_mut) {
                    let node = reads
                        .pop()
                        .expect("the evaluation read the dispatched node");
                    if !forge {
                        // b's node: the same shape under b's spec key.
                        let j = cairn::journal::Journal::open_read_only(
                            &b.journal.path(),
                            &Default::default(),
                        )
                        .unwrap();
                        let name = j
                            .streams()
                            .unwrap()
                            .into_iter()
                            .find(|i| i.machine == "work-node")
                            .unwrap()
                            .stream;
                        let mut own = node.clone();
                        own["stream"] = json!(name);
                        own["fact"]["worker"]["tree"] = json!(b.lane.to_str().unwrap());
                        own["fact"]["tree"] = json!(b.lane.to_str().unwrap());
                        own["fact"]["worker"]["repository"] =
                            json!(format!("{}/.git", b.root.to_str().unwrap()));
                        own["fact"]["repository"] =
                            json!(format!("{}/.git", b.root.to_str().unwrap()));
                        reads.push(own);
                    }
                }
            },
        );
        let (code, audit, _) = park(&["journal", "audit"], "", Some(&b.journal.path()));
        let mismatch = audit["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("{audit}"))
            .iter()
            .any(|f| f["kind"] == "read-mismatch" && f["stream"] == json!(stream));
        assert_eq!((code == 0, mismatch), (clean, forge), "{audit}");
    }
}

/// A worker inside the bound root writes in the bound working tree even when its
/// tree is another repository (a nested repository, a submodule): refused too.
#[test]
fn a_dispatch_inside_the_bound_root_outranks_no_active_dispatch_too() {
    use crate::support::git::git;
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let nested = w.root.join("vendor/nested");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q", "-b", "main"]);
    git(&nested, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let head = git(&nested, &["rev-parse", "HEAD"]);
    let (code, out) = w.node(
        "dispatch",
        "core",
        &[
            "--run-id",
            "r-1",
            "--worktree",
            nested.to_str().unwrap(),
            "--expected-commit",
            &head,
        ],
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("dispatched")),
        "{out}"
    );
    let ep = Episode::new(&w, EPISODE);
    let (code, out) = ep.evaluate(&bound_to(w.root.to_str().unwrap()));
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, &v["predicate"], &v["field"]),
        (
            2,
            &json!("journal-agrees"),
            &json!("checks.no_active_dispatch")
        ),
        "{out}"
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("inside the bound root"),
        "{out}"
    );
}

#[test]
fn a_dispatch_after_the_receipt_keeps_the_episode_from_safe_to_close() {
    // The episode was quiescent when evaluated and its receipt validated; then a
    // worker is dispatched into the bound repository. The read-back does not make
    // the episode safe to close while that worker writes.
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let root = w.root.to_str().unwrap().to_owned();
    let ep = Episode::new(&w, EPISODE);
    let here = bound_to(&root);
    let (code, out) = ep.evaluate(&here);
    assert_eq!(
        (code, &out["action"]),
        (0, &json!("write_receipt")),
        "{out}"
    );
    let (bytes, readback) = ep.receipt(&root, 12);
    let (code, out) = ep.verb("validate-receipt", &bytes);
    assert_eq!((code, &out), (0, &json!({"valid": true})), "{out}");

    w.dispatched("core");
    let refused = |readback: &str| {
        let before = w.journal.bytes();
        let (code, out) = ep.verb("confirm-readback", readback);
        let v = &out["error"]["violations"][0];
        assert_eq!(
            (code, &v["predicate"], &v["field"]),
            (2, &json!("journal-agrees"), &json!("receipt_bytes")),
            "{out}"
        );
        assert!(
            v["message"].as_str().unwrap().contains("`work-node/"),
            "{out}"
        );
        assert_eq!(w.journal.bytes(), before, "a refusal wrote");
        v["message"].as_str().unwrap().to_owned()
    };
    refused(&readback);

    // The worker's result verified: no dispatch is live, but one began since the
    // receipt was authorized, so the receipt's quiescence is not this episode's
    // (found by a hostile pass: dispatch then verify in between closed it).
    let (code, out) = w.verify_lane("core");
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    let message = refused(&readback);
    assert!(
        message.contains("since the receipt was authorized"),
        "{message}"
    );

    // A new attempt, evaluated (the node verified, nothing live): authorized
    // anew, its receipt validates and the read-back makes the episode safe to close.
    let again = Episode::new(&w, EPISODE);
    let (code, out) = again.evaluate(&here);
    assert_eq!(
        (code, &out["action"]),
        (0, &json!("write_receipt")),
        "{out}"
    );
    let (bytes, readback) = again.receipt(&root, 13);
    let (code, out) = again.verb("validate-receipt", &bytes);
    assert_eq!((code, &out), (0, &json!({"valid": true})), "{out}");
    let (code, out) = again.verb("confirm-readback", &readback);
    assert_eq!((code, &out["safe_to_close"]), (0, &json!(true)), "{out}");
    let (code, out, _) = park(&["journal", "audit"], "", Some(&w.journal.path()));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_worker_tree_swapped_for_another_repository_does_not_verify() {
    // Dispatched into a standalone repository; the directory then swapped for a
    // worktree of the bound repository and the work committed there (found by a
    // hostile pass: it verified, and park never saw the node in its repository).
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let tree = w.scratch("swapped");
    std::fs::create_dir_all(&tree).unwrap();
    crate::support::git::git(&tree, &["init", "-q", "-b", "main"]);
    crate::support::git::git(&tree, &["commit", "-q", "--allow-empty", "-m", "alone"]);
    let base = w.head(&tree);
    let t = tree.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "dispatch",
        "core",
        &[
            "--run-id",
            "r-1",
            "--worktree",
            &t,
            "--expected-commit",
            &base,
        ],
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("dispatched")),
        "{out}"
    );
    std::fs::remove_dir_all(&tree).unwrap();
    crate::support::git::git(&w.root, &["worktree", "add", "-q", "-b", "sneaky", &t]);
    let commit = w.head(&tree);
    let (code, out) = w.verify("core", &tree, &commit, &["--checklist", CHECKLIST]);
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("rejected")),
        "{out}"
    );
    assert!(
        out.to_string().contains("the one its dispatch read"),
        "the failure names the repository: {out}"
    );
}
