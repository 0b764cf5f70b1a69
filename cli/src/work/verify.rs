//! `cairn work verify` (cairn reads the tree, runs every criterion in it with the
//! tree watched, asks the terminal for user criteria, reads the tree again, and
//! records the evidence), `cairn work merge` (cairn reads the merged tree and its
//! ancestry) and `cairn work done` (the terminal-truth checklist, this session).

use cairn::machines::evidence::wire;
use cairn::machines::work::node::{self, ChecklistReport, Command, Verification, WorkNode};
use cairn::machines::work::spec::Evidence;
use serde_json::{json, Value};

use super::{draft_text, finish, out_of, standing, stream, target, valid_spec, SpecFile};
use crate::args::WorkNodeRef;
use crate::failure::{input, require_abs_path, Done, Failure};
use crate::output;
use crate::record::{Recorded, Recorder, Request, Step};

/// `verify`'s flags.
pub struct Flags<'a> {
    pub worktree: &'a str,
    pub expected_commit: &'a str,
    pub checklist: &'a str,
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
    // Through `wire::typed`: a report given as an array (`[[0, true]]`) is
    // refused, not read by position (helper-55).
    cairn::machines::evidence::wire::typed(v, "checklist").map_err(|e| {
        input(
            "checklist",
            "checklist-reports",
            &format!(
                "expected [{{\"index\": N, \"done\": true}}, …]: {}: {}",
                e.field, e.message
            ),
        )
    })
}

/// Verifies a node: the tree at the expected commit, then every criterion run by
/// cairn, then the tree again; a failed verification is recorded and not green yet.
pub fn verify(rec: &Recorder, r: &WorkNodeRef, a: &Flags) -> Result<Done, Failure> {
    require_abs_path("worktree", a.worktree)?;
    let (f, n) = target(rec, r)?;
    let checklist = checklist(a.checklist)?;
    // A report of an item the node does not have, or a second report of one, is
    // the caller's mistake: refused before anything runs, nothing written (a
    // missing or `done: false` report is the node's state, recorded as a failure).
    let mut seen = vec![false; n.checklist.len()];
    for report in &checklist {
        match seen.get_mut(report.index) {
            None => {
                return Err(input(
                    "checklist",
                    "checklist-item",
                    &format!(
                        "checklist[{}]: no such item (the node has {})",
                        report.index,
                        output::count(n.checklist.len(), "item")
                    ),
                ))
            }
            Some(true) => {
                return Err(input(
                    "checklist",
                    "checklist-item",
                    &format!("checklist[{}]: reported twice", report.index),
                ))
            }
            Some(once) => *once = true,
        }
    }
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work verify",
        json!({
            "spec": f.path, "node": n.address, "worktree": a.worktree,
            "expected_commit": a.expected_commit, "checklist": checklist,
            "session": a.session,
        }),
    );
    if let Some(done) = rec.recall::<WorkNode>(&st, &request)? {
        return print(rec, &f, &n.address, a.session, &done);
    }
    // The guard first: a refused verify runs nothing. A done node (a later
    // session re-verifying it) needs a tree containing its merged commit: read first.
    let state = rec.current::<WorkNode>(&st)?;
    let contains = node::reverify_plan(&state, a.worktree, a.expected_commit)
        .map(|argv| cairn::observe::run(&argv));
    node::verify_admits(
        &state,
        a.worktree,
        a.expected_commit,
        Some(a.session),
        contains.as_ref(),
    )
    .map_err(cairn::Error::Rejected)?;
    // The repository its dispatch read, whose identity on disk is read again.
    let dispatched = state
        .run()
        .and_then(|r| r.repository.as_ref().map(|p| p.to_string()));
    let tree = cairn::work::tree_reading(a.worktree, a.expected_commit, dispatched.as_deref());
    // Criteria run only in the expected tree at the expected commit; a wrong
    // tree is the caller's mistake: refused, nothing run, nothing written.
    if let Some(problem) = tree.problem() {
        return Err(input("expected_commit", "tree-at-commit", &problem));
    }
    let runs = n
        .acceptance
        .iter()
        .map(|c| {
            let confirmation = match &c.evidence {
                Evidence::User { prompt } => Some(super::confirm::ask(&n.address, &c.id, prompt)),
                Evidence::Command { .. } | Evidence::Agent { .. } => None,
            };
            cairn::work::run_criterion(a.worktree, c, confirmation.as_ref())
        })
        .collect();
    let after = cairn::work::tree_reading(a.worktree, a.expected_commit, dispatched.as_deref());
    let command = Command::Verify {
        spec: f.text.clone(),
        tree: Box::new(tree),
        runs,
        checklist,
        draft: draft_text(&f),
        after: Some(Box::new(after)),
        contains,
    };
    let mut ctx = rec.context::<WorkNode>()?;
    ctx.session = Some(a.session.to_owned());
    let done = rec.record(Step::new(&st, &command).at(ctx).request(request))?;
    print(rec, &f, &n.address, a.session, &done)
}

/// The recorded verification (its proof: every criterion's captured output,
/// containment and tree watch) with both axes.
fn print(
    rec: &Recorder,
    f: &SpecFile,
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
    out.proof = Some(json!(proof));
    finish(out, rec, f, address, Some(session))?;
    Ok(Done::Recorded(done.outcome))
}

/// Which containment each command criterion of a verification ran under.
pub(super) fn containment(v: &Verification) -> Value {
    json!(v
        .criteria
        .iter()
        .filter_map(|c| c
            .containment
            .map(|m| json!({"criterion": c.criterion_id, "method": m})))
        .collect::<Vec<_>>())
}

/// Records a merge once cairn has read the merged tree: its top level, its HEAD
/// at `commit`, and `commit` containing the verified worker commit.
pub fn merge(
    rec: &Recorder,
    r: &WorkNodeRef,
    merged_tree: &str,
    commit: &str,
) -> Result<Done, Failure> {
    let (f, n) = target(rec, r)?;
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work merge",
        json!({"spec": f.path, "node": n.address, "merged_tree": merged_tree, "commit": commit}),
    );
    let done = match rec.recall::<WorkNode>(&st, &request)? {
        Some(done) => done,
        None => {
            let state = rec.current::<WorkNode>(&st)?;
            let plan =
                node::merge_admits(&state, merged_tree, commit).map_err(cairn::Error::Rejected)?;
            let command = Command::Merge {
                merged_tree: merged_tree.to_owned(),
                commit: commit.to_owned(),
                spec: f.text.clone(),
                draft: draft_text(&f),
                reading: Some(cairn::observe::run_all(&plan)),
                // The dispatch's repository's identity on disk, read again.
                identity: state
                    .run()
                    .and_then(|r| r.repository.as_ref())
                    .map(|common| {
                        cairn::observe::run(&cairn::machines::evidence::git::identity_argv(
                            common.as_str(),
                        ))
                    }),
            };
            rec.record(Step::new(&st, &command).request(request))?
        }
    };
    finish(out_of(&done), rec, &f, &n.address, None)?;
    Ok(Done::Recorded(done.outcome))
}

/// Records `done` when every terminal-truth item holds (what satisfies a
/// dependency this session satisfies the node's); prints which containment its
/// integration evidence ran under.
pub fn done(rec: &Recorder, r: &WorkNodeRef, session: &str) -> Result<Done, Failure> {
    let (f, n) = target(rec, r)?;
    let st = stream(&f, &n.address)?;
    let request = Request::new(
        "work done",
        json!({"spec": f.path, "node": n.address, "session": session}),
    );
    let done = match rec.recall::<WorkNode>(&st, &request)? {
        Some(done) => done,
        None => {
            let s = valid_spec(&f)?;
            let (_, satisfied) = standing(&rec.existing_engine()?, &f, &s, session)?;
            // Whether the merge's branch still holds the merged commit, read now.
            let state = rec.current::<WorkNode>(&st)?;
            let holds = cairn::machines::work::node::done_plan(&state)
                .map(|argv| cairn::observe::run(&argv));
            // The merged tree read again: still in the node's repository, on disk.
            let tree = state.run().and_then(|run| {
                let (merged_tree, commit) = run.merged.as_ref()?;
                Some(Box::new(cairn::work::tree_reading(
                    merged_tree.as_str(),
                    commit.as_str(),
                    run.repository.as_ref().map(|r| r.as_str()),
                )))
            });
            let command = Command::Done {
                spec: f.text.clone(),
                deps_done: satisfied.into_iter().collect(),
                draft: draft_text(&f),
                holds,
                tree,
            };
            let mut ctx = rec.context::<WorkNode>()?;
            ctx.session = Some(session.to_owned());
            rec.record(Step::new(&st, &command).at(ctx).request(request))?
        }
    };
    let mut out = out_of(&done);
    if let Some(v) = done
        .state
        .run()
        .and_then(|run| run.verifications.iter().rev().find(|v| v.integration))
    {
        out.containment = Some(containment(v));
    }
    finish(out, rec, &f, &n.address, Some(session))?;
    Ok(Done::Recorded(done.outcome))
}
