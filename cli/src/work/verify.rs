//! `cairn work verify` (cairn runs every criterion in the tree and records the
//! evidence) and `cairn work done` (the terminal-truth checklist, this session).

use std::collections::BTreeMap;

use cairn::machines::evidence::wire;
use cairn::machines::work::node::{self, ChecklistReport, Command, WorkNode};
use serde_json::json;

use super::{done_this_session, finish, out_of, stream, target, valid_spec};
use crate::args::WorkNodeRef;
use crate::failure::{input, require_abs_path, Done, Failure};
use crate::record::{Recorded, Recorder, Request, Step};

/// `verify`'s flags.
pub struct Flags<'a> {
    pub worktree: &'a str,
    pub expected_commit: &'a str,
    pub checklist: &'a str,
    pub confirm: &'a [String],
    pub session: &'a str,
}

/// The checklist reports: `--checklist` JSON, read like every JSON input (one
/// strict, depth-bounded parse), then typed.
fn checklist(text: &str) -> Result<Vec<ChecklistReport>, Failure> {
    let v = wire::parse_document(text).map_err(|e| {
        input(
            "checklist",
            if e.rule == "depth" {
                "depth"
            } else {
                "checklist-reports"
            },
            &format!(
                "expected [{{\"index\": N, \"done\": true}}, …]: {}: {}",
                e.field, e.message
            ),
        )
    })?;
    serde_json::from_value(v).map_err(|e| {
        input(
            "checklist",
            "checklist-reports",
            &format!("expected [{{\"index\": N, \"done\": true}}, …]: {e}"),
        )
    })
}

/// Verifies a node: the tree at the expected commit, then every criterion run by
/// cairn; a failed verification is recorded and not green yet.
pub fn verify(rec: &Recorder, r: &WorkNodeRef, a: &Flags) -> Result<Done, Failure> {
    require_abs_path("worktree", a.worktree)?;
    let (f, n) = target(r)?;
    let checklist = checklist(a.checklist)?;
    let mut confirmations = BTreeMap::new();
    for c in a.confirm {
        let (id, words) = c
            .split_once('=')
            .ok_or_else(|| input("confirm", "id-equals-words", "expected ID=WORDS"))?;
        if words.trim().is_empty() {
            return Err(input(
                "confirm",
                "id-equals-words",
                "the confirmation's words are empty",
            ));
        }
        confirmations.insert(id.to_owned(), words.to_owned());
    }
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work verify",
        json!({
            "spec": f.path, "node": n.address, "worktree": a.worktree,
            "expected_commit": a.expected_commit, "checklist": checklist,
            "confirm": confirmations, "session": a.session,
        }),
    );
    if let Some(done) = rec.recall::<WorkNode>(&st, &request)? {
        return print(rec, r, &n.address, a.session, &done);
    }
    // The guard first: a refused verify runs nothing.
    let state = rec.current::<WorkNode>(&st)?;
    node::verify_admits(&state, a.worktree, a.expected_commit, Some(a.session))
        .map_err(cairn::Error::Rejected)?;
    let tree = cairn::work::tree_reading(a.worktree, a.expected_commit);
    // Criteria run only in the expected tree at the expected commit; a wrong
    // tree is the caller's mistake: refused, nothing run, nothing written.
    if let Some(problem) = tree.problem() {
        return Err(input("expected_commit", "tree-at-commit", &problem));
    }
    let runs = n
        .acceptance
        .iter()
        .map(|c| {
            cairn::work::run_criterion(a.worktree, c, confirmations.get(&c.id).map(String::as_str))
        })
        .collect();
    let command = Command::Verify {
        spec: f.text.clone(),
        tree: Box::new(tree),
        runs,
        checklist,
    };
    let mut ctx = crate::record::context::<WorkNode>();
    ctx.session = Some(a.session.to_owned());
    let done = rec.record(Step::new(&st, &command).at(ctx).request(request))?;
    print(rec, r, &n.address, a.session, &done)
}

/// The recorded verification (its proof) with both axes.
fn print(
    rec: &Recorder,
    r: &WorkNodeRef,
    address: &[String],
    session: &str,
    done: &Recorded<WorkNode>,
) -> Result<Done, Failure> {
    let mut out = out_of(done);
    let proof = done.events.iter().find_map(|e| match e {
        node::Event::Verified { verification }
        | node::Event::VerificationFailed { verification } => Some(verification),
        _ => None,
    });
    out["proof"] = json!(proof);
    finish(out, rec, &r.spec, address, Some(session))?;
    Ok(Done::Recorded(done.outcome))
}

/// Records `done` when every terminal-truth item holds (this session's `done`
/// records satisfy the dependencies).
pub fn done(rec: &Recorder, r: &WorkNodeRef, session: &str) -> Result<Done, Failure> {
    let (f, n) = target(r)?;
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work done",
        json!({"spec": f.path, "node": n.address, "session": session}),
    );
    let done = match rec.recall::<WorkNode>(&st, &request)? {
        Some(done) => done,
        None => {
            let s = valid_spec(&f)?;
            let deps_done: Vec<Vec<String>> =
                done_this_session(&rec.existing_engine()?, &f, &s, session)?
                    .into_iter()
                    .collect();
            let command = Command::Done {
                spec: f.text.clone(),
                deps_done,
            };
            let mut ctx = crate::record::context::<WorkNode>();
            ctx.session = Some(session.to_owned());
            rec.record(Step::new(&st, &command).at(ctx).request(request))?
        }
    };
    finish(out_of(&done), rec, &r.spec, &n.address, Some(session))?;
    Ok(Done::Recorded(done.outcome))
}
