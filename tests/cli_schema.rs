//! `cairn schema <verb…>`: every verb has a schema answer; the schemas are real
//! JSON Schemas; every example document we ship or test with (examples/park/, the
//! help pages' `echo '…' | cairn …` lines, the test fixtures) is valid against its
//! verb's stdin schema; every snapshot of JSON output is valid against its verb's stdout
//! schemas; and a refused document names every violation at once.

use std::path::Path;

use serde_json::{json, Value};

use crate::cli::run;
use crate::support::{park, park_helper, pr, ship_repo};

/// `cairn schema VERB…` as JSON.
fn schema(verb: &str) -> Value {
    let mut args = vec!["schema"];
    args.extend(verb.split(' '));
    let (code, stdout, stderr) = run(&args, None);
    assert_eq!(code, 0, "{verb}: {stdout}{stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

/// Asserts `doc` is valid against `schema`, naming every error.
fn valid(schema: &Value, doc: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{doc}");
}

fn invalid(schema: &Value, doc: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).expect("compiles");
    assert!(!validator.is_valid(doc), "{what} must be refused: {doc}");
}

fn stdin_schema(verb: &str) -> Value {
    let s = schema(verb);
    assert!(s["stdin"].is_object(), "{verb} reads a document: {s}");
    s["stdin"].clone()
}

#[test]
fn every_verb_has_a_schema_answer_with_the_error_schema() {
    let (code, stdout, _) = run(&["schema"], None);
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    let verbs = list["verbs"].as_array().unwrap();
    assert!(verbs.len() > 60, "{list}");
    let error = schema("state")["stdout"]["error"].clone();
    for v in verbs {
        let verb = v["verb"].as_str().unwrap();
        let s = schema(verb);
        assert_eq!(s["verb"], verb);
        assert_eq!(s["stdout"]["error"], error, "{verb}: one error schema");
        assert_eq!(s["stdin"].is_object(), v["stdin"] == true, "{verb}");
        assert_eq!(
            s["stdout"]["success"].is_object(),
            v["success"] == true,
            "{verb}"
        );
    }
    for verb in [
        "park check",
        "park evaluate",
        "park prepare-attempt",
        "park validate-receipt",
        "park confirm-readback",
        "park bind-repository",
        "park resume-gate",
        "pr classify",
        "pr observe",
        "ship verify",
        "ship refine",
        "ship pre-merge",
    ] {
        assert!(
            verbs
                .iter()
                .any(|v| v["verb"] == verb && v["stdin"] == true),
            "{verb} has a stdin schema"
        );
    }
    let (code, stdout, _) = run(&["schema", "park", "chekc"], None);
    assert_eq!(code, 2);
    assert!(stdout.contains("known-verb"), "{stdout}");
}

#[test]
fn the_error_schema_holds_every_kind_and_the_violations() {
    let error = schema("park check")["stdout"]["error"].clone();
    // schemars lists documented kinds one by one (`const`), the rest as an `enum`.
    let mut kinds: Vec<&str> = Vec::new();
    for k in error["$defs"]["Kind"]["oneOf"]
        .as_array()
        .expect("the kinds")
    {
        kinds.extend(k["const"].as_str());
        kinds.extend(
            k["enum"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
    }
    for kind in [
        "usage",
        "input",
        "rejected",
        "conflict",
        "no-journal",
        "internal",
        "record-version",
    ] {
        assert!(kinds.contains(&kind), "{kind}: {kinds:?}");
    }
    valid(
        &error,
        &json!({"error": {"kind": "input", "message": "m", "field": "f", "rule": "r",
            "violations": [{"field": "f", "rule": "r", "message": "m"}]}}),
        "an input error",
    );
    invalid(
        &error,
        &json!({"error": {"kind": "oops", "message": "m"}}),
        "an unknown kind",
    );
    invalid(
        &error,
        &json!({"error": {"message": "m"}}),
        "an error without a kind",
    );
}

/// A placeholder-filled copy of an examples/park document.
fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/park")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .expect("the example exists")
        .replace("__EPISODE__", park_helper::EPISODE)
        .replace("__INTENT__", park_helper::INTENT)
        .replace("__ATTEMPT__", park_helper::ATTEMPT)
        .replace("\"__BINDING__\"", &park_helper::binding().to_string());
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_shipped_examples_are_valid_against_their_schemas() {
    let check = stdin_schema("park check");
    valid(
        &check,
        &example("observation-preflight.json"),
        "observation-preflight.json",
    );
    valid(
        &check,
        &example("observation-durable.json"),
        "observation-durable.json",
    );
    valid(
        &stdin_schema("park evaluate"),
        &example("observation-durable.json"),
        "evaluate",
    );
    valid(
        &stdin_schema("park validate-receipt"),
        &example("receipt.json"),
        "receipt.json",
    );
    valid(
        &stdin_schema("park bind-repository"),
        &example("bind.json"),
        "bind.json",
    );
}

/// Every `echo '<json>' | cairn VERB` line of every help page, with its verb.
fn help_examples() -> Vec<(String, Value)> {
    let (_, list, _) = run(&["schema"], None);
    let list: Value = serde_json::from_str(&list).unwrap();
    let mut found = Vec::new();
    for v in list["verbs"].as_array().unwrap() {
        let verb = v["verb"].as_str().unwrap();
        let mut args: Vec<&str> = verb.split(' ').collect();
        args.push("--help");
        let (_, help, _) = run(&args, None);
        let mut lines = help.lines();
        while let Some(line) = lines.next() {
            let Some(rest) = line.trim().strip_prefix("echo '") else {
                continue;
            };
            // The quoted document may go on over the next lines.
            let mut text = rest.to_owned();
            while !text.contains("' | cairn ") {
                let more = lines.next().expect("the quote closes");
                text.push('\n');
                text.push_str(more);
            }
            let (doc, tail) = text.split_once("' | cairn ").expect("piped into cairn");
            assert!(tail.starts_with(verb), "{verb}: {text}");
            found.push((verb.to_owned(), serde_json::from_str(doc).expect("JSON")));
        }
    }
    found
}

#[test]
fn the_help_examples_are_valid_against_their_schemas() {
    let examples = help_examples();
    assert!(examples.len() >= 2, "{examples:?}");
    for (verb, doc) in examples {
        // `exec` reads the named machine's own command (any registered machine, a
        // user's included): its shape is that machine's serde form, not a CLI type.
        if verb == "exec" {
            continue;
        }
        // The placeholders of a help line (`ep-…`) are strings: the shape is checked.
        valid(&stdin_schema(&verb), &doc, &format!("`{verb} --help`"));
    }
}

#[test]
fn the_test_fixtures_are_valid_against_their_schemas() {
    let check = stdin_schema("park check");
    for (what, doc) in [
        ("park::observation", park::observation()),
        ("park::preflight", park::preflight()),
        ("park_helper::observation", park_helper::observation()),
        ("park_helper::preflight", park_helper::preflight()),
    ] {
        valid(&check, &doc, what);
    }
    let receipt = stdin_schema("park validate-receipt");
    valid(&receipt, &park::receipt(), "park::receipt");
    valid(
        &receipt,
        &park_helper::receipt(park_helper::ATTEMPT),
        "park_helper::receipt",
    );
    let bind = stdin_schema("park bind-repository");
    valid(&bind, &park::bind_input(), "park::bind_input");
    valid(&bind, &park_helper::bind_input(), "park_helper::bind_input");
    let bytes = park::receipt().to_string();
    valid(
        &stdin_schema("park confirm-readback"),
        &json!({"receipt_bytes": bytes, "comments": [{"id": 7, "body": park::fence(&bytes)}, {"id": "c-8", "body": "hi"}]}),
        "a read-back",
    );
    valid(
        &stdin_schema("park prepare-attempt"),
        &json!({"mode": "park", "anchor_bead": "rsry-1", "episode_id": null, "intent_id": null,
            "prior_receipts": [park::receipt()]}),
        "a prepare-attempt",
    );
    let classify = stdin_schema("pr classify");
    for state in pr::STATES {
        valid(
            &classify,
            &pr::doc(state, "merge"),
            &format!("pr::doc({state})"),
        );
    }
    let head = "0123456789abcdef0123456789abcdef01234567";
    valid(
        &stdin_schema("ship verify"),
        &ship_repo::phase1(head, Some(&["a.txt"])),
        "phase1",
    );
    valid(
        &stdin_schema("ship refine"),
        &ship_repo::refine(head),
        "refine",
    );
    valid(
        &stdin_schema("ship pre-merge"),
        &ship_repo::premerge(),
        "premerge",
    );
}

#[test]
fn the_schemas_refuse_what_the_parsers_refuse() {
    let check = stdin_schema("park check");
    let mut doc = park::observation();
    doc["surprise"] = json!(1);
    invalid(&check, &doc, "an unknown top-level field");
    let mut doc = park::observation();
    doc["protocol_phase"] = json!("later");
    invalid(&check, &doc, "an unknown phase");
    let mut doc = park::observation();
    doc["checks"][0]["observed_at"] = json!("2026-12-01 09:30");
    invalid(&check, &doc, "a timestamp without its offset");
    let mut doc = park::receipt();
    doc["safe_to_close"] = json!(false);
    invalid(
        &stdin_schema("park validate-receipt"),
        &doc,
        "safe_to_close false",
    );
}

/// The JSON a snapshot holds: a transcript's stdout (`exit: N\n--- stdout\n…---
/// stderr`), or the body after an `exit: N` line, or the whole body.
fn snapshot_stdout(text: &str) -> Option<Value> {
    // insta's header is the first `---` … `---` block.
    let body = text.splitn(3, "---\n").nth(2)?;
    let json = match body.split_once("--- stdout\n") {
        Some((_, rest)) => rest.split("--- stderr").next()?,
        None => match body.split_once('\n') {
            Some((first, rest)) if first.starts_with("exit: ") => rest,
            _ => body,
        },
    };
    serde_json::from_str(json.trim()).ok()
}

/// The verb whose stdout each snapshot holds, by its name's prefix (after
/// `cairn__`). An error document is checked against the error schema; any other
/// JSON output that no row names fails the test below, so a new snapshot is
/// validated from the start.
const SNAPSHOT_VERBS: [(&str, &str); 18] = [
    ("build_loop__build_loop_dry_run", "build-loop"),
    ("cli__journal_log_json", "journal log"),
    ("cli__journal_verify", "journal verify"),
    ("cli__machines", "machines"),
    ("cli_journal__journal_streams_json", "journal streams"),
    ("park_snapshots__park_check", "park check"),
    (
        "park_snapshots__park_bind_repository",
        "park bind-repository",
    ),
    (
        "park_snapshots__park_confirm_readback",
        "park confirm-readback",
    ),
    ("park_snapshots__park_prepare", "park prepare-attempt"),
    ("park_snapshots__park_resume_gate", "park resume-gate"),
    (
        "park_snapshots__park_validate_receipt",
        "park validate-receipt",
    ),
    ("pr_loop__pr_classify", "pr classify"),
    ("saga__saga_show", "saga show"),
    ("ship__ship_status", "ship status"),
    ("ship__ship_verify", "ship verify"),
    ("work_node__work_ready", "work ready"),
    ("work_node__work_status", "work status"),
    ("work_node__work_validate", "work validate"),
];

#[test]
fn snapshot_outputs_are_valid_against_the_stdout_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/snapshots");
    let error = schema("state")["stdout"]["error"].clone();
    let (mut successes, mut errors) = (0, 0);
    let mut unnamed = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the snapshots") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".snap") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(out) = snapshot_stdout(&text) else {
            continue;
        };
        let stem = name.trim_start_matches("cairn__");
        let verb = SNAPSHOT_VERBS
            .iter()
            .find(|(p, _)| stem.starts_with(p))
            .map(|(_, v)| *v);
        // A verb's own answer (`work validate` names its first error inside it).
        if let Some(verb) = verb {
            if out.get("error").is_none() || verb == "work validate" {
                valid(&schema(verb)["stdout"]["success"], &out, &name);
                successes += 1;
                continue;
            }
        }
        if out.get("error").is_some() {
            valid(&error, &out, &name);
            errors += 1;
        } else {
            unnamed.push(name);
        }
    }
    assert!(
        unnamed.is_empty(),
        "snapshots of JSON output no row of SNAPSHOT_VERBS names: {unnamed:?}"
    );
    assert!(
        successes >= 30 && errors >= 8,
        "{successes} successes, {errors} errors checked"
    );
}

/// Every verb that prints JSON has a success schema; only the text verbs have none.
#[test]
fn every_verb_that_prints_json_has_a_success_schema() {
    let (_, stdout, _) = run(&["schema"], None);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    let without: Vec<&str> = list["verbs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["success"] == json!(false))
        .map(|v| v["verb"].as_str().unwrap())
        .collect();
    assert_eq!(without, ["completions", "man"]);
    // The list itself is valid against `cairn schema schema`.
    valid(
        &schema("schema")["stdout"]["success"],
        &list,
        "cairn schema",
    );
    valid(
        &schema("schema")["stdout"]["success"],
        &schema("park check"),
        "cairn schema park check",
    );
}

/// Every JSON document under examples/ is one a test here validates.
#[test]
fn every_example_document_is_validated() {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("target") {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples"),
        &mut found,
    );
    found.sort();
    // `the_shipped_examples_are_valid_against_their_schemas` validates these.
    assert_eq!(
        found,
        [
            "bind.json",
            "observation-durable.json",
            "observation-preflight.json",
            "receipt.json"
        ]
    );
}

#[test]
fn a_refused_document_names_every_violation() {
    let (code, stdout, _) = run_with_stdin(&["park", "check"], "{}");
    assert_eq!(code, 2);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    // The first violation stays where existing readers look…
    assert_eq!(
        (v["error"]["field"].as_str(), v["error"]["rule"].as_str()),
        (Some("schema_version"), Some("required"))
    );
    // …and every missing field is named.
    let fields: Vec<&str> = v["error"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "schema_version",
            "protocol_phase",
            "pr_backed",
            "bead",
            "checks"
        ]
    );
    insta::assert_json_snapshot!("park_check_empty_object", v);

    let mut doc = park::observation();
    doc["protocol_phase"] = json!("later");
    doc["checks"][0]["outcome"] = json!("maybe");
    doc["bead"]["extra"] = json!(1);
    let (code, stdout, _) = run_with_stdin(&["park", "check"], &doc.to_string());
    assert_eq!(code, 2);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let named: Vec<(&str, &str)> = v["error"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["field"].as_str().unwrap(), x["rule"].as_str().unwrap()))
        .collect();
    for want in [
        ("protocol_phase", "type"),
        ("checks[0].outcome", "type"),
        ("bead.extra", "unknown-field"),
    ] {
        assert!(named.contains(&want), "{want:?} in {named:?}");
    }
}

#[test]
fn no_error_leaks_a_rust_type_name_or_a_text_position_as_its_field() {
    for (verb, doc) in [
        (["park", "bind-repository"], json!({"selector": "x", "receipt_identity": 1, "observations": [], "registrations": {}}).to_string()),
        (["park", "confirm-readback"], json!({"receipt_bytes": 1, "comments": "x"}).to_string()),
        (["park", "check"], "{\"a\": ".to_owned()),
        (["pr", "classify"], json!({"pr": 1, "reading": {}, "destination": "moon"}).to_string()),
    ] {
        let (code, stdout, stderr) = run_with_stdin(&verb, &doc);
        assert_eq!(code, 2, "{verb:?}: {stdout}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        for text in [stdout.as_str(), stderr.as_str()] {
            for leak in ["struct ", "enum ", "BindInput", "ReadbackInput", "ObserveInput", "(line "] {
                assert!(!text.contains(leak), "{verb:?} leaks {leak:?}: {text}");
            }
        }
        for x in v["error"]["violations"].as_array().unwrap() {
            let field = x["field"].as_str().unwrap();
            assert!(!field.contains(' '), "{verb:?}: field {field:?}");
        }
    }
}

/// Runs `cairn` with `stdin` and no journal (these verbs write nothing).
fn run_with_stdin(args: &[&str], stdin: &str) -> (i32, String, String) {
    park_helper::raw(args, stdin, None)
}

#[test]
fn a_document_cairn_completes_is_checked_as_completed() {
    // `pr observe --pr` reads the PR itself: a refused document names what the
    // caller's part lacks, never the `reading` cairn added.
    let t = crate::support::TempJournal::new();
    let gh = pr::StandInGh::new();
    gh.answer(&pr::doc("await-review", "pr")["reading"]);
    let mut rest = pr::doc("await-review", "moon");
    rest.as_object_mut().unwrap().remove("reading");
    rest["surprise"] = json!(1);
    let (code, out, _) = pr::cairn_with(
        &["pr", "observe", "--pr", pr::PR],
        &rest.to_string(),
        &t.path(),
        Some(gh.dir.path()),
        &[],
    );
    assert_eq!(code, 2, "{out}");
    let fields: Vec<&str> = out["error"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"surprise"), "{out}");
    assert!(fields.contains(&"destination"), "{out}");
    assert!(!fields.contains(&"reading"), "{out}");
}

/// `graph`'s JSON outputs, both formats, for every machine, are what its schema
/// says (the hostile pass found xstate's output failing it).
#[test]
fn every_graph_output_is_valid_against_its_schema() {
    let success = schema("graph")["stdout"]["success"].clone();
    let (_, list, _) = run(&["machines"], None);
    let list: Value = serde_json::from_str(&list).unwrap();
    for m in list["machines"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        for format in ["json", "xstate"] {
            let (code, out, _) = run(&["graph", name, "--format", format], None);
            assert_eq!(code, 0, "{name} {format}");
            let doc: Value = serde_json::from_str(&out).unwrap();
            valid(&success, &doc, &format!("graph {name} --format {format}"));
        }
    }
    invalid(
        &success,
        &serde_json::json!({"id": "x", "initial": "a", "states": {"a": {"type": "initial"}}}),
        "a state that is neither final nor live",
    );
}
