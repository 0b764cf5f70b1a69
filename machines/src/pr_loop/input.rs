//! The `observe` / `classify` input document: the PR, cairn's `gh pr view`
//! reading, freshness, the destination and the failure's shape; and its pure
//! classification into one row of the table.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::classify::{self, Classification, Destination, Freshness};
use super::escalation::Tiers;
use crate::evidence::wire::InputError;
use crate::evidence::CommandRun;
use crate::evidence::{is_full_git_id, is_http_url};

/// What a failure row's failure looks like (only depth-shaped failures escalate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureShape {
    Depth,
    Breadth,
    Flaky,
    Environmental,
}

/// The `observe` / `classify` input document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveInput {
    /// The PR's URL.
    pub pr: String,
    /// The `gh pr view --json …` reading.
    pub reading: Value,
    #[serde(default)]
    pub reviewed_sha: Option<String>,
    #[serde(default)]
    pub commits_since_review: Option<u64>,
    /// How cairn counted `commits_since_review` itself (`--repo`), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness_observation: Option<CommandRun>,
    #[serde(default)]
    pub unresolved_threads: Option<u64>,
    pub destination: Destination,
    #[serde(default)]
    pub failure_shape: Option<FailureShape>,
    #[serde(default)]
    pub tiers: Option<Tiers>,
}

/// The stream instance of a PR URL: the URL without its scheme.
pub fn stream_instance(pr: &str) -> Option<String> {
    if !is_http_url(pr) {
        return None;
    }
    let rest = pr.split_once("://")?.1.trim_end_matches('/');
    Some(rest.to_owned())
}

/// Classifies an observe input (pure).
pub fn classify_input(input: &ObserveInput) -> Result<Classification, InputError> {
    if stream_instance(&input.pr).is_none() {
        return Err(InputError::new(
            "pr",
            "pr-url",
            "expected the PR's http(s) URL",
        ));
    }
    if let Some(sha) = &input.reviewed_sha {
        if !is_full_git_id(sha) {
            return Err(InputError::new(
                "reviewed_sha",
                "full-head",
                "expected a full 40/64-hex commit id",
            ));
        }
    }
    if input.commits_since_review.is_some() && input.reviewed_sha.is_none() {
        return Err(InputError::new(
            "reviewed_sha",
            "required",
            "commits_since_review counts commits since a reviewed_sha: name it",
        ));
    }
    let reading = classify::parse_reading(&input.reading, "reading")?;
    let freshness = Freshness {
        commits_since_review: input.commits_since_review,
        unresolved_threads: input.unresolved_threads.unwrap_or(0),
    };
    classify::classify(&reading, &freshness, input.destination, &input.pr)
}
