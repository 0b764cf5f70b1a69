//! The JSON depth bound, once, at every input route: a document nesting deeper
//! than 64 arrays and objects is refused (exit 2, rule `depth`) before anything
//! runs or is written — it could be recorded but never read back (serde_json reads
//! 128 levels, and a recorded document sits a few levels deeper than it came in).
//! A document at the bound is recorded and readable by `state` and `journal audit`.

use serde_json::{json, Value};

use crate::support::fixtures::{
    assert_whole, nested, phase1, run, workspec, BuildRecord, ShipRepo, WorkLane,
};
use crate::support::park::{ANCHOR, EPISODE, INTENT};
use crate::support::pr::{check_run, doc};
use crate::support::TempJournal;

/// Depths that must be refused: one past the bound, the 100, and the
/// 126-deep consumer field that used to be recorded and then break every read.
const TOO_DEEP: [usize; 3] = [65, 100, 127];

/// `out` is a depth refusal naming a field.
fn refused_for_depth(code: i32, out: &Value) {
    assert_eq!(
        (
            code,
            out["error"]["kind"].as_str(),
            out["error"]["rule"].as_str()
        ),
        (2, Some("input"), Some("depth")),
        "{out}"
    );
    assert!(
        out["error"]["field"]
            .as_str()
            .is_some_and(|f| !f.is_empty()),
        "{out}"
    );
}

/// `v` with a field `deep` nesting so that the whole document is `depth` deep.
fn with_deep_field(v: Value, depth: usize) -> Value {
    with_deep(v, "deep", depth)
}

/// `v` with `key` holding a value `depth` levels deep.
fn with_deep(mut v: Value, key: &str, depth: usize) -> Value {
    v[key] = nested(depth - 1);
    v
}

#[test]
fn park_refuses_a_document_past_the_bound_and_writes_nothing() {
    let t = TempJournal::new();
    let prepare = json!({"mode": "park", "anchor_bead": ANCHOR, "episode_id": EPISODE, "intent_id": INTENT, "prior_receipts": []});
    let (code, prepared) = run(&t, &["park", "prepare-attempt"], &prepare.to_string());
    assert_eq!(code, 0, "{prepared}");
    let attempt = prepared["attempt_id"].as_str().unwrap().to_owned();
    let before = t.bytes();
    for depth in TOO_DEEP {
        let deep = with_deep_field(json!({}), depth).to_string();
        let ids = [
            "--episode-id",
            EPISODE,
            "--intent-id",
            INTENT,
            "--attempt-id",
            &attempt,
        ];
        for verb in ["evaluate", "confirm-readback"] {
            let mut args = vec!["park", verb];
            args.extend_from_slice(&ids);
            let (code, out) = run(&t, &args, &deep);
            refused_for_depth(code, &out);
        }
        let deep_prepare = with_deep_field(prepare.clone(), depth).to_string();
        let (code, out) = run(&t, &["park", "prepare-attempt"], &deep_prepare);
        refused_for_depth(code, &out);
        let (code, out) = run(&t, &["park", "check"], &deep);
        refused_for_depth(code, &out);
    }
    assert_eq!(t.bytes(), before, "nothing written");
}

#[test]
fn a_ship_report_past_the_bound_is_refused_and_one_at_the_bound_is_recorded_and_readable() {
    let r = ShipRepo::new();
    let head = r.to_phase1();
    let before = r.journal.bytes();
    let packet = r.wt().join(format!(".run-ship/resolve-{}.json", "abc"));
    std::fs::create_dir_all(packet.parent().unwrap()).unwrap();
    for depth in TOO_DEEP {
        // Under a field of the wire format's (a ship report holds no other).
        let report = with_deep(phase1(&head), "mutation_requests", depth).to_string();
        let (code, out) = r.verb("verify", &[], &report);
        refused_for_depth(code, &out);
        // The leaf's packet is read through the same parse.
        std::fs::write(&packet, &report).unwrap();
        let (code, out) = r.verb("verify", &["--packet"], "");
        refused_for_depth(code, &out);
    }
    std::fs::remove_file(&packet).unwrap();
    assert_eq!(r.journal.bytes(), before, "nothing written");
    // At the bound: recorded, and every reader reads it back.
    let report = with_deep(phase1(&head), "mutation_requests", 64).to_string();
    let (code, out) = r.verb("verify", &[], &report);
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    let (code, out) = run(&r.journal, &["state", "ship/abc"], "");
    assert_eq!(
        (code, out["state_name"].as_str()),
        (0, Some("phase-2")),
        "{out}"
    );
    let (code, out) = r.verb("status", &[], "");
    assert_eq!(code, 0, "{out}");
    assert_whole(&r.journal);
}

#[test]
fn a_pr_reading_past_the_bound_is_refused_and_one_at_the_bound_is_recorded_and_readable() {
    let t = TempJournal::new();
    // The document, the reading, the rollup, one check: `extra` starts at depth 5.
    let with_deep_check = |depth: usize| {
        let mut d = doc("changes-requested", "merge");
        let mut check = check_run("deep", "COMPLETED", "SUCCESS");
        check["extra"] = nested(depth - 4);
        d["reading"]["statusCheckRollup"] = json!([check]);
        d.to_string()
    };
    for depth in TOO_DEEP {
        let (code, out) = run(&t, &["pr", "observe"], &with_deep_check(depth));
        refused_for_depth(code, &out);
        let (code, out) = run(&t, &["pr", "classify"], &with_deep_check(depth));
        refused_for_depth(code, &out);
    }
    assert!(!t.path().exists(), "no journal was created");
    let (code, out) = run(&t, &["pr", "observe"], &with_deep_check(64));
    assert_eq!(code, 0, "{out}");
    let stream = out["stream"].as_str().unwrap().to_owned();
    let (code, out) = run(&t, &["state", &stream], "");
    assert_eq!(
        (code, out["state_name"].as_str()),
        (0, Some("observing")),
        "{out}"
    );
    assert_whole(&t);
}

#[test]
fn a_run_record_past_the_bound_is_refused_and_left_as_it_was() {
    for depth in TOO_DEEP {
        // The unit row is at depth 3: its `deep` field makes the record `depth` deep.
        let mut record = BuildRecord::record(&["true"]);
        record["units"][0]["deep"] = nested(depth - 3);
        let text = serde_json::to_string_pretty(&record).unwrap();
        let b = BuildRecord::with(&text);
        let (code, out) = b.run(&["--unit", "U1"]);
        refused_for_depth(code, &out);
        assert_eq!(out["error"]["field"], "record", "{out}");
        assert_eq!(b.bytes(), text.as_bytes(), "the record is untouched");
        assert!(!b.journal.path().exists(), "no journal was created");
    }
}

#[test]
fn a_work_checklist_past_the_bound_is_refused_before_any_criterion_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let counter = tmp.path().join("runs.log");
    let criterion = format!("echo ran >> {} && echo cache hit", counter.display());
    let w = WorkLane::new(&workspec(&criterion, "cache hit"));
    let commit = w.to_dispatched();
    let before = w.journal.bytes();
    for depth in TOO_DEEP {
        let deep = format!("[{}{}]", "[".repeat(depth - 1), "]".repeat(depth - 1));
        let (code, out) = w.verify(&commit, &["--checklist", &deep]);
        refused_for_depth(code, &out);
        assert_eq!(out["error"]["field"], "checklist", "{out}");
    }
    assert!(!counter.exists(), "no criterion ran");
    assert_eq!(w.journal.bytes(), before, "nothing written");
}
