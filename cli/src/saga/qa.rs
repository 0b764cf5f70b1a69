//! `cairn saga qa`: one QA cycle after merge, its scenarios parsed from
//! `NAME=RESULT` flags.

use cairn::machines::saga::{Command, Saga, Scenario, ScenarioResult};
use serde_json::json;

use super::stream;
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Recorder, Step};

fn scenario(s: &str) -> Result<Scenario, Failure> {
    let (name, result) = s.split_once('=').ok_or_else(|| {
        input(
            "scenario",
            "name-equals-result",
            &format!("`{s}`: expected NAME=RESULT"),
        )
    })?;
    let (result, cause) = match result.split_once(':') {
        Some(("blocked", cause)) => (ScenarioResult::Blocked, Some(cause.to_owned())),
        _ => (
            match result {
                "passed" => ScenarioResult::Passed,
                "failed" => ScenarioResult::Failed,
                "not-run" => ScenarioResult::NotRun,
                "blocked" => ScenarioResult::Blocked,
                other => {
                    return Err(input(
                        "scenario",
                        "scenario-result",
                        &format!("`{other}`: passed | failed | not-run | blocked:CAUSE"),
                    ))
                }
            },
            None,
        ),
    };
    Ok(Scenario {
        name: name.to_owned(),
        result,
        cause,
        evidence: None,
    })
}

/// `saga qa --scenario NAME=RESULT… [--extension]`.
pub(super) fn qa(
    rec: &Recorder,
    saga_id: &str,
    scenarios: &[String],
    extension: bool,
) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    let scenarios = scenarios
        .iter()
        .map(|x| scenario(x))
        .collect::<Result<Vec<_>, _>>()?;
    let command = Command::Qa {
        scenarios,
        extension,
    };
    let done = rec.record(Step::<Saga>::new(&s, &command))?;
    let t = done
        .state
        .thread()
        .ok_or_else(|| input("saga_id", "thread-exists", "no thread"))?;
    output::json(&json!({
        "saga_id": t.saga_id,
        "outcome": t.qa.last_outcome,
        "lifecycle_phase": t.lifecycle_phase,
        "post_merge_cycles": t.qa.post_merge_cycles,
        "allowed_cycles": t.qa.allowed(),
        "extension_taken": t.qa.extension_taken,
        "events": done.names(),
    }));
    // A cycle that is not a PASS is recorded and not green yet.
    Ok(Done::Recorded(done.outcome))
}
