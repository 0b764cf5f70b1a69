//! The QA allowance is the seed's (issue #17, finding 5): only a failure counts
//! against it (three standard and two escalated cycles, plus exactly one recorded
//! extension no role may grant twice); a blocked scenario outranks a failure; a
//! spent allowance is recorded `exhausted`, a result, never a refusal; the limits
//! come from the run record when it carries them.

use serde_json::{json, Value};

use crate::support::saga::{predicates, run_record, Thread};

/// A thread at `work` whose unit U1 is merged: where QA runs.
fn merged() -> Thread {
    let t = Thread::new();
    t.save_at_work();
    crate::support::saga::unit_work(&t.repo, "work/u1");
    t.ready();
    crate::support::saga::merge_in(&t.journal.path(), "issue-42", &t.repo);
    t
}

fn qa(t: &Thread, args: &[&str]) -> (i32, Value) {
    t.s("qa", args)
}

/// (exit, outcome, post_merge_cycles, extension_taken) of one cycle.
fn cycle(t: &Thread, args: &[&str]) -> (i32, String, u64, bool) {
    let (code, out) = qa(t, args);
    (
        code,
        out["outcome"].as_str().unwrap_or("").to_owned(),
        out["post_merge_cycles"].as_u64().unwrap_or(99),
        out["extension_taken"].as_bool().unwrap_or(false),
    )
}

#[test]
fn only_a_failure_counts_and_a_spent_allowance_is_a_result() {
    let t = merged();
    let c = |o: &str, n: u64, ext: bool| (4, o.to_owned(), n, ext);
    assert_eq!(
        cycle(&t, &["--scenario", "s=blocked:sandbox down"]),
        c("blocked", 0, false)
    );
    assert_eq!(
        cycle(&t, &["--scenario", "s=not-run"]),
        c("passed-with-proof-debt", 0, false)
    );
    // A blocked scenario outranks a failure: the loop cannot repair a block.
    assert_eq!(
        cycle(
            &t,
            &[
                "--scenario",
                "a=failed",
                "--scenario",
                "b=blocked:no credential"
            ]
        ),
        c("blocked", 0, false)
    );
    let (code, out) = qa(&t, &["--scenario", "s=failed", "--extension"]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["allowance-left".to_owned()]),
        "{out}"
    );
    for n in 1..=5 {
        assert_eq!(
            cycle(&t, &["--scenario", "s=failed"]),
            c("re-enters-the-build-loop", n, false)
        );
    }
    // Spent: recorded, not refused (and not counted past the allowance).
    let before = t.bytes();
    assert_eq!(
        cycle(&t, &["--scenario", "s=failed"]),
        c("exhausted", 5, false)
    );
    assert_ne!(t.bytes(), before, "exhausted is recorded");
    // The one extension, recorded with the cycle that takes it; never a second.
    assert_eq!(
        cycle(&t, &["--scenario", "s=failed", "--extension"]),
        c("re-enters-the-build-loop", 6, true)
    );
    assert_eq!(
        cycle(&t, &["--scenario", "s=failed"]),
        c("exhausted", 6, true)
    );
    let (code, out) = qa(&t, &["--scenario", "s=failed", "--extension"]);
    assert_eq!(
        (code, predicates(&out)),
        (2, vec!["one-extension".to_owned()]),
        "{out}"
    );
    // A pass still passes.
    let (code, out) = qa(&t, &["--scenario", "s=passed"]);
    assert_eq!(
        (code, out["lifecycle_phase"].as_str()),
        (0, Some("qa")),
        "{out}"
    );
    t.audit_clean();
}

#[test]
fn the_limits_come_from_the_run_record() {
    let t = merged();
    let mut record = run_record(json!(["true"]), json!([{"id": "U1"}]));
    record["run_configuration"]["standard_cycle_allowance"] =
        json!({"value": 1, "chosen_by": "operator", "source": "operator"});
    record["run_configuration"]["escalated_cycle_allowance"] = json!(0);
    let path = t.repo.join("record.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let (code, out) = qa(&t, &["--scenario", "s=failed", "--record", &path]);
    assert_eq!(
        (
            code,
            out["outcome"].as_str(),
            out["allowed_cycles"].as_u64()
        ),
        (4, Some("re-enters-the-build-loop"), Some(1)),
        "{out}"
    );
    let (code, out) = qa(&t, &["--scenario", "s=failed", "--record", &path]);
    assert_eq!(
        (code, out["outcome"].as_str()),
        (4, Some("exhausted")),
        "{out}"
    );
    // The limits stay with the thread; a record whose limit is not a count is refused.
    assert_eq!(cycle(&t, &["--scenario", "s=failed"]).1, "exhausted");
    record["run_configuration"]["standard_cycle_allowance"] = json!({"value": "three"});
    std::fs::write(&path, record.to_string()).unwrap();
    let before = t.bytes();
    let (code, out) = qa(&t, &["--scenario", "s=failed", "--record", &path]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("cycle-allowance")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    t.audit_clean();
}
