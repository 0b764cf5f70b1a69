//! `journal audit --format md|html`: the report an auditor reads (per stream what
//! was re-decided; each finding with the recorded and re-decided value of every
//! field that differs), the same diff in the JSON finding, and progress on stderr
//! only when stderr is a terminal.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use cairn::journal::{Append, Journal, NewEvent, Options, TransitionRecord};
use serde_json::{json, Value};

use crate::cli::{run, transcript};
use crate::support::TempJournal;

/// Records one `acquire` on `claim/<resource>` whose `acquired` event names
/// `owner` (the command names `a`): a forgery unless `owner` is `a`.
fn acquire(db: &Path, resource: &str, owner: &str) {
    let mut j = Journal::open(db, &Options::default()).unwrap();
    let grant = json!({"acquired_at": "2026-11-30T04:00:00Z", "claim_id": "c1",
        "expires_at": "2026-11-30T04:00:30.000000Z", "owner": owner, "token": 1});
    j.append(&Append {
        stream: format!("claim/{resource}"),
        machine: "claim".into(),
        expected_version: 0,
        events: vec![NewEvent {
            event_type: "acquired".into(),
            schema_version: 1,
            payload: json!({"type": "acquired", "grant": grant}).to_string(),
        }],
        transition: TransitionRecord {
            command_name: "acquire".into(),
            command: json!({"command": "acquire", "owner": "a", "claim_id": "c1",
                "ttl_seconds": 30})
            .to_string(),
            context: json!({"fresh_ids": [], "now": "2026-11-30T04:00:00Z"}).to_string(),
            rules_version: <cairn::machines::claim::Claim as cairn::Machine>::RULES_VERSION,
        },
        idempotency: None,
        recorded_at: "2026-11-30T04:00:00Z".into(),
        reads: Vec::new(),
        scans: Vec::new(),
    })
    .unwrap();
}

/// One honest stream and one whose recorded owner is not the command's.
fn forged() -> TempJournal {
    let t = TempJournal::new();
    acquire(&t.path(), "park/ep-1", "a");
    acquire(&t.path(), "park/ep-2", "<b>mallory</b>|x");
    t
}

#[test]
fn a_mismatch_names_every_differing_field_in_the_json() {
    let t = forged();
    let (code, stdout, _) = run(&["journal", "audit"], Some(&t.path()));
    assert_eq!(code, 5, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["kind"], "redecide-mismatch");
    assert_eq!(
        f["diff"],
        json!([{"path": "[0].payload.grant.owner", "recorded": "<b>mallory</b>|x",
                "redecided": "a"}])
    );
    assert_eq!(
        v["by_stream"],
        json!([
            {"stream": "claim/park/ep-1", "machine": "claim", "events": 1,
             "transitions": 1, "redecided": 1},
            {"stream": "claim/park/ep-2", "machine": "claim", "events": 1,
             "transitions": 1, "redecided": 0},
        ])
    );
}

#[test]
fn the_audit_reads_as_markdown_and_html() {
    let t = forged();
    insta::assert_snapshot!(
        "audit_markdown_with_a_forged_event",
        transcript(&["journal", "audit", "--format", "md"], Some(&t.path()))
    );
    insta::assert_snapshot!(
        "audit_html_with_a_forged_event",
        transcript(&["journal", "audit", "--format", "html"], Some(&t.path()))
    );
    let clean = TempJournal::new();
    acquire(&clean.path(), "park/ep-1", "a");
    insta::assert_snapshot!(
        "audit_markdown_clean",
        transcript(&["journal", "audit", "--format", "md"], Some(&clean.path()))
    );
}

#[test]
fn progress_is_drawn_on_a_terminal_only() {
    let t = forged();
    for verb in ["verify", "audit"] {
        // A pipe: no progress, only the verb's line.
        let (_, _, stderr) = run(&["journal", verb], Some(&t.path()));
        assert!(!stderr.contains("events ("), "{verb}: {stderr}");
        // A terminal: the bar, then cleared before the verb's line.
        let (mut controller, terminal) = crate::cli_tty::pty();
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["journal", verb, "--db"])
            .arg(t.path())
            .env_remove("CAIRN_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(terminal))
            .output()
            .expect("cairn runs");
        let mut seen = vec![0u8; 64 * 1024];
        let n = controller.read(&mut seen).unwrap_or(0);
        let seen = String::from_utf8_lossy(&seen[..n]);
        assert!(
            seen.contains(&format!("cairn: {verb}")) && seen.contains("/2 events"),
            "{verb}: {seen:?}"
        );
        assert!(!out.stdout.is_empty());
    }
}
