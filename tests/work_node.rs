//! `cairn work` end to end on real git repositories and worktrees, with real child
//! processes for the criteria (a floor printed, a floor missing, a timeout that
//! leaves a child behind — the group must be gone).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::park::park as cairn;
use crate::support::git::git;
use crate::support::work_repo::{axes as lifecycle, spec_text, Work, OK};

#[test]
fn a_node_goes_from_plan_to_done_and_unlocks_its_dependent_in_this_session_only() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.run(&["validate", w.spec.to_str().unwrap()]);
    assert_eq!((code, out["valid"].clone()), (0, json!(true)), "{out}");
    let s = w.status("s1");
    assert_eq!(s["ready"], json!([["core"]]));
    assert_eq!(lifecycle(&s, "docs"), ("blocked", "unverified"));

    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let brief = out["plan"]["brief_path"].as_str().unwrap();
    assert!(
        brief.starts_with(w.root.join(".work/.cache/briefs").to_str().unwrap()),
        "{brief}"
    );
    assert_eq!(out["plan"]["writable_roots"], json!(["src/cache/"]));
    assert_eq!(
        (
            out["plan"]["confine_writes"].clone(),
            out["plan"]["escalation"].clone()
        ),
        (json!(true), json!("off"))
    );

    // A degraded dispatch carries the plan back and advances nothing.
    let (code, out) = w.node(
        "dispatch",
        "core",
        &["--not-dispatched", "delegate-client-unavailable"],
    );
    assert_eq!(
        (code, out["state"].as_str(), out["dispatchState"].as_str()),
        (0, Some("planned"), Some("not-dispatched")),
        "{out}"
    );
    let lane = w.lane.to_str().unwrap().to_owned();
    let base = w.head(&w.lane);
    assert_eq!(
        w.node(
            "dispatch",
            "core",
            &[
                "--run-id",
                "r-1",
                "--worktree",
                &lane,
                "--expected-commit",
                &base
            ]
        )
        .0,
        0
    );

    let commit = w.commit_lane();
    // HEAD mismatch: refused, nothing run, nothing written.
    let bytes = w.journal.bytes();
    let (code, out) = w.verify(
        "core",
        &w.lane,
        &base,
        &["--checklist", r#"[{"index":0,"done":true}]"#],
    );
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("tree-at-commit")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), bytes);
    // A report of an item the node does not have, or of one item twice, is the
    // caller's mistake: refused before anything runs, nothing written.
    for reports in [
        r#"[{"index":0,"done":true},{"index":1,"done":true}]"#,
        r#"[{"index":0,"done":true},{"index":0,"done":false}]"#,
    ] {
        let (code, out) = w.verify("core", &w.lane, &commit, &["--checklist", reports]);
        assert_eq!(
            (code, &out["error"]["field"], &out["error"]["rule"]),
            (2, &json!("checklist"), &json!("checklist-item")),
            "{reports}: {out}"
        );
        assert_eq!(w.journal.bytes(), bytes, "{reports}: nothing written");
    }
    // A report given as an array is not read by position (helper-55: `[[0,
    // true]]` was recorded as the item done).
    let (code, out) = w.verify("core", &w.lane, &commit, &["--checklist", "[[0,true]]"]);
    assert_eq!(
        (code, &out["error"]["field"], &out["error"]["rule"]),
        (2, &json!("checklist"), &json!("checklist-reports")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), bytes, "nothing written");

    // The checklist item needs exactly one `done` report.
    let (code, out) = w.verify("core", &w.lane, &commit, &[]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["proof"]["failures"]
            .to_string()
            .contains("checklist[0]"),
        "{out}"
    );
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-2", "--worktree", &lane],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = w.verify(
        "core",
        &w.lane,
        &commit,
        &["--checklist", r#"[{"index":0,"done":true}]"#],
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    let proof = &out["proof"];
    assert_eq!(
        (
            proof["session"].as_str(),
            proof["worktree_path"].as_str(),
            proof["commit"].as_str()
        ),
        (Some("s1"), Some(lane.as_str()), Some(commit.as_str()))
    );
    assert_eq!(
        w.status("s1")["nodes"][0]["verification_words"],
        "verified this session"
    );
    assert_eq!(
        lifecycle(&w.status("s2"), "core").1,
        "observed-green-not-verified-this-session"
    );

    // Done is refused before the merge and the integration evidence, naming each item.
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out["error"]["violations"]
            .to_string()
            .contains("integration evidence ran again after the merge"),
        "{out}"
    );

    // Merge into main; the pre-merge green stops counting.
    git(&w.root, &["merge", "-q", "--ff-only", "lane"]);
    let merged = w.head(&w.root);
    let root = w.root.to_str().unwrap().to_owned();
    assert_eq!(
        w.node(
            "merge",
            "core",
            &["--merged-tree", &root, "--commit", &merged]
        )
        .0,
        0
    );
    assert_eq!(lifecycle(&w.status("s1"), "core").1, "stale-observation");
    let (code, _) = w.verify(
        "core",
        &w.lane,
        &commit,
        &["--checklist", r#"[{"index":0,"done":true}]"#],
    );
    assert_eq!(code, 2, "after the merge only the merged tree counts");
    let (code, out) = w.verify(
        "core",
        &w.root,
        &merged,
        &["--checklist", r#"[{"index":0,"done":true}]"#],
    );
    assert_eq!(
        (code, out["proof"]["integration"].clone()),
        (0, json!(true)),
        "{out}"
    );
    let (code, out) = w.node("done", "core", &["--session", "s1"]);
    assert_eq!((code, out["state"].as_str()), (0, Some("done")), "{out}");

    // Only this session's `done` satisfies the dependency.
    let s = w.status("s1");
    assert_eq!(
        (lifecycle(&s, "core").0, s["ready"].clone()),
        ("done", json!([["docs"]]))
    );
    assert_eq!(lifecycle(&w.status("s2"), "docs").0, "blocked");
    let (code, out, _) = cairn(&["journal", "audit"], "", Some(&w.journal.path()));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_criterion_that_does_not_print_its_floor_fails() {
    let w = Work::new(&spec_text(
        "printf 'tests passed\\n'",
        "test result: ok",
        30_000,
    ));
    w.dispatched("core");
    let (code, out) = w.verify_lane("core");
    assert_eq!(
        (code, out["state"].as_str()),
        (4, Some("rejected")),
        "{out}"
    );
    assert_eq!(out["proof"]["criteria"][0]["failure"], "floor-missing");
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let w = Work::new(&spec_text(
        "sleep 60 & echo $! > straggler.pid; sleep 60",
        "never",
        1_000,
    ));
    w.dispatched("core");
    let commit = w.commit_lane();
    // The straggler's pid file is written into the tree: keep it out of `status`.
    let exclude = git(&w.lane, &["rev-parse", "--git-path", "info/exclude"]);
    let exclude = if Path::new(&exclude).is_absolute() {
        PathBuf::from(exclude)
    } else {
        w.lane.join(exclude)
    };
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(&exclude, "straggler.pid\n").unwrap();
    let started = std::time::Instant::now();
    let (code, out) = w.verify(
        "core",
        &w.lane,
        &commit,
        &["--checklist", r#"[{"index":0,"done":true}]"#],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the timeout was enforced"
    );
    assert_eq!(code, 4, "{out}");
    assert_eq!(out["proof"]["criteria"][0]["failure"], "timeout", "{out}");
    let pid = std::fs::read_to_string(w.lane.join("straggler.pid")).unwrap();
    // Gone, or a zombie (killed; the container's init has not reaped it yet).
    let state = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).unwrap_or_default();
    let running = state
        .lines()
        .any(|l| l.starts_with("State:") && !l.contains("zombie"));
    assert!(
        !running,
        "the background child {pid} was killed with its group: {state}"
    );
}

#[test]
fn user_and_agent_criteria() {
    let text = spec_text(OK, "test result: ok", 30_000).replace(
        "  - id: docs\n    task: Document the cache\n    depends_on: [core]\n",
        "  - id: docs\n    task: Document the cache\n",
    ) + "  - id: judge\n    task: t\n    acceptance:\n      - { id: C3, statement: s, evidence: { kind: agent, agent: critic, inputs: [src], rubric: r } }\n";
    let w = Work::new(&text);
    for n in ["docs", "judge"] {
        w.dispatched(n);
    }
    let head = w.head(&w.lane);
    // No controlling terminal (an agent's shell): the host cannot be asked, so the
    // user criterion fails; the positive path is `work_confirm`, on a terminal.
    let (code, out) = w.verify("docs", &w.lane, &head, &[]);
    assert_eq!(
        (code, out["proof"]["criteria"][0]["failure"].as_str()),
        (4, Some("user-confirmation-unavailable")),
        "{out}"
    );
    let (code, out) = w.verify("judge", &w.lane, &head, &[]);
    assert_eq!(
        (code, out["proof"]["criteria"][0]["failure"].as_str()),
        (4, Some("agent-unavailable")),
        "{out}"
    );
    // A review never mints verification: approval leaves the agent criterion failed.
    let (code, out) = w.node("review", "judge", &["--verdict", "approve"]);
    assert_eq!(
        code, 2,
        "a failed node is rejected, not reviewable into green: {out}"
    );
    // Nothing on the command line stands in for the host's confirmation.
    let (code, out) = w.verify(
        "docs",
        &w.lane,
        &head,
        &["--confirm", "C2=I confirm the docs"],
    );
    assert_eq!(
        (code, out["error"]["kind"].as_str()),
        (2, Some("usage")),
        "{out}"
    );
}

#[test]
fn remediation_is_bounded_and_then_only_escalation_remains() {
    let w = Work::new(&spec_text("exit 1", "x", 30_000));
    w.dispatched("core");
    let lane = w.lane.to_str().unwrap().to_owned();
    let head = w.head(&w.lane);
    for round in 1..=2 {
        assert_eq!(
            w.verify(
                "core",
                &w.lane,
                &head,
                &["--checklist", r#"[{"index":0,"done":true}]"#]
            )
            .0,
            4
        );
        let (code, out) = w.node(
            "remediate",
            "core",
            &["--run-id", &format!("r-{round}"), "--worktree", &lane],
        );
        assert_eq!(code, 0, "round {round}: {out}");
    }
    assert_eq!(
        w.verify(
            "core",
            &w.lane,
            &head,
            &["--checklist", r#"[{"index":0,"done":true}]"#]
        )
        .0,
        4
    );
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-3", "--worktree", &lane],
    );
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("budget")),
        "{out}"
    );
    let (code, out) = w.node(
        "remediate",
        "core",
        &["--run-id", "r-3", "--worktree", "/elsewhere"],
    );
    assert_eq!(code, 2, "{out}");
    let (code, out) = w.node("escalate", "core", &["--reason", "two rounds spent"]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("escalated")),
        "{out}"
    );
}

macro_rules! snap {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]"),
            (r"\b[0-9a-f]{64}\b", "[SHA256]"),
            (r"\b[0-9a-f]{40}\b", "[OID]"),
            (r"\b[0-9a-f]{16}:", "[SPEC]:"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
            (r#""PATH": "[^"]*""#, r#""PATH": "[PATH]""#),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn snapshots_of_validate_and_status() {
    let bad = "title: t\ndescription: d\nintent: i\nwork:\n  - id: a\n    task: t\n    depends_on: [b]\n    touches: ['src/**']\n    acceptance: [{id: A, statement: s, evidence: {kind: command, run: make, expect: {exit: 0, output_includes: ''}}}]\n  - id: b\n    task: t\n    depends_on: [a]\n    acceptance: [{id: B, statement: s, evidence: {kind: user, prompt: p}}]\n";
    let w = Work::new(bad);
    let (code, out) = w.run(&["validate", w.spec.to_str().unwrap()]);
    snap!(
        "work_validate_errors",
        format!(
            "exit: {code}\n{}\n",
            serde_json::to_string_pretty(&out).unwrap()
        )
    );

    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.dispatched("core");
    assert_eq!(w.verify_lane("core").0, 0);
    let out = w.status("s1");
    snap!(
        "work_status_verified",
        serde_json::to_string_pretty(&out).unwrap()
    );
    let out = w.status("s2");
    snap!(
        "work_status_other_session",
        serde_json::to_string_pretty(&out).unwrap()
    );
    let (code, out) = w.run(&["ready", w.spec.to_str().unwrap(), "--session", "s1"]);
    snap!(
        "work_ready",
        format!(
            "exit: {code}\n{}\n",
            serde_json::to_string_pretty(&out).unwrap()
        )
    );
}

#[test]
fn amend_criterion_appends_a_chain_entry_and_refuses_what_is_not_an_amendment() {
    let text = format!(
        "# Generated by work_promote from docs/cache.md; decompose before approval.\n{}",
        spec_text(OK, "test result: ok", 30_000)
    );
    let w = Work::new(&text);
    let spec = w.spec.to_str().unwrap().to_owned();
    let amend = |before: &str, after: &str| {
        w.run(&[
            "amend-criterion",
            "--spec",
            &spec,
            "--criterion",
            "C1",
            "--before",
            before,
            "--after",
            after,
            "--reason",
            "narrowed",
            "--authority",
            "ADR-7",
        ])
    };
    // The draft is missing: unavailable, nothing written.
    let (code, out) = amend("Cache hits skip the backend", "Hits skip the backend");
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("criterion-draft-unavailable")),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&w.spec).unwrap(), text);
    assert!(!w.journal.path().exists());

    std::fs::create_dir_all(w.root.join("docs")).unwrap();
    std::fs::write(w.root.join("docs/cache.md"), "# Cache\n\n## Criteria <!-- work:criteria -->\n\n- C1: Cache hits skip the backend\n- C2: Docs approved\n").unwrap();
    let (code, out) = w.run(&["validate", &spec]);
    assert_eq!((code, out["valid"].clone()), (0, json!(true)), "{out}");
    let (code, out) = amend(
        "Cache hits skip the backend",
        "Hits skip the backend and are counted",
    );
    assert_eq!(
        (code, out["events"].clone()),
        (0, json!(["criterion-amended"])),
        "{out}"
    );
    let now = std::fs::read_to_string(&w.spec).unwrap();
    assert!(
        now.starts_with("# Generated by work_promote from docs/cache.md;"),
        "{now}"
    );
    assert!(now.contains("authority: ADR-7"), "{now}");
    let (code, out) = w.run(&["validate", &spec]);
    assert_eq!(
        (code, out["valid"].clone()),
        (0, json!(true)),
        "the amended spec validates with its lineage: {out}"
    );
    // Stale `before`, a no-op, an unknown criterion, a split: refused, nothing written.
    let bytes = w.journal.bytes();
    for (before, after, rule) in [
        (
            "Cache hits skip the backend",
            "X",
            "criterion-before-mismatch",
        ),
        (
            "Hits skip the backend and are counted",
            "Hits skip the backend and are counted",
            "criterion-amendment-noop",
        ),
        (
            "Hits skip the backend and are counted",
            "- C1: a\n- C9: b",
            "not-an-amendment",
        ),
    ] {
        let (code, out) = amend(before, after);
        assert_eq!(
            (code, out["error"]["rule"].as_str()),
            (2, Some(rule)),
            "{out}"
        );
    }
    assert_eq!(std::fs::read_to_string(&w.spec).unwrap(), now);
    assert_eq!(w.journal.bytes(), bytes);
    // A silent edit of the statement breaks the lineage.
    std::fs::write(
        &w.spec,
        now.replace(
            "statement: Hits skip the backend and are counted",
            "statement: Silently edited",
        ),
    )
    .unwrap();
    let (code, out) = w.run(&["validate", &spec]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("criterion-amendment-endpoint-mismatch")),
        "{out}"
    );
}

#[test]
fn a_scope_amendment_is_raised_passed_up_and_resolved_only_by_an_explicit_choice() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.dispatched("core");
    let (code, out) = w.node(
        "raise-scope",
        "core",
        &[
            "--target",
            "lane",
            "--add-touch",
            "reports/published",
            "--change",
            "Add reports/published to touches",
            "--rationale",
            "The publication step writes there",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let id = out["request"]["request_id"].as_str().unwrap().to_owned();
    assert_eq!(
        w.node(
            "raise-scope",
            "core",
            &[
                "--target",
                "x",
                "--add-touch",
                "y",
                "--change",
                "c",
                "--rationale",
                "r"
            ]
        )
        .0,
        2,
        "one pending at a time"
    );
    assert_eq!(
        w.node(
            "raise-scope",
            "docs",
            &[
                "--target",
                "x",
                "--add-touch",
                "src/**",
                "--change",
                "c",
                "--rationale",
                "r"
            ]
        )
        .0,
        2
    );
    let (code, _) = w.node(
        "pass-up",
        "core",
        &[
            "--request-id",
            "amend-made-up",
            "--context",
            "c",
            "--recommendation",
            "r",
        ],
    );
    assert_eq!(code, 2, "never a fabricated request id");
    let (code, out) = w.node(
        "pass-up",
        "core",
        &[
            "--request-id",
            &id,
            "--context",
            "held at the boundary",
            "--recommendation",
            "approve the literal directory",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let resolve = |extra: &[&str]| {
        let mut a = vec!["--request-id", id.as_str(), "--operator", "ana"];
        a.extend_from_slice(extra);
        w.node("resolve-scope", "core", &a)
    };
    // The resolution rules are a table on the machine (machines/src/work/node/tests.rs,
    // given / when / then); here one refusal pins the CLI's flags (a multi-select, a
    // custom instruction, on behalf of the user) and the rejection's exit code.
    let (code, out) = resolve(&[
        "--selected",
        "0",
        "--selected",
        "3",
        "--custom-instruction",
        "x",
        "--on-behalf-of-user",
    ]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("custom-alone")),
        "{out}"
    );
    let before = std::fs::read_to_string(&w.spec).unwrap();
    let (code, out) = resolve(&[
        "--selected",
        "0",
        "--on-behalf-of-user",
        "--note",
        "the artifact is this node's",
    ]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("amendment-approved")),
        "{out}"
    );
    assert_ne!(std::fs::read_to_string(&w.spec).unwrap(), before);
    let (code, out) = w.run(&["validate", w.spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    // Re-plan (the spec now has the touch), then redispatch in the same worktree only.
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(
        (code, out["plan"]["writable_roots"].clone()),
        (0, json!(["src/cache/", "reports/published"])),
        "{out}"
    );
    let base = w.head(&w.lane);
    let (code, _) = w.node(
        "dispatch",
        "core",
        &[
            "--run-id",
            "r-3",
            "--worktree",
            "/tmp/elsewhere",
            "--expected-commit",
            &base,
        ],
    );
    assert_eq!(code, 2, "the same persistent worktree");
    let lane = w.lane.to_str().unwrap().to_owned();
    assert_eq!(
        w.node(
            "dispatch",
            "core",
            &[
                "--run-id",
                "r-3",
                "--worktree",
                &lane,
                "--expected-commit",
                &base
            ]
        )
        .0,
        0
    );

    // A rejection changes nothing.
    let (code, out) = w.node(
        "raise-scope",
        "core",
        &[
            "--target",
            "lane",
            "--add-touch",
            "vendor",
            "--change",
            "c",
            "--rationale",
            "r",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let id = out["request"]["request_id"].as_str().unwrap().to_owned();
    let spec_before = std::fs::read_to_string(&w.spec).unwrap();
    let (code, out) = w.node(
        "resolve-scope",
        "core",
        &["--request-id", &id, "--selected", "2", "--operator", "root"],
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("dispatched")),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&w.spec).unwrap(), spec_before);
    let (code, out, _) = cairn(&["journal", "audit"], "", Some(&w.journal.path()));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_refused_plan_writes_no_brief_and_no_journal() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    w.dispatched("core");
    let briefs = w.root.join(".work/.cache/briefs");
    let before: Vec<_> = std::fs::read_dir(&briefs).unwrap().collect();
    // The touches change, so the brief would be new; a dispatched node cannot be re-planned.
    let spec = std::fs::read_to_string(&w.spec)
        .unwrap()
        .replace("[src/cache/]", "[src/cache/, docs/]");
    std::fs::write(&w.spec, spec).unwrap();
    let bytes = w.journal.bytes();
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("plannable")),
        "{out}"
    );
    assert_eq!(
        std::fs::read_dir(&briefs).unwrap().count(),
        before.len(),
        "no brief written"
    );
    assert_eq!(w.journal.bytes(), bytes);
}

/// A verb answers from the spec it read: a file edited while it ran (here by the
/// criterion itself) neither changes what it recorded nor turns the recorded
/// verification into an error exit (it was exit 2 after the write: the verb read
/// the spec again to print the lifecycle).
#[test]
fn a_spec_edited_while_a_verb_runs_does_not_undo_its_answer() {
    let w = Work::new(&spec_text(
        "printf 'title: [' > ../repo/.work/specs/cache.yaml; printf 'test result: ok\\n'",
        "test result: ok",
        30_000,
    ));
    w.dispatched("core");
    let before = std::fs::read_to_string(&w.spec).unwrap();
    let (code, out) = w.verify_lane("core");
    assert_ne!(
        std::fs::read_to_string(&w.spec).unwrap(),
        before,
        "the criterion edited it"
    );
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    assert_eq!(
        out["lifecycle"], "ready",
        "the axes of the spec it read: {out}"
    );
}
