//! Facts that flow by reference between lifecycles (issue 21): a verb names the
//! stream whose fact it uses, the engine reads that stream into the decision and
//! records the read, a typed value the journal contradicts is refused naming the
//! field and the stream, and the audit re-decides with the same read. On real
//! parts: a consumer repository shipped by `cairn ship`, and the saga's merge turn
//! on the same journal.

use serde_json::Value;

use crate::park::park as cairn;
use crate::support::git::git;
use crate::support::kind_field_rule;
use crate::support::ship_repo::Repo;

/// The ship run's branch in the consumer repository (`worktree-<SHORT_ID>`).
const BRANCH: &str = "worktree-abc";

/// `cairn saga <args>` on the ship repository's journal.
fn saga(r: &Repo, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["saga"];
    full.extend_from_slice(args);
    let (code, out, _) = cairn(&full, "", Some(&r.journal.path()));
    (code, out)
}

/// A thread for issue 42 at `work` whose unit U1 holds the merge turn for the
/// ship run's branch.
fn thread_taking_the_turn(r: &Repo) {
    let (code, out) = saga(
        r,
        &["save", "--id", "issue-42", "--lifecycle-phase", "work"],
    );
    assert_eq!(code, 0, "{out}");
    // The gates the merge turn follows, on the commit the run ships.
    crate::support::saga::ready_in_tree(&r.journal.path(), "issue-42", &r.wt(), BRANCH);
    take_turn(r, "issue-42", "merge-wt");
}

/// `thread`'s unit U1 takes the merge turn on the run's branch (merging in the
/// merge worktree `wt`, beside the repository).
fn take_turn(r: &Repo, thread: &str, wt: &str) {
    let wt = r.root.with_file_name(wt);
    let (code, out) = saga(
        r,
        &[
            "merge-turn",
            "take",
            "--saga-id",
            thread,
            "--unit",
            "U1",
            "--branch",
            BRANCH,
            "--merge-worktree",
            wt.to_str().unwrap(),
            "--holder",
            "h",
        ],
    );
    assert_eq!(code, 0, "{out}");
}

/// `merge-turn merged --saga-id issue-42 --unit U1 --holder h <extra>`.
fn merged(r: &Repo, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "merge-turn",
        "merged",
        "--saga-id",
        "issue-42",
        "--unit",
        "U1",
        "--holder",
        "h",
    ];
    args.extend_from_slice(extra);
    saga(r, &args)
}

/// Every (field, rule) a refusal names, in order.
fn violations(out: &Value) -> Vec<(String, String)> {
    out["error"]["violations"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    (
                        v["field"].as_str().unwrap_or("").to_owned(),
                        v["predicate"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Refused with exit 2 and the journal byte for byte as it was.
fn refused(r: &Repo, extra: &[&str]) -> Value {
    let before = r.journal.bytes();
    let (code, out) = merged(r, extra);
    assert_eq!(code, 2, "{out}");
    assert_eq!(r.journal.bytes(), before, "a refusal writes nothing: {out}");
    out
}

/// A run acting for a thread merges only in the thread's repository: with
/// the thread's review and PR-ready read in a clone holding the same branch
/// and commit, the run opened in the original is refused at the merge before
/// git runs (`same-repository`), the journal and the target as they were
/// (helper-80: it merged there, and only the thread's credit refused it).
#[test]
fn a_ship_acting_for_a_thread_merges_only_in_the_threads_repository() {
    let r = Repo::new();
    r.to_merge_ready_with(&["--for", "saga/issue-42"]);
    let clone = r.root.with_file_name("thread-clone");
    git(
        r.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            r.root.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    git(&clone, &["checkout", "-q", BRANCH]);
    let (code, out) = saga(
        &r,
        &["save", "--id", "issue-42", "--lifecycle-phase", "work"],
    );
    assert_eq!(code, 0, "{out}");
    crate::support::saga::ready_in_tree(&r.journal.path(), "issue-42", &clone, BRANCH);
    take_turn(&r, "issue-42", "merge-wt");
    let main_before = git(&r.root, &["rev-parse", "main"]);
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, kind_field_rule(&out)[1..].to_vec()),
        (2, vec!["acts_for", "same-repository"]),
        "{out}"
    );
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains(clone.join(".git").to_str().unwrap()),
        "names the thread's repository: {out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal writes nothing");
    assert_eq!(git(&r.root, &["rev-parse", "main"]), main_before);
}

/// A run acting for a thread the journal does not hold is refused at the
/// merge as having no merge turn (the thread is named as absent), before git
/// runs and writing nothing: the repository check after it never speaks for
/// a thread that is not there.
#[test]
fn a_ship_acting_for_a_thread_not_in_the_journal_is_refused_its_turn() {
    let r = Repo::new();
    r.to_merge_ready_with(&["--for", "saga/issue-42"]);
    let main_before = git(&r.root, &["rev-parse", "main"]);
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, kind_field_rule(&out)[1..].to_vec()),
        (2, vec!["acts_for", "merge-turn-held"]),
        "{out}"
    );
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("it is not in the journal"),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal writes nothing");
    assert_eq!(git(&r.root, &["rev-parse", "main"]), main_before);
}

#[test]
fn a_merge_named_by_its_ship_run_is_the_one_cairn_saw_land() {
    let r = Repo::new();
    r.to_merge_ready_with(&["--for", "saga/issue-42"]);
    thread_taking_the_turn(&r);
    let tip = git(&r.wt(), &["rev-parse", "HEAD"]);
    let root = r.root.to_str().unwrap().to_owned();

    // Not a ship run's stream (or a name no run can have), or a ship run the
    // journal does not hold.
    for bad in ["park/ep-1", "ship//abc", "ship/abc/", "ship/./abc", "ship/"] {
        let out = refused(&r, &["--from", bad]);
        assert_eq!(
            kind_field_rule(&out),
            ["input", "from", "ship-stream"],
            "{bad}: {out}"
        );
    }
    let out = refused(&r, &["--from", "ship/nope"]);
    assert_eq!(
        kind_field_rule(&out)[1..],
        ["from", "journal-agrees"],
        "{out}"
    );
    let typed = [
        "--merged-tip",
        tip.as_str(),
        "--repo",
        root.as_str(),
        "--target",
        "main",
    ];
    let out = refused(&r, &[&["--from", "ship/nope"][..], &typed].concat());
    assert_eq!(
        violations(&out),
        [
            ("from".to_owned(), "journal-agrees".to_owned()),
            ("merged_tip".to_owned(), "merged-observed".to_owned()),
        ],
        "every failed predicate (the tip is not on main yet either): {out}"
    );

    // The caller merged by hand: git shows the tip on main, but the ship run has
    // not seen its merge land, so its word cannot back this one.
    git(&r.root, &["merge", "-q", "--ff-only", BRANCH]);
    let out = refused(&r, &["--from", "ship/abc"]);
    assert_eq!(
        kind_field_rule(&out)[1..],
        ["from", "journal-agrees"],
        "{out}"
    );
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has not merged"),
        "{out}"
    );
    let out = refused(&r, &[&["--from", "ship/abc"][..], &typed].concat());
    assert_eq!(
        violations(&out),
        [("from".to_owned(), "journal-agrees".to_owned())],
        "the ship run is at merge-ready: {out}"
    );

    // cairn's own merge (main already holds the tip: the ff-merge is a no-op that
    // its readings after confirm).
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    // Torn down as the seed says (the branch is deleted): the run's record of the
    // merge still stands behind the saga's.
    let (code, out) = r.verb("teardown", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("shipped")), "{out}");
    assert!(!r.has_branch(BRANCH));

    // A later commit on main holds the unit's work and is on main, so git alone
    // would accept it; the ship run merged `tip`, not it.
    let later = r.commit_in(&r.root, &[("later.txt", "later\n")], "later");
    git(&r.root, &["branch", "other", &later]);
    let out = refused(
        &r,
        &[
            "--from",
            "ship/abc",
            "--merged-tip",
            later.as_str(),
            "--target",
            "other",
        ],
    );
    assert_eq!(
        violations(&out),
        [
            ("target".to_owned(), "journal-agrees".to_owned()),
            ("merged_tip".to_owned(), "journal-agrees".to_owned()),
        ],
        "{out}"
    );
    assert!(
        out["error"]["violations"][1]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("`ship/abc` merged `{tip}`")),
        "the refusal names the stream that contradicts: {out}"
    );

    // Another thread with a unit on the same branch: the run acts for issue 42
    // only, so issue 43 cannot credit its merge.
    assert_eq!(
        saga(
            &r,
            &["save", "--id", "issue-43", "--lifecycle-phase", "work"]
        )
        .0,
        0
    );
    // Issue 43 reviewed the very commit the run shipped (built and reviewed in a
    // checkout of it): its own readings could show the merge.
    let checkout = r.root.with_file_name("issue-43-tree");
    git(
        &r.root,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            checkout.to_str().unwrap(),
            &tip,
        ],
    );
    crate::support::saga::ready_in_tree(&r.journal.path(), "issue-43", &checkout, BRANCH);
    take_turn(&r, "issue-43", "merge-wt-43");
    let before = r.journal.bytes();
    let (code, out) = saga(
        &r,
        &[
            "merge-turn",
            "merged",
            "--saga-id",
            "issue-43",
            "--unit",
            "U1",
            "--holder",
            "h",
            "--from",
            "ship/abc",
        ],
    );
    assert_eq!(
        (code, violations(&out)),
        (2, vec![("from".to_owned(), "journal-agrees".to_owned())]),
        "{out}"
    );
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("acts for `saga/issue-42`"),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before);

    // By reference: nothing copied by hand. The tip, repository and target come
    // from the ship run; cairn's own readings still show the merge.
    let (code, out) = merged(&r, &["--from", "ship/abc"]);
    assert_eq!(
        (code, out["gates"]["units"]["U1"]["merge_state"].as_str()),
        (0, Some("merged")),
        "{out}"
    );
    let (_, log, _) = cairn(
        &[
            "journal",
            "log",
            "--stream",
            "saga/issue-42",
            "--format",
            "json",
        ],
        "",
        Some(&r.journal.path()),
    );
    let event = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "unit-merged")
        .expect("a unit-merged event")
        .clone();
    assert_eq!(event["payload"]["merged_tip"], tip.as_str(), "{event}");
    // The transition records what it read of the ship run: the audit re-decides
    // with it, and the append required the run unmoved.
    let transition = event["transition_id"].as_i64().unwrap().to_string();
    let (code, show, _) = cairn(
        &["journal", "show", &transition, "--format", "json"],
        "",
        Some(&r.journal.path()),
    );
    assert_eq!(code, 0, "{show}");
    let read = &show["transition"]["context"]["reads"][0];
    assert_eq!(
        (
            read["stream"].as_str(),
            read["state"].as_str(),
            read["fact"]["kind"].as_str(),
            read["fact"]["merged"].as_str(),
        ),
        (
            Some("ship/abc"),
            Some("shipped"),
            Some("ship"),
            Some(tip.as_str())
        ),
        "{show}"
    );
    links_show_the_read(&r, &transition);
    release_from_the_ship_run(&r, &tip, &later);
    r.audit_ok();
    a_merge_credited_twice_is_a_cross_invariant(&r, &tip);
}

/// Issue 43 credits the run's merge by typing it (no `--from`): git shows the
/// merge, so the thread cannot refuse it alone; the audit names both sides — the
/// thread that records a merge another thread records, and the run whose merge
/// a thread it did not act for took.
fn a_merge_credited_twice_is_a_cross_invariant(r: &Repo, tip: &str) {
    let root = r.root.to_str().unwrap().to_owned();
    // The run's teardown deleted the branch; the caller puts it back at the tip.
    git(&r.root, &["branch", BRANCH, tip]);
    let (code, out) = saga(
        r,
        &[
            "merge-turn",
            "merged",
            "--saga-id",
            "issue-43",
            "--unit",
            "U1",
            "--holder",
            "h",
            "--merged-tip",
            tip,
            "--repo",
            &root,
            "--target",
            "main",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&r.journal.path()));
    let mut flagged: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "cross-invariant")
        .filter_map(|f| f["stream"].as_str())
        .collect();
    flagged.sort_unstable();
    assert_eq!(
        (code, flagged),
        (0, vec!["saga/issue-42", "saga/issue-43", "ship/abc"]),
        "{audit}"
    );
}

/// `journal links` lists the recorded reads from both sides (the run's merge read
/// the thread's merge turn; the thread's merge read the run), draws them, and
/// names a stream nothing recorded or read as no-such-stream.
fn links_show_the_read(r: &Repo, transition: &str) {
    let db = r.journal.path();
    let links = |args: &[&str]| {
        let mut full = vec!["journal", "links"];
        full.extend_from_slice(args);
        cairn(&full, "", Some(&db))
    };
    let merged_at = transition.parse::<i64>().unwrap();
    let expected = serde_json::json!([
        {"reader": "ship/abc", "command": "begin", "read": "saga/issue-42"},
        {"reader": "saga/issue-42", "command": "mark-merged", "read": "ship/abc"},
    ]);
    for side in ["ship/abc", "saga/issue-42"] {
        let (code, out, _) = links(&[side]);
        assert_eq!(code, 0, "{out}");
        let got: Vec<Value> = out["links"]
            .as_array()
            .unwrap()
            .iter()
            // The thread's reviews read their build loops (the gates the merge
            // turn follows); this is about the merge's read.
            .filter(|l| l["command"] != "review")
            .map(|l| {
                serde_json::json!({
                    "reader": l["reader"], "command": l["command"], "read": l["read"],
                })
            })
            .collect();
        assert_eq!(Value::from(got), expected, "{side}: {out}");
        let merge = out["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["command"] == "mark-merged")
            .unwrap();
        assert_eq!(
            (
                merge["state"].as_str(),
                merge["fact"].as_str(),
                merge["transition_id"].as_i64()
            ),
            (Some("shipped"), Some("ship"), Some(merged_at)),
            "{out}"
        );
    }
    // The whole journal: the two merges' reads, beside the reviews' reads of
    // the build loops (no other verb here read a stream).
    let (code, out, _) = links(&[]);
    let commands: Vec<&str> = out["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["command"].as_str())
        .collect();
    assert_eq!(
        (code, commands.iter().filter(|c| **c != "review").count()),
        (0, 2),
        "{out}"
    );
    let (code, out, _) = links(&["ship/abd"]);
    assert_eq!(
        (code, kind_field_rule(&out)),
        (2, ["no-such-stream", "stream", "stream-has-events"]),
        "{out}"
    );
    // The graph of streams renders.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["journal", "links", "--format", "dot", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success());
    let dot = String::from_utf8(out.stdout).unwrap();
    assert!(
        dot.contains("\"saga/issue-42\"") && dot.contains("label = \"mark-merged\""),
        "{dot}"
    );
    if let Some(out) = crate::graphs::render(&dot) {
        let svg = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && svg.contains("ship/abc"), "{svg}");
    }
}

/// `saga release --from ship/abc`: the landed commit, repository and target come
/// from the run. A typed reviewed head the thread's review contradicts, or a
/// typed landed commit the run contradicts, is named (nothing written); with
/// neither typed, the release records the run's merge, bound to the review.
fn release_from_the_ship_run(r: &Repo, tip: &str, later: &str) {
    let release = |extra: &[&str]| {
        let mut args = vec!["release", "--saga-id", "issue-42", "--destination", "merge"];
        args.extend_from_slice(extra);
        let before = r.journal.bytes();
        let (code, out) = saga(r, &args);
        if code != 0 {
            assert_eq!(r.journal.bytes(), before, "{out}");
        }
        (code, out)
    };
    let (code, out) = release(&["--from", "ship/abc", "--reviewed-head", later]);
    assert_eq!(
        (code, violations(&out)),
        (
            2,
            vec![("reviewed_head".to_owned(), "reviewed-head".to_owned())]
        ),
        "{out}"
    );
    let (code, out) = release(&["--from", "ship/abc", "--landed-commit", later]);
    assert_eq!(
        (code, violations(&out)),
        (
            2,
            vec![("landed_commit".to_owned(), "journal-agrees".to_owned())]
        ),
        "{out}"
    );
    let (code, out) = release(&["--from", "ship/abc"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (
            out["gates"]["release"]["landed_commit"].as_str(),
            out["gates"]["release"]["reviewed_head"].as_str()
        ),
        (Some(tip), Some(tip)),
        "{out}"
    );
}

#[test]
fn a_ship_run_acts_for_a_saga_thread_it_names_by_its_stream() {
    let r = Repo::new();
    for bad in ["saga/issue-042", "saga/x", "ship/abc", "issue-42", "saga/"] {
        let (code, out) = r.open_with(&["--for", bad]);
        assert_eq!(
            (code, kind_field_rule(&out)),
            (2, ["input", "for", "saga-stream"]),
            "{bad}: {out}"
        );
    }
    assert!(!r.journal.path().exists() || r.events().is_empty());
    let (code, out) = r.open_with(&["--for", "saga/task-cache"]);
    assert_eq!(code, 0, "{out}");
}

/// `saga review --from build-loop/issue-42:U1`: the reviewed SHA is the revision
/// the unit's build loop handed to code review, read from the journal; a loop of
/// another thread, one that handed nothing, or a typed SHA it did not hand is
/// refused with nothing written.
#[test]
fn a_review_names_the_revision_its_build_loop_handed() {
    use crate::support::saga::{predicates, Thread};
    let t = Thread::new();
    let head = t.reviewed("accepted");
    let refused = |rest: &[&str]| {
        let before = t.bytes();
        let (code, out) = t.s("review", rest);
        assert_eq!(code, 2, "{out}");
        assert_eq!(t.bytes(), before, "{out}");
        out
    };
    let out = refused(&["--outcome", "accepted", "--from", "ship/abc"]);
    assert_eq!(
        kind_field_rule(&out),
        ["input", "from", "build-loop-stream"],
        "{out}"
    );
    let out = refused(&["--outcome", "accepted", "--from", "build-loop/issue-42:U9"]);
    assert_eq!(
        kind_field_rule(&out)[1..],
        ["from", "journal-agrees"],
        "{out}"
    );
    let other = "0".repeat(40);
    for (rest, field) in [
        (
            vec![
                "--reviewed-sha",
                other.as_str(),
                "--from",
                "build-loop/issue-42:U1",
            ],
            "reviewed_sha",
        ),
        (
            vec![
                "--reviewed-sha",
                head.as_str(),
                "--from",
                "build-loop/issue-43:U1",
            ],
            "from",
        ),
    ] {
        let mut args = vec!["--outcome", "accepted"];
        args.extend(rest);
        let out = refused(&args);
        assert_eq!(predicates(&out), ["journal-agrees"], "{out}");
        assert_eq!(out["error"]["violations"][0]["field"], field, "{out}");
    }
    assert_eq!(t.pr_ready().0, 0, "the review by reference passes PR-ready");
    t.audit_clean();
    // The loop goes green again at a later commit: the review is of an older
    // revision now, and the audit names the decision that rested on the old one.
    let later = t.commit("later.txt");
    assert_eq!(t.build_loop(&[]).0, 0);
    let (code, audit) = t.cairn(&["journal", "audit"]);
    assert_eq!((code, audit["ok"].as_bool()), (0, Some(true)), "{audit}");
    let notices: Vec<&str> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "reliance-withdrawn" && f["stream"] == "saga/issue-42")
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    assert_eq!(notices.len(), 1, "{audit}");
    assert!(
        notices[0].contains(&format!(
            "has handed {later} to code review since, not {head}"
        )),
        "{notices:?}"
    );
    // Another issue's loop never vouches for this thread's PR-ready.
    let repo = t.repo_str().to_owned();
    let before = t.bytes();
    let (code, out) = t.s("pr-ready", &["--repo", &repo, "--issue", "43"]);
    assert_eq!(
        (code, kind_field_rule(&out)),
        (2, ["input", "issue", "thread-issue"]),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // A keyed review by reference, retried after the loop moved on, replays the
    // first answer: the request is what was typed, not what the loop said.
    let keyed = [
        "--outcome",
        "accepted",
        "--from",
        "build-loop/issue-42:U1",
        "--idempotency-key",
        "k1",
    ];
    let (code, first) = t.s("review", &keyed);
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["gates"]["review"]["reviewed_sha"], later.as_str());
    t.commit("later2.txt");
    assert_eq!(t.build_loop(&[]).0, 0);
    let before = t.bytes();
    let (code, again) = t.s("review", &keyed);
    assert_eq!(code, 0, "{again}");
    assert_eq!(again["gates"]["review"]["reviewed_sha"], later.as_str());
    assert_eq!(t.bytes(), before, "a replay writes nothing");
}

/// A run acting for a thread ships what the thread's code review reviewed: a
/// commit made after the review (and PR-ready) is refused at the merge, before
/// git runs, even with the turn held.
#[test]
fn a_ship_merges_only_what_the_threads_review_reviewed() {
    use crate::support::ship_repo::{phase1, premerge, refine};
    let r = Repo::new();
    assert_eq!(r.open_with(&["--for", "saga/issue-42"]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let (code, out) = saga(
        &r,
        &["save", "--id", "issue-42", "--lifecycle-phase", "work"],
    );
    assert_eq!(code, 0, "{out}");
    // Reviewed (and PR-ready) at the worktree's first commit...
    crate::support::saga::ready_in_tree(&r.journal.path(), "issue-42", &r.wt(), BRANCH);
    // ...then the fix lands after the review, and the run ships it.
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    let (code, out) = r.verb("refine", &refine(&head).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    take_turn(&r, "issue-42", "merge-wt");
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("reviewed-shipped")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    assert_ne!(git(&r.root, &["rev-parse", "main"]), head, "git ran");
}
