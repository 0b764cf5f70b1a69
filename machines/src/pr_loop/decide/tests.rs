//! The record-merge and dispose rules as given/when/then tables on the pure
//! machine: a merge only on cairn's own evidence of the confirmed head, every
//! failed predicate of a disposition listed.

use super::super::classify::{Action, Checks, Classification, PrState};
use super::super::command::{Command, Disposition, MergeEvidence};
use super::super::event::{Event, MergeVia};
use super::super::input::{FreshnessRecord, ReadingSource};
use super::super::plan;
use super::super::PrLoop;
use crate::evidence::{fresh, AbsPath, CommandRun, FullCommit};
use crate::testing::Scenario;
use crate::{Context, Timestamp};

const PR: &str = "https://github.com/o/r/pull/7";
const REPO: &str = "/srv/r";

fn at() -> Timestamp {
    Timestamp::parse("2026-11-30T04:00:00Z").expect("a fixed time parses")
}

fn ctx() -> Context {
    Context {
        now: at(),
        fresh_ids: vec![uuid::Uuid::nil()],
        session: None,
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

fn sha(c: char) -> FullCommit {
    FullCommit::parse(&c.to_string().repeat(40)).expect("40 hex digits")
}

fn run(argv: Vec<String>, exit_status: Option<i32>, stdout: &str) -> CommandRun {
    CommandRun {
        argv,
        env: None,
        exit_status,
        stdout: stdout.to_owned(),
        stderr: String::new(),
        started_at: at(),
        finished_at: at(),
    }
}

/// Offered on cairn's fresh observation of `a…a`, and confirmed.
/// A loop whose merge of head `a` the operator confirmed, on cairn's gh reading.
fn confirmed() -> Vec<Event> {
    confirmed_from(ReadingSource::Gh)
}

fn confirmed_from(source: ReadingSource) -> Vec<Event> {
    vec![
        Event::Observed {
            pr: PR.into(),
            classification: Classification {
                state: PrState::ApprovedFresh,
                action: Action::OfferMerge,
                checks: Checks::Passing,
                merge_offer: true,
                request_review: false,
                next_step: "offer to merge".into(),
            },
            at: at(),
            source: Some(source),
            base: Some("main".into()),
            freshness: Some(Box::new(FreshnessRecord {
                repo: AbsPath::parse(REPO).expect("absolute"),
                reviewed_sha: sha('a'),
                result: fresh::Freshness::Fresh,
            })),
            tiers: None,
            saga_rounds_seen: None,
            thread: None,
        },
        Event::MergeOffered,
        Event::MergeConfirmed {
            operator: "alice".into(),
        },
    ]
}

fn git(target: &str, head: char, exit: i32) -> Command {
    Command::RecordMerge {
        merged_at: None,
        evidence: Some(Box::new(MergeEvidence::Git {
            repo: AbsPath::parse(REPO).expect("absolute"),
            target: plan::TargetBranch::parse(target).expect("a branch name"),
            run: run(plan::merge_plan(REPO, &sha(head), target), Some(exit), ""),
        })),
    }
}

fn gh(head: char) -> Command {
    let reading = serde_json::json!({
        "state": "MERGED", "reviewDecision": "APPROVED", "mergeable": "UNKNOWN",
        "mergeStateStatus": "UNKNOWN", "statusCheckRollup": [], "isDraft": false,
        "mergedAt": "2026-11-30T05:00:00Z", "headRefOid": head.to_string().repeat(40)
    });
    Command::RecordMerge {
        merged_at: None,
        evidence: Some(Box::new(MergeEvidence::Gh {
            run: run(plan::gh_view(PR), Some(0), &reading.to_string()),
        })),
    }
}

#[test]
fn a_merge_is_recorded_only_on_cairns_evidence_of_the_confirmed_head() {
    // A base only a reading on stdin named is the caller's word: no merge is read
    // on it from git.
    Scenario::<PrLoop>::given(confirmed_from(ReadingSource::Stdin))
        .when(git("main", 'a', 0), &ctx())
        .then_rejected_with(&["merge-target"]);
    // Read in another repository than the one the head was observed fresh in.
    let other = "/srv/other-clone";
    let elsewhere = Command::RecordMerge {
        merged_at: None,
        evidence: Some(Box::new(MergeEvidence::Git {
            repo: AbsPath::parse(other).expect("absolute"),
            target: plan::TargetBranch::parse("main").expect("a branch name"),
            run: run(plan::merge_plan(other, &sha('a'), "main"), Some(0), ""),
        })),
    };
    Scenario::<PrLoop>::given(confirmed())
        .when(elsewhere, &ctx())
        .then_rejected_with(&["merge-repo"]);
    let ok = Scenario::<PrLoop>::given(confirmed()).when(git("main", 'a', 0), &ctx());
    ok.then([Event::MergedByLoop {
        merged_at: None,
        via: Some(MergeVia::Git {
            target: plan::TargetBranch::parse("main").expect("a branch name"),
            head: sha('a'),
        }),
    }]);
    Scenario::<PrLoop>::given(confirmed())
        .when(gh('a'), &ctx())
        .then([Event::MergedByLoop {
            merged_at: Some(Timestamp::parse("2026-11-30T05:00:00Z").expect("a time")),
            via: Some(MergeVia::Gh),
        }]);
    // Not a branch a merge lands on: the evidence cannot name it.
    assert_eq!(
        plan::TargetBranch::parse("HEAD").map_err(|e| e.rule),
        Err("target-branch")
    );
    let refused: [(Command, &str); 5] = [
        (
            Command::RecordMerge {
                merged_at: Some(at()),
                evidence: None,
            },
            "merge-observed",
        ),
        (git("main", 'a', 1), "merge-observed"),
        (git("main", 'a', 128), "merge-observed"),
        // The run checked another head than the one reviewed and confirmed.
        (git("main", 'b', 0), "merge-observed"),
        (gh('b'), "merged-head"),
    ];
    for (command, predicate) in refused {
        Scenario::<PrLoop>::given(confirmed())
            .when(command, &ctx())
            .then_rejected_with(&[predicate]);
    }
    // Offered but not confirmed: nothing is recorded, whatever the evidence.
    let offered = confirmed()[..2].to_vec();
    Scenario::<PrLoop>::given(offered)
        .when(git("main", 'a', 0), &ctx())
        .then_rejected_with(&["merge-confirmed"]);
}

#[test]
fn a_disposition_lists_every_failed_predicate() {
    let dispose = |disposition, reason: &str, operator: &str| Command::Dispose {
        disposition,
        reason: reason.into(),
        operator: operator.into(),
    };
    Scenario::<PrLoop>::given_no_events()
        .when(dispose(Disposition::Paused, " ", ""), &ctx())
        .then_rejected_with(&["pr-observed", "reason-named", "operator-named"]);
    let paused = Scenario::<PrLoop>::given(confirmed())
        .when(dispose(Disposition::Paused, "upstream", "carol"), &ctx())
        .then([Event::Paused {
            reason: "upstream".into(),
            operator: "carol".into(),
        }]);
    let mut events = confirmed();
    events.push(Event::Paused {
        reason: "upstream".into(),
        operator: "carol".into(),
    });
    assert!(matches!(paused, super::super::State::Paused { .. }));
    Scenario::<PrLoop>::given(events.clone())
        .when(dispose(Disposition::Paused, "again", "carol"), &ctx())
        .then_rejected_with(&["not-paused"]);
    Scenario::<PrLoop>::given(events)
        .when(
            dispose(Disposition::Abandoned, "superseded", "carol"),
            &ctx(),
        )
        .then([Event::Abandoned {
            reason: "superseded".into(),
            operator: "carol".into(),
        }]);
}
