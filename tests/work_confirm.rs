//! A user criterion is confirmed on the controlling terminal only (issue #16):
//! `cairn work verify` runs under a pseudo-terminal (`script` from util-linux),
//! the test reads the one-time challenge cairn prints there and answers it — as a
//! host would at the keyboard. The agent's own shell (no terminal) is
//! `work_node::user_and_agent_criteria`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::work_repo::{spec_text, Work, OK};

/// `'…'` for sh.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `cairn work verify` for `docs` on a pseudo-terminal; `answer` maps the
/// challenge cairn printed to the line typed back. Returns the exit code, the
/// JSON printed and the challenge.
fn verify_on_a_terminal(w: &Work, answer: impl Fn(&str) -> String) -> (i32, Value, String) {
    let (code, out, challenge, _) = terminal_session(w, answer);
    (code, out, challenge)
}

/// [`verify_on_a_terminal`], with everything the terminal showed.
fn terminal_session(w: &Work, answer: impl Fn(&str) -> String) -> (i32, Value, String, String) {
    let head = w.head(&w.lane);
    let db = w.journal.path();
    let argv = [
        env!("CARGO_BIN_EXE_cairn"),
        "work",
        "verify",
        "--spec",
        w.spec.to_str().unwrap(),
        "--node",
        "docs",
        "--worktree",
        w.lane.to_str().unwrap(),
        "--expected-commit",
        &head,
        "--session",
        "s1",
        "--db",
        db.to_str().unwrap(),
    ];
    let line = argv.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(" ");
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("CAIRN_SESSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let challenge = loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        // The last: a prompt may quote the words (shown on its own line).
        if let Some(at) = text.rfind("type exactly: I confirm ") {
            let rest = &text[at + "type exactly: I confirm ".len()..];
            let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
            if hex.len() == 32 {
                break hex;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no challenge on the terminal: {text}"
        );
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.extend(chunk);
        }
    };
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(format!("{}\n", answer(&challenge)).as_bytes())
        .unwrap();
    let status = child.wait().expect("script exits");
    drop(stdin);
    reader.join().unwrap();
    seen.extend(rx.try_iter().flatten());
    let text = String::from_utf8_lossy(&seen).into_owned();
    let json = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| l.starts_with("{\""))
        .unwrap_or_else(|| panic!("no JSON on the terminal: {text}"));
    (
        status.code().unwrap_or(-1),
        serde_json::from_str(json).unwrap(),
        challenge,
        text.clone(),
    )
}

fn docs_alone() -> Work {
    let text = spec_text(OK, "test result: ok", 30_000).replace("    depends_on: [core]\n", "");
    let w = Work::new(&text);
    w.dispatched("docs");
    w
}

#[test]
fn the_host_confirms_a_user_criterion_by_quoting_the_challenge_on_the_terminal() {
    let w = docs_alone();
    let (code, out, challenge) = verify_on_a_terminal(&w, |c| format!("I confirm {c}"));
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    let c = &out["proof"]["criteria"][0];
    assert_eq!(c["challenge"], challenge.as_str(), "{out}");
    assert_eq!(c["channel"], "controlling-terminal", "{out}");
    w.assert_audits();
}

/// The prompt is the workspec writer's text: it reaches the host's terminal
/// visible and on its one line (helper-91: an escape sequence in it cleared
/// the screen and set the window title; a line break could print a second
/// `cairn:` line with another challenge).
#[test]
fn a_prompt_reaches_the_terminal_visible_on_one_line() {
    let text = spec_text(OK, "test result: ok", 30_000)
        .replace("    depends_on: [core]\n", "")
        .replace(
            "prompt: Approve docs? }",
            "prompt: \"Approve docs?\\e]0;PWNED\\a\\e[2J\\x9b31m\\u202eRLO\\rOVER\\ncairn: to confirm, type exactly: I confirm 0\" }",
        );
    let w = Work::new(&text);
    w.dispatched("docs");
    let (code, out, _, seen) = terminal_session(&w, |c| format!("I confirm {c}"));
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("verified")),
        "{out}"
    );
    assert!(
        seen.contains(
            "Approve docs?\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J\\u{9b}31m\\u{202e}RLO\\u{d}OVER\\u{a}cairn: to confirm"
        ),
        "{seen:?}"
    );
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !seen.contains(raw),
            "{raw:?} reached the terminal: {seen:?}"
        );
    }
    let lines = seen.lines().filter(|l| l.starts_with("cairn: to confirm"));
    assert_eq!(lines.count(), 1, "{seen:?}");
}

#[test]
fn a_confirmation_that_does_not_quote_this_runs_challenge_fails() {
    let w = docs_alone();
    let (code, out, _) = verify_on_a_terminal(&w, |_| "yes".into());
    assert_eq!(code, 4, "{out}");
    assert_eq!(
        out["proof"]["criteria"][0]["failure"], "user-confirmation-mismatch",
        "{out}"
    );
    // A later run mints a new challenge: an earlier one quoted back fails too.
    let lane = w.lane.to_str().unwrap().to_owned();
    let (code, out) = w.node(
        "remediate",
        "docs",
        &["--run-id", "r-2", "--worktree", &lane],
    );
    assert_eq!(code, 0, "{out}");
    let stale = "I confirm 0123456789abcdef0123456789abcdef";
    let (code, out, challenge) = verify_on_a_terminal(&w, |_| stale.into());
    assert_eq!(code, 4, "{out}");
    assert_ne!(format!("I confirm {challenge}"), stale);
    assert_eq!(
        out["proof"]["criteria"][0]["failure"], "user-confirmation-mismatch",
        "{out}"
    );
    w.assert_audits();
}
