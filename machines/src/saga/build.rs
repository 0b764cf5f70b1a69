//! The build loop (`build_loop.py`'s contract): the written exit criterion read
//! from the run record, commands split into argv without a shell, each result's
//! status (`pass | fail | could-not-execute`), the iteration and its greenness, and
//! the `build-loop` machine that journals each iteration (one stream per unit).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::evidence::is_full_git_id;
use crate::evidence::CommandRun;
use crate::{Context, EdgeSpec, GraphSpec, Machine, Rejection, StateSpec, Timestamp, Violation};

/// The record version this build writes.
pub const RECORD_SCHEMA: &str = "run_record.v1";

/// Splits a command into words the way a POSIX shell would, without running one:
/// whitespace separates, `'…'` is literal, `"…"` honours `\"`, `\\`, `\$` and `` \` ``,
/// a backslash outside quotes escapes the next character. An unterminated quote or a
/// trailing backslash does not split.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = vec![];
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("an unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x);
                            }
                            None => return Err("an unterminated double quote".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("an unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(x) => cur.push(x),
                    None => return Err("a trailing backslash".into()),
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    if words.is_empty() {
        return Err("an empty command".into());
    }
    Ok(words)
}

/// The lens-catalogue check a command answers: the first of `ruff`, `mypy`,
/// `bandit`, `pytest` (→ `pytest-coverage`) that a token's basename equals.
pub fn catalogue_check(argv: &[String]) -> Option<&'static str> {
    let base = |t: &String| t.rsplit('/').next().unwrap_or(t).to_owned();
    [
        ("ruff", "ruff"),
        ("mypy", "mypy"),
        ("bandit", "bandit"),
        ("pytest", "pytest-coverage"),
    ]
    .into_iter()
    .find(|(tool, _)| argv.iter().any(|t| base(t) == *tool))
    .map(|(_, check)| check)
}

/// One named command of the criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    /// Its name.
    pub name: String,
    /// The command string.
    pub command: String,
}

/// The branch preview part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// Declared at admission (`admission.branch_preview`).
    pub declared: bool,
    /// The repository's `branch_preview_command`, if any.
    pub command: Option<String>,
}

/// The written exit criterion of a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitCriterion {
    /// The mechanical baseline.
    pub baseline: Vec<String>,
    /// The plan's functional checks.
    pub functional_checks: Vec<Named>,
    /// The scenario smoke.
    pub scenario_smoke: Vec<Named>,
    /// The preview.
    pub preview: Preview,
}

fn named(v: Option<&Value>, field: &str) -> Result<Vec<Named>, String> {
    let Some(v) = v else { return Ok(vec![]) };
    let Some(a) = v.as_array() else {
        return Err(format!("`{field}` is not a list"));
    };
    a.iter()
        .enumerate()
        .map(|(i, e)| match e {
            Value::String(s) => Ok(Named {
                name: s.clone(),
                command: s.clone(),
            }),
            Value::Object(o) => match (
                o.get("name").and_then(Value::as_str),
                o.get("command").and_then(Value::as_str),
            ) {
                (Some(n), Some(c)) => Ok(Named {
                    name: n.to_owned(),
                    command: c.to_owned(),
                }),
                _ => Err(format!(
                    "`{field}[{i}]` is not {{name, command}} or a string"
                )),
            },
            _ => Err(format!(
                "`{field}[{i}]` is not {{name, command}} or a string"
            )),
        })
        .collect()
}

/// Reads the unit's criterion from the run record (and the profile's preview command).
pub fn criterion(
    record: &Value,
    unit: &Value,
    preview_command: Option<String>,
) -> Result<ExitCriterion, String> {
    let baseline = match record.pointer("/run_configuration/mechanical_tool_baseline/value") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| {
                c.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| "`mechanical_tool_baseline.value` holds a non-string".to_owned())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`mechanical_tool_baseline.value` is not a list".into()),
    };
    let declared = match record.pointer("/admission/branch_preview") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`admission.branch_preview` is not a boolean".into()),
    };
    Ok(ExitCriterion {
        baseline,
        functional_checks: named(unit.get("functional_checks"), "functional_checks")?,
        scenario_smoke: named(unit.get("scenario_smoke"), "scenario_smoke")?,
        preview: Preview {
            declared,
            command: if declared { preview_command } else { None },
        },
    })
}

/// Which part of the criterion a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Part {
    Baseline,
    FunctionalChecks,
    ScenarioSmoke,
    Preview,
}

/// One check as cairn ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// Its part.
    pub part: Part,
    /// Its name.
    pub name: String,
    /// The command string.
    pub command: String,
    /// The argv it split into (none: it did not split).
    pub argv: Option<Vec<String>>,
    /// The run (none: not started).
    pub run: Option<CommandRun>,
    /// Killed at the timeout.
    pub timed_out: bool,
}

/// `pass` (exit 0), `fail` (ran, non-zero), `could-not-execute` (missing program,
/// timeout, a command that does not split) — never a pass, never a defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum CheckStatus {
    Pass,
    Fail,
    CouldNotExecute,
}

/// The status a run implies.
pub fn status(c: &CheckRun) -> CheckStatus {
    match (&c.argv, &c.run) {
        (None, _) | (_, None) => CheckStatus::CouldNotExecute,
        (_, Some(_)) if c.timed_out => CheckStatus::CouldNotExecute,
        (_, Some(r)) => match r.exit_status {
            None => CheckStatus::CouldNotExecute,
            Some(0) => CheckStatus::Pass,
            Some(_) => CheckStatus::Fail,
        },
    }
}

fn seconds(r: &CommandRun) -> f64 {
    let d = r.finished_at.instant() - r.started_at.instant();
    (d.num_milliseconds() as f64 / 1000.0 * 1000.0).round() / 1000.0
}

fn result_json(c: &CheckRun) -> Value {
    let st = status(c);
    let last_line = |s: &str| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let detail = match (&c.argv, &c.run) {
        (None, _) => "the command does not split into words".to_owned(),
        (_, Some(_)) if c.timed_out => "timed out".to_owned(),
        (_, Some(r)) if r.exit_status.is_none() => last_line(&r.stderr),
        (_, Some(r)) => {
            let out = last_line(&r.stdout);
            if out.is_empty() {
                last_line(&r.stderr)
            } else {
                out
            }
        }
        (_, None) => "not run".to_owned(),
    };
    json!({
        "name": c.name,
        "command": c.command,
        "catalogue_check": c.argv.as_deref().and_then(catalogue_check),
        "status": st,
        "exit_code": if st == CheckStatus::CouldNotExecute { None } else { c.run.as_ref().and_then(|r| r.exit_status) },
        "duration_seconds": c.run.as_ref().map_or(0.0, seconds),
        "detail": detail,
    })
}

/// The iteration record (the run record's format) and whether it is green.
pub fn iteration(
    n: u32,
    revision: &str,
    started_at: &Timestamp,
    finished_at: &Timestamp,
    crit: &ExitCriterion,
    checks: &[CheckRun],
) -> (Value, bool) {
    let part = |p: Part| {
        checks
            .iter()
            .filter(|c| c.part == p)
            .map(result_json)
            .collect::<Vec<_>>()
    };
    let preview_run = checks.iter().find(|c| c.part == Part::Preview);
    let preview = match (&crit.preview, preview_run) {
        (
            Preview {
                declared: false, ..
            },
            _,
        ) => {
            json!({"declared": false, "status": "no-preview-declared", "command": null, "detail": "none"})
        }
        (
            Preview {
                declared: true,
                command: None,
            },
            _,
        ) => {
            json!({"declared": true, "status": "could-not-execute", "command": null, "detail": "a preview is declared but the repository declares no branch_preview_command"})
        }
        (
            Preview {
                declared: true,
                command: Some(c),
            },
            Some(run),
        ) => {
            let r = result_json(run);
            json!({"declared": true, "status": r["status"], "command": c, "detail": r["detail"]})
        }
        (
            Preview {
                declared: true,
                command: Some(c),
            },
            None,
        ) => {
            json!({"declared": true, "status": "could-not-execute", "command": c, "detail": "not run"})
        }
    };
    let all: Vec<&CheckRun> = checks.iter().filter(|c| c.part != Part::Preview).collect();
    let green = all.iter().all(|c| status(c) == CheckStatus::Pass)
        && matches!(
            preview["status"].as_str(),
            Some("pass" | "no-preview-declared")
        );
    let mut v = json!({
        "iteration": n,
        "revision": revision,
        "started_at": started_at.instant().with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "finished_at": finished_at.instant().with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "green": green,
        "baseline": part(Part::Baseline),
        "functional_checks": part(Part::FunctionalChecks),
        "preview": preview,
        "scenario_smoke": part(Part::ScenarioSmoke),
    });
    if crit.functional_checks.is_empty() {
        v["functional_checks_reason"] = json!("none-prescribed");
    }
    if crit.scenario_smoke.is_empty() {
        v["scenario_smoke_reason"] = json!("none-prescribed");
    }
    (v, green)
}

/// The planned checks of a criterion, in order (the preview only when it has a command).
pub fn planned(crit: &ExitCriterion) -> Vec<(Part, Named)> {
    let mut v: Vec<(Part, Named)> = crit
        .baseline
        .iter()
        .map(|c| {
            (
                Part::Baseline,
                Named {
                    name: c.clone(),
                    command: c.clone(),
                },
            )
        })
        .collect();
    v.extend(
        crit.functional_checks
            .iter()
            .cloned()
            .map(|n| (Part::FunctionalChecks, n)),
    );
    if let (true, Some(c)) = (crit.preview.declared, &crit.preview.command) {
        v.push((
            Part::Preview,
            Named {
                name: "branch-preview".into(),
                command: c.clone(),
            },
        ));
    }
    v.extend(
        crit.scenario_smoke
            .iter()
            .cloned()
            .map(|n| (Part::ScenarioSmoke, n)),
    );
    v
}

/// The `build-loop` machine's name.
pub const NAME: &str = "build-loop";

/// A unit's loop: iterations recorded, and the revision handed to code review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LoopState {
    /// Iterations recorded.
    pub iterations: u32,
    /// The last iteration was green.
    pub green: bool,
    /// The full revision the criterion last passed at.
    pub handed_to_code_review: Option<String>,
}

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    /// One iteration: the criterion and every check as run.
    Iterate {
        unit: String,
        revision: String,
        criterion: ExitCriterion,
        checks: Vec<CheckRun>,
        started_at: Timestamp,
        finished_at: Timestamp,
    },
}

/// Events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum Event {
    /// Not green yet: a loop iteration, not a refusal.
    IterationNotGreen { unit: String, iteration: Value },
    /// Green: the revision goes to code review.
    IterationGreen {
        unit: String,
        iteration: Value,
        handed_to_code_review: String,
    },
}

/// The machine.
pub struct BuildLoop;

impl Machine for BuildLoop {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    type State = LoopState;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> LoopState {
        LoopState::default()
    }

    fn decide(
        state: &LoopState,
        command: &Command,
        _ctx: &Context,
    ) -> Result<Vec<Event>, Rejection> {
        let Command::Iterate {
            unit,
            revision,
            criterion,
            checks,
            started_at,
            finished_at,
        } = command;
        let no = |p: &str, f: &str, m: &str| {
            Err(Rejection::single(
                NAME,
                "iterate",
                Self::state_name(state),
                Violation::new(p, Some(f), m),
            ))
        };
        if !is_full_git_id(revision) || revision.len() != 40 {
            return no("full-revision", "revision", "the full 40-hex HEAD");
        }
        let plan = planned(criterion);
        if plan.len() != checks.len()
            || plan
                .iter()
                .zip(checks)
                .any(|((p, n), c)| *p != c.part || n.command != c.command)
        {
            return no(
                "criterion-complete",
                "checks",
                "every part of the written criterion runs, in order, once",
            );
        }
        let (v, green) = iteration(
            state.iterations + 1,
            revision,
            started_at,
            finished_at,
            criterion,
            checks,
        );
        Ok(vec![if green {
            Event::IterationGreen {
                unit: unit.clone(),
                iteration: v,
                handed_to_code_review: revision.clone(),
            }
        } else {
            Event::IterationNotGreen {
                unit: unit.clone(),
                iteration: v,
            }
        }])
    }

    fn evolve(mut state: LoopState, event: &Event) -> LoopState {
        state.iterations += 1;
        match event {
            Event::IterationGreen {
                handed_to_code_review,
                ..
            } => {
                state.green = true;
                state.handed_to_code_review = Some(handed_to_code_review.clone());
            }
            Event::IterationNotGreen { .. } => state.green = false,
        }
        state
    }

    fn state_name(state: &LoopState) -> &'static str {
        match (state.iterations, state.green) {
            (0, _) => "not-run",
            (_, true) => "green",
            (_, false) => "not-green",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::IterationNotGreen { .. } => "iteration-not-green",
            Event::IterationGreen { .. } => "iteration-green",
        }
    }

    fn verdict(_state: &LoopState, events: &[Event]) -> crate::Verdict {
        super::verdict::build_loop(events)
    }

    fn command_name(_: &Command) -> &'static str {
        "iterate"
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name| StateSpec {
            name,
            terminal: false,
        };
        let mut edges = vec![];
        for from in ["not-run", "green", "not-green"] {
            edges.push(e(from, "iteration-green", "green"));
            edges.push(e(from, "iteration-not-green", "not-green"));
        }
        GraphSpec {
            machine: NAME,
            initial: "not-run",
            states: vec![s("not-run"), s("not-green"), s("green")],
            edges,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_one() {
        assert_eq!(
            split_words("cargo test -p x").unwrap(),
            ["cargo", "test", "-p", "x"]
        );
        assert_eq!(
            split_words(r#"sh -c 'echo "a b"' "c\"d" e\ f"#).unwrap(),
            ["sh", "-c", "echo \"a b\"", "c\"d", "e f"]
        );
        assert!(split_words("echo 'open").is_err());
        assert!(split_words("   ").is_err());
        assert_eq!(
            catalogue_check(&split_words("uv run ruff check .").unwrap()),
            Some("ruff")
        );
        assert_eq!(
            catalogue_check(&split_words("/usr/bin/pytest --cov").unwrap()),
            Some("pytest-coverage")
        );
        assert_eq!(catalogue_check(&split_words("cargo test").unwrap()), None);
    }
}
