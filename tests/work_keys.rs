//! A spec's nodes keep their streams across clones (issue 21): the spec key is
//! the repository's identity (its root commits) and the spec's path in it, not
//! the absolute path, so the same spec in another clone finds the nodes planned
//! in the first; a journal holding nodes under the absolute-path key (recorded
//! before) keeps finding them there. On real parts: a repository, a clone of it,
//! and one journal.

use serde_json::Value;

use crate::support::git::git;
use crate::support::work_repo::{spec_text, Work, OK};

/// `cairn work status --spec SPEC --session s1` on `w`'s journal: node `core`'s
/// stage.
fn core_in(w: &Work, spec: &std::path::Path) -> String {
    let (code, out) = w.run(&[
        "status",
        "--spec",
        spec.to_str().unwrap(),
        "--session",
        "s1",
    ]);
    assert_eq!(code, 0, "{out}");
    let nodes = out["nodes"].as_array().unwrap_or_else(|| panic!("{out}"));
    let core = nodes
        .iter()
        .find(|n| n["address"] == serde_json::json!(["core"]))
        .unwrap_or_else(|| panic!("{out}"));
    core["stage"].as_str().unwrap_or_default().to_owned()
}

/// A repository with node `core` planned; the stream it was planned on.
fn core_planned() -> (Work, String) {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let stream = out["stream"].as_str().unwrap().to_owned();
    (w, stream)
}

/// `plan docs` is refused (exit 2, `spec-key`) and writes nothing; the message.
#[track_caller]
fn key_refused(w: &Work) -> String {
    let before = w.journal.bytes();
    let (code, out) = w.node("plan", "docs", &[]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("spec-key")),
        "{out}"
    );
    assert_eq!(w.journal.bytes(), before, "nothing written");
    out["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_spec_in_another_clone_finds_its_nodes() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let clone = w.scratch("clone");
    git(
        w.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            w.root.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let there = clone.join(".work/specs/cache.yaml");
    // Another absolute path, the same repository and spec: the node planned in
    // the first clone (the absolute-path key made it `unplanned` here).
    assert_eq!(core_in(&w, &there), "planned");
    assert_eq!(core_in(&w, &w.spec), "planned");
}

#[test]
fn a_journal_with_nodes_under_the_absolute_path_key_keeps_them() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    let (code, out) = w.node("plan", "core", &[]);
    assert_eq!(code, 0, "{out}");
    let planned = out["stream"].as_str().unwrap().to_owned();
    // The same plan, recorded (raw) under the key older builds used: the
    // absolute path's hash, in a fresh journal.
    let legacy = cairn::machines::work::node::sha256_hex(w.spec.to_string_lossy().as_bytes())[..16]
        .to_owned();
    let old = format!("work-node/{legacy}:core");
    let older = Work::new(&spec_text(OK, "test result: ok", 30_000));
    crate::support::copy_raw(
        &w.journal.path(),
        &older.journal.path(),
        &planned,
        &old,
        |_| {},
    );
    // `older`'s journal, `w`'s spec: the node is found under the old key.
    let (code, out) = older.run(&[
        "status",
        "--spec",
        w.spec.to_str().unwrap(),
        "--session",
        "s1",
    ]);
    assert_eq!(code, 0, "{out}");
    let core: Vec<&Value> = out["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["address"] == serde_json::json!(["core"]))
        .collect();
    assert_eq!(core[0]["stage"], "planned", "{out}");
    // A node verb names the stream it recorded on: the old key's.
    let base = older.head(&older.lane);
    let (code, out) = older.run(&[
        "dispatch",
        "--spec",
        w.spec.to_str().unwrap(),
        "--node",
        "core",
        "--run-id",
        "r-1",
        "--worktree",
        older.lane.to_str().unwrap(),
        "--expected-commit",
        &base,
    ]);
    assert_eq!(
        (code, out["stream"].as_str()),
        (0, Some(old.as_str())),
        "{out}"
    );
}

/// A spec whose repository's identity cannot be read is refused, never keyed by
/// its absolute path (helper-70, HIGH): on an unborn branch (`checkout
/// --orphan`) a plan made the absolute-path key's first stream, and from then on
/// every verb keyed the spec by it, so a lease on the node's stream fenced
/// nothing. Refused (exit 2, `spec-key`), nothing written; back on the branch the
/// node's stream is the one it was.
#[test]
fn an_unborn_branch_does_not_change_the_specs_key() {
    let (w, stream) = core_planned();
    git(&w.root, &["checkout", "-q", "--orphan", "scratch"]);
    key_refused(&w);
    git(&w.root, &["checkout", "-q", "-f", "main"]);
    let (code, out) = w.node("plan", "docs", &[]);
    assert_eq!(code, 0, "{out}");
    let docs = out["stream"].as_str().unwrap();
    assert_eq!(
        docs.split(':').next(),
        stream.split(':').next(),
        "one key for the spec"
    );
    assert_eq!(core_in(&w, &w.spec), "planned");
}

/// A shallow clone's root commit is its shallow boundary, which moves with each
/// fetch (helper-70, HIGH: a fetch gave the spec a new key): refused.
#[test]
fn a_shallow_clone_does_not_key_a_spec() {
    let w = Work::new(&spec_text(OK, "test result: ok", 30_000));
    std::fs::write(w.root.join("more.txt"), "more\n").unwrap();
    git(&w.root, &["add", "."]);
    git(&w.root, &["commit", "-q", "-m", "more"]);
    let shallow = w.scratch("shallow");
    git(
        w.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", w.root.display()),
            shallow.to_str().unwrap(),
        ],
    );
    let spec = shallow.join(".work/specs/cache.yaml");
    let (code, out) = w.run(&["plan", "--spec", spec.to_str().unwrap(), "--node", "core"]);
    assert_eq!(
        (code, out["error"]["rule"].as_str()),
        (2, Some("spec-key")),
        "{out}"
    );
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("shallow")),
        "{out}"
    );
}

/// A repository git cannot read is not "no repository" (helper-71, HIGH): with
/// `.git/HEAD` broken for one plan, the spec got the absolute-path key, and from
/// then on every verb used it (a spent budget started over). Refused instead.
#[test]
fn a_repository_git_cannot_read_does_not_change_the_specs_key() {
    let (w, _) = core_planned();
    let head = w.root.join(".git/HEAD");
    let saved = std::fs::read(&head).unwrap();
    std::fs::write(&head, "junk\n").unwrap();
    key_refused(&w);
    std::fs::write(&head, saved).unwrap();
    assert_eq!(core_in(&w, &w.spec), "planned");
}

/// A recording verb never starts a stream under the absolute-path key
/// (helper-73: `.git` moved aside for one plan made a fresh stream, and a spent
/// budget started over once `.git` was back). A spec outside any repository is
/// refused for recording (`spec-key`) unless the journal already holds its
/// nodes under that key; `validate` reads it anywhere.
#[test]
fn no_recording_verb_starts_a_stream_under_the_absolute_path_key() {
    let (w, _) = core_planned();
    let git_dir = w.root.join(".git");
    let aside = w.root.join(".git.off");
    std::fs::rename(&git_dir, &aside).unwrap();
    key_refused(&w);
    let (code, out) = w.run(&["validate", "--spec", w.spec.to_str().unwrap()]);
    assert_eq!(code, 0, "validate reads a spec anywhere: {out}");
    // `status` reads it too (it records nothing): no node is planned there.
    assert_eq!(core_in(&w, &w.spec), "unplanned");
    std::fs::rename(&aside, &git_dir).unwrap();
    let (code, out) = w.node("plan", "docs", &[]);
    assert_eq!(code, 0, "{out}");
}
