//! Reading a journal of large values a few megabytes at a time, on both
//! backends: every store's fetch of rows ends at `FETCH_BYTES` of what they
//! unpack to (SQLite as it steps its rows, PostgreSQL in the query), and the
//! walk and the audit read on until a fetch says nothing follows, so every row
//! is seen once and tampering is found at its seq. PostgreSQL's own cases (a
//! server encoding other than UTF-8, a tamperer's duplicated `seq`) follow.

use cairn::journal::{Journal, Options};
use cairn::StreamId;

use crate::conformance::ticket_registry;
use crate::support::backend::{backends, Backend, Store};
use crate::support::ctx;
use crate::support::ticket::{Command, Ticket};

/// A stream of large records: `Open`, then `comments` comments of 1 MB each,
/// the comment at version `n` starting with the digits of `n`.
fn large_records(s: &Store, comments: u32) -> StreamId {
    ticket_stream(
        s,
        "ticket/big",
        (2..2 + comments).map(|n| format!("{n}{}", "x".repeat(1 << 20))),
    )
}

/// `Open` on the ticket stream `name`, then a comment of each text, in order.
fn ticket_stream(s: &Store, name: &str, texts: impl Iterator<Item = String>) -> StreamId {
    let mut e = s.engine(ticket_registry());
    let t = StreamId::parse(name).unwrap();
    let open = Command::Open { title: name.into() };
    e.execute_with_context::<Ticket>(&t, &open, &ctx(1), None)
        .unwrap();
    for (n, text) in (2..).zip(texts) {
        e.execute_with_context::<Ticket>(&t, &Command::Comment { text }, &ctx(n), None)
            .unwrap();
    }
    t
}

/// A store's page of records ends at their bytes on both backends (helper-49:
/// 128 records unpacking to 32 MB each were 4 GB; PostgreSQL cuts in the query,
/// its client reading rows whole), a short page does not end the stream, and
/// the audit re-decides every transition of a stream of 1 MB commands.
#[test]
fn a_page_of_large_records_ends_at_its_bytes_and_the_audit_reads_on() {
    for b in backends() {
        let s = b.fresh();
        let t = large_records(&s, 10);
        let j = s.reader();
        // `Open`, then two 1 MB commands reach the 2 MiB bound: the page ends there.
        let first = j.transitions_from(t.as_str(), 0, 128).unwrap();
        assert_eq!(first.len(), 3, "{b:?}");
        let (mut seen, mut after) = (Vec::new(), 0);
        loop {
            let page = j.transitions_from(t.as_str(), after, 128).unwrap();
            let Some(last) = page.last() else { break };
            after = last.last_version;
            seen.extend(page.iter().map(|r| r.first_version));
        }
        assert_eq!(
            seen,
            (1..=11).collect::<Vec<_>>(),
            "{b:?}: each record once, in order"
        );
        let report = s.engine(ticket_registry()).audit(None).unwrap();
        assert!(report.ok, "{b:?}: {:?}", report.findings);
        assert_eq!((report.transitions, report.redecided), (11, 11), "{b:?}");
    }
}

/// A journal of 1 MB events verifies and copies whole although the walk's fetch
/// of event rows ends at its payloads' bytes on both backends (2,048 such rows
/// were 2 GB in one fetch: helper-49), and a payload changed in the middle of a
/// fetch cut short is still found at its own seq.
#[test]
fn large_events_verify_copy_and_tamper_across_byte_cut_fetches() {
    for b in backends() {
        let s = b.fresh();
        large_records(&s, 8);
        let report = s.reader().verify().unwrap();
        assert!(report.ok, "{b:?}: {:?}", report.problems);
        assert_eq!(report.events, 9, "{b:?}");
        let copy = crate::support::TempJournal::new();
        let mut target = Journal::open(&copy.path(), &Options::default()).unwrap();
        let copied = s.reader().copy_into(&mut target).unwrap();
        assert!(copied.ok && copied.copied, "{b:?}: {copied:?}");
        assert_eq!((copied.events, copied.transitions), (9, 9), "{b:?}");
        s.tamper("UPDATE events SET payload = replace(payload, '7xxx', '7xxy') WHERE seq = 7");
        let report = s.reader().verify().unwrap();
        assert!(!report.ok, "{b:?}");
        let seqs: Vec<Option<i64>> = report.problems.iter().map(|p| p.seq).collect();
        assert_eq!(seqs, [Some(7)], "{b:?}: {:?}", report.problems);
    }
}

/// The peak resident set of `cairn journal verify` and `cairn journal copy` on a
/// journal of 48 events of 1 MB each (and 48 records whose commands hold the
/// same text) stays far below what one uncut fetch of them holds (48 MB of
/// payloads, more as rows and strings): every fetch ends at 2 MiB on both
/// backends (helper-52: copy's page of 4,096 records was not cut, 254 MB for
/// 110 such records). Measured on the real process, by GNU time.
#[test]
fn verify_and_copy_of_large_values_hold_a_few_fetches_not_the_journal() {
    for b in backends() {
        let s = b.fresh();
        large_records(&s, 47);
        let db = s.db();
        let (code, peak_kib) = peak_rss(&[
            "journal".as_ref(),
            "verify".as_ref(),
            "--db".as_ref(),
            db.as_os_str(),
        ]);
        assert_eq!(code, Some(0), "{b:?}: the journal verifies");
        assert!(
            peak_kib < 40 * 1024,
            "{b:?}: verify peaked at {peak_kib} KiB"
        );
        let target = tempfile::tempdir().unwrap();
        let to = target.path().join("copy.db");
        let (code, peak_kib) = peak_rss(&[
            "journal".as_ref(),
            "copy".as_ref(),
            "--from".as_ref(),
            db.as_os_str(),
            "--to".as_ref(),
            to.as_os_str(),
        ]);
        assert_eq!(code, Some(0), "{b:?}: the journal copies");
        assert!(peak_kib < 48 * 1024, "{b:?}: copy peaked at {peak_kib} KiB");
        let copied = Journal::open_read_only(&to, &Options::default())
            .unwrap()
            .verify()
            .unwrap();
        assert_eq!((copied.events, copied.transitions), (48, 48), "{b:?}");
    }
}

/// `cairn ARGS`' exit code and peak resident set (KiB), as GNU time reads it
/// (`.ci/run` installs it). Not this process's `wait4`: a child spawned from a
/// test process inherits its high-water mark through the vfork and exec, so
/// it would report the test process's peak; time forks from its own small image.
fn peak_rss(args: &[&std::ffi::OsStr]) -> (Option<i32>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("rss");
    let status = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("GNU time at /usr/bin/time (Debian's `time`; .ci/run installs it)");
    let text = std::fs::read_to_string(&report).unwrap();
    let kib = text.lines().last().and_then(|l| l.trim().parse().ok());
    (
        status.code(),
        kib.unwrap_or_else(|| panic!("time's report: {text:?}")),
    )
}

/// In a database whose encoding stores a character in more bytes than UTF-8
/// does (EUC_TW: U+4E07 is 4 bytes, 3 in UTF-8), the server cuts a fetch where
/// the client's count of the same payload is still short of the bound; whether
/// rows follow is the server's word, so the walk reads on (helper-52: it ended
/// at the cut and called the journal intact, missing a change after it).
#[test]
fn the_server_says_where_it_cut_whatever_its_encoding() {
    let s = Store::postgres_in("EUC_TW");
    let wide = "\u{4E07}".repeat(600_000);
    let small = (3..6).map(|n| format!("small {n} xxxxxxxxxx"));
    ticket_stream(&s, "ticket/wide", std::iter::once(wide).chain(small));
    let r = s.reader().verify().unwrap();
    assert!(r.ok, "{:?}", r.problems);
    assert_eq!(r.events, 5);
    s.tamper(
        "UPDATE events SET payload = replace(payload, 'xxxxxxxxxx', 'yyyyyyyyyy') WHERE seq = 3",
    );
    let r = s.reader().verify().unwrap();
    let seqs: Vec<Option<i64>> = r.problems.iter().map(|p| p.seq).collect();
    assert_eq!(seqs, [Some(3)], "{:?}", r.problems);
}

/// A tamperer who drops the key and copies a row to a second place under the
/// same `seq` makes the rows up to the fetch's last `seq` one more than it
/// scanned; the walk still reads on past it and finds a change further on
/// (helper-52: the page looked short and ended the walk at 2,048 rows).
#[test]
fn a_duplicated_seq_does_not_end_the_walk() {
    let s = Backend::Postgres.fresh();
    let mut j = s.journal();
    for n in 0..30u64 {
        let payloads: Vec<String> = (0..100)
            .map(|i| format!("{{\"n\":{}}}", n * 100 + i))
            .collect();
        let payloads: Vec<&str> = payloads.iter().map(String::as_str).collect();
        j.append(&crate::journal::append(
            "ticket/many",
            n * 100,
            &payloads,
            None,
        ))
        .unwrap();
    }
    drop(j);
    s.tamper(
        "ALTER TABLE events DROP CONSTRAINT events_pkey; \
         INSERT INTO events SELECT seq, stream, version + 100000, machine, event_type, schema_version, \
         payload, recorded_at, transition_id, hash FROM events WHERE seq = 2048; \
         UPDATE events SET payload = '{\"n\":-1}' WHERE seq = 2500",
    );
    let r = s.reader().verify().unwrap();
    assert!(!r.ok);
    assert!(r.events >= 3000, "the walk read on: {r:?}");
    assert!(
        r.problems.iter().any(|p| p.seq == Some(2500)),
        "the change past the duplicate is found: {:?}",
        r.problems
    );
}

/// A tamperer who drops the key and gives every later event the same `seq`
/// is reported: the fetch brings back every row of the last `seq` it kept, so
/// the walk sees them all (a fetch capped at the rows its size scan kept
/// skipped the rest and called the journal intact at 7 events of 41).
#[test]
fn a_seq_given_to_every_later_event_is_reported() {
    let s = Backend::Postgres.fresh();
    large_records(&s, 40);
    s.tamper(
        "ALTER TABLE events DROP CONSTRAINT events_pkey; UPDATE events SET seq = 7 WHERE seq > 7",
    );
    let r = s.reader().verify().unwrap();
    assert!(!r.ok, "{r:?}");
    assert_eq!(r.events, 41, "every row is read");
}
