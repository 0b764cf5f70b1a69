//! The journal's read verbs end to end: `journal log` pages and never truncates
//! silently, `journal streams`, and the did-you-mean on an unknown machine or
//! stream.

use serde_json::Value;

use crate::cli::{run, transcript};
use crate::journal::append;
use crate::support::TempJournal;

/// A journal of 1,005 events: 1,000 on `ticket/a`, then 5 on `ticket/b`.
fn thousand_and_five() -> TempJournal {
    let t = TempJournal::new();
    let mut j = t.journal();
    let payloads: Vec<String> = (0..1000).map(|n| format!("{{\"n\":{n}}}")).collect();
    let payloads: Vec<&str> = payloads.iter().map(String::as_str).collect();
    j.append(&append("ticket/a", 0, &payloads, None)).unwrap();
    j.append(&append("ticket/b", 0, &["{}"; 5], None)).unwrap();
    t
}

fn json_page(args: &[&str], t: &TempJournal) -> (i32, Value, String) {
    let (code, stdout, stderr) = run(args, Some(&t.path()));
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (code, v, stderr)
}

fn seqs(page: &Value) -> Vec<i64> {
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_i64().unwrap())
        .collect()
}

#[test]
fn journal_log_pages_through_1005_events_with_a_cursor() {
    let t = thousand_and_five();
    // The default page is what it was (1,000), but it says that more exist.
    let (code, first, stderr) = json_page(&["journal", "log", "--format", "json"], &t);
    assert_eq!(code, 0);
    assert_eq!(seqs(&first), (1..=1000).collect::<Vec<_>>());
    assert_eq!(first["next_since"], 1000);
    assert!(stderr.contains("--since 1000"), "{stderr}");
    // The cursor is what --since consumes: the rest, and no cursor after the last.
    let (code, rest, stderr) = json_page(
        &["journal", "log", "--format", "json", "--since", "1000"],
        &t,
    );
    assert_eq!(code, 0);
    assert_eq!(seqs(&rest), (1001..=1005).collect::<Vec<_>>());
    assert!(rest.get("next_since").is_none(), "{rest}");
    assert_eq!(stderr, "");
    // Walking any page size visits every event once.
    let mut seen = Vec::new();
    let mut since = "0".to_owned();
    loop {
        let (_, page, _) = json_page(
            &[
                "journal", "log", "--format", "json", "--limit", "300", "--since", &since,
            ],
            &t,
        );
        seen.extend(seqs(&page));
        match page.get("next_since") {
            Some(n) => since = n.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, (1..=1005).collect::<Vec<_>>());
    // A page that ends exactly at the last event has no cursor.
    let (_, exact, _) = json_page(
        &[
            "journal", "log", "--format", "json", "--since", "1000", "--limit", "5",
        ],
        &t,
    );
    assert!(exact.get("next_since").is_none(), "{exact}");
}

#[test]
fn journal_log_pages_one_stream_and_the_table() {
    let t = thousand_and_five();
    let (_, page, _) = json_page(
        &[
            "journal", "log", "--format", "json", "--stream", "ticket/b", "--limit", "2",
        ],
        &t,
    );
    assert_eq!(seqs(&page), [1001, 1002]);
    assert_eq!(page["next_since"], 1002);
    insta::assert_snapshot!(
        "journal_log_table_page",
        transcript(
            &["journal", "log", "--stream", "ticket/b", "--since", "1001", "--limit", "2"],
            Some(&t.path())
        )
    );
    // An empty page is not a page size.
    let (code, stdout, _) = run(&["journal", "log", "--limit", "0"], Some(&t.path()));
    assert_eq!(code, 2, "{stdout}");
    assert!(stdout.contains("\"field\":\"limit\""), "{stdout}");
}

/// Two ticket streams and a claim stream (a registered machine's, so `state`
/// reaches the stream check), at fixed times.
fn three_streams() -> TempJournal {
    let t = TempJournal::new();
    let mut j = t.journal();
    let mut t1 = append("ticket/t1", 0, &["{}", "{}"], None);
    t1.events[1].event_type = "closed".into();
    j.append(&t1).unwrap();
    j.append(&append("ticket/t2", 0, &["{}"], None)).unwrap();
    let mut claim = append("claim/park/ep-1", 0, &["{}"], None);
    claim.machine = "claim".into();
    claim.events[0].event_type = "acquired".into();
    j.append(&claim).unwrap();
    t
}

#[test]
fn journal_streams_lists_machine_version_last_event_and_time() {
    let t = three_streams();
    insta::assert_snapshot!(
        "journal_streams_json",
        transcript(&["journal", "streams"], Some(&t.path()))
    );
    insta::assert_snapshot!(
        "journal_streams_table",
        transcript(
            &["journal", "streams", "--format", "table"],
            Some(&t.path())
        )
    );
    let empty = TempJournal::new();
    empty.journal();
    let (code, stdout, _) = run(&["journal", "streams"], Some(&empty.path()));
    assert_eq!((code, stdout.as_str()), (0, "{\"streams\":[]}\n"));
}

fn suggestions(args: &[&str], t: Option<&TempJournal>) -> (i32, String, Vec<String>) {
    let (code, stdout, _) = run(args, t.map(|t| t.path()).as_deref());
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let kind = v["error"]["kind"].as_str().unwrap_or_default().to_owned();
    let names = v["error"]["suggestions"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    (code, kind, names)
}

#[test]
fn an_unknown_machine_or_stream_names_the_nearest_known_ones() {
    let t = three_streams();
    let want = |kind: &str, names: &[&str]| {
        (
            2,
            kind.to_owned(),
            names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        )
    };
    // Machines: graph, exec, state (a stream of an unknown machine); schema and man
    // name the nearest verbs.
    assert_eq!(
        suggestions(&["graph", "shpi"], None),
        want("unknown-machine", &["ship"])
    );
    assert_eq!(
        suggestions(&["exec", "clam", "clam/x"], Some(&t)),
        want("unknown-machine", &["claim"])
    );
    assert_eq!(
        suggestions(&["state", "prk/ep-1"], Some(&t)),
        want("unknown-machine", &["park"])
    );
    assert_eq!(
        suggestions(&["schema", "park", "chek"], None),
        want("input", &["park check"])
    );
    assert_eq!(suggestions(&["man", "sag"], None), want("input", &["saga"]));
    // Streams: state, journal log --stream, journal audit --stream.
    assert_eq!(
        suggestions(&["state", "claim/park/ep-2"], Some(&t)),
        want("no-such-stream", &["claim/park/ep-1"])
    );
    for verb in ["log", "audit"] {
        assert_eq!(
            suggestions(&["journal", verb, "--stream", "ticket/t3"], Some(&t)),
            want("no-such-stream", &["ticket/t1", "ticket/t2"]),
            "{verb}"
        );
    }
    // Nothing near: no suggestions, the error as before.
    assert_eq!(
        suggestions(&["graph", "frobnicate"], None),
        want("unknown-machine", &[])
    );
    assert_eq!(
        suggestions(&["journal", "log", "--stream", "claim/elsewhere"], Some(&t)),
        want("no-such-stream", &[])
    );
    insta::assert_snapshot!(
        "no_such_stream_did_you_mean",
        transcript(
            &["journal", "log", "--stream", "ticket/t3"],
            Some(&t.path())
        )
    );
}

/// A name no person can read as it is (an escape sequence, a line break, a
/// right-to-left override, a zero-width space), in a journal written by the
/// library or by hand: every human format shows each such character as its
/// code point, so it neither drives the terminal nor forges a table row, and
/// the JSON formats carry the exact name with those characters escaped.
#[test]
fn human_formats_show_invisible_characters_in_names_as_code_points() {
    let t = TempJournal::new();
    let name = "ticket/a\u{1b}[2J\n9  ticket/forged  1\u{202e}gnp.exe\u{200b}";
    let mut j = t.journal();
    let mut b = append("ticket/b", 0, &["{}"], None);
    // The text of an escape, not the character: shown with its backslash
    // doubled, once, so it never reads as U+202E.
    b.events[0].event_type = "lit\\u{202e}eral".into();
    j.append(&b).unwrap();
    let mut a = append(name, 0, &["{}"], None);
    a.reads.push(("ticket/b".into(), 1));
    a.transition.context =
        r#"{"reads":[{"stream":"ticket/b","version":1,"state":"open\u001b]0;x\u0007"}]}"#.into();
    a.events[0].event_type = "comm\u{202e}ented".into();
    a.transition.command_name = "com\u{7}ment".into();
    j.append(&a).unwrap();
    drop(j);
    let only_line_breaks = |what: &str, out: &str| {
        let bad: Vec<char> = out
            .chars()
            .filter(|&c| c != '\n' && cairn::machines::evidence::names::is_invisible(c))
            .collect();
        assert!(bad.is_empty(), "{what}: {bad:?} in {out}");
    };
    for args in [
        &["journal", "log", "--format", "table"][..],
        &["journal", "streams", "--format", "table"],
        &["journal", "show", "2", "--format", "table"],
        &["journal", "audit", "--format", "md"],
        &["journal", "audit", "--format", "html"],
        &["journal", "links", "--format", "table"],
        &["journal", "links", "--format", "dot"],
    ] {
        let (_, stdout, _) = run(args, Some(&t.path()));
        only_line_breaks(&args.join(" "), &stdout);
        let shown = "\\u{1b}[2J\\u{a}9  ticket/forged  1\\u{202e}gnp.exe\\u{200b}";
        // DOT writes a label's backslash escaped; Graphviz shows it as one.
        let shown = match args[3] {
            "dot" => shown.replace('\\', "\\\\"),
            _ => shown.to_owned(),
        };
        assert!(stdout.contains(&shown), "{args:?}: {stdout}");
    }
    let (_, table, _) = run(&["journal", "log"], Some(&t.path()));
    assert_eq!(table.lines().count(), 3, "a header and two rows: {table}");
    assert!(table.contains("comm\\u{202e}ented v1"), "{table}");
    assert!(table.contains(" lit\\\\u{202e}eral v1 "), "{table}");
    let (_, show, _) = run(
        &["journal", "show", "2", "--format", "table"],
        Some(&t.path()),
    );
    assert!(show.contains("com\\u{7}ment"), "{show}");
    let (_, links, _) = run(&["journal", "links", "--format", "table"], Some(&t.path()));
    assert!(links.contains("open\\u{1b}]0;x\\u{7}"), "{links}");
    for args in [
        &["journal", "log", "--format", "json"][..],
        &["journal", "streams"],
        &["journal", "audit"],
    ] {
        let (_, stdout, _) = run(args, Some(&t.path()));
        only_line_breaks(&args.join(" "), &stdout);
        assert!(stdout.contains("\\u202e"), "{args:?}: {stdout}");
        let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        assert!(holds(&v, name), "{args:?}: the exact name in {v}");
    }
}

/// `v` holds the string `s` somewhere.
fn holds(v: &Value, s: &str) -> bool {
    match v {
        Value::String(t) => t == s,
        Value::Array(a) => a.iter().any(|x| holds(x, s)),
        Value::Object(o) => o.values().any(|x| holds(x, s)),
        _ => false,
    }
}

/// A stderr line is one line whatever it names (helper-90: an event type
/// holding a line break printed a forged `cairn: …` line after the real one).
#[test]
fn a_stderr_line_stays_one_line_whatever_the_journal_holds() {
    let t = TempJournal::new();
    let mut j = t.journal();
    let mut claim = append("claim/park/ep-1", 0, &["{}"], None);
    claim.machine = "claim".into();
    claim.events[0].event_type = "acquired\ncairn: state ok\u{202e}".into();
    j.append(&claim).unwrap();
    drop(j);
    let (code, _, stderr) = run(&["state", "claim/park/ep-1"], Some(&t.path()));
    assert_ne!(code, 0);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("acquired\\u{a}cairn: state ok\\u{202e}"),
        "{stderr}"
    );
    // A usage error quotes the caller's own argument: shown visible too.
    let (code, _, stderr) = run(
        &["journal", "log", "--format", "a\u{202e}b\rc"],
        Some(&t.path()),
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("a\\u{202e}b\\u{d}c"), "{stderr}");
}
