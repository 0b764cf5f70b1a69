//! The written exit criterion: read from the run record, split into argv without a
//! shell, matched against the lens catalogue, and planned in the order it runs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// Reads the unit's criterion from the run record (and the profile's preview command).
pub fn criterion(
    record: &Value,
    unit: &Value,
    preview_command: Option<String>,
) -> Result<ExitCriterion, String> {
    // A run-configuration parameter is `{value, chosen_by, source}`; a bare value
    // (no wrapper) is read as the value, as the reference's build loop reads it.
    let baseline = match record.pointer("/run_configuration/mechanical_tool_baseline") {
        Some(Value::Object(o)) if o.contains_key("value") => o.get("value"),
        other => other,
    };
    let baseline = match baseline {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| {
                c.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| "`mechanical_tool_baseline.value` holds a non-string".to_owned())
            })
            .filter(|c| c.as_ref().map_or(true, |c| !c.trim().is_empty()))
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

/// A list of named commands: a bare string names itself; an object is `{name,
/// command}`, where a missing name is the command (or `check-<n>`) and a missing
/// command is empty — it does not split, so it could not execute: never guessed.
fn named(v: Option<&Value>, field: &str) -> Result<Vec<Named>, String> {
    let a = match v {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(format!("`{field}` is not a list")),
    };
    a.iter()
        .enumerate()
        .map(|(i, e)| {
            let bad = || format!("`{field}[{i}]` is not {{name, command}} or a string");
            match e {
                Value::String(s) => Ok(Named {
                    name: s.clone(),
                    command: s.clone(),
                }),
                Value::Object(o) => {
                    let text = |k: &str| match o.get(k) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) => Ok(Some(s.clone())),
                        Some(_) => Err(bad()),
                    };
                    let command = text("command")?.unwrap_or_default();
                    let name = text("name")?
                        .filter(|n| !n.is_empty())
                        .or_else(|| Some(command.clone()).filter(|c| !c.is_empty()))
                        .unwrap_or_else(|| format!("check-{}", i + 1));
                    Ok(Named { name, command })
                }
                _ => Err(bad()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_one() {
        use super::super::catalogue::catalogue_check;
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

    #[test]
    fn the_criterion_is_read_as_the_reference_reads_it() {
        use serde_json::json;
        let unit = json!({"functional_checks": [{"command": "cargo test"}, {"name": "n"}, "ls"]});
        let wrapped =
            json!({"run_configuration": {"mechanical_tool_baseline": {"value": ["a", " "]}}});
        let bare = json!({"run_configuration": {"mechanical_tool_baseline": ["a"]}});
        for record in [&wrapped, &bare] {
            let c = criterion(record, &unit, None).unwrap();
            assert_eq!(c.baseline, ["a"], "{record}");
            let names: Vec<(&str, &str)> = c
                .functional_checks
                .iter()
                .map(|n| (n.name.as_str(), n.command.as_str()))
                .collect();
            assert_eq!(
                names,
                [("cargo test", "cargo test"), ("n", ""), ("ls", "ls")]
            );
        }
        let none = json!({"run_configuration": {}});
        assert!(criterion(&none, &json!({}), None)
            .unwrap()
            .baseline
            .is_empty());
        let bad = json!({"run_configuration": {"mechanical_tool_baseline": {"value": "a"}}});
        assert!(criterion(&bad, &json!({}), None).is_err());
        assert!(criterion(
            &wrapped,
            &json!({"functional_checks": [{"command": 3}]}),
            None
        )
        .is_err());
    }
}
