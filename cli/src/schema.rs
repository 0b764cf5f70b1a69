//! `cairn schema <verb…>`: the JSON Schemas of a verb's stdin document and of its
//! stdout (success and error), generated from the Rust types with schemars — never
//! written by hand. The stdin schema also names every violation of a refused
//! document at once ([`violations`]).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::Value;

use cairn::machines::park::{bind, document as park_doc, fold, gate, prepare, receipt};
use cairn::machines::pr_loop::ObserveInput;
use cairn::machines::ship::report::{Phase1Report, PreMergeReport, RefineReport};

use crate::failure::{input, Done, ErrorDocument, Failure, Violation};
use crate::output;

/// The schema of `T`, as a root schema (2020-12 dialect, definitions under `$defs`).
fn of<T: JsonSchema>() -> Schema {
    SchemaGenerator::default().into_root_schema_for::<T>()
}

/// `cairn graph`'s JSON: the graph as data (`--format json`, the default) or an
/// XState machine config (`--format xstate`); `dot` and `mermaid` print text.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema only: the verb prints the two types themselves
enum GraphOutput {
    Graph(cairn::GraphSpec),
    Xstate(cairn::machines::render::XstateConfig),
}

/// The stdin document a verb reads, if it reads one.
pub fn stdin(verb: &str) -> Option<Schema> {
    Some(match verb {
        "park prepare-attempt" => of::<park_doc::PrepareDocument>(),
        "park evaluate" | "park check" => of::<park_doc::ObservationDocument>(),
        "park validate-receipt" => of::<park_doc::ReceiptDocument>(),
        "park confirm-readback" => of::<receipt::ReadbackInput>(),
        "park bind-repository" => of::<bind::BindInput>(),
        "park resume-gate" => of::<park_doc::ResumeGateDocument>(),
        "pr classify" | "pr observe" => of::<ObserveInput>(),
        "ship verify" => of::<Phase1Report>(),
        "ship refine" => of::<RefineReport>(),
        "ship pre-merge" => of::<PreMergeReport>(),
        _ => return None,
    })
}

/// What a verb prints on success (`None`: the verb prints text — a completion
/// script, a man page).
pub fn success(verb: &str) -> Option<Schema> {
    if let Some(group) = verb.strip_prefix("ship ") {
        return Some(match group {
            "classify" => of::<crate::ship::view::Classified>(),
            _ => of::<crate::ship::view::ShipView>(),
        });
    }
    if let Some(group) = verb.strip_prefix("pr ") {
        return Some(match group {
            "classify" => of::<crate::pr::Classified>(),
            "fetch" => of::<crate::pr::Fetched>(),
            _ => of::<crate::pr::PrView>(),
        });
    }
    if let Some(group) = verb.strip_prefix("work ") {
        use crate::work::view;
        return Some(match group {
            "validate" => of::<view::Validated>(),
            "ready" => of::<view::ReadyView>(),
            "status" => of::<view::StatusView>(),
            _ => of::<view::NodeView>(),
        });
    }
    if let Some(group) = verb.strip_prefix("saga ") {
        use crate::saga::view;
        return Some(match group {
            "save" => of::<view::Saved>(),
            "restore" => of::<view::Restored>(),
            "scan" => of::<view::Scanned>(),
            "show" => of::<view::ThreadView>(),
            "qa" => of::<view::QaView>(),
            _ => of::<view::GatesView>(),
        });
    }
    if verb.starts_with("claim ") {
        return Some(of::<crate::claim::Readback>());
    }
    Some(match verb {
        "machines" => of::<crate::verbs::Machines>(),
        "exec" => of::<crate::exec::Executed>(),
        "journal log" => of::<crate::journal::LogPage>(),
        "journal show" => of::<crate::journal::Shown>(),
        "journal verify" => of::<cairn::journal::VerifyReport>(),
        "journal anchor" => of::<crate::trust::AnchorView>(),
        "journal key" => of::<crate::trust::KeyView>(),
        "journal copy" => of::<crate::trust::CopyView>(),
        "build-loop" => of::<crate::build::BuildLoopOutput>(),
        "park observe-vcs" => of::<VcsChecks>(),
        "schema" => of::<SchemaOutput>(),
        "park prepare-attempt" => of::<prepare::Prepared>(),
        "park evaluate" | "park check" => of::<fold::Evaluation>(),
        "park validate-receipt" => of::<park_doc::Valid>(),
        "park confirm-readback" => of::<receipt::Readback>(),
        "park bind-repository" => of::<bind::BindOutput>(),
        "park resume-gate" => of::<gate::Gate>(),
        "graph" => of::<GraphOutput>(),
        "state" => of::<cairn::StateView>(),
        "journal audit" => of::<cairn::AuditReport>(),
        "journal streams" => of::<crate::journal::Streams>(),
        "journal links" => of::<crate::links::Links>(),
        _ => return None,
    })
}

/// Every verb (its subcommand path), in the order `--help` lists them.
pub fn verbs() -> Vec<String> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .collect();
        if subs.is_empty() && !path.is_empty() {
            out.push(path.to_owned());
        }
        for sub in subs {
            let p = if path.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{path} {}", sub.get_name())
            };
            walk(sub, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(&crate::args::command(), "", &mut out);
    out
}

/// `park observe-vcs`: the version-control checks of a park observation, as
/// `park check` reads them (schema only: the checks are printed in the helper's
/// bytes).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct VcsChecks {
    checks: Vec<park_doc::CheckDocument>,
}

/// What `cairn schema` prints: one verb's schemas, or every verb.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
enum SchemaOutput {
    One(VerbSchemas),
    List { verbs: Vec<Listed> },
}

/// One verb in `cairn schema`'s list: which schemas it has.
#[derive(Debug, Serialize, JsonSchema)]
struct Listed {
    verb: String,
    stdin: bool,
    success: bool,
}

/// One verb's schemas.
#[derive(Debug, Serialize, JsonSchema)]
struct VerbSchemas {
    verb: String,
    /// The stdin document's schema, or null when the verb reads none.
    #[schemars(with = "Option<Value>")]
    stdin: Option<Schema>,
    stdout: Stdout,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Stdout {
    /// The success answer's schema, or null when the verb prints text.
    #[schemars(with = "Option<Value>")]
    success: Option<Schema>,
    /// The JSON error every verb prints when it fails.
    #[schemars(with = "Value")]
    error: Schema,
}

/// Runs `cairn schema [VERB…]`: one verb's schemas, or the list of verbs.
pub fn run(words: &[String]) -> Result<Done, Failure> {
    let all = verbs();
    if words.is_empty() {
        let verbs = all
            .iter()
            .map(|v| Listed {
                verb: v.clone(),
                stdin: stdin(v).is_some(),
                success: success(v).is_some(),
            })
            .collect();
        output::json(&SchemaOutput::List { verbs });
        return Ok(Done::Ok);
    }
    let verb = words.join(" ");
    if !all.contains(&verb) {
        return Err(crate::suggest::with(
            input(
                "verb",
                "known-verb",
                &format!("`{verb}` is not a verb: `cairn schema` lists them"),
            ),
            crate::suggest::nearest(&verb, all.iter().map(String::as_str)),
        ));
    }
    output::json(&SchemaOutput::One(VerbSchemas {
        stdin: stdin(&verb),
        stdout: Stdout {
            success: success(&verb),
            error: of::<ErrorDocument>(),
        },
        verb,
    }));
    Ok(Done::Ok)
}

/// Every violation of `document` against `verb`'s stdin schema, as input
/// violations (field a JSON path like the parsers', rule, message). Empty when the
/// verb has no schema or the document is not JSON.
pub fn violations(verb: &str, document: &str) -> Vec<Violation> {
    let Some(schema) = stdin(verb) else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_str::<Value>(document) else {
        return Vec::new();
    };
    let Ok(validator) = jsonschema::validator_for(schema.as_value()) else {
        return Vec::new();
    };
    validator
        .iter_errors(&doc)
        .flat_map(|e| violation(&e))
        .collect()
}

/// One validator error as input violations (`required` names each missing field).
fn violation(e: &jsonschema::ValidationError<'_>) -> Vec<Violation> {
    use jsonschema::error::ValidationErrorKind as K;
    let at = path_of(e.instance_path().as_str());
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    let here = if at.is_empty() {
        "$".to_owned()
    } else {
        at.clone()
    };
    let v = |field: String, rule: &str, message: String| Violation {
        field,
        rule: rule.to_owned(),
        message,
    };
    match e.kind() {
        K::Required { property } => {
            let key = property.as_str().unwrap_or_default();
            vec![v(join(key), "required", format!("missing field `{key}`"))]
        }
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|key| v(join(key), "unknown-field", format!("unknown field `{key}`")))
            .collect(),
        K::Type { .. } => vec![v(here, "type", e.to_string())],
        // A value outside an enum is a `type` error, as the parsers name it.
        K::Enum { .. } | K::Constant { .. } => vec![v(here, "type", e.to_string())],
        K::AnyOf { .. } | K::OneOfNotValid { .. } => vec![v(
            here,
            "type",
            "matches none of the shapes this field may have".to_owned(),
        )],
        _ => vec![v(here, "schema", e.to_string())],
    }
}

/// A JSON pointer (`/checks/0/name`) as the parsers write a path (`checks[0].name`).
fn path_of(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_read_as_the_parsers_paths() {
        assert_eq!(path_of(""), "");
        assert_eq!(
            path_of("/checks/3/evidence/status"),
            "checks[3].evidence.status"
        );
        assert_eq!(path_of("/a~1b/0/0"), "a/b[0][0]");
    }
}
