//! The build loop is never green on nothing and never mislabels a failure (issue
//! #17, finding 3): a bare-list baseline is read, a criterion with no check is not
//! green, a check killed by a signal is a `fail`, a functional check given only as
//! `{command}` runs under its command's name, and units iterating at once never lose
//! an iteration from the run record (real racing processes).

use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::saga::{run_record, Thread};

fn read(t: &Thread) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&t.record).unwrap()).unwrap()
}

fn statuses(it: &Value, part: &str) -> Vec<String> {
    it[part]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_bare_list_baseline_is_read_and_nothing_to_run_is_never_green() {
    let mut record = run_record(json!([]), json!([{"id": "U1"}]));
    record["run_configuration"]["mechanical_tool_baseline"] = json!(["sh -c 'exit 1'"]);
    let t = Thread::with_record(record);
    let (code, out) = t.build_loop(&[]);
    assert_eq!(
        code, 4,
        "the bare list is the baseline, and it fails: {out}"
    );
    assert_eq!(statuses(&out["iteration"], "baseline"), ["fail"]);

    // No baseline, no functional check, no smoke, no preview: nothing ran, not green.
    let t = Thread::with_record(run_record(json!([]), json!([{"id": "U1"}])));
    let (code, out) = t.build_loop(&[]);
    assert_eq!(code, 4, "{out}");
    assert_eq!(out["iteration"]["green"], false, "{out}");
    assert_eq!(
        out["iteration"]["baseline_reason"], "none-configured",
        "{out}"
    );
    let rec = read(&t);
    assert!(
        rec["units"][0]["build_loop"]
            .get("handed_to_code_review")
            .is_none(),
        "nothing is handed to code review: {rec}"
    );
    t.audit_clean();
}

#[test]
fn a_check_killed_by_a_signal_is_a_fail() {
    let t = Thread::with_record(run_record(
        json!(["sh -c 'kill -KILL $$'", "true"]),
        json!([{"id": "U1"}]),
    ));
    let (code, out) = t.build_loop(&[]);
    assert_eq!(code, 4, "{out}");
    let it = &out["iteration"];
    assert_eq!(statuses(it, "baseline"), ["fail", "pass"], "{out}");
    assert_eq!(
        it["baseline"][0]["exit_code"], -9,
        "the signal, as a negative code: {out}"
    );
    // A missing program is still an environment problem.
    let t = Thread::with_record(run_record(
        json!(["no-such-program-cairn-test"]),
        json!([{"id": "U1"}]),
    ));
    let (_, out) = t.build_loop(&[]);
    assert_eq!(
        statuses(&out["iteration"], "baseline"),
        ["could-not-execute"]
    );
    t.audit_clean();
}

#[test]
fn a_functional_check_given_only_as_a_command_is_named_by_it() {
    let t = Thread::with_record(run_record(
        json!(["true"]),
        json!([{"id": "U1", "functional_checks": [{"command": "test -f a.txt"}], "scenario_smoke": [{"name": "smoke"}]}]),
    ));
    let (code, out) = t.build_loop(&[]);
    assert_eq!(code, 4, "the nameless smoke has no command: {out}");
    let it = &out["iteration"];
    assert_eq!(it["functional_checks"][0]["name"], "test -f a.txt");
    assert_eq!(statuses(it, "functional_checks"), ["pass"]);
    assert_eq!(it["scenario_smoke"][0]["name"], "smoke");
    assert_eq!(statuses(it, "scenario_smoke"), ["could-not-execute"]);
    t.audit_clean();
}

#[test]
fn units_iterating_at_once_never_lose_an_iteration() {
    let units: Vec<String> = (1..=4).map(|i| format!("U{i}")).collect();
    let rows: Vec<Value> = units
        .iter()
        .map(|u| json!({"id": u, "functional_checks": ["sleep 0.3"]}))
        .collect();
    let t = Thread::with_record(run_record(json!(["true"]), json!(rows)));
    for round in 1..=2 {
        let children: Vec<_> = units
            .iter()
            .map(|u| {
                Command::new(env!("CARGO_BIN_EXE_cairn"))
                    .args([
                        "build-loop",
                        "--issue",
                        "42",
                        "--repo-root",
                        t.repo_str(),
                        "--unit",
                        u,
                        "--db",
                    ])
                    .arg(t.journal.path())
                    .current_dir(t.scratch.path())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let rec = read(&t);
        for (i, u) in units.iter().enumerate() {
            let iterations = rec["units"][i]["build_loop"]["iterations"]
                .as_array()
                .map_or(0, Vec::len);
            assert_eq!(
                iterations, round,
                "unit {u} in the record after round {round}: {rec}"
            );
            let (_, log) = t.cairn(&[
                "journal",
                "log",
                "--stream",
                &format!("build-loop/issue-42:{u}"),
                "--format",
                "json",
            ]);
            assert_eq!(
                log["events"].as_array().unwrap().len(),
                round,
                "the journal and the record agree on {u}"
            );
        }
    }
    t.audit_clean();
}
