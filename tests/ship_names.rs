//! Names a person cannot see, names git refuses, names past git's and the
//! filesystem's limits, and any worktree path but the seed's own are refused by
//! `cairn ship open` (exit 2, naming the field and the rule) before any git runs
//! and before a journal exists (issue 15, finding 5).

use crate::support::git::try_git;
use crate::support::ship_repo::Repo;

/// `open` with `flag` set to `value` is refused naming `field` and `rule`; no git
/// ran (the spy saw nothing) and no journal was written.
fn refused(r: &Repo, flag: &str, value: &str, field: &str, rule: &str) {
    let (code, out) = r.open_with(&[flag, value]);
    assert_eq!(
        (
            code,
            out["error"]["field"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (2, Some(field), Some(rule)),
        "{flag} {value:?}: {out}"
    );
    assert_eq!(
        r.spy().log(),
        Vec::<String>::new(),
        "{flag} {value:?}: git ran"
    );
    assert!(
        !r.journal.path().exists(),
        "{flag} {value:?}: a journal was written"
    );
}

#[test]
fn invisible_control_and_bidi_characters_are_refused() {
    let r = Repo::spied();
    for (flag, value, field) in [
        ("--branch", "worktree-\u{202E}cba", "branch"),
        ("--branch", "worktree-a\u{200B}bc", "branch"),
        ("--branch", "worktree-\u{7}abc", "branch"),
        ("--branch", "worktree-\u{2066}abc\u{2069}", "branch"),
        ("--branch", "worktree-\u{FEFF}abc", "branch"),
        ("--branch", "worktree-\u{A0}abc", "branch"),
        ("--target-branch", "ma\u{200D}in", "target_branch"),
        ("--target-branch", "main\u{200E}", "target_branch"),
        (
            "--expected-basename",
            "consumer\u{202E}-repo",
            "expected_basename",
        ),
        ("--close-step", "echo \u{202E}kcab", "close_step"),
        ("--tiebreaker-4", "ask\nuser", "tiebreaker_4"),
    ] {
        refused(&r, flag, value, field, "invisible-character");
    }
}

/// Every name `git check-ref-format --branch` refuses is refused, with the rule
/// `ref-format` (option-like names keep their own rule), and the names git takes
/// are taken.
#[test]
fn what_git_check_ref_format_refuses_is_refused() {
    let r = Repo::spied();
    let git_takes = |name: &str| {
        try_git(&r.root, &["check-ref-format", "--branch", name])
            .status
            .success()
    };
    for name in [
        "HEAD",
        "a..b",
        "a.lock",
        "a//b",
        "a/.b",
        "a b",
        "x~1",
        "a@{1}",
        "a.",
        "/a",
        "a/",
        "a\\b",
        "a:b",
        "a?b",
        "a*b",
        "a[b",
        ".a",
        "a/b.lock/c",
        "@{-1}",
        "a^b",
    ] {
        assert!(!git_takes(name), "git takes {name:?}");
        refused(&r, "--branch", name, "branch", "ref-format");
        refused(&r, "--target-branch", name, "target_branch", "ref-format");
    }
    refused(&r, "--branch", "@", "branch", "ref-format");
    for name in ["feature/x", "worktree-abc", "café", "a@b"] {
        assert!(git_takes(name), "git refuses {name:?}");
        let r = Repo::new();
        let (code, out) = r.open_with(&["--branch", name]);
        assert_eq!(code, 0, "{name:?}: {out}");
    }
}

#[test]
fn names_past_git_and_filesystem_limits_are_refused() {
    let r = Repo::spied();
    refused(&r, "--branch", &"a".repeat(300), "branch", "length");
    refused(&r, "--branch", &"a".repeat(5000), "branch", "length");
    refused(
        &r,
        "--branch",
        "ab/".repeat(500).trim_end_matches('/'),
        "branch",
        "length",
    );
    refused(
        &r,
        "--target-branch",
        &"m".repeat(300),
        "target_branch",
        "length",
    );
    let deep = format!(
        "{}/{}/.claude/worktrees/abc",
        r.root.display(),
        "d".repeat(5000)
    );
    refused(&r, "--worktree-path", &deep, "worktree_path", "length");
    refused(
        &r,
        "--expected-basename",
        &"c".repeat(300),
        "expected_basename",
        "length",
    );
    // At the limit, a one-component branch is taken.
    let r = Repo::new();
    assert_eq!(r.open_with(&["--branch", &"a".repeat(200)]).0, 0);
}

#[test]
fn the_worktree_path_is_exactly_the_seeds() {
    let r = Repo::spied();
    let root = r.root.display().to_string();
    for path in [
        format!("{root}/.git/worktrees/abc"),
        format!("{root}/.git"),
        format!("{root}/.claude/worktrees/other"),
        format!("{root}/.claude/worktrees/abc/nested"),
        format!("{root}/elsewhere/abc"),
        format!("{root}/sub/.claude/worktrees/abc"),
        "/tmp/.claude/worktrees/abcd".to_owned(),
    ] {
        refused(
            &r,
            "--worktree-path",
            &path,
            "worktree_path",
            "worktree-path",
        );
    }
}

/// A refused `open` names every broken parameter at once, the first of each
/// field in field order (the CLI contract: every violation of an input error),
/// before any git runs and before a journal exists; `--repo` and `--for` with
/// the rest (helper-92: a relative `--repo` hid every other broken field), and
/// the key, the token and the review's detail (helper-93: a bad detail was
/// refused only after the preflight's git ran).
#[test]
fn every_broken_parameter_is_named_at_once() {
    let r = Repo::spied();
    let (code, out) = r.open_with(&[
        "--branch",
        "worktree-\u{202E}cba",
        "--target-branch",
        "ma..in",
        "--close-step",
        " ",
        "--intent-field",
        "tiebreaker",
        "--repo",
        "relative/repo",
        "--for",
        "saga/not a thread",
        "--review-detail",
        "a\nb",
        "--idempotency-key",
        "a b",
        "--fencing-token",
        "x",
    ]);
    assert_eq!(code, 2, "{out}");
    let named: Vec<(&str, &str)> = out["error"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["field"].as_str().unwrap(), v["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        named,
        [
            ("idempotency_key", "key-characters"),
            ("fencing_token", "fencing-token"),
            ("repo", "absolute-path"),
            ("branch", "invisible-character"),
            ("target_branch", "ref-format"),
            ("intent_field", "field-name-resembles"),
            ("close_step", "nonempty-string"),
            ("for", "saga-stream"),
            ("review_detail", "invisible-character"),
        ],
        "{out}"
    );
    assert_eq!(
        (
            out["error"]["field"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (Some("idempotency_key"), Some("key-characters"))
    );
    assert_eq!(r.spy().log(), Vec::<String>::new(), "git ran");
    assert!(!r.journal.path().exists(), "a journal was written");
}
