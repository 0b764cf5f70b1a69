//! The journal's read verbs end to end: `journal log` pages and never truncates
//! silently.

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
