//! The seed's own mint command works as written (issue #17, finding 2): `--kind` +
//! `--id` derive the saga id (task ids slugified), the orchestration backend is
//! recorded recommended-and-chosen (`inline`; `cc-workflows-ultracode` never a
//! default, never selectable), and the branch and head are captured from git at
//! save, so `scan --branch` finds the thread.

use serde_json::Value;

use crate::support::git::git;
use crate::support::saga::Thread;

fn restore(t: &Thread, id: &str) -> Value {
    let (code, out) = t.cairn(&["saga", "restore", "--saga-id", id]);
    assert_eq!(code, 0, "{out}");
    out
}

#[test]
fn the_seeds_mint_command_is_accepted() {
    let t = Thread::new();
    git(&t.repo, &["checkout", "-q", "-b", "work/42-u1"]);
    let (code, out) = t.cairn_in(
        &t.repo,
        &[
            "saga",
            "save",
            "--kind",
            "issue",
            "--id",
            "42",
            "--issue-ref",
            "acme/widgets#42",
            "--lifecycle-phase",
            "work",
            "--phase-status",
            "in_progress",
            "--plan-path",
            "docs/plans/p.md",
            "--destination",
            "pr",
            "--orchestration-mode",
            "inline",
            "--orchestration-recommended",
            "inline",
            "--rounds-seen",
            "1",
        ],
    );
    assert_eq!(
        (code, out["saga_id"].as_str()),
        (0, Some("issue-42")),
        "{out}"
    );
    let r = restore(&t, "issue-42");
    assert_eq!(r["kind"], "issue");
    assert_eq!(r["orchestration_mode"], "inline");
    assert_eq!(r["orchestration_recommended"], "inline");
    assert_eq!(r["orchestration_operator_choice"], "inline");

    // Task ids are slugified; an issue id is a number.
    let (code, out) = t.cairn(&["saga", "save", "--kind", "task", "--id", "Cache Warm-up!"]);
    assert_eq!(
        (code, out["saga_id"].as_str()),
        (0, Some("task-cache-warm-up")),
        "{out}"
    );
    assert_eq!(restore(&t, "task-cache-warm-up")["kind"], "task");
    let before = t.bytes();
    let (code, out) = t.cairn(&["saga", "save", "--kind", "issue", "--id", "cache"]);
    assert_eq!(
        (code, out["error"]["field"].as_str()),
        (2, Some("id")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // The derived ids cairn already accepted stay what they were.
    assert_eq!(
        t.cairn(&["saga", "save", "--id", "issue-42", "--next-step", "review"])
            .1["saga_id"],
        "issue-42"
    );
    assert_eq!(
        t.cairn(&["saga", "save", "--id", "task-cache-warm-up"]).0,
        0
    );
    assert_eq!(restore(&t, "task-cache-warm-up")["kind"], "task");
    t.audit_clean();
}

#[test]
fn the_backend_is_recorded_never_defaulted_to_a_workflow() {
    let t = Thread::new();
    assert_eq!(t.cairn(&["saga", "save", "--id", "issue-42"]).0, 0);
    let r = restore(&t, "issue-42");
    assert_eq!(
        (
            r["orchestration_mode"].clone(),
            r["orchestration_recommended"].clone()
        ),
        (Value::Null, Value::Null),
        "no choice is invented: {r}"
    );
    // The operator's choice, with what cairn's recommender says (only `inline`).
    assert_eq!(
        t.cairn(&[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--orchestration-mode",
            "inline"
        ])
        .0,
        0
    );
    let r = restore(&t, "issue-42");
    assert_eq!(r["orchestration_recommended"], "inline");
    assert_eq!(r["orchestration_operator_choice"], "inline");
    for archived in ["cc-workflows-ultracode", "team-execution"] {
        let before = t.bytes();
        let (code, out) = t.cairn(&[
            "saga",
            "save",
            "--id",
            "issue-42",
            "--orchestration-mode",
            archived,
        ]);
        assert_eq!(
            (code, out["error"]["field"].as_str()),
            (2, Some("orchestration_mode")),
            "{out}"
        );
        assert_eq!(t.bytes(), before);
    }
    // Carried forward by a tick that says nothing about it.
    assert_eq!(
        t.cairn(&["saga", "save", "--id", "issue-42", "--phase", "2"])
            .0,
        0
    );
    assert_eq!(restore(&t, "issue-42")["orchestration_mode"], "inline");
    t.audit_clean();
}

#[test]
fn the_branch_and_head_are_captured_from_git_at_save() {
    let t = Thread::new();
    git(&t.repo, &["checkout", "-q", "-b", "work/42-u1"]);
    let head = t.commit("b.txt");
    let (code, out) = t.cairn_in(&t.repo, &["saga", "save", "--kind", "issue", "--id", "42"]);
    assert_eq!(code, 0, "{out}");
    let r = restore(&t, "issue-42");
    assert_eq!(
        (r["branch"].as_str(), r["head_sha"].as_str()),
        (Some("work/42-u1"), Some(head.as_str()))
    );
    let (_, found) = t.cairn(&["saga", "scan", "--branch", "work/42-u1"]);
    assert_eq!(
        found["count"], 1,
        "code review's match key finds the thread: {found}"
    );

    // Back on the default branch: the recorded work branch stays, the head moves.
    git(&t.repo, &["checkout", "-q", "main"]);
    let main = t.head();
    let repo = t.repo_str().to_owned();
    assert_eq!(
        t.cairn(&["saga", "save", "--id", "issue-42", "--repo", &repo])
            .0,
        0
    );
    let r = restore(&t, "issue-42");
    assert_eq!(
        (r["branch"].as_str(), r["head_sha"].as_str()),
        (Some("work/42-u1"), Some(main.as_str()))
    );
    // Outside any repository nothing is captured and nothing is cleared.
    assert_eq!(
        t.cairn(&["saga", "save", "--id", "issue-42", "--phase", "3"])
            .0,
        0
    );
    assert_eq!(restore(&t, "issue-42")["branch"], "work/42-u1");
    let (code, out) = t.cairn(&["saga", "save", "--id", "issue-42", "--repo", "relative/dir"]);
    assert_eq!(
        (code, out["error"]["field"].as_str()),
        (2, Some("repo")),
        "{out}"
    );
    t.audit_clean();
}
