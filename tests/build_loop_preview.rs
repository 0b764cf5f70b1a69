//! The build loop's dry run as the seed writes it (issue #17, finding 4): `--issue N
//! --dry-run` with no `--unit` previews every unit and names the catalogue checks
//! the baseline does not cover and the scanners it has not configured; a preview
//! that ran carries `exit_code` and `duration_seconds`; an unknown unit's error lists
//! the units that exist; a glob keeps its trailing `/`.

use serde_json::{json, Value};

use crate::support::saga::{run_record, Thread};

fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {v}"))
        .iter()
        .map(|x| match key {
            "" => x.as_str().unwrap().to_owned(),
            k => x[k].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[test]
fn the_dry_run_previews_every_unit_and_names_what_is_not_covered() {
    let t = Thread::with_record(run_record(
        json!(["uv run ruff check .", "gitleaks detect", "cargo test"]),
        json!([
            {"id": "U1", "functional_checks": [{"name": "hits", "command": "cargo test hits"}]},
            {"id": "U2", "scenario_smoke": ["./smoke.sh"]}
        ]),
    ));
    let before = std::fs::read(&t.record).unwrap();
    let (code, out) = t.build_loop(&["--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(names(&out["units"], "unit"), ["U1", "U2"]);
    assert_eq!(
        names(&out["units"][0]["functional_checks"], "name"),
        ["hits"]
    );
    assert_eq!(
        names(&out["units"][1]["scenario_smoke"], "name"),
        ["./smoke.sh"]
    );
    assert_eq!(out["unit"], Value::Null, "no single unit: {out}");
    assert_eq!(
        names(&out["uncovered"], "catalogue_check"),
        ["mypy", "bandit", "pytest-coverage"]
    );
    assert!(out["uncovered"][0]["purpose"]
        .as_str()
        .is_some_and(|p| !p.is_empty()));
    assert!(out["uncovered"][0]["reason"]
        .as_str()
        .is_some_and(|p| !p.is_empty()));
    assert_eq!(
        names(&out["unconfigured_scanners"], ""),
        ["pip-audit", "detect-secrets", "semgrep"]
    );
    assert_eq!(
        std::fs::read(&t.record).unwrap(),
        before,
        "a dry run writes nothing"
    );
    assert!(!t.journal.path().exists(), "nor journals anything");

    // A unit that does not exist: the error names the ones that do.
    let (code, out) = t.build_loop(&["--dry-run", "--unit", "U9"]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("unit-exists")),
        "{out}"
    );
    let msg = out["error"]["message"].as_str().unwrap();
    assert!(msg.contains("U1") && msg.contains("U2"), "{msg}");
    // Named, one unit is previewed as before.
    let (code, out) = t.build_loop(&["--dry-run", "--unit", "U2"]);
    assert_eq!((code, out["unit"].as_str()), (0, Some("U2")), "{out}");
    assert_eq!(names(&out["units"], "unit"), ["U2"]);
}

#[test]
fn a_preview_that_ran_carries_its_exit_code_and_duration() {
    let mut record = run_record(json!(["true"]), json!([{"id": "U1"}]));
    record["admission"]["branch_preview"] = json!(true);
    let t = Thread::with_record(record);
    std::fs::write(
        t.repo.join(".saga-profile.json"),
        json!({"branch_preview_command": "sh -c 'exit 3'"}).to_string(),
    )
    .unwrap();
    let (code, out) = t.build_loop(&[]);
    assert_eq!(code, 4, "{out}");
    let preview = &out["iteration"]["preview"];
    assert_eq!(
        (preview["status"].as_str(), preview["exit_code"].as_i64()),
        (Some("fail"), Some(3)),
        "{out}"
    );
    assert!(preview["duration_seconds"].as_f64().is_some(), "{out}");
    t.audit_clean();
}

#[test]
fn a_glob_keeps_its_trailing_slash() {
    let t = Thread::with_record(run_record(
        json!(["true"]),
        json!([{"id": "U1", "functional_checks": ["ls -d plugins/*/tests/"]}]),
    ));
    for p in ["plugins/a/tests", "plugins/b/tests"] {
        std::fs::create_dir_all(t.repo.join(p)).unwrap();
    }
    let (code, out) = t.build_loop(&[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out["iteration"]["functional_checks"][0]["detail"], "plugins/b/tests/",
        "each match keeps the pattern's trailing `/`, as a shell's glob does: {out}"
    );
}
