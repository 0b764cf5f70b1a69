//! The `observe` / `classify` input: the caller's document (the PR, a `gh pr view`
//! reading, the reviewed SHA, the destination, the failure's shape and tier
//! context, the saga thread's rounds) and what cairn observed itself while serving
//! it (its `gh` run, its freshness runs); and their pure classification into one
//! row of the table. The review is fresh only on cairn's own runs: a caller's
//! `commits_since_review` can make it stale, never fresh.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::classify::{self, Classification, Destination, Freshness, Reading, Review};
use super::escalation::{self, Tiers};
use super::identity::PrId;
use super::plan;
use crate::evidence::fresh;
use crate::evidence::wire::{self, InputError};
use crate::evidence::{AbsPath, CommandRun, FullCommit};

/// What a failure row's failure looks like (only depth-shaped failures escalate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureShape {
    Depth,
    Breadth,
    Flaky,
    Environmental,
}

/// The caller's `observe` / `classify` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveInput {
    /// The PR's URL, in any spelling that names it (see `identity`).
    pub pr: String,
    /// The `gh pr view --json …` reading.
    #[schemars(with = "super::reading::ReadingDocument")]
    pub reading: Value,
    #[serde(default)]
    pub reviewed_sha: Option<String>,
    /// The caller's count of commits since the review: above 0 makes it stale;
    /// 0 makes nothing fresh.
    #[serde(default)]
    pub commits_since_review: Option<u64>,
    /// Retired with rules v1 (one `rev-list` run): read from old journals, refused now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub freshness_observation: Option<CommandRun>,
    #[serde(default)]
    pub unresolved_threads: Option<u64>,
    pub destination: Destination,
    #[serde(default)]
    pub failure_shape: Option<FailureShape>,
    #[serde(default)]
    pub tiers: Option<Tiers>,
    /// The saga thread's `rounds_seen`: adopted by a new loop, and equal to the
    /// loop's own on every later observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saga_rounds_seen: Option<Vec<u32>>,
}

/// The document's keys: required, then optional.
const REQUIRED: [&str; 3] = ["pr", "reading", "destination"];
const OPTIONAL: [&str; 6] = [
    "reviewed_sha",
    "commits_since_review",
    "unresolved_threads",
    "failure_shape",
    "tiers",
    "saga_rounds_seen",
];

/// Reads the caller's document: exactly the known keys, typed.
pub fn parse_document(v: Value) -> Result<ObserveInput, InputError> {
    wire::object(&v, "", &REQUIRED, &OPTIONAL)?;
    wire::typed(v, "$")
}

/// cairn's freshness runs: the repository and the runs of
/// `evidence::fresh::plan(repo, reviewed_sha)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreshnessRuns {
    pub repo: AbsPath,
    pub runs: Vec<CommandRun>,
}

/// What cairn observed itself while serving the command (never the caller's word).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observed {
    /// The `gh pr view` run the reading came from (`--pr`); absent: stdin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gh: Option<CommandRun>,
    /// The freshness runs (`--repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<FreshnessRuns>,
}

impl Observed {
    /// True when cairn observed nothing (the field is left out of the command).
    pub fn is_empty(&self) -> bool {
        self.gh.is_none() && self.freshness.is_none()
    }
}

/// Where the reading came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadingSource {
    /// The caller's document.
    Stdin,
    /// cairn's own `gh pr view` run.
    Gh,
}

/// What cairn's freshness runs showed, and for which commit in which repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreshnessRecord {
    pub repo: AbsPath,
    pub reviewed_sha: FullCommit,
    #[serde(flatten)]
    pub result: fresh::Freshness,
}

/// An input placed in the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The PR's canonical URL.
    pub pr: String,
    pub reading: Reading,
    pub classification: Classification,
    pub source: ReadingSource,
    /// cairn's freshness reading, when it made one.
    pub freshness: Option<FreshnessRecord>,
}

/// Classifies an input and what cairn observed for it (pure).
pub fn classify_input(input: &ObserveInput, observed: &Observed) -> Result<Placed, InputError> {
    let id = PrId::parse(&input.pr, "pr")?;
    let pr = id.url();
    if input.freshness_observation.is_some() {
        return Err(InputError::new(
            "freshness_observation",
            "retired",
            "a single `rev-list` run no longer shows freshness: cairn records its own runs",
        ));
    }
    let reviewed = match &input.reviewed_sha {
        None => None,
        Some(sha) => Some(FullCommit::parse(sha).map_err(|_| {
            InputError::new(
                "reviewed_sha",
                "full-head",
                "expected a full 40/64-hex commit id",
            )
        })?),
    };
    if input.commits_since_review.is_some() && reviewed.is_none() {
        return Err(InputError::new(
            "reviewed_sha",
            "required",
            "commits_since_review counts commits since a reviewed_sha: name it",
        ));
    }
    if let Some(rounds) = &input.saga_rounds_seen {
        if let Some((i, why)) = crate::evidence::bad_round(rounds) {
            return Err(InputError::new(
                format!("saga_rounds_seen[{i}]"),
                "rounds-seen",
                why,
            ));
        }
    }
    if let Some(t) = &input.tiers {
        escalation::positions(t)?;
    }
    let reading = classify::parse_reading(&input.reading, "reading")?;
    if reading.url.as_ref().is_some_and(|u| *u != pr) {
        return Err(InputError::new(
            "reading.url",
            "contradictory-reading",
            format!("the reading is of another PR than {pr}"),
        ));
    }
    if reading.number.is_some_and(|n| n != id.number()) {
        return Err(InputError::new(
            "reading.number",
            "contradictory-reading",
            format!("the reading is of another PR than {pr}"),
        ));
    }
    let source = match &observed.gh {
        None => ReadingSource::Stdin,
        Some(run) => {
            if plan::read_gh(&pr, run, "observed.gh")? != input.reading {
                return Err(InputError::new(
                    "reading",
                    "gh-reading",
                    "the reading is not what cairn's `gh pr view` run printed",
                ));
            }
            ReadingSource::Gh
        }
    };
    let freshness = match (&observed.freshness, &reviewed) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(InputError::new(
                "reviewed_sha",
                "required",
                "cairn observes freshness since a reviewed_sha: name it",
            ))
        }
        (Some(f), Some(sha)) => {
            let result = fresh::read(&f.repo, sha, &f.runs);
            if let fresh::Freshness::Unknown { reason } = &result {
                return Err(InputError::new(
                    "reviewed_sha",
                    "freshness-unreadable",
                    format!(
                        "cairn could not read the review's freshness in {}: {reason}",
                        f.repo
                    ),
                ));
            }
            Some(FreshnessRecord {
                repo: f.repo.clone(),
                reviewed_sha: sha.clone(),
                result,
            })
        }
    };
    let review = review(input.commits_since_review, freshness.as_ref(), &reading);
    let f = Freshness {
        review,
        unresolved_threads: input.unresolved_threads.unwrap_or(0),
    };
    let classification = classify::classify(&reading, &f, input.destination, &pr)?;
    Ok(Placed {
        pr,
        reading,
        classification,
        source,
        freshness,
    })
}

/// Stale if anyone shows it stale; fresh only on cairn's runs, and only when the
/// PR's head (where the reading names it) is the reviewed commit.
fn review(caller: Option<u64>, cairn: Option<&FreshnessRecord>, reading: &Reading) -> Review {
    if caller.is_some_and(|n| n > 0) {
        return Review::Stale;
    }
    match cairn {
        None => Review::Unknown,
        Some(f) => match &f.result {
            fresh::Freshness::Fresh
                if reading.head.as_ref().map_or(true, |h| *h == f.reviewed_sha) =>
            {
                Review::Fresh
            }
            fresh::Freshness::Fresh
            | fresh::Freshness::Stale { .. }
            | fresh::Freshness::NotAncestor => Review::Stale,
            fresh::Freshness::Unknown { .. } => Review::Unknown,
        },
    }
}
