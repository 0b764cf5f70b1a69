//! Review rounds are counted once (issue 21): by the PR continuation loop that
//! follows a saga thread. The thread takes them from its loops at each save
//! (the engine scans every loop that follows a thread), a typed list they
//! contradict is refused naming the loop, and the audit names a thread that holds
//! a round no loop of its counted.

use std::path::Path;

use serde_json::Value;

use crate::support::saga::{cairn_at, ready_elsewhere};

/// A changes-requested reading of the PR at the thread's reviewed head, for
/// `pr observe --from` (the reviewed SHA is the thread's, never typed).
fn changes_requested() -> Value {
    let mut doc = crate::support::pr::doc("changes-requested", "merge");
    for k in ["reviewed_sha", "commits_since_review"] {
        doc.as_object_mut().unwrap().remove(k);
    }
    doc
}

/// Thread `id` at `work`, then PR-ready passed for U1 in a fresh repository.
pub fn ready(db: &Path, id: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (code, out) = cairn_at(
        db,
        &["saga", "save", "--id", id, "--lifecycle-phase", "work"],
    );
    assert_eq!(code, 0, "{out}");
    ready_elsewhere(db, id)
}

pub fn observe(db: &Path, repo: &Path, thread: &str, doc: &Value) -> (i32, Value) {
    let (code, out, _) = crate::park::park(
        &[
            "pr",
            "observe",
            "--repo",
            repo.to_str().unwrap(),
            "--from",
            thread,
        ],
        &doc.to_string(),
        Some(db),
    );
    (code, out)
}

#[test]
fn a_thread_takes_its_rounds_from_the_loop_that_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let (_tmp, repo) = ready(&db, "issue-9");
    // The loop counts round 1; the thread has not saved since: it lags, and a
    // later observation is no contradiction.
    let (code, out) = observe(&db, &repo, "saga/issue-9", &changes_requested());
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    let (code, out) = observe(&db, &repo, "saga/issue-9", &changes_requested());
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    let show = |db: &Path| cairn_at(db, &["saga", "show", "--saga-id", "issue-9"]).1;
    assert_eq!(show(&db)["rounds_seen"], serde_json::json!([]), "lags");
    // A save with no rounds takes the loop's; a typed list that is not the
    // loop's is refused, naming the loop, nothing written; the loop's own list
    // typed back is accepted.
    let (code, out) = cairn_at(&db, &["saga", "save", "--id", "issue-9"]);
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    for typed in ["1|2", "", "2"] {
        let before = std::fs::read(&db).unwrap();
        let (code, out) = cairn_at(
            &db,
            &["saga", "save", "--id", "issue-9", "--rounds-seen", typed],
        );
        let v = &out["error"]["violations"][0];
        assert_eq!(
            (code, v["predicate"].as_str(), v["field"].as_str()),
            (2, Some("journal-agrees"), Some("rounds_seen")),
            "{typed:?}: {out}"
        );
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("pr-loop/github.com/example/project/pull/7"),
            "{out}"
        );
        assert_eq!(std::fs::read(&db).unwrap(), before, "a refusal wrote");
    }
    let (code, out) = cairn_at(
        &db,
        &["saga", "save", "--id", "issue-9", "--rounds-seen", "1"],
    );
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    assert_eq!(show(&db)["rounds_seen"], serde_json::json!([1]));
    let (code, audit) = cairn_at(&db, &["journal", "audit"]);
    assert_eq!((code, audit["ok"].as_bool()), (0, Some(true)), "{audit}");
    let notices = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "cross-invariant")
        .count();
    assert_eq!(notices, 0, "{audit}");
}

#[test]
fn the_audit_names_a_round_no_loop_counted() {
    // One journal holds thread issue-9 with rounds typed before any loop; another
    // holds a loop that follows issue-9 and counted round 1. The loop written into
    // the first, raw (as an older build would have left it): the thread holds
    // rounds its loop never counted.
    let dir = tempfile::tempdir().unwrap();
    let (typed, looped) = (dir.path().join("typed.db"), dir.path().join("looped.db"));
    let (code, out) = cairn_at(
        &typed,
        &["saga", "save", "--id", "issue-9", "--rounds-seen", "1|2|5"],
    );
    assert_eq!(code, 0, "{out}");
    let (_tmp, repo) = ready(&looped, "issue-9");
    let (code, out) = observe(&looped, &repo, "saga/issue-9", &changes_requested());
    assert_eq!(code, 0, "{out}");
    let stream = "pr-loop/github.com/example/project/pull/7";
    crate::support::copy_raw(&looped, &typed, stream, stream, |_| {});
    let (_, audit) = cairn_at(&typed, &["journal", "audit"]);
    let notice = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "cross-invariant" && f["stream"] == "saga/issue-9")
        .unwrap_or_else(|| panic!("a notice on the thread: {audit}"));
    let detail = notice["detail"].as_str().unwrap();
    assert!(
        detail.contains("[2, 5]") && detail.contains(stream),
        "{detail}"
    );
}

#[test]
fn two_loops_that_follow_one_thread_count_its_rounds_in_one_sequence() {
    // Two PRs of one thread (pull/7, pull/8): a round of either is a round of the
    // thread, numbered once (found: each loop began at round 1, and the thread's
    // save merged the two rounds into one).
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let (_tmp, repo) = ready(&db, "issue-9");
    let (code, out) = observe(&db, &repo, "saga/issue-9", &changes_requested());
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(2)), "{out}");
    let mut second = changes_requested();
    second["pr"] = "https://github.com/example/project/pull/8".into();
    let (code, out) = observe(&db, &repo, "saga/issue-9", &second);
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(3)), "{out}");
    let (code, out) = cairn_at(&db, &["saga", "save", "--id", "issue-9"]);
    assert_eq!((code, out["next_round"].as_u64()), (0, Some(3)), "{out}");
    let (code, audit) = cairn_at(&db, &["journal", "audit"]);
    assert_eq!((code, audit["ok"].as_bool()), (0, Some(true)), "{audit}");
}
