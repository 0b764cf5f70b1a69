//! `cairn build-loop --dry-run`: the written exit criterion as a worker reads it
//! before the first line of code — the baseline with the catalogue check each
//! command answers, the catalogue checks it leaves uncovered and why, the named
//! scanners it has not configured, each previewed unit's functional checks and
//! scenario smoke, and the branch preview. Runs nothing, writes nothing.

use std::path::Path;

use cairn::machines::build_loop::{self, ExitCriterion};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use crate::output;

/// Prints the dry run. `unit` is the one unit named or implied (its checks are also
/// printed at the top level, as before); `units` every previewed unit.
pub(super) fn print(
    path: &Path,
    unit: Option<String>,
    repository: &ExitCriterion,
    units: &[(String, ExitCriterion)],
) {
    let baseline: Vec<Baseline> = repository
        .baseline
        .iter()
        .map(|c| Baseline {
            command: c.clone(),
            catalogue_check: json!(build_loop::split_words(c)
                .ok()
                .as_deref()
                .and_then(build_loop::catalogue_check)),
        })
        .collect();
    let map = build_loop::check_map(&repository.baseline);
    let one = match (&unit, units) {
        (Some(_), [(_, c)]) => Some(c),
        _ => None,
    };
    output::json(&DryRun {
        dry_run: true,
        record: json!(path),
        unit,
        baseline,
        uncovered: json!(map.uncovered),
        unconfigured_scanners: json!(map.unconfigured_scanners),
        units: units
            .iter()
            .map(|(name, c)| UnitPreview {
                unit: name.clone(),
                functional_checks: json!(c.functional_checks),
                scenario_smoke: json!(c.scenario_smoke),
            })
            .collect(),
        preview: json!(repository.preview),
        functional_checks: one.map(|c| json!(c.functional_checks)),
        scenario_smoke: one.map(|c| json!(c.scenario_smoke)),
    });
}

/// `build-loop --dry-run`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DryRun {
    /// Always `true`.
    pub dry_run: bool,
    /// The run record read.
    pub record: Value,
    /// The one unit named or implied.
    pub unit: Option<String>,
    /// The baseline, each command with the catalogue check it answers.
    pub baseline: Vec<Baseline>,
    /// The catalogue checks the baseline leaves uncovered, and why.
    pub uncovered: Value,
    /// The named scanners it has not configured.
    pub unconfigured_scanners: Value,
    /// Every previewed unit's checks.
    pub units: Vec<UnitPreview>,
    /// The branch preview.
    pub preview: Value,
    /// The one unit's functional checks (when one unit is previewed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functional_checks: Option<Value>,
    /// The one unit's scenario smoke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario_smoke: Option<Value>,
}

/// One baseline command.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Baseline {
    pub command: String,
    /// The catalogue check it answers (null: none).
    pub catalogue_check: Value,
}

/// One previewed unit.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UnitPreview {
    pub unit: String,
    pub functional_checks: Value,
    pub scenario_smoke: Value,
}
