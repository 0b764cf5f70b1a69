//! `cairn build-loop --dry-run`: the written exit criterion as a worker reads it
//! before the first line of code — the baseline with the catalogue check each
//! command answers, the catalogue checks it leaves uncovered and why, the named
//! scanners it has not configured, each previewed unit's functional checks and
//! scenario smoke, and the branch preview. Runs nothing, writes nothing.

use std::path::Path;

use cairn::machines::build_loop::{self, ExitCriterion};
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
    let baseline: Vec<Value> = repository
        .baseline
        .iter()
        .map(|c| {
            json!({
                "command": c,
                "catalogue_check": build_loop::split_words(c)
                    .ok()
                    .as_deref()
                    .and_then(build_loop::catalogue_check),
            })
        })
        .collect();
    let map = build_loop::check_map(&repository.baseline);
    let mut out = json!({
        "dry_run": true,
        "record": path,
        "unit": unit,
        "baseline": baseline,
        "uncovered": map.uncovered,
        "unconfigured_scanners": map.unconfigured_scanners,
        "units": units
            .iter()
            .map(|(name, c)| json!({
                "unit": name,
                "functional_checks": c.functional_checks,
                "scenario_smoke": c.scenario_smoke,
            }))
            .collect::<Vec<_>>(),
        "preview": repository.preview,
    });
    if let (Some(_), [(_, c)]) = (&unit, units) {
        out["functional_checks"] = json!(c.functional_checks);
        out["scenario_smoke"] = json!(c.scenario_smoke);
    }
    output::json(&out);
}
