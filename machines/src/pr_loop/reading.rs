//! A `gh pr view --json
//! state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt`
//! reading, parsed strictly: every enum value anywhere in it is checked (an unknown
//! one is an input error naming its JSON path, never a guess), every check of the
//! rollup is read (not only up to the first failure), and fields that contradict
//! each other fail closed (`contradictory-reading`), so no contradiction reaches the
//! table.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::identity::PrId;
use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::evidence::FullCommit;
use crate::Timestamp;

/// `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum GhState {
    Open,
    Closed,
    Merged,
}

/// `reviewDecision`; `""` and `null` are "no decision" ([`ReviewDecision::None`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewDecision {
    Approved,
    ChangesRequested,
    ReviewRequired,
    #[serde(rename = "")]
    None,
}

/// `mergeable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mergeable {
    Mergeable,
    Conflicting,
    Unknown,
}

/// `mergeStateStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Checks {
    /// Every check succeeded (or was neutral/skipped), or there are none.
    Passing,
    /// At least one still running, none failed.
    Running,
    /// At least one failed.
    Failing,
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
    /// `headRefOid`, when the reading carries it (cairn's own `gh` reading does).
    pub head: Option<FullCommit>,
    /// `url`, when the reading carries it.
    pub url: Option<String>,
    /// `number`, when the reading carries it.
    pub number: Option<u64>,
    /// `baseRefName`: the branch the PR merges into, when the reading carries it
    /// (cairn's own `gh` reading does).
    pub base: Option<String>,
}

/// A reading as `gh` writes it: the type its JSON Schema is derived from
/// (`cairn schema pr classify`); [`parse_reading`] reads the same fields.
#[derive(Debug, Clone, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadingDocument {
    pub state: GhState,
    /// `APPROVED`, `CHANGES_REQUESTED`, `REVIEW_REQUIRED`, `""` or null.
    #[schemars(with = "Option<ReviewDecisionDocument>")]
    pub review_decision: Option<String>,
    pub mergeable: Mergeable,
    pub merge_state_status: MergeStateStatus,
    /// Every check run or status context of the head: each entry is read.
    pub status_check_rollup: Option<Vec<Value>>,
    pub is_draft: bool,
    /// Set exactly when the state is `MERGED`: RFC3339, or `""`/null.
    pub merged_at: Option<String>,
    #[serde(default)]
    pub number: Option<u64>,
    #[serde(default)]
    pub url: Option<String>,
    /// The head commit's full id.
    #[serde(default)]
    pub head_ref_oid: Option<String>,
    /// The branch the PR merges into (`record-merge --target` must name it).
    #[serde(default)]
    pub base_ref_name: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

/// `reviewDecision` as `gh` spells it.
#[derive(Debug, Clone, Copy, schemars::JsonSchema)]
pub enum ReviewDecisionDocument {
    #[serde(rename = "APPROVED")]
    Approved,
    #[serde(rename = "CHANGES_REQUESTED")]
    ChangesRequested,
    #[serde(rename = "REVIEW_REQUIRED")]
    ReviewRequired,
    #[serde(rename = "")]
    None,
}

/// The fields a reading must have, and those it may have.
pub const REQUIRED: [&str; 7] = [
    "state",
    "reviewDecision",
    "mergeable",
    "mergeStateStatus",
    "statusCheckRollup",
    "isDraft",
    "mergedAt",
];
const OPTIONAL: [&str; 5] = ["number", "url", "headRefOid", "title", "baseRefName"];

fn enum_field<T: serde::de::DeserializeOwned + serde::Serialize>(
    map: &Map<String, Value>,
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

fn decision(map: &Map<String, Value>, path: &str) -> Result<ReviewDecision> {
    match map.get("reviewDecision") {
        None => Err(InputError::new(
            at(path, "reviewDecision"),
            "required",
            "missing field `reviewDecision`",
        )),
        Some(Value::Null) => Ok(ReviewDecision::None),
        Some(Value::String(s)) => match s.as_str() {
            "" => Ok(ReviewDecision::None),
            "APPROVED" => Ok(ReviewDecision::Approved),
            "CHANGES_REQUESTED" => Ok(ReviewDecision::ChangesRequested),
            "REVIEW_REQUIRED" => Ok(ReviewDecision::ReviewRequired),
            other => Err(InputError::new(
                at(path, "reviewDecision"),
                "pr-enum",
                format!("unknown review decision `{other}`, expected `APPROVED`, `CHANGES_REQUESTED`, `REVIEW_REQUIRED`, `\"\"` or null"),
            )),
        },
        Some(_) => Err(InputError::new(
            at(path, "reviewDecision"),
            "pr-enum",
            "expected a string or null",
        )),
    }
}

/// Parses a `gh pr view --json …` reading strictly.
pub fn parse_reading(v: &Value, path: &str) -> Result<Reading> {
    let map = wire::object(v, path, &REQUIRED, &OPTIONAL)?;
    let state: GhState = enum_field(map, "state", path)?;
    let review_decision = decision(map, path)?;
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
    let head = match map.get("headRefOid") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            FullCommit::parse(s)
                .map_err(|e| InputError::new(at(path, "headRefOid"), "full-commit", e.message))?,
        ),
        Some(_) => {
            return Err(InputError::new(
                at(path, "headRefOid"),
                "type",
                "expected a full commit id",
            ))
        }
    };
    let base = match map.get("baseRefName") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            crate::evidence::names::branch(s).map_err(|(rule, message)| {
                InputError::new(at(path, "baseRefName"), rule, message)
            })?;
            Some(s.clone())
        }
        Some(_) => {
            return Err(InputError::new(
                at(path, "baseRefName"),
                "type",
                "expected a branch name",
            ))
        }
    };
    let url = match map.get("url") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(PrId::parse(s, &at(path, "url"))?.url()),
        Some(_) => return Err(InputError::new(at(path, "url"), "type", "expected a URL")),
    };
    let number =
        match map.get("number") {
            None | Some(Value::Null) => None,
            Some(n) => Some(n.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                InputError::new(at(path, "number"), "type", "expected a PR number")
            })?),
        };
    if let Some(t) = map.get("title") {
        if !t.is_string() && !t.is_null() {
            return Err(InputError::new(
                at(path, "title"),
                "type",
                "expected a string",
            ));
        }
    }
    let reading = Reading {
        state,
        review_decision,
        mergeable,
        merge_state_status,
        checks,
        is_draft,
        merged_at,
        head,
        url,
        number,
        base,
    };
    contradictions(&reading, path)?;
    Ok(reading)
}

/// Fields that cannot hold together: refused (fail closed), never resolved by a guess.
fn contradictions(r: &Reading, path: &str) -> Result<()> {
    let contradictory = |key: &str, message: &str| {
        Err(InputError::new(
            at(path, key),
            "contradictory-reading",
            message.to_owned(),
        ))
    };
    match (r.state, &r.merged_at) {
        (GhState::Merged, None) => {
            return Err(InputError::new(
                at(path, "mergedAt"),
                "merged-without-time",
                "state MERGED with no mergedAt is a contradictory reading",
            ))
        }
        (GhState::Open | GhState::Closed, Some(_)) => {
            return contradictory(
                "mergedAt",
                "mergedAt is set on a PR whose state is not MERGED",
            )
        }
        _ => {}
    }
    if r.state == GhState::Open && r.merge_state_status == MergeStateStatus::Draft && !r.is_draft {
        return contradictory(
            "mergeStateStatus",
            "mergeStateStatus DRAFT on a PR whose isDraft is false",
        );
    }
    Ok(())
}

const CONCLUSIONS_PASS: [&str; 3] = ["SUCCESS", "NEUTRAL", "SKIPPED"];
const CONCLUSIONS_FAIL: [&str; 6] = [
    "FAILURE",
    "TIMED_OUT",
    "CANCELLED",
    "ACTION_REQUIRED",
    "STARTUP_FAILURE",
    "STALE",
];
const STATUSES_RUNNING: [&str; 5] = ["QUEUED", "IN_PROGRESS", "PENDING", "WAITING", "REQUESTED"];

/// Folds `statusCheckRollup` (CheckRun and StatusContext entries, as gh prints them).
/// Every entry is checked before anything is folded: an unknown value after a
/// failing check is still an error.
pub fn rollup(v: &Value, path: &str) -> Result<Checks> {
    let items = match v {
        Value::Null => return Ok(Checks::Passing),
        Value::Array(items) => items,
        _ => return Err(InputError::new(path, "type", "expected an array of checks")),
    };
    let mut seen = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        seen.push(entry(item, &idx(path, i))?);
    }
    Ok(if seen.contains(&Checks::Failing) {
        Checks::Failing
    } else if seen.contains(&Checks::Running) {
        Checks::Running
    } else {
        Checks::Passing
    })
}

/// One rollup entry, checked whole.
fn entry(item: &Value, p: &str) -> Result<Checks> {
    let obj = item
        .as_object()
        .ok_or_else(|| InputError::new(p, "type", "expected a check object"))?;
    let text = |k: &str| -> Result<&str> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(InputError::new(at(p, k), "type", "expected a string")),
        }
    };
    let unknown = |k: &str, what: &str, v: &str| {
        Err(InputError::new(
            at(p, k),
            "pr-enum",
            format!("unknown {what} `{v}`"),
        ))
    };
    match text("__typename")? {
        "StatusContext" => match text("state")? {
            "SUCCESS" => Ok(Checks::Passing),
            "PENDING" | "EXPECTED" => Ok(Checks::Running),
            "FAILURE" | "ERROR" => Ok(Checks::Failing),
            other => unknown("state", "status state", other),
        },
        "CheckRun" => {
            let conclusion = text("conclusion")?;
            let known = conclusion.is_empty()
                || CONCLUSIONS_PASS.contains(&conclusion)
                || CONCLUSIONS_FAIL.contains(&conclusion);
            if !known {
                return unknown("conclusion", "conclusion", conclusion);
            }
            match text("status")? {
                "COMPLETED" if CONCLUSIONS_PASS.contains(&conclusion) => Ok(Checks::Passing),
                "COMPLETED" if CONCLUSIONS_FAIL.contains(&conclusion) => Ok(Checks::Failing),
                "COMPLETED" => unknown("conclusion", "conclusion", conclusion),
                s if STATUSES_RUNNING.contains(&s) => {
                    if conclusion.is_empty() {
                        Ok(Checks::Running)
                    } else {
                        Err(InputError::new(
                            at(p, "conclusion"),
                            "contradictory-reading",
                            format!("a check still `{s}` has the conclusion `{conclusion}`"),
                        ))
                    }
                }
                other => unknown("status", "check status", other),
            }
        }
        "" if !obj.contains_key("__typename") => Err(InputError::new(
            at(p, "__typename"),
            "required",
            "missing field `__typename` (CheckRun or StatusContext)",
        )),
        other => unknown("__typename", "check type", other),
    }
}
