//! The helper's `evaluate`, held with documents built the helper's way: only what
//! blocks, in its words and order; a detected anchor needs a human; a drifted
//! resume target is an unsafe result.

use serde_json::{json, Value};

use crate::support::park_helper::*;

#[test]
fn a_detected_anchor_passes_only_once_a_human_confirmed_it() {
    for source in ["explicit", "human_confirmation"] {
        let mut v = observation();
        v["checks"][0]["evidence"]["source"] = json!(source);
        answers("check", &v, eligible());
    }
    for source in ["active_dispatch", "current_branch", "recently_touched_bead"] {
        let mut v = observation();
        v["checks"][0]["evidence"]["source"] = json!(source);
        refused(
            "check",
            &v.to_string(),
            "checks[0].evidence.source",
            "anchor-unconfirmed",
        );
    }
}

#[test]
fn a_drifted_resume_target_is_an_unsafe_result_not_an_error() {
    let moved = "fedcba9876543210fedcba9876543210fedcba98";
    let mut v = observation();
    set(&mut v, resume("fail", CHECKPOINT, "checkpoint", moved));
    answers(
        "check",
        &v,
        unsafe_with("durable", &["resume_target_resolvable=fail"]),
    );
    // A branch that moved since the receipt.
    set(&mut v, resume("fail", "feature/helper", "branch", moved));
    answers(
        "check",
        &v,
        unsafe_with("durable", &["resume_target_resolvable=fail"]),
    );
    // A claimed pass the evidence does not support is still refused.
    set(
        &mut v,
        check(
            "resume_target_resolvable",
            "resume",
            "pass",
            json!({"source": "git", "detail": "rev-parse failed", "backend": "git", "bound_root": ROOT, "error": "unknown revision"}),
        ),
    );
    refused(
        "check",
        &v.to_string(),
        "checks[9].outcome",
        "outcome-contradicts-evidence",
    );
}

#[test]
fn evaluate_lists_only_what_blocks_in_the_helpers_words_and_order() {
    let terminal = |v: &mut Value, status: &str, outcome: &str| {
        remove(v, "resume_target_resolvable");
        set(
            v,
            check(
                "bead_terminal",
                "completion",
                outcome,
                json!({"source": "rsry_list_beads", "detail": "structured status", "status": status}),
            ),
        );
    };
    let unknown_bead = |v: &mut Value| {
        remove(v, "resume_target_resolvable");
        set(
            v,
            check(
                "bead_terminal",
                "completion",
                "unknown",
                json!({"source": "rsry_list_beads", "detail": "no status", "error": "status missing"}),
            ),
        );
    };
    let quiet = |v: &mut Value| {
        set(
            v,
            check(
                "no_active_dispatch",
                "quiescence",
                "fail",
                json!({"source": "rsry_active+rsry_dispatch_history", "detail": "one active", "active_records": ["dispatch-3"]}),
            ),
        );
        set(
            v,
            check(
                "no_running_child_operation",
                "quiescence",
                "unknown",
                json!({"source": "claude.current_child_operations", "detail": "no registry", "client": "claude", "authoritative": false, "error": "TaskList is not exposed"}),
            ),
        );
        set(
            v,
            check(
                "no_vcs_operation_or_conflict",
                "quiescence",
                "fail",
                json!({"source": "git", "detail": "rebase", "backend": "git", "bound_root": ROOT,
            "commands": [git(&["status", "--porcelain=v2", "--branch"]), git(&["diff", "--name-only", "--diff-filter=U"])],
            "conflicts": ["src/lib.rs"], "operations": ["rebase"]}),
            ),
        );
    };
    let unpreserved = |v: &mut Value| {
        set(
            v,
            check(
                "tree_preserved",
                "preservation",
                "fail",
                json!({"source": "git", "detail": "dirty", "backend": "git", "bound_root": ROOT, "workspace": ROOT, "state": "unpreserved", "error": "2 uncommitted entries"}),
            ),
        );
        set(
            v,
            check(
                "commits_reachable_or_checkpoint_resolvable",
                "preservation",
                "unknown",
                json!({"source": "git", "detail": "unreadable", "backend": "git", "bound_root": ROOT, "workspace": ROOT, "state": "unknown", "error": "index.lock"}),
            ),
        );
    };
    let completed = "completed unavailable: required Rosary mechanism rosary-a6166d cannot prove the declared acceptance command and latest verdict";
    let conflicts = "completion evidence conflicts or is unknown";
    type Case = (&'static str, Box<dyn Fn(&mut Value)>, Value);
    let cases: Vec<Case> = vec![
        ("all pass", Box::new(|_| {}), eligible()),
        (
            "quiescence, in name order",
            Box::new(quiet),
            unsafe_with(
                "durable",
                &[
                    "no_active_dispatch=fail",
                    "no_running_child_operation=unknown",
                    "no_vcs_operation_or_conflict=fail",
                ],
            ),
        ),
        (
            "terminal bead",
            Box::new(move |v| terminal(v, "done", "pass")),
            unsafe_with("durable", &[completed]),
        ),
        (
            "closed bead",
            Box::new(move |v| terminal(v, "closed", "pass")),
            unsafe_with("durable", &[completed]),
        ),
        (
            "unknown bead",
            Box::new(unknown_bead),
            unsafe_with("durable", &[conflicts]),
        ),
        (
            "unknown pr",
            Box::new(|v| {
                pr_backed(
                    v,
                    check(
                        "pr_merged",
                        "completion",
                        "unknown",
                        json!({"source": "gh", "detail": "gh failed", "command": ["gh", "pr", "view", PR, "--json", "state,mergedAt,url"], "error": "HTTP 401"}),
                    ),
                )
            }),
            unsafe_with("durable", &[conflicts, "pr_merged=unknown"]),
        ),
        (
            "open pr parks",
            Box::new(|v| {
                pr_backed(
                    v,
                    pr_merged(
                        "fail",
                        json!({"state": "OPEN", "mergedAt": null, "url": PR}),
                    ),
                )
            }),
            eligible(),
        ),
        (
            "preservation, in name order",
            Box::new(unpreserved),
            unsafe_with(
                "durable",
                &[
                    "commits_reachable_or_checkpoint_resolvable=unknown",
                    "tree_preserved=fail",
                ],
            ),
        ),
        (
            "unknown resume",
            Box::new(|v| {
                set(
                    v,
                    check(
                        "resume_target_resolvable",
                        "resume",
                        "unknown",
                        json!({"source": "git", "detail": "no resolver", "backend": "git", "bound_root": ROOT, "error": "git failed"}),
                    ),
                )
            }),
            unsafe_with("durable", &["resume_target_resolvable=unknown"]),
        ),
        (
            "base, completion, then preservation",
            Box::new(move |v| {
                quiet(v);
                unknown_bead(v);
                unpreserved(v);
            }),
            unsafe_with(
                "durable",
                &[
                    "no_active_dispatch=fail",
                    "no_running_child_operation=unknown",
                    "no_vcs_operation_or_conflict=fail",
                    conflicts,
                    "commits_reachable_or_checkpoint_resolvable=unknown",
                    "tree_preserved=fail",
                ],
            ),
        ),
        (
            "the resume target after base reasons, for a parked candidate",
            Box::new(move |v| {
                quiet(v);
                set(v, resume("fail", CHECKPOINT, "checkpoint", HEAD));
            }),
            unsafe_with(
                "durable",
                &[
                    "no_active_dispatch=fail",
                    "no_running_child_operation=unknown",
                    "no_vcs_operation_or_conflict=fail",
                    "resume_target_resolvable=fail",
                ],
            ),
        ),
    ];
    for (name, mutate, want) in cases {
        let mut v = observation();
        mutate(&mut v);
        let (code, out, err) = park("check", &v.to_string());
        assert_eq!((code, &out), (0, &want), "{name}: {err}");
    }
    // Preflight: the same reasons, or the checkpoint; the resume target is not read yet.
    let mut v = preflight();
    quiet(&mut v);
    answers(
        "check",
        &v,
        unsafe_with(
            "preflight",
            &[
                "no_active_dispatch=fail",
                "no_running_child_operation=unknown",
                "no_vcs_operation_or_conflict=fail",
            ],
        ),
    );
    let mut v = preflight();
    terminal(&mut v, "done", "pass");
    answers("check", &v, unsafe_with("preflight", &[completed]));
    let mut v = preflight();
    set(&mut v, resume("fail", CHECKPOINT, "checkpoint", HEAD));
    answers("check", &v, checkpoint());
    // cairn's own explanation is on stderr.
    let (_, _, err) = park("check", &observation().to_string());
    assert!(err.contains("anchor_confirmed=pass"), "{err}");
}

#[test]
fn a_resolver_name_git_would_read_as_an_option_is_refused() {
    // The resolver argv is the helper's (`git -C ROOT rev-parse VALUE`, no
    // `--end-of-options`): a value starting with `-` never reaches it.
    let mut v = observation();
    set(&mut v, resume("pass", "--output=/tmp/x", "branch", HEAD));
    refused(
        "check",
        &v.to_string(),
        "checks[9].evidence.target.value",
        "option-like",
    );
    let mut v = observation();
    let mut tree = durable("tree_preserved");
    tree["evidence"]["reference"] = json!("-p");
    tree["evidence"]["resolver_command"] = git(&["cat-file", "-e", "-p^{commit}"]);
    set(&mut v, tree);
    refused(
        "check",
        &v.to_string(),
        "checks[5].evidence.reference",
        "option-like",
    );
}
