//! `cairn saga qa`: one QA cycle after merge, its scenarios parsed from
//! `NAME=RESULT` flags and the allowance's limits read from the run record when
//! one is named.

use cairn::machines::evidence::wire;
use cairn::machines::saga::{
    Command, QaLimits, Saga, Scenario, ScenarioResult, QA_ESCALATED, QA_STANDARD,
};
use serde_json::{json, Value};

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

/// The post-merge allowance's limits from a run record's run configuration
/// (`standard_cycle_allowance`, `escalated_cycle_allowance`; each `{value, …}` or a
/// bare value; absent or null → 3 and 2). A value that is not a count is refused.
fn limits(path: &str) -> Result<QaLimits, Failure> {
    let text = crate::input::read_file(std::path::Path::new(path), "record", "readable-record")?;
    let record = wire::parse_document(&text).map_err(|e| {
        input(
            "record",
            e.rule,
            &format!("`{path}`: {}: {}", e.field, e.message),
        )
    })?;
    let read = |key: &str, default: u32| -> Result<u32, Failure> {
        let v = match record.pointer(&format!("/run_configuration/{key}")) {
            Some(Value::Object(o)) if o.contains_key("value") => o.get("value"),
            other => other,
        };
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(n) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    input(
                        &format!("run_configuration.{key}"),
                        "cycle-allowance",
                        &format!("`{n}` is not a count of cycles"),
                    )
                }),
        }
    };
    Ok(QaLimits {
        standard: read("standard_cycle_allowance", QA_STANDARD)?,
        escalated: read("escalated_cycle_allowance", QA_ESCALATED)?,
    })
}

/// `saga qa --scenario NAME=RESULT… [--extension] [--record PATH]`.
pub(super) fn qa(
    rec: &Recorder,
    saga_id: &str,
    scenarios: &[String],
    extension: bool,
    record: Option<&str>,
) -> Result<Done, Failure> {
    let s = stream(saga_id)?;
    let scenarios = scenarios
        .iter()
        .map(|x| scenario(x))
        .collect::<Result<Vec<_>, _>>()?;
    let limits = record.map(limits).transpose()?;
    let command = Command::Qa {
        scenarios,
        extension,
        limits,
    };
    let done = rec.record(Step::<Saga>::new(&s, &command))?;
    let t = done
        .state
        .thread()
        .ok_or_else(|| input("saga_id", "thread-exists", "no thread"))?;
    output::json(&super::view::QaView {
        saga_id: json!(t.saga_id),
        outcome: json!(t.qa.last_outcome),
        lifecycle_phase: json!(t.lifecycle_phase),
        post_merge_cycles: json!(t.qa.post_merge_cycles),
        allowed_cycles: json!(t.qa.allowed()),
        extension_taken: json!(t.qa.extension_taken),
        events: done.names(),
    });
    // A cycle that is not a PASS is recorded and not green yet.
    Ok(Done::Recorded(done.outcome))
}
