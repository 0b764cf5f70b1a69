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
