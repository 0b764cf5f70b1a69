//! A verb waiting for its document on a terminal says so on stderr (instead of
//! hanging silently), and still reads what is typed there.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A pseudo-terminal: (controller, terminal) ends.
pub fn pty() -> (std::fs::File, OwnedFd) {
    let (mut controller, mut terminal) = (0, 0);
    // SAFETY: openpty writes two fresh descriptors into the two ints; null name,
    // termios and window size ask for the defaults.
    let rc = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned here alone.
    unsafe {
        (
            std::fs::File::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    }
}

#[test]
fn a_verb_reading_a_terminal_says_it_waits_for_a_document() {
    let (mut controller, terminal) = pty();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["park", "check"])
        .env_remove("CAIRN_DB")
        .stdin(Stdio::from(terminal))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    let mut stderr = child.stderr.take().expect("piped");
    // The notice comes before cairn reads: read it while cairn waits.
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut byte = [0u8; 1];
    while !(String::from_utf8_lossy(&seen).contains("Ctrl-D") && seen.ends_with(b"\n")) {
        assert!(Instant::now() < deadline, "no notice: {seen:?}");
        let n = stderr.read(&mut byte).expect("stderr reads");
        assert!(
            n > 0,
            "stderr closed before the notice: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&byte[..n]);
    }
    // Typed on the terminal: a line, then end-of-file (Ctrl-D at a line start).
    controller.write_all(b"{}\n\x04").expect("typed");
    let out = child.wait_with_output().expect("cairn ends");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("stderr");
    let notice = String::from_utf8_lossy(&seen);
    assert!(
        notice.contains("`park check` reads a JSON document on stdin, which is a terminal"),
        "{notice}"
    );
    assert!(notice.contains("cairn schema park check"), "{notice}");
    // What was typed was read: the empty object is refused as a document.
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["error"]["rule"], "required", "{v}");
}

#[test]
fn a_piped_document_gets_no_notice() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["park", "check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(b"{}")
        .expect("written");
    let out = child.wait_with_output().expect("cairn ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Ctrl-D"), "{stderr}");
}
