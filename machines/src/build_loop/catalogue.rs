//! The lens catalogue the mechanical baseline answers to, as data: which check a
//! command answers (by a token's basename), which catalogue checks a baseline
//! leaves uncovered (each with its purpose and why), and which named scanners it
//! has not configured — what the dry run shows before the first line of code.

use serde::{Deserialize, Serialize};

use super::criterion::split_words;

/// The catalogue's checks for the `python` stack, in the order a command is
/// matched: (check, the tool token that answers it, its purpose).
pub const CATALOGUE: [(&str, &str, &str); 4] = [
    (
        "ruff",
        "ruff",
        "lint and format conformance for Python source",
    ),
    ("mypy", "mypy", "static type checking in strict mode"),
    (
        "bandit",
        "bandit",
        "static security analysis of Python source",
    ),
    (
        "pytest-coverage",
        "pytest",
        "measured statement coverage of the changed code",
    ),
];

/// Scanners the baseline carries "where configured": not catalogue checks, so
/// reported apart from an uncovered check.
pub const NAMED_SCANNERS: [&str; 4] = ["pip-audit", "gitleaks", "detect-secrets", "semgrep"];

/// Why an uncovered catalogue check is uncovered (the reason a particular
/// repository leaves one out belongs in its own reading of the baseline).
pub const UNCOVERED_REASON: &str =
    "no command in the run record's mechanical baseline names this tool";

/// The basenames of a command's words (none when it does not split).
fn tokens(command: &str) -> Vec<String> {
    split_words(command)
        .map(|words| {
            words
                .iter()
                .map(|t| t.rsplit('/').next().unwrap_or(t).to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The lens-catalogue check a command answers: the first of `ruff`, `mypy`,
/// `bandit`, `pytest` (→ `pytest-coverage`) that a token's basename equals.
pub fn catalogue_check(argv: &[String]) -> Option<&'static str> {
    let base = |t: &String| t.rsplit('/').next().unwrap_or(t).to_owned();
    CATALOGUE
        .iter()
        .find(|(_, tool, _)| argv.iter().any(|t| base(t) == *tool))
        .map(|(check, _, _)| *check)
}

/// A catalogue check the baseline does not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uncovered {
    /// The check.
    pub catalogue_check: String,
    /// What it is for.
    pub purpose: String,
    /// Why it is uncovered.
    pub reason: String,
}

/// The baseline against the catalogue: each command's check, the checks no
/// command answers, the named scanners no command runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckMap {
    /// The catalogue checks no baseline command answers, in catalogue order.
    pub uncovered: Vec<Uncovered>,
    /// The named scanners no baseline command runs, in their order.
    pub unconfigured_scanners: Vec<String>,
}

/// Maps `baseline` onto the catalogue.
pub fn check_map(baseline: &[String]) -> CheckMap {
    let answered: Vec<&str> = baseline
        .iter()
        .filter_map(|c| split_words(c).ok().as_deref().and_then(catalogue_check))
        .collect();
    let named: Vec<String> = baseline.iter().flat_map(|c| tokens(c)).collect();
    CheckMap {
        uncovered: CATALOGUE
            .iter()
            .filter(|(check, _, _)| !answered.contains(check))
            .map(|(check, _, purpose)| Uncovered {
                catalogue_check: (*check).to_owned(),
                purpose: (*purpose).to_owned(),
                reason: UNCOVERED_REASON.to_owned(),
            })
            .collect(),
        unconfigured_scanners: NAMED_SCANNERS
            .iter()
            .filter(|s| !named.iter().any(|t| t == *s))
            .map(|s| (*s).to_owned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_names_what_the_baseline_leaves_out() {
        let m = check_map(&[
            "uv run ruff check .".into(),
            "/usr/bin/gitleaks detect".into(),
        ]);
        let uncovered: Vec<&str> = m
            .uncovered
            .iter()
            .map(|u| u.catalogue_check.as_str())
            .collect();
        assert_eq!(uncovered, ["mypy", "bandit", "pytest-coverage"]);
        assert_eq!(
            m.unconfigured_scanners,
            ["pip-audit", "detect-secrets", "semgrep"]
        );
        assert_eq!(check_map(&[]).uncovered.len(), 4);
    }
}
