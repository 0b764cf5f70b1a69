//! `--idempotency-key` on every verb that records and on no other: a retry with
//! the same key and the same input returns the first recorded result (and its exit
//! code) and writes nothing; other input under the key is refused (exit 2). Verbs
//! that run git, criteria or checks look the key up before running anything.

use serde_json::{json, Value};

use crate::support::fixtures::{
    phase1, run, three_commits, workspec, BuildRecord, ShipRepo, WorkLane,
};
use crate::support::pr::doc;
use crate::support::TempJournal;

/// Every verb that records, and every verb that does not.
pub const RECORDING: &[&[&str]] = &[
    &["park", "prepare-attempt"],
    &["park", "evaluate"],
    &["park", "validate-receipt"],
    &["park", "confirm-readback"],
    &["pr", "observe"],
    &["pr", "offer-review-request"],
    &["pr", "confirm"],
    &["pr", "resolve-escalation"],
    &["pr", "record-merge"],
    &["pr", "dispose"],
    &["saga", "save"],
    &["saga", "doc-review"],
    &["saga", "review"],
    &["saga", "override"],
    &["saga", "pr-ready"],
    &["saga", "adjust"],
    &["saga", "boundary"],
    &["saga", "merge-turn", "take"],
    &["saga", "merge-turn", "release"],
    &["saga", "merge-turn", "merged"],
    &["saga", "release"],
    &["saga", "board"],
    &["saga", "qa"],
    &["ship", "open"],
    &["ship", "preflight"],
    &["ship", "create"],
    &["ship", "verify"],
    &["ship", "answer-scope"],
    &["ship", "refine"],
    &["ship", "pre-merge"],
    &["ship", "merge"],
    &["ship", "teardown"],
    &["ship", "resume"],
    &["ship", "answer-tiebreaker"],
    &["ship", "external-op"],
    &["ship", "abandon"],
    &["work", "plan"],
    &["work", "dispatch"],
    &["work", "verify"],
    &["work", "review"],
    &["work", "remediate"],
    &["work", "escalate"],
    &["work", "merge"],
    &["work", "amend-criterion"],
    &["work", "raise-scope"],
    &["work", "pass-up"],
    &["work", "resolve-scope"],
    &["work", "done"],
    &["build-loop"],
    &["exec", "park", "park/x"],
];

pub const NOT_RECORDING: &[&[&str]] = &[
    &["machines"],
    &["graph", "park"],
    &["state", "park/x"],
    &["journal", "log"],
    &["journal", "verify"],
    &["journal", "audit"],
    &["park", "check"],
    &["park", "bind-repository"],
    &["park", "resume-gate"],
    &["park", "observe-vcs"],
    &["pr", "classify"],
    &["pr", "fetch"],
    &["saga", "restore"],
    &["saga", "show"],
    &["saga", "scan"],
    &["ship", "classify"],
    &["ship", "status"],
    &["work", "validate"],
    &["work", "ready"],
    &["work", "status"],
    // The group, before the verb (park's key used to live there).
    &["park"],
];

#[test]
fn every_recording_verb_takes_a_key_and_no_other_verb_does() {
    let t = TempJournal::new();
    for verb in RECORDING {
        let mut args = verb.to_vec();
        args.push("--help");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(&args)
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{verb:?}");
        assert!(
            help.contains("--idempotency-key <KEY>"),
            "{verb:?}:\n{help}"
        );
    }
    let before = t.bytes();
    for verb in NOT_RECORDING {
        let mut args = verb.to_vec();
        args.extend_from_slice(&["--idempotency-key", "k-1"]);
        let (code, out) = run(&t, &args, "{}");
        assert_eq!(
            (code, out["error"]["kind"].as_str()),
            (2, Some("usage")),
            "{verb:?} must refuse the key: {out}"
        );
    }
    // The build loop records, except as a dry run: there the key is refused too.
    let (code, out) = run(
        &t,
        &[
            "build-loop",
            "--issue",
            "1",
            "--dry-run",
            "--idempotency-key",
            "k",
        ],
        "",
    );
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("usage")),
        "{out}"
    );
    // An empty key names nothing.
    let (code, out) = run(
        &t,
        &[
            "saga",
            "adjust",
            "--saga-id",
            "issue-1",
            "--directive",
            "drain",
            "--idempotency-key",
            " ",
        ],
        "",
    );
    assert_eq!(
        (code, out["error"]["field"].as_str()),
        (2, Some("idempotency_key")),
        "{out}"
    );
    assert_eq!(t.bytes(), before, "no refusal writes");
}

fn qa(t: &TempJournal, scenario: &str, key: Option<&str>) -> (i32, Value) {
    let mut args = vec!["saga", "qa", "--saga-id", "issue-9", "--scenario", scenario];
    if let Some(k) = key {
        args.extend_from_slice(&["--idempotency-key", k]);
    }
    run(t, &args, "")
}

#[test]
fn a_retried_saga_qa_with_the_same_key_spends_one_qa_cycle() {
    let t = TempJournal::new();
    let (code, out) = run(
        &t,
        &[
            "saga",
            "save",
            "--id",
            "issue-9",
            "--lifecycle-phase",
            "work",
        ],
        "",
    );
    assert_eq!(code, 0, "{out}");
    // QA runs on a merged thread only: the gates, the merge turn and the merge
    // as git shows it.
    let _repo = crate::support::saga::merged_in(&t.path(), "issue-9");
    let (code, first) = qa(&t, "checkout=failed", Some("qa-1"));
    assert_eq!(
        (code, first["post_merge_cycles"].clone()),
        (4, json!(1)),
        "{first}"
    );
    let before = t.bytes();
    // The retry: the first result, the same "not green yet" exit, nothing written.
    let (code, again) = qa(&t, "checkout=failed", Some("qa-1"));
    assert_eq!((code, &again), (4, &first));
    assert_eq!(t.bytes(), before);
    // Other input under the key is refused.
    let (code, out) = qa(&t, "checkout=passed", Some("qa-1"));
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    assert_eq!(t.bytes(), before);
    // Without a key the same cycle is a second cycle (what the key prevented).
    let (code, out) = qa(&t, "checkout=failed", None);
    assert_eq!(
        (code, out["post_merge_cycles"].clone()),
        (4, json!(2)),
        "{out}"
    );
}

#[test]
fn a_retried_pr_observe_with_the_same_key_counts_its_round_once() {
    let t = TempJournal::new();
    let mut d = doc("changes-requested", "merge");
    d["reading"]["headRefOid"] = json!("a".repeat(40));
    let d = d.to_string();
    let observe =
        |key: &str, stdin: &str| run(&t, &["pr", "observe", "--idempotency-key", key], stdin);
    let (code, first) = observe("obs-1", &d);
    assert_eq!(
        (
            code,
            first["rounds_seen"].clone(),
            first["next_round"].clone()
        ),
        (0, json!([1]), json!(2)),
        "{first}"
    );
    let before = t.bytes();
    let (code, again) = observe("obs-1", &d);
    assert_eq!((code, &again), (0, &first));
    assert_eq!(t.bytes(), before, "the round is counted once");
    let (code, out) = observe("obs-1", &doc("conflicting", "merge").to_string());
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    // A new key is a new observation, but the same head and verdict are no new
    // round (issue #18: a round is a new head or verdict, not a new call); a new
    // head is.
    let (_, out) = observe("obs-2", &d);
    assert_eq!(out["rounds_seen"], json!([1]), "{out}");
    let mut new_head = doc("changes-requested", "merge");
    new_head["reading"]["headRefOid"] = json!("c".repeat(40));
    let (_, out) = observe("obs-2b", &new_head.to_string());
    assert_eq!(out["rounds_seen"], json!([1, 2]), "{out}");

    // With --repo cairn counts commits itself; a retry is answered before git runs:
    // the repository is gone and the retry still returns the first result.
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().canonicalize().unwrap().join("r");
    std::fs::create_dir(&repo).unwrap();
    let reviewed = three_commits(&repo);
    let mut counted = doc("approved-fresh", "pr");
    counted
        .as_object_mut()
        .unwrap()
        .remove("commits_since_review");
    counted["reviewed_sha"] = json!(reviewed);
    let args = [
        "pr",
        "observe",
        "--repo",
        repo.to_str().unwrap(),
        "--idempotency-key",
        "obs-3",
    ];
    let (code, first) = run(&t, &args, &counted.to_string());
    assert_eq!(
        (code, first["classification"]["state"].as_str()),
        (0, Some("approved-stale")),
        "{first}"
    );
    std::fs::remove_dir_all(&repo).unwrap();
    let before = t.bytes();
    let (code, again) = run(&t, &args, &counted.to_string());
    assert_eq!((code, &again), (0, &first));
    assert_eq!(t.bytes(), before);
    let mut fresh_key = args.to_vec();
    fresh_key[5] = "obs-4";
    let (code, out) = run(&t, &fresh_key, &counted.to_string());
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("freshness-unreadable")),
        "{out}"
    );
}

#[test]
fn a_retried_ship_step_returns_the_first_result_and_runs_no_git() {
    let r = ShipRepo::new();
    let (code, opened) = r.open(&["--idempotency-key", "open-1"]);
    assert_eq!(code, 0, "{opened}");
    let (code, created) = r.verb("create", &["--idempotency-key", "create-1"], "");
    assert_eq!(
        (code, created["state"].as_str()),
        (0, Some("phase-1")),
        "{created}"
    );
    let before = r.journal.bytes();
    // Both retries are answered from the journal: `create` is no longer admitted
    // (a re-run would be refused) and `open` would refuse an opened SHORT_ID.
    assert_eq!(r.open(&["--idempotency-key", "open-1"]), (0, opened));
    assert_eq!(
        r.verb("create", &["--idempotency-key", "create-1"], ""),
        (0, created)
    );
    let (code, out) = r.verb("create", &[], "");
    assert_eq!(code, 2, "without the key, create is refused now: {out}");
    assert_eq!(r.journal.bytes(), before);

    std::fs::write(r.wt().join("src.txt"), "fix\n").unwrap();
    crate::support::git::git(&r.wt(), &["add", "-A"]);
    crate::support::git::git(&r.wt(), &["commit", "-q", "-m", "fix: the thing"]);
    let head = crate::support::git::git(&r.wt(), &["rev-parse", "HEAD"]);
    let report = phase1(&head).to_string();
    let (code, verified) = r.verb("verify", &["--idempotency-key", "v-1"], &report);
    assert_eq!(
        (code, verified["state"].as_str()),
        (0, Some("phase-2")),
        "{verified}"
    );
    let before = r.journal.bytes();
    assert_eq!(
        r.verb("verify", &["--idempotency-key", "v-1"], &report),
        (0, verified)
    );
    let mut other = phase1(&head);
    other["intent_excerpt"] = json!("Another intent.");
    let (code, out) = r.verb("verify", &["--idempotency-key", "v-1"], &other.to_string());
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    // A key is per verb request: the same key on another verb is other input.
    let (code, out) = r.verb("merge", &["--idempotency-key", "v-1"], "");
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before);
    crate::support::fixtures::assert_whole(&r.journal);
}

#[test]
fn a_retried_work_verify_runs_no_criterion_again() {
    let tmp = tempfile::tempdir().unwrap();
    let counter = tmp.path().join("runs.log");
    let criterion = format!("echo ran >> {} && echo cache hit", counter.display());
    let w = WorkLane::new(&workspec(&criterion, "cache hit"));
    let commit = w.to_dispatched();
    let (code, first) = w.verify(&commit, &["--idempotency-key", "verify-1"]);
    assert_eq!(
        (code, first["state"].as_str()),
        (0, Some("verified")),
        "{first}"
    );
    let runs = || std::fs::read_to_string(&counter).unwrap().lines().count();
    assert_eq!(runs(), 1);
    let before = w.journal.bytes();
    assert_eq!(
        w.verify(&commit, &["--idempotency-key", "verify-1"]),
        (0, first)
    );
    assert_eq!(runs(), 1, "the criterion did not run again");
    assert_eq!(w.journal.bytes(), before);
    // The same key for another request (another expected commit): refused.
    let other = "1111111111111111111111111111111111111111";
    let (code, out) = w.verify(other, &["--idempotency-key", "verify-1"]);
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
    assert_eq!(runs(), 1);
    // A node verb whose command is its flags: the same key, the same answer.
    let review = ["--verdict", "approve", "--idempotency-key", "review-1"];
    let (code, first) = w.node("review", &review);
    assert_eq!(
        (code, first["events"].clone()),
        (0, json!(["review-approved"])),
        "{first}"
    );
    let before = w.journal.bytes();
    assert_eq!(w.node("review", &review), (0, first));
    assert_eq!(w.journal.bytes(), before);
}

#[test]
fn a_retried_build_loop_runs_no_check_and_rewrites_no_record() {
    let tmp = tempfile::tempdir().unwrap();
    let counter = tmp.path().join("checks.log");
    let check = format!("sh -c 'echo ran >> {}; exit 1'", counter.display());
    let b = BuildRecord::new(&[&check]);
    let (code, first) = b.run(&["--unit", "U1", "--idempotency-key", "it-1"]);
    assert_eq!((code, first["green"].clone()), (4, json!(false)), "{first}");
    let record = b.bytes();
    let before = b.journal.bytes();
    // Not green yet, replayed: the first iteration and the same exit code.
    assert_eq!(
        b.run(&["--unit", "U1", "--idempotency-key", "it-1"]),
        (4, first)
    );
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        1
    );
    assert_eq!((b.bytes(), b.journal.bytes()), (record, before));
    let (code, out) = b.run(&[
        "--unit",
        "U1",
        "--idempotency-key",
        "it-1",
        "--timeout",
        "60",
    ]);
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("idempotency-mismatch")),
        "{out}"
    );
}

/// A key is one printable ASCII word of at most 256 bytes: a newline, a
/// bidirectional or other invisible character, a space, any other character
/// (two spellings of one visible key were two keys) or more is refused (exit 2,
/// naming `idempotency_key` and the rule), nothing written (helper-70, helper-72).
#[test]
fn a_key_a_person_cannot_read_is_refused() {
    let t = TempJournal::new();
    let long = "k".repeat(257);
    for (key, rule) in [
        ("a\nb", "key-characters"),
        ("x\u{202E}y", "key-characters"),
        ("x\u{200B}", "key-characters"),
        ("renew-cafe\u{301}", "key-characters"),
        ("renew-café", "key-characters"),
        ("renew ", "key-characters"),
        ("\u{1D159}", "key-characters"),
        (long.as_str(), "length"),
    ] {
        let (code, out) = qa(&t, "smoke=passed", Some(key));
        assert_eq!(
            (
                code,
                out["error"]["field"].as_str(),
                out["error"]["rule"].as_str()
            ),
            (2, Some("idempotency_key"), Some(rule)),
            "{key:?}: {out}"
        );
    }
    assert!(!t.path().exists(), "nothing written");
    let (code, out) = qa(&t, "smoke=passed", Some(&"k".repeat(256)));
    assert_ne!(out["error"]["rule"], "length", "{code}: {out}");
}

/// A bad key is named beside the verb's own broken input when the verb judges
/// its own first (helper-94: `claim acquire` named only its owner). Nothing is
/// written. (A verb that judges the key and token first names them alone: its
/// own input is judged after the recorder is made.)
#[test]
fn a_bad_key_and_token_are_named_with_the_rest() {
    let t = TempJournal::new();
    let (code, out, _) = crate::claim::claim(
        &t.path(),
        "acquire",
        &[
            "--owner",
            "",
            "--claim-id",
            "c1",
            "--ttl",
            "60",
            "--idempotency-key",
            "a b",
        ],
    );
    let named: Vec<&str> = out["error"]["violations"]
        .as_array()
        .map(|v| v.iter().filter_map(|v| v["field"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        (code, named),
        (2, vec!["owner", "idempotency_key"]),
        "{out}"
    );
    assert!(!t.path().exists(), "nothing written");
}
