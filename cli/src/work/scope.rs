//! Changing the spec through the journal: `amend-criterion` (a criterion's text,
//! with its authority) and `resolve-scope` (an approved scope amendment adds
//! touches). The spec is rewritten from the decided events before they are
//! appended, and put back if the append fails.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use cairn::machines::work::amend::{self, AmendRequest};
use cairn::machines::work::node::{Command, Event, WorkNode};
use cairn::machines::work::spec::Draft;
use serde_json::json;

use super::{finish, out_of, read_spec, stream, target, valid_spec, SpecFile};
use crate::args::WorkNodeRef;
use crate::failure::{input, Done, Failure};
use crate::record::{Recorded, Recorder, Request, Step};

/// Amends one criterion's accepted text: a chain entry in the spec.
pub fn amend_criterion(rec: &Recorder, spec: &str, request: AmendRequest) -> Result<Done, Failure> {
    let f = read_spec(spec, Some(rec))?;
    let s = valid_spec(&f)?;
    let owner = s
        .nodes
        .iter()
        .find(|n| n.acceptance.iter().any(|c| c.id == request.criterion_id))
        .ok_or_else(|| {
            input(
                "criterion",
                "criterion-not-found",
                "no criterion has this id in the spec",
            )
        })?;
    let st = stream(&f, &owner.address)?;
    // The verb rewrites the spec it reads: its key stands for the request, looked
    // up before the amendment is computed against the spec as it is now.
    let key_request = Request::new(
        "work amend-criterion",
        json!({"spec": f.path, "request": request}),
    );
    if let Some(done) = rec.recall::<WorkNode>(&st, &key_request)? {
        return print(rec, spec, &owner.address, &f.path, &done);
    }
    let draft = match read_draft(&f) {
        Draft::Text(t) => Some(t),
        _ => None,
    };
    let ctx = rec.context::<WorkNode>()?;
    let new_text =
        amend::amend_criterion(&f.text, draft.as_deref(), &request, &ctx.now.to_string())
            .map_err(|(code, m)| input("criterion", code, &m))?;
    let command = Command::AmendCriterion {
        spec: f.text.clone(),
        draft,
        request,
    };
    let step = Step::new(&st, &command)
        .at(ctx)
        .request(key_request)
        .effect(
            |_| write_spec(&f, &new_text),
            || {
                let _ = write_spec(&f, &f.text);
            },
        );
    let done = rec.record(step)?;
    crate::output::stderr_line(format_args!("cairn: {} rewritten", f.path.display()));
    print(rec, spec, &owner.address, &f.path, &done)
}

/// Resolves a scope amendment; an approval adds its touches to the spec.
pub fn resolve_scope(rec: &Recorder, r: &WorkNodeRef, command: Command) -> Result<Done, Failure> {
    let (f, n) = target(rec, r)?;
    let st = stream(&f, &n.address)?;
    let rewritten = Cell::new(false);
    let step = Step::new(&st, &command).effect(
        |events| match events.first() {
            Some(Event::ScopeApproved { add_touches, .. }) => {
                let new_text = amend::add_touches(&f.text, &n.address, add_touches)
                    .map_err(|(code, m)| input("spec", code, &m))?;
                write_spec(&f, &new_text)?;
                rewritten.set(true);
                Ok(())
            }
            _ => Ok(()),
        },
        || {
            if rewritten.get() {
                let _ = write_spec(&f, &f.text);
            }
        },
    );
    let done = rec.record(step)?;
    if rewritten.get() {
        crate::output::stderr_line(format_args!("cairn: {} rewritten", f.path.display()));
    }
    print(rec, &r.spec, &n.address, &f.path, &done)
}

/// A recorded spec change with both axes; `spec` names the file an approval or an
/// amendment rewrote.
fn print(
    rec: &Recorder,
    spec: &str,
    address: &[String],
    path: &Path,
    done: &Recorded<WorkNode>,
) -> Result<Done, Failure> {
    let mut out = out_of(done);
    if done.events.iter().any(|e| {
        matches!(
            e,
            Event::ScopeApproved { .. } | Event::CriterionAmended { .. }
        )
    }) {
        out.spec = Some(json!(path));
    }
    // An approval or amendment rewrote the file: the lifecycle is the new one's.
    finish(out, rec, &read_spec(spec, Some(rec))?, address, None)?;
    Ok(Done::Recorded(done.outcome))
}

/// The draft a spec declares: read relative to the spec's git toplevel (else the
/// nearest directory holding `.work/`), and only from inside it.
pub(super) fn read_draft(f: &SpecFile) -> Draft {
    let Some(rel) = amend::declared_draft(&f.text) else {
        return Draft::NotDeclared;
    };
    let dir = f
        .path
        .parent()
        .unwrap_or(Path::new("/"))
        .to_string_lossy()
        .into_owned();
    let top = cairn::observe::run(&cairn::observe::git(
        &dir,
        &["rev-parse", "--show-toplevel"],
    ));
    let root = if top.exit_status == Some(0) {
        PathBuf::from(top.stdout.trim())
    } else {
        let mut d = Some(Path::new(&dir));
        loop {
            match d {
                Some(p) if p.join(".work").is_dir() => break p.to_path_buf(),
                Some(p) => d = p.parent(),
                None => return Draft::Unavailable,
            }
        }
    };
    let path = root.join(&rel);
    match (std::fs::canonicalize(&path), std::fs::canonicalize(&root)) {
        (Ok(p), Ok(r)) if p.starts_with(&r) => crate::input::read_file(&p, "draft", "read-error")
            .map_or(Draft::Unavailable, Draft::Text),
        _ => Draft::Unavailable,
    }
}

/// Writes the spec atomically (a temp file in the same directory, renamed over it).
fn write_spec(f: &SpecFile, text: &str) -> Result<(), Failure> {
    let tmp = f.path.with_extension("cairn-tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &f.path))
        .map_err(|e| {
            input(
                "spec",
                "write-error",
                &format!("`{}`: {e}", f.path.display()),
            )
        })
}
