//! Usage errors name what is wrong: the JSON error is built from clap's structured
//! error (every missing argument by its flag, the invalid value and the valid ones,
//! clap's suggestion), never only clap's first line.

use serde_json::Value;

use crate::cli::run;

/// The JSON error a refused command line prints (exit 2).
fn usage(args: &[&str]) -> Value {
    let (code, stdout, _) = run(args, None);
    assert_eq!(code, 2, "{args:?}: {stdout}");
    let v: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(v["error"]["kind"], "usage", "{v}");
    v
}

fn fields(v: &Value) -> Vec<&str> {
    v["error"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|x| x["field"].as_str().expect("a field"))
        .collect()
}

/// SQLite waits at most a C int of milliseconds: a longer wait is refused as
/// usage, by flag or environment, not a panic (helper-47).
#[test]
fn a_busy_timeout_past_what_sqlite_takes_is_refused() {
    let v = usage(&["--busy-timeout-ms", "2147483648", "journal", "verify"]);
    assert_eq!(
        (v["error"]["field"].as_str(), v["error"]["rule"].as_str()),
        (Some("busy_timeout_ms"), Some("value"))
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--db", db.to_str().unwrap(), "journal", "verify"])
        .env("CAIRN_BUSY_TIMEOUT_MS", "3000000000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!db.exists());
    // The library takes any Duration and waits as long as SQLite can.
    let options = cairn::journal::Options {
        busy_timeout: std::time::Duration::from_secs(u64::MAX / 2),
        ..Default::default()
    };
    let j = cairn::journal::Journal::open(&db, &options).unwrap();
    assert!(j.verify().unwrap().ok);
}

#[test]
fn a_missing_positional_is_named() {
    insta::assert_json_snapshot!(usage(&["graph"]));
}

#[test]
fn every_missing_flag_is_named() {
    let v = usage(&["ship", "open", "--repo", "/srv/r"]);
    assert_eq!(
        fields(&v),
        [
            "short_id",
            "expected_basename",
            "branch",
            "worktree_path",
            "target_branch",
            "tiebreaker_4",
            "close_step",
            "review_status"
        ]
    );
    insta::assert_json_snapshot!(v);
    // A required group (`--spec` or the older bare SPEC) is named by its flag.
    assert_eq!(fields(&usage(&["work", "status"])), ["session", "spec"]);
}

#[test]
fn an_invalid_value_names_the_valid_ones_and_a_suggestion() {
    insta::assert_json_snapshot!(usage(&["graph", "park", "--format", "dott"]));
    let v = usage(&["state", "park/ep-x", "--at", "abc"]);
    assert_eq!(
        (v["error"]["field"].as_str(), v["error"]["rule"].as_str()),
        (Some("at"), Some("value"))
    );
}

#[test]
fn unknown_arguments_and_subcommands_carry_clap_suggestions() {
    insta::assert_json_snapshot!(usage(&["state", "park/ep-x", "--att", "2"]));
    let v = usage(&["jurnal"]);
    assert_eq!(v["error"]["suggestions"], serde_json::json!(["journal"]));
    assert_eq!(v["error"]["rule"], "unknown-subcommand");
}

#[test]
fn a_group_without_its_verb_names_the_group() {
    let v = usage(&["saga", "merge-turn"]);
    assert_eq!(v["error"]["rule"], "subcommand-required");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`cairn saga merge-turn`"),
        "{v}"
    );
}

#[test]
fn conflicting_flags_name_both() {
    let v = usage(&["build-loop", "--record", "r.json", "--issue", "3"]);
    assert_eq!(v["error"]["rule"], "conflict");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("--record") && message.contains("--issue"),
        "{v}"
    );
}

/// The global options are hidden on the verbs that ignore them (pinned by help
/// snapshots) and still parse there, before or after the verb.
#[test]
fn global_options_are_hidden_where_ignored_and_still_parse() {
    use crate::cli::{run, transcript};
    insta::assert_snapshot!("graph_help", transcript(&["graph", "--help"], None));
    insta::assert_snapshot!(
        "journal_log_help",
        transcript(&["journal", "log", "--help"], None)
    );
    insta::assert_snapshot!(
        "claim_show_help",
        transcript(&["claim", "show", "--help"], None)
    );
    // Every command line that parsed before still does.
    let t = crate::support::TempJournal::new();
    let db = t.path();
    let db = db.to_str().unwrap();
    for args in [
        &["graph", "park", "--db", db, "--busy-timeout-ms", "7"][..],
        &["--db", db, "--signing-key", "/nonexistent", "graph", "park"],
        &["machines", "--signing-key", "/nonexistent"],
        &["schema", "state", "--db", db],
        &[
            "journal", "copy", "--db", db, "--from", db, "--to", db, "--help",
        ],
        // The verbs that answer on their document alone still take the globals.
        &[
            "park",
            "observe-vcs",
            "--db",
            db,
            "--signing-key",
            "k",
            "--help",
        ],
        &["saga", "show", "--signing-key", "k", "--help"],
    ] {
        let (code, stdout, stderr) = run(args, None);
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
    }
    // `journal log` reads --db given after it, and accepts the hidden --signing-key.
    let (code, stdout, _) = run(&["journal", "log", "--db", db, "--signing-key", "k"], None);
    assert_eq!(code, 2, "{stdout}");
    assert!(stdout.contains("\"kind\":\"no-journal\""), "{stdout}");
}

/// A flag that needs another is clap's check (`requires`), named like any missing
/// flag: `pr record-merge --repo` without `--target`.
#[test]
fn a_flag_that_needs_another_names_it() {
    let v = usage(&[
        "pr",
        "record-merge",
        "--pr",
        "https://github.com/o/r/pull/7",
        "--repo",
        "/srv/r",
    ]);
    assert_eq!(fields(&v), ["target"]);
    assert_eq!(v["error"]["rule"], "required", "{v}");
}

/// A negative number is a value the flag refuses (`field` is the flag), never an
/// unknown argument named `1`.
#[test]
fn a_negative_number_is_the_flags_invalid_value() {
    for (args, field) in [
        (&["journal", "log", "--limit", "-1"][..], "limit"),
        (&["state", "park/ep-x", "--at", "-1"], "at"),
        (
            &["saga", "scan", "--max-candidates", "-3"],
            "max_candidates",
        ),
        (&["journal", "log", "--since", "-1"], "since"),
    ] {
        let v = usage(args);
        assert_eq!(
            (&v["error"]["field"], &v["error"]["rule"]),
            (&serde_json::json!(field), &serde_json::json!("value")),
            "{args:?}: {v}"
        );
    }
    // A value that starts with `-` where a text is expected is that flag's value.
    let t = crate::support::TempJournal::new();
    drop(t.journal());
    let (code, stdout, _) = run(
        &["journal", "verify", "--expect-head", "-1"],
        Some(&t.path()),
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (code, crate::support::kind_field_rule(&v)),
        (2, ["input", "expect_head", "head-format"]),
        "{v}"
    );
}

#[test]
fn help_on_help_is_the_top_level_page() {
    for flag in ["--help", "-h"] {
        let (code, stdout, _) = run(&["help", flag], None);
        assert_eq!(code, 0, "help {flag}: {stdout}");
        assert!(
            stdout.starts_with("Usage: cairn") || stdout.contains("\nUsage: cairn"),
            "{stdout}"
        );
        assert!(stdout.contains("help "), "the page lists `help`: {stdout}");
    }
    // Anything else after `help` is still a verb's name.
    usage(&["help", "--nope"]);
}

/// A journal whose path is not UTF-8 is read as itself: its own events, not
/// those of a file whose name has U+FFFD in that place (helper-47).
#[cfg(unix)]
#[test]
fn a_journal_at_a_path_that_is_not_utf8_is_read_as_itself() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(OsStr::from_bytes(b"p\xff"));
    let lookalike = dir.path().join("p\u{fffd}");
    for (at, events) in [(&odd, 1u64), (&lookalike, 2)] {
        std::fs::create_dir(at).unwrap();
        let mut j = cairn::journal::Journal::open(&at.join("j.db"), &Default::default()).unwrap();
        for v in 0..events {
            j.append(&crate::journal::append("ticket/a", v, &["{}"], None))
                .unwrap();
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(odd.join("j.db"))
        .args(["journal", "verify"])
        .env_remove("CAIRN_DB")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(
        (out.status.code(), v["events"].as_u64()),
        (Some(0), Some(1)),
        "{v}"
    );
}
