//! One vocabulary and one not-found rule across the verbs: the canonical spellings
//! (`--repo`, `--spec`, `--saga-id`, milliseconds) with the older ones still
//! accepted where a helper or skill uses them; "nothing recorded under this id" is
//! `no-such-stream`, exit 2, everywhere but `saga restore` (its contract answers
//! `found: false`); completions and a man page come from the same command line.

use std::path::Path;

use serde_json::{json, Value};

use crate::cli::run;
use crate::support::{kind_field_rule, TempJournal};

fn answer(args: &[&str], db: Option<&Path>) -> (i32, Value) {
    let (code, stdout, stderr) = run(args, db);
    let v =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}{stderr}"));
    (code, v)
}

fn not_found(args: &[&str], db: &Path, field: &str) {
    let (code, v) = answer(args, Some(db));
    assert_eq!(code, 2, "{args:?}: {v}");
    assert_eq!(v["error"]["kind"], "no-such-stream", "{args:?}: {v}");
    assert_eq!(v["error"]["rule"], "stream-has-events", "{args:?}: {v}");
    assert_eq!(v["error"]["field"], field, "{args:?}: {v}");
}

#[test]
fn nothing_recorded_under_an_id_is_one_error_everywhere() {
    let t = TempJournal::new();
    drop(t.journal()); // an empty journal: the file exists, the streams do not
    let db = t.path();
    not_found(&["state", "park/ep-nope"], &db, "stream");
    not_found(
        &["journal", "log", "--stream", "park/ep-nope"],
        &db,
        "stream",
    );
    not_found(
        &["journal", "audit", "--stream", "park/ep-nope"],
        &db,
        "stream",
    );
    not_found(&["ship", "status", "--short-id", "nope"], &db, "short_id");
    not_found(&["saga", "show", "--saga-id", "issue-404"], &db, "saga_id");
    // The contract sheet's exception: saga.py's restore answers found: false.
    let (code, v) = answer(&["saga", "restore", "--saga-id", "issue-404"], Some(&db));
    assert_eq!(
        (code, v),
        (0, json!({"saga_id": "issue-404", "found": false}))
    );
    // Without any journal, ship status names the run it does not know either.
    let none = tempfile::tempdir().unwrap();
    let absent = none.path().join("absent.db");
    not_found(
        &["ship", "status", "--short-id", "nope"],
        &absent,
        "short_id",
    );
    // Every other read that names what it reads is `no-journal` on a journal that
    // is not there (a mistyped --db), naming the flag; restore and scan answer
    // a first run's empty answers, as saga.py does.
    for args in [
        &["saga", "show", "--saga-id", "issue-404"][..],
        &["state", "park/ep-nope"],
        &["journal", "log", "--stream", "park/ep-nope"],
    ] {
        let (code, v) = answer(args, Some(&absent));
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["no-journal", "db", "journal-exists"]),
            "{args:?}: {v}"
        );
    }
    let (code, v) = answer(
        &["saga", "restore", "--saga-id", "issue-404"],
        Some(&absent),
    );
    assert_eq!((code, &v["found"]), (0, &json!(false)), "{v}");
    let (code, v) = answer(&["saga", "scan"], Some(&absent));
    assert_eq!((code, &v["count"]), (0, &json!(0)), "{v}");
    // journal copy names its own flags: --from that is not there, --to that holds rows.
    let (code, v) = answer(
        &[
            "journal",
            "copy",
            "--from",
            &absent.to_string_lossy(),
            "--to",
            &db.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(
        (code, kind_field_rule(&v)),
        (2, ["no-journal", "from", "journal-exists"]),
        "{v}"
    );
    assert!(!absent.exists(), "a read created the journal");
    // --to that is not a journal (a symbolic link) names `to` (helper-70: `db`).
    let link = absent.with_file_name("link.db");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let (code, v) = answer(
        &[
            "journal",
            "copy",
            "--from",
            &db.to_string_lossy(),
            "--to",
            &link.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(
        (code, kind_field_rule(&v)),
        (2, ["not-a-journal", "to", "is-a-journal"]),
        "{v}"
    );
}

#[test]
fn the_canonical_spellings_and_the_older_ones_both_parse() {
    // --repo on park observe-vcs (was --root): the field is the flag's name.
    for flag in ["--repo", "--root"] {
        let (code, v) = answer(&["park", "observe-vcs", flag, "relative/dir"], None);
        assert_eq!(code, 2, "{v}");
        assert_eq!(
            (v["error"]["field"].as_str(), v["error"]["rule"].as_str()),
            (Some("repo"), Some("absolute-path")),
            "{flag}: {v}"
        );
    }
    // --spec on work validate (a bare SPEC still parses), never both.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(&spec, "title: t\ndescription: d\nintent: i\nwork: []\n").unwrap();
    let spec = spec.to_str().unwrap();
    let (a, b) = (
        run(&["work", "validate", "--spec", spec], None),
        run(&["work", "validate", spec], None),
    );
    assert_eq!(a.0, 0, "{}{}", a.1, a.2);
    assert_eq!((a.0, &a.1), (b.0, &b.1));
    let (code, v) = answer(&["work", "validate", "--spec", spec, spec], None);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (2, Some("usage")),
        "{v}"
    );
    // One unit: --timeout-ms; build_loop.py's --timeout (seconds) stays, not both.
    let (code, v) = answer(
        &[
            "build-loop",
            "--issue",
            "1",
            "--timeout-ms",
            "1000",
            "--timeout",
            "1",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(
        (code, v["error"]["rule"].as_str()),
        (2, Some("conflict")),
        "{v}"
    );
    // --saga-id on saga save (saga.py's --id is accepted): both name the same flag.
    for flag in ["--saga-id", "--id"] {
        let (_, stdout, _) = run(
            &["saga", "save", flag, "issue-1", "--next-round", "2"],
            None,
        );
        let v: Value = serde_json::from_str(&stdout).unwrap();
        assert_ne!(v["error"]["kind"], "usage", "{flag}: {v}");
    }
}

#[test]
fn completions_and_man_pages_come_from_the_command_line() {
    let (code, bash, _) = run(&["completions", "bash"], None);
    assert_eq!(code, 0);
    assert!(
        bash.contains("cairn") && bash.contains("observe-vcs"),
        "{bash}"
    );
    // Completion offers what a verb takes: not the hidden copy of a global it
    // ignores, nor a hidden older spelling (clap_complete lists hidden
    // arguments unless they are left out of the tree it is given).
    let opts = |verb: &str| {
        let case = format!("        {verb})\n            opts=\"");
        let at = bash.find(&case).unwrap_or_else(|| panic!("{verb}: {bash}"));
        let rest = &bash[at + case.len()..];
        rest[..rest.find('"').unwrap_or_default()]
            .split(' ')
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let graph = opts("cairn__subcmd__graph");
    assert!(graph.contains(&"--format".to_owned()), "{graph:?}");
    assert!(
        !graph.iter().any(|o| o == "--db" || o == "--signing-key"),
        "{graph:?}"
    );
    let check = opts("cairn__subcmd__park__subcmd__evaluate");
    assert!(check.contains(&"--db".to_owned()), "{check:?}");
    let copy = opts("cairn__subcmd__journal__subcmd__copy");
    assert!(!copy.contains(&"--db".to_owned()), "{copy:?}");
    let validate = opts("cairn__subcmd__work__subcmd__validate");
    assert!(validate.contains(&"--spec".to_owned()), "{validate:?}");
    assert!(
        !bash.contains("--timeout "),
        "the hidden --timeout is offered"
    );
    let (code, zsh, _) = run(&["completions", "zsh"], None);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef cairn"), "{zsh}");
    let (code, page, _) = run(&["man"], None);
    assert_eq!(code, 0);
    assert!(page.contains(".TH cairn"), "{page}");
    let (code, page, _) = run(&["man", "park", "check"], None);
    assert_eq!(code, 0);
    assert!(page.contains(".TH cairn-park-check"), "{page}");
    // Examples are set as typed (no filling, no hyphenation), so they paste from
    // `man` as from --help.
    let (_, page, _) = run(&["man", "park", "prepare-attempt"], None);
    assert!(
        page.contains("\n.nh\n") && page.contains(".SH NOTES"),
        "{page}"
    );
    assert!(!page.contains(".SH EXTRA"), "{page}");
    let example = page.find("  echo").expect("the example");
    let nofill = page[..example]
        .rfind(".nf\n")
        .expect("no-fill before the example");
    assert!(!page[nofill..example].contains(".fi"), "{page}");
    let (code, v) = answer(&["man", "park", "chekc"], None);
    assert_eq!(
        (code, v["error"]["rule"].as_str()),
        (2, Some("known-verb")),
        "{v}"
    );
    // A verb's page names the verb as typed, its own hyphens kept.
    let (_, v) = answer(&["man", "saga", "merge-turn", "tak"], None);
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`cairn saga merge-turn tak` is not a verb")
            && message.contains("`cairn saga merge-turn --help`"),
        "{v}"
    );
    // The global options a verb takes are on its page, as on its --help; a verb
    // that ignores them shows none.
    let (_, page, _) = run(&["man", "park", "evaluate"], None);
    assert!(page.contains("\\-\\-db"), "{page}");
    let (_, page, _) = run(&["man", "graph"], None);
    assert!(!page.contains("\\-\\-db"), "{page}");
}

/// A journal location that looks like a mistyped URL is refused (exit 2, the
/// flag named, rule journal-location) and never becomes a file: `postgress://…`,
/// `://x`, `postgres:/x`, `sqlite:x.db`, a leading space — as `--db`, as
/// `CAIRN_DB` and as `journal copy --to`. A relative path that merely contains
/// `://` after a directory (`a/b://c.db`) is a path.
#[test]
fn a_mistyped_journal_url_is_refused_and_writes_nothing() {
    use std::process::Command;
    let scratch = tempfile::tempdir().unwrap();
    let source = TempJournal::new();
    drop(source.journal());
    // `cairn ARGS` in the scratch directory, `CAIRN_DB` as given, `stdin` fed:
    // the exit code, stdout as JSON, and stdout and stderr as text.
    let run_with = |args: &[&str], env_db: Option<&str>, stdin: &str| {
        use std::io::Write;
        use std::process::Stdio;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(args)
            .current_dir(scratch.path())
            .env_remove("CAIRN_DB")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(v) = env_db {
            cmd.env("CAIRN_DB", v);
        }
        let mut child = cmd.spawn().unwrap();
        // A verb that refuses before reading stdin closes it: ignore EPIPE.
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), v, text)
    };
    let run_in = |args: &[&str], env_db: Option<&str>| {
        let (code, v, _) = run_with(args, env_db, "");
        (code, v)
    };
    // A verb that records, and needs no stdin.
    let prepare = [
        "claim",
        "acquire",
        "--owner",
        "a",
        "--claim-id",
        "c1",
        "--ttl",
        "30s",
        "--resource",
        "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
    ];
    let from = source.path();
    let from = from.to_str().unwrap();
    for bad in [
        "postgress://u@h/db",
        "://x",
        "postgres:/x",
        "postgres:x",
        "sqlite:x.db",
        " postgres://h/d",
        "x.db ",
        "-",
    ] {
        let (code, v) = run_in(&["journal", "copy", "--from", from, "--to", bad], None);
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["input", "to", "journal-location"]),
            "{bad:?}: {v}"
        );
        let (code, v) = run_in(&["--db", bad, "journal", "verify"], None);
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["input", "db", "journal-location"]),
            "{bad:?}: {v}"
        );
        let (code, v) = run_in(&prepare, Some(bad));
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["input", "db", "journal-location"]),
            "CAIRN_DB={bad:?}: {v}"
        );
        // A prepare-attempt that would record nothing (no ids yet: a `retry`
        // answer) opens no journal, and still refuses the location (helper-62).
        let retry = json!({"mode": "park", "anchor_bead": "rsry-1", "episode_id": null,
            "intent_id": null, "prior_receipts": []});
        let (code, v, _) = run_with(
            &["--db", bad, "park", "prepare-attempt"],
            None,
            &retry.to_string(),
        );
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["input", "db", "journal-location"]),
            "prepare-attempt --db {bad:?}: {v}"
        );
    }
    // The refusal echoes what was typed, never its password (helper-63).
    for bad in [" postgresql://u:s3cret@h/db", "postgresql:/u:s3cret@h/db"] {
        let (code, v, both) = run_with(&["--db", bad, "journal", "verify"], None, "");
        assert_eq!(
            (code, kind_field_rule(&v)),
            (2, ["input", "db", "journal-location"]),
            "{both}"
        );
        assert!(!both.contains("s3cret"), "{both}");
    }
    // A URL naming no server or no user is the caller's to mend (exit 2), not
    // a server that could not be reached (helper-75: exit 1, `connect`).
    for bad in ["postgres://", "postgresql:///db", "postgresql://h/db?user="] {
        let (code, v, both) = run_with(&["--db", bad, "journal", "verify"], None, "");
        assert_eq!(
            (code, v["error"]["field"].as_str()),
            (2, Some("db")),
            "{bad}: {both}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "a refusal wrote {left:?}");
    let (code, v) = run_in(
        &["journal", "copy", "--from", from, "--to", "a/b://c.db"],
        None,
    );
    assert_eq!((code, &v["copy"]["copied"]), (0, &json!(true)), "{v}");
}

/// A page size past what the journal can count is a bad `--limit` (exit 2,
/// `field: limit`), not an `invalid-append` naming the limit plus one
/// (helper-70, LOW).
#[test]
fn a_log_limit_past_the_journals_count_names_the_limit() {
    for limit in ["9223372036854775807", "18446744073709551615", "0"] {
        let (code, v) = answer(&["journal", "log", "--limit", limit], None);
        assert_eq!(
            (
                code,
                v["error"]["field"].as_str(),
                v["error"]["rule"].as_str()
            ),
            (2, Some("limit"), Some("value")),
            "{limit}: {v}"
        );
    }
}

/// A key cairn cannot sign with is a bad `--signing-key` (exit 2, `field:
/// signing_key`, `rule: usable-key`), and no journal is made for it (helper-70,
/// LOW: exit 1 with no field, `kind: io` for bytes that are not text, and an
/// empty journal left behind).
#[test]
fn an_unusable_signing_key_is_a_bad_flag_and_makes_no_journal() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8], mode: u32| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    };
    let db = dir.path().join("j.db");
    let acquire = |key: &str| {
        answer(
            &[
                "claim",
                "acquire",
                "--resource",
                "ship/abc",
                "--owner",
                "a",
                "--claim-id",
                "c1",
                "--ttl",
                "60",
                "--signing-key",
                key,
            ],
            Some(&db),
        )
    };
    for key in [
        write("text", b"not a key\n", 0o600),
        write("bytes", b"\xff\xfe", 0o600),
        write("open", &[b'a'; 64], 0o644),
        std::path::PathBuf::from("/dev/null"),
        // A path no key can be at: its parent is a file (helper-72: exit 1, io).
        dir.path().join("text").join("x"),
    ] {
        let (code, v) = acquire(key.to_str().unwrap());
        assert_eq!(
            (
                code,
                v["error"]["field"].as_str(),
                v["error"]["rule"].as_str()
            ),
            (2, Some("signing_key"), Some("usable-key")),
            "{key:?}: {v}"
        );
        assert!(!db.exists(), "{key:?}: a journal was made");
    }
    // An empty file is made a journal by any writer's open: the key is read first
    // there too (helper-72: the file was migrated before the refusal).
    std::fs::write(&db, b"").unwrap();
    let (code, v) = acquire("/dev/null");
    assert_eq!(
        (code, v["error"]["rule"].as_str()),
        (2, Some("usable-key")),
        "{v}"
    );
    assert_eq!(
        std::fs::metadata(&db).unwrap().len(),
        0,
        "the empty file is as it was"
    );
}
