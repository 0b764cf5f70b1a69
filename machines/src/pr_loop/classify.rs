//! The PR-state classifier: a `gh pr view --json
//! state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt`
//! reading (plus review freshness and the destination) → exactly one of nine states.
//!
//! Total and exclusive by construction: every row's guard includes the negation of
//! every earlier row, so at most one guard holds, and the last rows cover what is
//! left; a reading the table cannot place (a missing field, an unknown enum value,
//! a contradiction) is a typed input error, never a guess. `mergedAt` set ⇒ `merged`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::Timestamp;

/// The nine PR states, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrState {
    Draft,
    AwaitReview,
    ChangesRequested,
    PendingOrFailingChecks,
    Conflicting,
    ApprovedStale,
    ApprovedFresh,
    Merged,
    Closed,
}

impl PrState {
    pub const ALL: [PrState; 9] = [
        PrState::Draft,
        PrState::AwaitReview,
        PrState::ChangesRequested,
        PrState::PendingOrFailingChecks,
        PrState::Conflicting,
        PrState::ApprovedStale,
        PrState::ApprovedFresh,
        PrState::Merged,
        PrState::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PrState::Draft => "draft",
            PrState::AwaitReview => "await-review",
            PrState::ChangesRequested => "changes-requested",
            PrState::PendingOrFailingChecks => "pending-or-failing-checks",
            PrState::Conflicting => "conflicting",
            PrState::ApprovedStale => "approved-stale",
            PrState::ApprovedFresh => "approved-fresh",
            PrState::Merged => "merged",
            PrState::Closed => "closed",
        }
    }

    /// True for the rows that start a new round (re-enter the build loop).
    pub fn starts_round(self, checks: Checks) -> bool {
        match self {
            PrState::ChangesRequested | PrState::Conflicting => true,
            PrState::PendingOrFailingChecks => checks == Checks::Failing,
            _ => false,
        }
    }
}

/// `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum GhState {
    Open,
    Closed,
    Merged,
}

/// `reviewDecision` (`""` and `null` are "no decision").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewDecision {
    Approved,
    ChangesRequested,
    ReviewRequired,
    None,
}

/// `mergeable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mergeable {
    Mergeable,
    Conflicting,
    Unknown,
}

/// `mergeStateStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MergeStateStatus {
    Behind,
    Blocked,
    Clean,
    Dirty,
    Draft,
    HasHooks,
    Unknown,
    Unstable,
}

/// The check rollup, folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checks {
    /// Every check succeeded (or was neutral/skipped), or there are none.
    Passing,
    /// At least one still running, none failed.
    Running,
    /// At least one failed.
    Failing,
}

/// Where the work is headed (`admission.destination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Destination {
    PlanOnly,
    Pr,
    Merge,
    NonprodDeploy,
}

impl Destination {
    /// True when the destination includes a merge.
    pub fn includes_merge(self) -> bool {
        matches!(self, Destination::Merge | Destination::NonprodDeploy)
    }
}

/// A parsed reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    pub state: GhState,
    pub review_decision: ReviewDecision,
    pub mergeable: Mergeable,
    pub merge_state_status: MergeStateStatus,
    pub checks: Checks,
    pub is_draft: bool,
    pub merged_at: Option<Timestamp>,
}

/// What classification needs besides the reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Freshness {
    /// Commits since the reviewed SHA (`git rev-list <sha>..HEAD --count`), when known.
    pub commits_since_review: Option<u64>,
    /// Unresolved review threads, when the caller read them.
    pub unresolved_threads: u64,
}

/// What to do in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Offer `gh pr ready` (confirmed); never request review on a draft.
    OfferReady,
    /// Pause: await review.
    AwaitReview,
    /// A new round: re-run phases 2–5 and the gates, re-push, re-request review.
    NewRound,
    /// A new round that fixes failing checks.
    FixRound,
    /// Checks still running: wait; no merge offer.
    Wait,
    /// A new round: rebase, re-run the gates, re-push.
    RebaseRound,
    /// Re-run code review before any merge offer.
    ReReview,
    /// Offer a merge; it happens only after the operator confirms.
    OfferMerge,
    /// Destination `pr`: done, route to QA.
    DoneToQa,
    /// Merged: phase status complete, route to QA; lifecycle phase stays `work`.
    CompleteToQa,
    /// Closed unmerged: ask the operator; record `paused` or `abandoned`.
    AskOperator,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    pub state: PrState,
    pub action: Action,
    pub checks: Checks,
    pub merge_offer: bool,
    pub request_review: bool,
    pub next_step: String,
}

fn enum_field<T: serde::de::DeserializeOwned>(
    map: &serde_json::Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<T> {
    match map.get(key) {
        None => Err(InputError::new(
            at(path, key),
            "required",
            format!("missing field `{key}`"),
        )),
        Some(v) => wire::typed(v.clone(), &at(path, key)).map_err(|e| InputError {
            rule: "pr-enum",
            ..e
        }),
    }
}

/// Parses a `gh pr view --json …` reading strictly.
pub fn parse_reading(v: &Value, path: &str) -> Result<Reading> {
    let keys = [
        "state",
        "reviewDecision",
        "mergeable",
        "mergeStateStatus",
        "statusCheckRollup",
        "isDraft",
        "mergedAt",
    ];
    let map = wire::object(v, path, &keys, &["number", "url", "headRefOid", "title"])?;
    let state: GhState = enum_field(map, "state", path)?;
    let review_decision = match map.get("reviewDecision") {
        Some(Value::Null) => ReviewDecision::None,
        Some(Value::String(s)) if s.is_empty() => ReviewDecision::None,
        _ => {
            let d: ReviewDecision = enum_field(map, "reviewDecision", path)?;
            if d == ReviewDecision::None {
                return Err(InputError::new(
                    at(path, "reviewDecision"),
                    "pr-enum",
                    "no decision is `\"\"` or null",
                ));
            }
            d
        }
    };
    let mergeable: Mergeable = enum_field(map, "mergeable", path)?;
    let merge_state_status: MergeStateStatus = enum_field(map, "mergeStateStatus", path)?;
    let is_draft: bool = wire::field(map, path, "isDraft")?;
    let merged_at = match map.get("mergedAt") {
        Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(
            Timestamp::parse(s)
                .map_err(|e| InputError::new(at(path, "mergedAt"), "timestamp", e.to_string()))?,
        ),
        _ => {
            return Err(InputError::new(
                at(path, "mergedAt"),
                "type",
                "expected an RFC3339 timestamp or null",
            ))
        }
    };
    let checks = rollup(
        map.get("statusCheckRollup").unwrap_or(&Value::Null),
        &at(path, "statusCheckRollup"),
    )?;
    Ok(Reading {
        state,
        review_decision,
        mergeable,
        merge_state_status,
        checks,
        is_draft,
        merged_at,
    })
}

/// Folds `statusCheckRollup` (CheckRun and StatusContext entries, as gh prints them).
pub fn rollup(v: &Value, path: &str) -> Result<Checks> {
    let items = match v {
        Value::Null => return Ok(Checks::Passing),
        Value::Array(items) => items,
        _ => return Err(InputError::new(path, "type", "expected an array of checks")),
    };
    let mut running = false;
    for (i, item) in items.iter().enumerate() {
        let p = idx(path, i);
        let obj = item
            .as_object()
            .ok_or_else(|| InputError::new(&p, "type", "expected a check object"))?;
        let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
        let kind = if obj.contains_key("context") || s("__typename") == "StatusContext" {
            "StatusContext"
        } else {
            "CheckRun"
        };
        if kind == "StatusContext" {
            match s("state") {
                "SUCCESS" => {}
                "PENDING" | "EXPECTED" => running = true,
                "FAILURE" | "ERROR" => return Ok(Checks::Failing),
                other => {
                    return Err(InputError::new(
                        at(&p, "state"),
                        "pr-enum",
                        format!("unknown status state `{other}`"),
                    ))
                }
            }
        } else {
            match s("status") {
                "COMPLETED" => match s("conclusion") {
                    "SUCCESS" | "NEUTRAL" | "SKIPPED" => {}
                    "FAILURE" | "TIMED_OUT" | "CANCELLED" | "ACTION_REQUIRED"
                    | "STARTUP_FAILURE" | "STALE" => return Ok(Checks::Failing),
                    other => {
                        return Err(InputError::new(
                            at(&p, "conclusion"),
                            "pr-enum",
                            format!("unknown conclusion `{other}`"),
                        ))
                    }
                },
                "QUEUED" | "IN_PROGRESS" | "PENDING" | "WAITING" | "REQUESTED" => running = true,
                other => {
                    return Err(InputError::new(
                        at(&p, "status"),
                        "pr-enum",
                        format!("unknown check status `{other}`"),
                    ))
                }
            }
        }
    }
    Ok(if running {
        Checks::Running
    } else {
        Checks::Passing
    })
}

/// Every row's guard, in order; exactly one holds for any reading (see the tests).
pub fn guards(r: &Reading, f: &Freshness) -> [(PrState, bool); 9] {
    let merged = r.merged_at.is_some() || r.state == GhState::Merged;
    let open = r.state == GhState::Open && !merged;
    let draft = open && r.is_draft;
    let await_review = open
        && !draft
        && r.review_decision != ReviewDecision::ChangesRequested
        && f.unresolved_threads == 0
        && matches!(
            r.review_decision,
            ReviewDecision::None | ReviewDecision::ReviewRequired
        );
    let changes = open
        && !draft
        && (r.review_decision == ReviewDecision::ChangesRequested || f.unresolved_threads > 0);
    let approved = open && !draft && !changes && r.review_decision == ReviewDecision::Approved;
    let pending = approved
        && (r.checks != Checks::Passing
            || matches!(
                r.merge_state_status,
                MergeStateStatus::Blocked | MergeStateStatus::Unstable | MergeStateStatus::Unknown
            )
            || r.mergeable == Mergeable::Unknown);
    let conflicting = approved
        && !pending
        && (r.mergeable == Mergeable::Conflicting
            || matches!(
                r.merge_state_status,
                MergeStateStatus::Dirty | MergeStateStatus::Behind
            ));
    let clean = approved && !pending && !conflicting;
    let stale = clean && f.commits_since_review.is_some_and(|n| n > 0);
    let fresh = clean && f.commits_since_review == Some(0);
    let closed = r.state == GhState::Closed && !merged;
    [
        (PrState::Draft, draft),
        (PrState::AwaitReview, await_review),
        (PrState::ChangesRequested, changes),
        (PrState::PendingOrFailingChecks, pending),
        (PrState::Conflicting, conflicting),
        (PrState::ApprovedStale, stale),
        (PrState::ApprovedFresh, fresh),
        (PrState::Merged, merged),
        (PrState::Closed, closed),
    ]
}

/// Classifies a reading: exactly one state, or a typed error.
pub fn classify(
    r: &Reading,
    f: &Freshness,
    destination: Destination,
    pr: &str,
) -> Result<Classification> {
    if r.state == GhState::Merged && r.merged_at.is_none() {
        return Err(InputError::new(
            "reading.mergedAt",
            "merged-without-time",
            "state MERGED with no mergedAt is a contradictory reading",
        ));
    }
    let matched: Vec<PrState> = guards(r, f)
        .iter()
        .filter(|(_, g)| *g)
        .map(|(s, _)| *s)
        .collect();
    let state = match matched.as_slice() {
        [one] => *one,
        [] => {
            // Only an approved, clean PR whose freshness is unknown falls through the table.
            return Err(InputError::new(
                "commits_since_review",
                "review-freshness-unknown",
                "the PR is approved and clean: give reviewed_sha with commits_since_review (or --repo to count them) to tell stale from fresh",
            ));
        }
        many => {
            return Err(InputError::new(
                "reading",
                "ambiguous-reading",
                format!("the table matched {} rows: {:?}", many.len(), many),
            ));
        }
    };
    let (action, merge_offer, request_review, next_step) = match state {
        PrState::Draft => (
            Action::OfferReady,
            false,
            false,
            format!("offer `gh pr ready` for {pr} (confirmed); no review request on a draft"),
        ),
        PrState::AwaitReview => (
            Action::AwaitReview,
            false,
            false,
            format!("await review on {pr}"),
        ),
        PrState::ChangesRequested => (
            Action::NewRound,
            false,
            true,
            "new round: re-run phases 2-5 and the gates, re-push, re-request review".into(),
        ),
        PrState::PendingOrFailingChecks if r.checks == Checks::Failing => (
            Action::FixRound,
            false,
            false,
            "new round: fix the failing checks".into(),
        ),
        PrState::PendingOrFailingChecks => (
            Action::Wait,
            false,
            false,
            "checks running or merge blocked: wait; no merge offer".into(),
        ),
        PrState::Conflicting => (
            Action::RebaseRound,
            false,
            false,
            "new round: rebase, re-run the gates, re-push".into(),
        ),
        PrState::ApprovedStale => (
            Action::ReReview,
            false,
            false,
            "commits since the reviewed SHA: re-run code review before any merge offer".into(),
        ),
        PrState::ApprovedFresh if destination.includes_merge() => (
            Action::OfferMerge,
            true,
            false,
            format!("offer to merge {pr}; merge only on the operator's confirmation"),
        ),
        PrState::ApprovedFresh => (
            Action::DoneToQa,
            false,
            false,
            "destination pr: status done, route to QA".into(),
        ),
        PrState::Merged => (
            Action::CompleteToQa,
            false,
            false,
            "merged: phase status complete, route to QA; lifecycle phase stays work".into(),
        ),
        PrState::Closed => (
            Action::AskOperator,
            false,
            false,
            format!("{pr} is closed unmerged: ask the operator whether to pause or abandon"),
        ),
    };
    Ok(Classification {
        state,
        action,
        checks: r.checks,
        merge_offer,
        request_review,
        next_step,
    })
}
