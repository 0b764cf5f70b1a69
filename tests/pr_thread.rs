//! A PR loop that follows a saga thread merges only on the thread's word (issue
//! 21): the operator's confirmation of an offered merge is refused once the
//! thread's PR-ready no longer stands for the head the merge was offered at.

use crate::rounds::{observe, ready};
use crate::support::pr::PR;
use crate::support::saga::cairn_at;

#[test]
fn a_merge_is_confirmed_only_while_the_threads_pr_ready_stands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let (_tmp, repo) = ready(&db, "issue-9");
    let head = crate::support::git::git(&repo, &["rev-parse", "HEAD"]);
    let mut doc = crate::pr_findings::fresh_doc(&head, "merge");
    doc.as_object_mut().unwrap().remove("reviewed_sha");
    let (code, out) = observe(&db, &repo, "saga/issue-9", &doc);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-offered")),
        "{out}"
    );
    let review = |outcome: &str| {
        let (code, out) = cairn_at(
            &db,
            &[
                "saga",
                "review",
                "--saga-id",
                "issue-9",
                "--outcome",
                outcome,
                "--from",
                "build-loop/issue-9:U1",
            ],
        );
        assert_eq!(code, 0, "{out}");
    };
    let confirm = || {
        cairn_at(
            &db,
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
        )
    };
    // The review is withdrawn after the offer: the merge is not confirmed.
    review("repairs_requested");
    let before = std::fs::read(&db).unwrap();
    let (code, out) = confirm();
    let v = &out["error"]["violations"][0];
    assert_eq!(
        (code, v["predicate"].as_str(), v["field"].as_str()),
        (2, Some("journal-agrees"), Some("what")),
        "{out}"
    );
    assert!(
        v["message"].as_str().unwrap().contains("saga/issue-9"),
        "names the thread: {out}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "a refusal wrote");
    // Accepted again and PR-ready again, for the same head: confirmed.
    review("accepted");
    let (code, out) = cairn_at(
        &db,
        &[
            "saga",
            "pr-ready",
            "--saga-id",
            "issue-9",
            "--repo",
            repo.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = confirm();
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-confirmed")),
        "{out}"
    );
    let (code, audit) = cairn_at(&db, &["journal", "audit"]);
    assert_eq!((code, audit["ok"].as_bool()), (0, Some(true)), "{audit}");
}
