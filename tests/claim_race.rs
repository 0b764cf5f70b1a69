//! Claims between real processes (issue #24): 32 `cairn claim acquire` processes
//! racing on one resource leave exactly one winner and nothing partial; a holder
//! killed with SIGKILL keeps its lease until it expires, and the next acquirer then
//! gets a strictly greater token; a holder paused (SIGSTOP) past its expiry that
//! resumes and renews (or releases) with its old token is refused, writing nothing.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::claim::{acquire, claim, events, whole, RESOURCE};
use crate::support::TempJournal;

fn spawn(db: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("CAIRN_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs")
}

/// (exit code, stdout JSON) of a finished process.
fn finished(child: Child) -> (i32, Value) {
    let out = child.wait_with_output().expect("the process ends");
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {text}"));
    (out.status.code().unwrap_or(-1), v)
}

/// Waits until `done` holds, for at most 30 s.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sleeps until the RFC3339 instant `until` has passed on this host's clock.
fn sleep_past(until: &str) {
    let until = chrono::DateTime::parse_from_rfc3339(until).expect("an RFC3339 instant");
    wait_until("the lease to expire", || chrono::Utc::now() > until);
}

#[test]
fn thirty_two_racing_acquirers_leave_exactly_one_holder() {
    let t = TempJournal::new();
    let db = t.path();
    // The journal and the signing key exist: the race is on the claim alone.
    let other = [
        "claim",
        "acquire",
        "--resource",
        "saga/issue-9",
        "--owner",
        "o",
        "--claim-id",
        "o",
        "--ttl",
        "5",
    ];
    assert_eq!(crate::park::park(&other, "", Some(&db)).0, 0);
    let owners: Vec<String> = (0..32).map(|i| format!("agent-{i}")).collect();
    let racers: Vec<Child> = owners
        .iter()
        .enumerate()
        .map(|(i, owner)| {
            let id = format!("c{i}");
            spawn(
                &db,
                &[
                    "claim",
                    "acquire",
                    "--resource",
                    RESOURCE,
                    "--owner",
                    owner,
                    "--claim-id",
                    &id,
                    "--ttl",
                    "600",
                ],
            )
        })
        .collect();
    let results: Vec<(i32, Value)> = racers.into_iter().map(finished).collect();
    let winners: Vec<&Value> = results
        .iter()
        .filter(|(c, _)| *c == 0)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
    let winner = winners[0];
    assert_eq!(
        (&winner["token"], &winner["events"]),
        (&json!(1), &json!(["acquired"])),
        "{winner}"
    );
    for (code, out) in results.iter().filter(|(c, _)| *c != 0) {
        let kind = out["error"]["kind"].as_str().unwrap_or("");
        assert!(
            *code == 3 && ["claim-held", "conflict", "busy"].contains(&kind),
            "{code} {out}"
        );
        if kind == "claim-held" {
            assert_eq!(
                out["error"]["claim"]["holder"], winner["holder"],
                "the loser is told who won: {out}"
            );
        }
    }
    assert_eq!(events(&db), ["acquired"], "one grant, nothing partial");
    whole(&db);
}

#[test]
fn a_killed_holder_keeps_the_lease_until_it_expires_then_the_next_gets_a_greater_token() {
    let t = TempJournal::new();
    let db = t.path();
    let script = r#""$CAIRN" --db "$DB" claim acquire --resource "$R" --owner doomed --claim-id d1 --ttl 3 || exit 9
exec sleep 60"#;
    let mut holder = Command::new("sh")
        .args(["-c", script])
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("DB", &db)
        .env("R", RESOURCE)
        .stdout(Stdio::null())
        .spawn()
        .expect("sh runs");
    wait_until("the holder's grant", || {
        claim(&db, "show", &[]).1["live"] == json!(true)
    });
    holder.kill().expect("SIGKILL the holder");
    holder.wait().expect("the holder is reaped");
    let (_, shown, _) = claim(&db, "show", &[]);
    let expires = shown["expires_at"].as_str().expect("an expiry").to_owned();
    // Its lease outlives it: an acquire before the expiry is refused, naming it.
    let (code, early, _) = acquire(&db, "next", "n1", "60");
    match code {
        3 => assert_eq!(early["error"]["claim"]["holder"], "doomed", "{early}"),
        // Only if this process ran after the expiry (a loaded machine).
        0 => assert!(
            early["acquired_at"].as_str() >= Some(expires.as_str()),
            "{early}"
        ),
        _ => panic!("{early}"),
    }
    if code == 3 {
        sleep_past(&expires);
        let (code, next, _) = acquire(&db, "next", "n1", "60");
        assert_eq!(code, 0, "{next}");
        assert_eq!(
            (&next["token"], &next["events"]),
            (&json!(2), &json!(["taken-over"])),
            "{next}"
        );
    }
    assert_eq!(events(&db), ["acquired", "taken-over"]);
    whole(&db);
}

/// The process's state letter from /proc (`T` when stopped).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

#[test]
fn a_paused_holder_resuming_with_its_old_token_is_refused_and_writes_nothing() {
    let t = TempJournal::new();
    let db = t.path();
    // Acquire, stop itself (a GC pause, a suspended laptop), then act on what it remembers.
    let script = r#""$CAIRN" --db "$DB" claim acquire --resource "$R" --owner paused --claim-id p1 --ttl 1 >/dev/null || exit 9
kill -STOP $$
exec "$CAIRN" --db "$DB" claim renew --resource "$R" --claim-id p1 --token 1 --ttl 60"#;
    let holder = Command::new("sh")
        .args(["-c", script])
        .env("CAIRN", env!("CARGO_BIN_EXE_cairn"))
        .env("DB", &db)
        .env("R", RESOURCE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let pid = holder.id();
    wait_until("the holder to pause", || proc_state(pid) == Some('T'));
    let (_, shown, _) = claim(&db, "show", &[]);
    assert_eq!(
        (&shown["holder"], &shown["token"]),
        (&json!("paused"), &json!(1)),
        "{shown}"
    );
    sleep_past(shown["expires_at"].as_str().expect("an expiry"));
    let (code, next, _) = acquire(&db, "next", "n1", "60");
    assert_eq!((code, &next["token"]), (0, &json!(2)), "{next}");
    let before = t.bytes();
    Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .expect("SIGCONT");
    let (code, late) = finished(holder);
    assert_eq!(
        (code, late["error"]["kind"].as_str()),
        (3, Some("stale-claim")),
        "{late}"
    );
    assert_eq!(late["error"]["claim"]["token"], 2, "{late}");
    let (code, late, _) = claim(&db, "release", &["--claim-id", "p1", "--token", "1"]);
    assert_eq!(
        (code, late["error"]["kind"].as_str()),
        (3, Some("stale-claim")),
        "{late}"
    );
    assert_eq!(
        t.bytes(),
        before,
        "the late renew and release wrote nothing"
    );
    assert_eq!(events(&db), ["acquired", "taken-over"]);
    whole(&db);
}
