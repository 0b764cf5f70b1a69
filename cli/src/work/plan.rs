//! `cairn work plan`: the brief by reference (content-addressed under the spec's
//! `.work/.cache/briefs/`) and the delegate contract, recorded.

use std::path::{Path, PathBuf};

use cairn::machines::work::node::{self, Command, Event, PlanReceipt, WorkNode};
use cairn::machines::work::spec::{Evidence, Node};
use serde_json::{json, Value};

use super::{draft_text, finish, out_of, read_spec, resolve, stream, valid_spec, SpecFile};
use crate::args::WorkNodeRef;
use crate::failure::{input, Done, Failure};
use crate::record::{Recorded, Recorder, Request, Step};

/// Plans one node: the brief is written only once the plan is accepted.
pub fn plan(rec: &Recorder, r: &WorkNodeRef, with: &[String]) -> Result<Done, Failure> {
    let f = read_spec(&r.spec, Some(rec))?;
    let s = valid_spec(&f)?;
    let n = resolve(&s, &r.node)?.clone();
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work plan",
        json!({"spec": f.path, "node": n.address, "with": with}),
    );
    if let Some(done) = rec.recall::<WorkNode>(&st, &request)? {
        return print(rec, (&f, &n), &done);
    }
    let mut overlaps = vec![];
    for w in with {
        let other = resolve(&s, w)?;
        for t in &n.touches {
            for u in &other.touches {
                let (a, b) = (t.trim_end_matches('/'), u.trim_end_matches('/'));
                if a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/")) {
                    overlaps.push(format!(
                        "{} and {} both touch {a}",
                        serde_json::to_string(&n.address).unwrap_or_default(),
                        serde_json::to_string(&other.address).unwrap_or_default()
                    ));
                }
            }
        }
    }
    let (brief_path, brief_sha256, brief_text) = brief(&f, &n);
    let command = Command::Plan {
        spec: f.text.clone(),
        address: n.address.clone(),
        receipt: PlanReceipt {
            brief_path: brief_path.to_string_lossy().into_owned(),
            brief_sha256,
            writable_roots: n.touches.clone(),
            confine_writes: true,
            escalation: "off".into(),
            worktree: !with.is_empty(),
            overlaps,
        },
        draft: draft_text(&f),
    };
    // Decided first: a refused plan writes no brief. The brief is content-addressed,
    // so a failed append leaves nothing to undo.
    let step = Step::new(&st, &command)
        .request(request)
        .effect(|_| write_brief(&brief_path, &brief_text), || {});
    let done = rec.record(step)?;
    print(rec, (&f, &n), &done)
}

/// The recorded plan (its receipt from the `planned` event) and pi-work's
/// `PlanReceipt` built from it (`receipt`: the paste-ready delegate fallback).
fn print(
    rec: &Recorder,
    (f, n): (&SpecFile, &Node),
    done: &Recorded<WorkNode>,
) -> Result<Done, Failure> {
    let mut out = out_of(done);
    let receipt = done.events.iter().find_map(|e| match e {
        Event::Planned { receipt, .. } => Some(receipt),
        _ => None,
    });
    out.plan = Some(receipt.map_or(Value::Null, |r| json!(r)));
    out.receipt = Some(receipt.map_or(Value::Null, |r| {
        node::plan_receipt(n, &f.path.to_string_lossy(), r)
    }));
    finish(out, rec, f, &n.address, None)?;
    Ok(Done::Recorded(done.outcome))
}

/// The brief, by reference: its path under the spec's `.work/.cache/briefs/`
/// (named by its SHA-256), its SHA-256 and its text. Nothing is written here.
fn brief(f: &SpecFile, n: &Node) -> (PathBuf, String, String) {
    let dir = f.path.parent().unwrap_or(Path::new("/"));
    let work = match dir.parent() {
        Some(p) if p.file_name().is_some_and(|x| x == ".work") => p.to_path_buf(),
        _ => dir.join(".work"),
    };
    let mut brief = format!(
        "# Brief: {}\n\nSpec: {} (sha256 {})\n\n## Task\n\n{}\n\n## Writable roots (touches)\n\n",
        serde_json::to_string(&n.address).unwrap_or_default(),
        f.path.display(),
        node::sha256_hex(f.text.as_bytes()),
        n.task
    );
    for t in &n.touches {
        brief.push_str(&format!("- `{t}`\n"));
    }
    brief.push_str("\nWrites outside these roots are a contract violation: stop and report the needed change.\n\n## Acceptance criteria\n\n");
    for c in &n.acceptance {
        let how = match &c.evidence {
            Evidence::Command {
                run,
                output_includes,
                exit,
                ..
            } => format!("command `{run}`, exit {exit}, output includes `{output_includes}`"),
            Evidence::User { prompt } => format!("user confirmation: {prompt}"),
            Evidence::Agent { agent, .. } => format!("agent `{agent}` (agent-unavailable in v1)"),
        };
        brief.push_str(&format!("- {}: {} — {how}\n", c.id, c.statement));
    }
    if !n.checklist.is_empty() {
        brief.push_str("\n## Checklist (report each index exactly once)\n\n");
        for (i, item) in n.checklist.iter().enumerate() {
            brief.push_str(&format!("{i}. {item}\n"));
        }
    }
    let sha = node::sha256_hex(brief.as_bytes());
    let path = work.join(".cache").join("briefs").join(format!("{sha}.md"));
    (path, sha, brief)
}

/// Writes the brief (content-addressed: writing it again changes nothing).
fn write_brief(path: &Path, text: &str) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        input(
            "spec",
            "brief-write-error",
            &format!("`{}`: {e}", path.display()),
        )
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(path, text).map_err(fail)
}
