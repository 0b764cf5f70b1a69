//! `mark-merged --from ship/<SHORT_ID>` as given/when/then on the pure machine:
//! every field the ship run's fact contradicts is named, with the git readings'
//! own refusals beside them.

use serde_json::json;

use super::super::super::command::Command;
use super::super::super::event::Event;
use super::super::super::gates;
use super::super::super::state::Thread;
use super::super::super::Saga;
use crate::evidence::{AbsPath, CommandRun, FullCommit, RefName};
use crate::reads::{Fact, Read};
use crate::testing::Scenario;
use crate::{Context, Timestamp};

const REPO: &str = "/srv/widgets";
const BRANCH: &str = "work/u1";

fn at() -> Timestamp {
    Timestamp::parse("2026-12-03T09:00:00Z").expect("a fixed time parses")
}

fn sha(c: char) -> FullCommit {
    FullCommit::parse(&c.to_string().repeat(40)).expect("40 hex digits")
}

/// A thread at `work` whose unit U1 (branch `work/u1`) holds the turn.
fn turn_taken() -> Vec<Event> {
    let thread: Thread = serde_json::from_value(json!({
        "saga_id": "issue-42", "kind": "issue", "lifecycle_phase": "work",
        "phase_status": "in_progress", "status": "active", "phase": 1,
        "destination": null, "issue_ref": null, "plan_path": null, "branch": null,
        "head_sha": null, "next_step": null, "rounds_seen": [], "checks_run": [],
        "work_session_paths": [], "files_modified": [], "pr_refs": [],
        "review_paths": [], "gate_verdicts": [], "ticks": 1,
        "qa": {"post_merge_cycles": 0, "extension_taken": false, "last_outcome": null}
    }))
    .expect("a thread");
    vec![
        Event::TickSaved {
            thread: Box::new(thread),
        },
        // PR-ready passed: the turn follows it.
        serde_json::from_value(json!({"type": "ready-for-pr",
            "reviewed_sha": "2".repeat(40), "commits_since_review": 0}))
        .expect("a PR-ready event"),
        Event::TurnTaken {
            unit: "U1".into(),
            branch: BRANCH.into(),
            merge_worktree: "/srv/merge-wt".into(),
            holder: "h".into(),
            reviewed: Some(sha('2')),
            repository: None,
        },
    ]
}

/// A git reading that exited `exit`, with no output.
fn run(argv: Vec<String>, exit: i32) -> CommandRun {
    CommandRun {
        argv,
        env: None,
        exit_status: Some(exit),
        stdout: String::new(),
        stderr: String::new(),
        started_at: at(),
        finished_at: at(),
    }
}

/// `mark-merged` of `tip` onto `main`, both readings exiting `exit`, naming `ship/abc`.
fn mark_merged(tip: &FullCommit, exit: i32) -> Command {
    let runs = gates::merged_plan(REPO, None, None, tip, "main")
        .into_iter()
        .map(|argv| run(argv, exit))
        .collect();
    Command::MarkMerged {
        unit: "U1".into(),
        holder: "h".into(),
        merged_tip: tip.clone(),
        repo: AbsPath::parse(REPO).expect("absolute"),
        target: RefName::parse("main").expect("not option-like"),
        runs,
        from: Some("ship/abc".into()),
        repository: vec![],
    }
}

/// The context of a decision that read `ship/abc` at version 9 as `fact`.
fn read(state: &str, fact: Option<Fact>) -> Context {
    Context {
        now: at(),
        fresh_ids: vec![],
        session: None,
        reads: vec![Read {
            stream: "ship/abc".into(),
            version: 9,
            state: state.into(),
            fact,
            rules: None,
        }],
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn ship(repo: &str, branch: &str, target: &str, merged: Option<FullCommit>) -> Option<Fact> {
    Some(Fact::Ship {
        repo: repo.into(),
        branch: branch.into(),
        target: target.into(),
        merged,
        acts_for: Some("saga/issue-42".into()),
        merging: false,
        shipped: None,
    })
}

#[test]
fn the_ship_run_that_merged_this_tip_backs_the_merge() {
    let ctx = read("merged", ship(REPO, BRANCH, "main", Some(sha('a'))));
    Scenario::<Saga>::given(turn_taken())
        .when(mark_merged(&sha('a'), 0), &ctx)
        .into_result()
        .expect("the journal agrees and git shows it");
}

#[test]
fn every_field_the_ship_run_contradicts_is_named() {
    let ctx = read(
        "merged",
        ship("/srv/other", "work/u9", "trunk", Some(sha('b'))),
    );
    let rejection = Scenario::<Saga>::given(turn_taken())
        .when(mark_merged(&sha('a'), 0), &ctx)
        .then_rejected_with(&["journal-agrees"; 4]);
    let fields: Vec<_> = rejection
        .violations
        .iter()
        .map(|v| v.field.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(fields, ["from", "repo", "target", "merged_tip"]);
}

#[test]
fn a_merge_read_from_git_carries_the_commit_pr_ready_passed_for() {
    // The branch is in the tip and the tip on the target, but the reviewed commit
    // is not in the tip (found: a turn taken on a copy of `main`, then `main` as
    // the tip, credited a merge of nothing reviewed).
    let tip = sha('a');
    let plan = gates::merged_plan(REPO, Some(BRANCH), Some(&sha('2')), &tip, "main");
    assert_eq!(plan.len(), 3, "branch, reviewed commit, target: {plan:?}");
    let merged = |exits: [i32; 3]| Command::MarkMerged {
        unit: "U1".into(),
        holder: "h".into(),
        merged_tip: tip.clone(),
        repo: AbsPath::parse(REPO).expect("absolute"),
        target: RefName::parse("main").expect("not option-like"),
        runs: plan
            .iter()
            .zip(exits)
            .map(|(a, e)| run(a.clone(), e))
            .collect(),
        from: None,
        repository: vec![],
    };
    let ctx = read("idle", None);
    Scenario::<Saga>::given(turn_taken())
        .when(merged([0, 1, 0]), &ctx)
        .then_rejected_with(&["merged-observed"]);
    // A plan that leaves the reviewed commit out is not cairn's reading.
    let mut short = merged([0, 0, 0]);
    if let Command::MarkMerged { runs, .. } = &mut short {
        runs.remove(1);
    }
    Scenario::<Saga>::given(turn_taken())
        .when(short, &ctx)
        .then_rejected_with(&["evidence-bound"]);
    let shown = merged([0, 0, 0]);
    let Command::MarkMerged { runs, .. } = shown.clone() else {
        unreachable!("built as a MarkMerged just above")
    };
    Scenario::<Saga>::given(turn_taken())
        .when(shown, &ctx)
        .then([Event::UnitMerged {
            unit: "U1".into(),
            merged_tip: tip,
            runs,
        }]);
}

#[test]
fn a_ship_run_that_has_not_merged_backs_nothing_even_where_git_shows_it() {
    let ctx = read("merge-ready", ship(REPO, BRANCH, "main", None));
    Scenario::<Saga>::given(turn_taken())
        .when(mark_merged(&sha('a'), 0), &ctx)
        .then_rejected_with(&["journal-agrees"]);
}

#[test]
fn an_absent_or_foreign_stream_backs_nothing_and_git_still_speaks() {
    // Not read at all (the engine found nothing): the journal holds no such run.
    let none = read("idle", None);
    let absent = Context {
        reads: vec![],
        ..none.clone()
    };
    for ctx in [&none, &absent] {
        Scenario::<Saga>::given(turn_taken())
            .when(mark_merged(&sha('a'), 1), ctx)
            .then_rejected_with(&["journal-agrees", "merged-observed"]);
    }
    let mut foreign = mark_merged(&sha('a'), 0);
    if let Command::MarkMerged { from, .. } = &mut foreign {
        *from = Some("park/ep-1".into());
    }
    let ctx = read("merged", ship(REPO, BRANCH, "main", Some(sha('a'))));
    Scenario::<Saga>::given(turn_taken())
        .when(foreign, &ctx)
        .then_rejected_with(&["journal-agrees"]);
}

/// `release` with a landed commit and the reading behind it (or none).
fn release(landed: Option<gates::LandedReading>, from: Option<&str>) -> Command {
    Command::Release {
        release: gates::Release {
            destination: "merge".into(),
            reviewed_head: None,
            landed_commit: Some(sha('a')),
            absence_reason: None,
        },
        landed: landed.map(Box::new),
        from: from.map(str::to_owned),
    }
}

fn reading(argv: Vec<String>, exit: i32) -> gates::LandedReading {
    gates::LandedReading {
        repo: AbsPath::parse(REPO).expect("absolute"),
        target: RefName::parse("main").expect("not option-like"),
        run: run(argv, exit),
        repository: vec![],
    }
}

#[test]
fn a_landed_commit_stands_only_on_cairns_reading_and_its_ship_run() {
    let none = read("idle", None);
    let planned = || gates::ancestor_plan(REPO, sha('a').as_str(), "main");
    let predicates = |command: Command, ctx: &Context| {
        let rejection = Scenario::<Saga>::given(turn_taken())
            .when(command, ctx)
            .into_result()
            .expect_err("refused");
        rejection
            .violations
            .iter()
            .map(|v| v.predicate.clone())
            .collect::<Vec<_>>()
    };
    // No merge through the turn (it is held) and no review: the upstream gates
    // come first, then what git shows.
    let upstream = ["merged-first", "review-gate", "pr-ready"];
    let with = |extra: &[&str]| {
        upstream
            .iter()
            .chain(extra)
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        predicates(release(None, None), &none),
        with(&["landed-observed"])
    );
    assert_eq!(
        predicates(release(Some(reading(vec!["git".into()], 0)), None), &none),
        with(&["evidence-bound"])
    );
    for exit in [1, 128] {
        assert_eq!(
            predicates(release(Some(reading(planned(), exit)), None), &none),
            with(&["landed-observed"])
        );
    }
    assert_eq!(
        predicates(release(Some(reading(planned(), 0)), None), &none),
        with(&[])
    );
    // The ship run merged another commit: the journal disagrees.
    let ship_b = read("merged", ship(REPO, BRANCH, "main", Some(sha('b'))));
    assert_eq!(
        predicates(
            release(Some(reading(planned(), 0)), Some("ship/abc")),
            &ship_b
        ),
        with(&["journal-agrees"])
    );
}

#[test]
fn a_branch_is_one_units_work() {
    let mut events = turn_taken();
    events.push(Event::UnitMerged {
        unit: "U1".into(),
        merged_tip: sha('a'),
        runs: vec![],
    });
    let take = |unit: &str, branch: &str| Command::TakeTurn {
        unit: unit.into(),
        branch: RefName::parse(branch).expect("not option-like"),
        merge_worktree: AbsPath::parse("/srv/merge-wt").expect("absolute"),
        holder: "h2".into(),
    };
    let ctx = read("idle", None);
    // Before PR-ready, no unit takes the turn (the merge turn follows PR-ready).
    Scenario::<Saga>::given(events[..1].to_vec())
        .when(take("U2", "work/u2"), &ctx)
        .then_rejected_with(&["pr-ready-first"]);
    Scenario::<Saga>::given(events.clone())
        .when(take("U2", BRANCH), &ctx)
        .then_rejected_with(&["branch-taken"]);
    Scenario::<Saga>::given(events)
        .when(take("U2", "work/u2"), &ctx)
        .into_result()
        .expect("its own branch");
}

#[test]
fn only_the_thread_a_ship_run_acts_for_credits_its_merge() {
    for (acts_for, why) in [
        (Some("saga/issue-43"), "another thread"),
        (None, "no thread"),
    ] {
        let mut fact = ship(REPO, BRANCH, "main", Some(sha('a')));
        if let Some(Fact::Ship { acts_for: a, .. }) = &mut fact {
            *a = acts_for.map(str::to_owned);
        }
        let rejection = Scenario::<Saga>::given(turn_taken())
            .when(mark_merged(&sha('a'), 0), &read("merged", fact))
            .then_rejected_with(&["journal-agrees"]);
        assert_eq!(
            rejection.violations[0].field.as_deref(),
            Some("from"),
            "{why}"
        );
    }
}

#[test]
fn a_branch_git_cannot_read_is_never_taken() {
    for bad in [
        "b\u{1}\u{1b}[31m",
        "work/s1^0",
        "work/s1@{0}",
        "work//s1",
        "work/s1/",
        " work/s1",
    ] {
        let take = Command::TakeTurn {
            unit: "U2".into(),
            branch: RefName::parse(bad).expect("not option-like"),
            merge_worktree: AbsPath::parse("/srv/merge-wt").expect("absolute"),
            holder: "h2".into(),
        };
        let mut events = turn_taken();
        events.pop();
        let rejection = Scenario::<Saga>::given(events)
            .when(take, &read("idle", None))
            .into_result()
            .expect_err(bad);
        assert_eq!(
            rejection.violations[0].field.as_deref(),
            Some("branch"),
            "{bad:?}"
        );
    }
}
