//! The work-node judge's failures as tables (issue #16): no criterion, a changed
//! or unwatched tree, a user's challenge. Children of `rules_tests`: its fixtures.

use super::*;

/// The failures a judged verification of `node` reports for these observations.
fn judged(node: usize, seen: &Observed<'_>) -> Vec<String> {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses");
    let commit = FullCommit::parse(&seen.tree.expected_commit).expect("a full commit");
    let v = judge(&spec.nodes[node], seen, "s1", false, &commit, at);
    assert_eq!(v.passed, v.failures.is_empty());
    v.failures
}

#[test]
fn the_judge_fails_a_changed_or_unwatched_tree_and_no_criterion() {
    let clean = tree(LANE, C_LANE, C_LANE, "");
    let seen = |runs: &'static [CriterionRun], after: Option<&'static TreeReading>| Observed {
        tree: Box::leak(Box::new(clean.clone())),
        after,
        runs,
        checklist: &[],
        used_challenges: &[],
    };
    let leak = |r: CriterionRun| -> &'static [CriterionRun] { Box::leak(Box::new([r])) };
    let after = |head: &str, status: &str| -> Option<&'static TreeReading> {
        Some(Box::leak(Box::new(tree(LANE, C_LANE, head, status))))
    };
    let watched = |changed: &[&str], ignored: &str| {
        let changed: Vec<String> = changed.iter().map(|s| (*s).to_owned()).collect();
        Some(TreeWatch {
            method: "inotify".into(),
            ignored: super::super::ignore_plan(LANE, &changed)
                .map(|argv| ran(argv, if ignored.is_empty() { 1 } else { 0 }, ignored)),
            changed,
            overflow: false,
        })
    };
    let ok = after(C_LANE, "");
    assert_eq!(
        judged(0, &seen(leak(c1(quiet())), ok)),
        Vec::<String>::new()
    );
    assert_eq!(
        judged(
            0,
            &seen(
                leak(c1(watched(
                    &["target"],
                    "target
"
                ))),
                ok
            )
        ),
        Vec::<String>::new(),
        "an ignored path does not count"
    );
    for (runs, after, failure) in [
        (leak(c1(None)), ok, "C1: tree-unwatched"),
        (
            leak(c1(watched(&["src/a.rs"], ""))),
            ok,
            "C1: tree-changed (src/a.rs)",
        ),
        (
            leak(c1(watched(
                &["src/a.rs", "target"],
                "target
",
            ))),
            ok,
            "C1: tree-changed (src/a.rs)",
        ),
        (
            leak(c1(Some(TreeWatch {
                method: "inotify".into(),
                changed: vec![],
                overflow: true,
                ignored: None,
            }))),
            ok,
            "C1: tree-unwatched",
        ),
        (leak(c1(quiet())), None, "tree-unwatched"),
        (
            leak(c1(quiet())),
            after(C_LATER, ""),
            "tree-changed: after the criteria, HEAD is",
        ),
        (
            leak(c1(quiet())),
            after(
                C_LANE,
                "?? leftover
",
            ),
            "tree-changed: after the criteria, the tree has",
        ),
    ] {
        let failures = judged(0, &seen(runs, after));
        assert!(
            failures.iter().any(|f| f.starts_with(failure)),
            "{failure}: {failures:?}"
        );
    }
    // A composite with no criterion is never green.
    let epic = "title: t
description: d
intent: i
work:
  - id: epic
    task: t
    work:
      - {id: leaf, task: t, acceptance: [{id: A, statement: s, evidence: {kind: user, prompt: p}}]}
";
    let spec = validate(epic).spec.expect("valid");
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed time parses");
    let commit = FullCommit::parse(C_LANE).expect("a full commit");
    let v = judge(&spec.nodes[0], &seen(&[], ok), "s1", false, &commit, at);
    assert!(!v.passed);
    assert!(
        v.failures[0].starts_with("no-execution-evidence"),
        "{:?}",
        v.failures
    );
}

#[test]
fn a_user_criterion_passes_only_on_the_terminals_confirmation_of_a_fresh_challenge() {
    let spec = validate(SPEC).spec.expect("the fixture spec is valid");
    let c2 = &spec.nodes[1].acceptance[0];
    let run = |challenge: Option<&str>, channel: Option<&str>, words: Option<&str>| CriterionRun {
        criterion_id: "C2".into(),
        contract_hash: contract_hash(c2),
        run: None,
        timed_out: false,
        containment: None,
        confirmation: words.map(str::to_owned),
        challenge: challenge.map(str::to_owned),
        channel: channel.map(str::to_owned),
        watch: None,
    };
    let tty = Some(CONTROLLING_TERMINAL);
    let quoted = format!("I confirm {CHALLENGE}");
    let clean = tree(LANE, C_LANE, C_LANE, "");
    let used = [CHALLENGE.to_owned()];
    for (r, used, failure) in [
        (
            run(None, tty, Some("yes")),
            &[][..],
            "user-confirmation-missing",
        ),
        (
            run(Some("short"), tty, Some("I confirm short")),
            &[],
            "user-confirmation-missing",
        ),
        (
            run(Some(CHALLENGE), None, Some(&quoted)),
            &[],
            "user-confirmation-unavailable",
        ),
        (
            run(Some(CHALLENGE), Some("command-line"), Some(&quoted)),
            &[],
            "user-confirmation-unavailable",
        ),
        (
            run(Some(CHALLENGE), tty, Some("yes")),
            &[],
            "user-confirmation-mismatch",
        ),
        (
            run(Some(CHALLENGE), tty, None),
            &[],
            "user-confirmation-missing",
        ),
        (
            run(Some(CHALLENGE), tty, Some(&quoted)),
            &used[..],
            "challenge-reused",
        ),
    ] {
        let runs = [r];
        let failures = judged(
            1,
            &Observed {
                tree: &clean,
                after: Some(&clean),
                runs: &runs,
                checklist: &[],
                used_challenges: used,
            },
        );
        assert_eq!(failures, [format!("C2: {failure}")], "{failure}");
    }
    let runs = [run(
        Some(CHALLENGE),
        tty,
        Some(&format!(
            "{quoted}
"
        )),
    )];
    let failures = judged(
        1,
        &Observed {
            tree: &clean,
            after: Some(&clean),
            runs: &runs,
            checklist: &[],
            used_challenges: &[],
        },
    );
    assert!(failures.is_empty(), "{failures:?}");
}
