//! `cairn work <verb>`: work nodes of a workspec. cairn validates the spec, keeps
//! one journal stream per node (`work-node/<spec key>:<address>`), runs the
//! criteria itself for `verify`, and refuses what the evidence does not support.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cairn::journal::Options;
use cairn::machines::work::amend;
use cairn::machines::work::node::{
    self, provenance, ChecklistReport, Command, PlanReceipt, ReviewVerdict, State, WorkNode,
};
use cairn::machines::work::ready::lifecycles;
use cairn::machines::work::spec::{
    render_path, validate, validate_with_draft, Draft, Evidence, Node, Severity, Spec,
};
use cairn::{Engine, Machine, StreamId};
use serde_json::{json, Value};

use crate::args::{VerdictArg, WorkCommand, WorkNodeRef};
use crate::failure::{code, input, require_abs_path, Failure, NoJournalLocation};
use crate::output;

type Db = Result<PathBuf, NoJournalLocation>;

/// A spec read from disk: its absolute path, text and key.
struct SpecFile {
    path: PathBuf,
    text: String,
    key: String,
}

fn read_spec(path: &str) -> Result<SpecFile, Failure> {
    let abs = std::fs::canonicalize(path)
        .map_err(|e| input("spec", "read-error", &format!("`{path}`: {e}")))?;
    let meta = std::fs::metadata(&abs).map_err(|e| input("spec", "read-error", &e.to_string()))?;
    if meta.len() > crate::park::MAX_INPUT {
        return Err(input("spec", "input-size", "the workspec is too large"));
    }
    let text = std::fs::read_to_string(&abs)
        .map_err(|e| input("spec", "read-error", &format!("`{}`: {e}", abs.display())))?;
    let key = node::sha256_hex(abs.to_string_lossy().as_bytes())[..16].to_owned();
    Ok(SpecFile {
        path: abs,
        text,
        key,
    })
}

fn valid_spec(f: &SpecFile) -> Result<Spec, Failure> {
    let v = validate(&f.text);
    if let Some(first) = v.findings.iter().find(|x| x.severity == Severity::Error) {
        return Err(input(
            &format!("spec {}", render_path(&first.path)),
            "spec-valid",
            &format!(
                "the workspec has errors; run `cairn work validate`: {} ({})",
                first.render(),
                first.message
            ),
        ));
    }
    v.spec
        .ok_or_else(|| input("spec", "spec-valid", "the workspec could not be read"))
}

fn stream(f: &SpecFile, address: &[String]) -> Result<StreamId, Failure> {
    Ok(StreamId::new(
        node::NAME,
        &node::stream_instance(&f.key, address),
    )?)
}

fn resolve<'a>(spec: &'a Spec, selector: &str) -> Result<&'a Node, Failure> {
    spec.resolve(selector)
        .map_err(|m| input("node", "node-address", &m))
}

fn engine(db: &Db, options: &Options) -> Result<Option<Engine>, Failure> {
    crate::record::existing_engine(db, options)
}

fn load(engine: &Option<Engine>, s: &StreamId) -> Result<State, Failure> {
    match engine {
        None => Ok(WorkNode::initial_state()),
        Some(e) => Ok(e.load::<WorkNode>(s)?.0),
    }
}

/// The nodes whose `done` was recorded in `session` (and only those).
fn done_this_session(
    engine: &Option<Engine>,
    f: &SpecFile,
    spec: &Spec,
    session: &str,
) -> Result<BTreeSet<Vec<String>>, Failure> {
    let mut done = BTreeSet::new();
    for n in &spec.nodes {
        if let State::Done { run } = load(engine, &stream(f, &n.address)?)? {
            if run.done_session.as_deref() == Some(session) {
                done.insert(n.address.clone());
            }
        }
    }
    Ok(done)
}

fn record(
    db: &Db,
    options: &Options,
    s: &StreamId,
    command: Command,
    session: Option<&str>,
) -> Result<(cairn::Executed<WorkNode>, Value), Failure> {
    let mut ctx = crate::record::context::<WorkNode>();
    ctx.session = session.map(str::to_owned);
    let done = crate::record::execute::<WorkNode>(db, options, s, &command, &ctx, None)?;
    let names: Vec<&str> = done.events.iter().map(WorkNode::event_name).collect();
    eprintln!(
        "cairn: recorded {} on {s} (version {})",
        names.join(", "),
        done.version
    );
    let out = json!({
        "stream": s.to_string(),
        "version": done.version,
        "events": names,
        "state": WorkNode::state_name(&done.state),
    });
    Ok((done, out))
}

/// The brief, by reference: written under the spec's `.work/.cache/briefs/`.
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

pub fn run(verb: &WorkCommand, db: &Db, options: &Options) -> Result<u8, Failure> {
    match verb {
        WorkCommand::Validate { spec } => {
            let f = read_spec(spec)?;
            let v = validate_with_draft(&f.text, &read_draft(&f));
            let findings: Vec<Value> = v
                .findings
                .iter()
                .map(|x| json!({"code": x.code, "severity": x.severity, "path": render_path(&x.path), "message": x.message, "rendered": x.render()}))
                .collect();
            let errors = v
                .findings
                .iter()
                .filter(|x| x.severity == Severity::Error)
                .count();
            let mut out = json!({
                "path": f.path,
                "valid": v.valid(),
                "errorCount": errors,
                "warningCount": v.findings.len() - errors,
                "findings": findings,
            });
            if let Some(first) = v.findings.iter().find(|x| x.severity == Severity::Error) {
                out["error"] = json!({"kind": "invalid-spec", "field": render_path(&first.path), "rule": first.code, "message": first.message});
            }
            output::json(&out);
            Ok(if v.valid() { code::OK } else { code::BAD_INPUT })
        }
        WorkCommand::Ready { spec, session } => {
            let f = read_spec(spec)?;
            let s = valid_spec(&f)?;
            let e = engine(db, options)?;
            let done = done_this_session(&e, &f, &s, &session.session)?;
            let lc = lifecycles(&s, &done);
            let ready: Vec<&Vec<String>> = lc
                .iter()
                .filter(|(_, (l, _))| *l == cairn::machines::work::ready::Lifecycle::Ready)
                .map(|(a, _)| a)
                .collect();
            let others: Vec<Value> = lc
                .iter()
                .filter(|(_, (l, _))| *l != cairn::machines::work::ready::Lifecycle::Ready)
                .map(|(a, (l, b))| json!({"address": a, "lifecycle": l, "blockers": b}))
                .collect();
            output::json(
                &json!({"spec": f.path, "session": session.session, "ready": ready, "not_ready": others}),
            );
            Ok(code::OK)
        }
        WorkCommand::Status { spec, session } => {
            let f = read_spec(spec)?;
            let s = valid_spec(&f)?;
            let e = engine(db, options)?;
            let done = done_this_session(&e, &f, &s, &session.session)?;
            let lc = lifecycles(&s, &done);
            let mut nodes = vec![];
            for n in &s.nodes {
                let state = load(&e, &stream(&f, &n.address)?)?;
                let p = provenance(state.run(), n, &session.session);
                let (lifecycle, blockers) = &lc[&n.address];
                nodes.push(json!({
                    "address": n.address,
                    "lifecycle": lifecycle,
                    "blockers": blockers,
                    "verification": p,
                    "verification_words": p.words(),
                    "stage": WorkNode::state_name(&state),
                    "reviews": state.run().map(|r| r.reviews.len()).unwrap_or(0),
                }));
            }
            let ready: Vec<&Vec<String>> = lc
                .iter()
                .filter(|(_, (l, _))| *l == cairn::machines::work::ready::Lifecycle::Ready)
                .map(|(a, _)| a)
                .collect();
            output::json(
                &json!({"spec": f.path, "session": session.session, "ready": ready, "nodes": nodes}),
            );
            Ok(code::OK)
        }
        WorkCommand::Plan { node: r, with } => {
            let f = read_spec(&r.spec)?;
            let s = valid_spec(&f)?;
            let n = resolve(&s, &r.node)?.clone();
            let mut overlaps = vec![];
            for w in with {
                let other = resolve(&s, w)?;
                for t in &n.touches {
                    for u in &other.touches {
                        let (a, b) = (t.trim_end_matches('/'), u.trim_end_matches('/'));
                        if a == b
                            || b.starts_with(&format!("{a}/"))
                            || a.starts_with(&format!("{b}/"))
                        {
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
            let receipt = PlanReceipt {
                brief_path: brief_path.to_string_lossy().into_owned(),
                brief_sha256,
                writable_roots: n.touches.clone(),
                confine_writes: true,
                escalation: "off".into(),
                worktree: !with.is_empty(),
                overlaps,
            };
            let st = stream(&f, &n.address)?;
            let command = Command::Plan {
                spec: f.text.clone(),
                address: n.address.clone(),
                receipt: receipt.clone(),
            };
            // The guard first: a refused plan writes no brief.
            let state = load(&engine(db, options)?, &st)?;
            WorkNode::decide(&state, &command, &crate::record::context::<WorkNode>())
                .map_err(cairn::Error::Rejected)?;
            write_brief(&brief_path, &brief_text)?;
            let (_, mut out) = record(db, options, &st, command, None)?;
            out["plan"] = json!(receipt);
            finish(out, db, options, &r.spec, &n.address, None)?;
            Ok(code::OK)
        }
        WorkCommand::Dispatch {
            node: r,
            run_id,
            worktree,
            expected_commit,
            budget,
            not_dispatched,
        } => {
            let (f, n) = target(r)?;
            let (done, mut out) = record(
                db,
                options,
                &stream(&f, &n.address)?,
                Command::Dispatch {
                    run_id: run_id.clone(),
                    worktree_path: worktree.clone(),
                    expected_commit: expected_commit.clone(),
                    budget: *budget,
                    finding: not_dispatched.clone(),
                },
                None,
            )?;
            if let Some(node::Event::NotDispatched { plan, .. }) = done.events.first() {
                out["dispatchState"] = json!("not-dispatched");
                out["plan"] = json!(plan);
            }
            finish(out, db, options, &r.spec, &n.address, None)?;
            Ok(code::OK)
        }
        WorkCommand::Verify {
            node: r,
            worktree,
            expected_commit,
            checklist,
            confirm,
            session,
        } => {
            require_abs_path("worktree", worktree)?;
            let (f, n) = target(r)?;
            let checklist: Vec<ChecklistReport> = serde_json::from_str(checklist).map_err(|e| {
                input(
                    "checklist",
                    "checklist-reports",
                    &format!("expected [{{\"index\": N, \"done\": true}}, …]: {e}"),
                )
            })?;
            let mut confirmations = std::collections::BTreeMap::new();
            for c in confirm {
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
            // The guard first: a refused verify runs nothing.
            let state = load(&engine(db, options)?, &st)?;
            node::verify_admits(&state, worktree, expected_commit, Some(&session.session))
                .map_err(cairn::Error::Rejected)?;
            let tree = cairn::work::tree_reading(worktree, expected_commit);
            // Criteria run only in the expected tree at the expected commit; a wrong
            // tree is the caller's mistake: refused, nothing run, nothing written.
            if let Some(problem) = tree.problem() {
                return Err(input("expected_commit", "tree-at-commit", &problem));
            }
            let runs = n
                .acceptance
                .iter()
                .map(|c| {
                    cairn::work::run_criterion(
                        worktree,
                        c,
                        confirmations.get(&c.id).map(String::as_str),
                    )
                })
                .collect();
            let (done, mut out) = record(
                db,
                options,
                &st,
                Command::Verify {
                    spec: f.text.clone(),
                    tree: Box::new(tree),
                    runs,
                    checklist,
                },
                Some(&session.session),
            )?;
            let v = done
                .state
                .run()
                .and_then(|r| r.verifications.last())
                .cloned();
            let passed = v.as_ref().is_some_and(|v| v.passed);
            out["proof"] = json!(v);
            finish(
                out,
                db,
                options,
                &r.spec,
                &n.address,
                Some(session.session.as_str()),
            )?;
            Ok(if passed { code::OK } else { code::NOT_GREEN })
        }
        WorkCommand::Review {
            node: r,
            verdict,
            failed,
            concerns,
        } => {
            let verdict = match verdict {
                VerdictArg::Approve => ReviewVerdict::Approve,
                VerdictArg::Reject => ReviewVerdict::Reject,
            };
            node_verb(
                db,
                options,
                r,
                Command::Review {
                    verdict,
                    failed_criteria: failed.clone(),
                    concerns: concerns.clone(),
                },
            )
        }
        WorkCommand::Remediate {
            node: r,
            run_id,
            worktree,
        } => node_verb(
            db,
            options,
            r,
            Command::Remediate {
                run_id: run_id.clone(),
                worktree_path: worktree.clone(),
            },
        ),
        WorkCommand::Escalate { node: r, reason } => node_verb(
            db,
            options,
            r,
            Command::Escalate {
                reason: reason.clone(),
            },
        ),
        WorkCommand::Merge {
            node: r,
            merged_tree,
            commit,
        } => node_verb(
            db,
            options,
            r,
            Command::Merge {
                merged_tree: merged_tree.clone(),
                commit: commit.clone(),
            },
        ),
        WorkCommand::AmendCriterion {
            spec,
            criterion,
            before,
            after,
            reason,
            authority,
        } => {
            let f = read_spec(spec)?;
            let s = valid_spec(&f)?;
            let owner = s
                .nodes
                .iter()
                .find(|n| n.acceptance.iter().any(|c| &c.id == criterion))
                .ok_or_else(|| {
                    input(
                        "criterion",
                        "criterion-not-found",
                        "no criterion has this id in the spec",
                    )
                })?;
            let st = stream(&f, &owner.address)?;
            let draft = match read_draft(&f) {
                Draft::Text(t) => Some(t),
                _ => None,
            };
            let request = amend::AmendRequest {
                criterion_id: criterion.clone(),
                before: before.clone(),
                after: after.clone(),
                reason: reason.clone(),
                authority: authority.clone(),
            };
            let ctx = crate::record::context::<WorkNode>();
            let new_text =
                amend::amend_criterion(&f.text, draft.as_deref(), &request, &ctx.now.to_string())
                    .map_err(|(code, m)| input("criterion", code, &m))?;
            let out = edit_and_record(
                db,
                options,
                &f,
                &st,
                Command::AmendCriterion {
                    spec: f.text.clone(),
                    draft,
                    request,
                },
                ctx,
                &new_text,
            )?;
            finish(out, db, options, spec, &owner.address, None)?;
            Ok(code::OK)
        }
        WorkCommand::RaiseScope {
            node: r,
            target: t,
            add_touches,
            change,
            rationale,
        } => {
            let (f, n) = target(r)?;
            let (done, mut out) = record(
                db,
                options,
                &stream(&f, &n.address)?,
                Command::RaiseScope {
                    target: t.clone(),
                    add_touches: add_touches.clone(),
                    change: change.clone(),
                    rationale: rationale.clone(),
                },
                None,
            )?;
            out["request"] = json!(done.state.run().and_then(|r| r.scope.clone()));
            finish(out, db, options, &r.spec, &n.address, None)?;
            Ok(code::OK)
        }
        WorkCommand::PassUp {
            node: r,
            request_id,
            context,
            recommendation,
        } => node_verb(
            db,
            options,
            r,
            Command::PassUp {
                request_id: request_id.clone(),
                context: context.clone(),
                recommendation: recommendation.clone(),
            },
        ),
        WorkCommand::ResolveScope {
            node: r,
            request_id,
            selected,
            note,
            custom_instruction,
            on_behalf_of_user,
            operator,
        } => {
            let (f, n) = target(r)?;
            let st = stream(&f, &n.address)?;
            let command = Command::ResolveScope {
                request_id: request_id.clone(),
                selected: selected.clone(),
                note: note.clone(),
                custom_instruction: custom_instruction.clone(),
                on_behalf_of_user: *on_behalf_of_user,
                operator: operator.clone(),
            };
            let state = load(&engine(db, options)?, &st)?;
            let ctx = crate::record::context::<WorkNode>();
            let events =
                WorkNode::decide(&state, &command, &ctx).map_err(cairn::Error::Rejected)?;
            let out = match events.first() {
                // Approval updates `touches` in the spec.
                Some(node::Event::ScopeApproved { add_touches, .. }) => {
                    let new_text = amend::add_touches(&f.text, &n.address, add_touches)
                        .map_err(|(code, m)| input("spec", code, &m))?;
                    edit_and_record(db, options, &f, &st, command, ctx, &new_text)?
                }
                _ => record(db, options, &st, command, None)?.1,
            };
            finish(out, db, options, &r.spec, &n.address, None)?;
            Ok(code::OK)
        }
        WorkCommand::Done { node: r, session } => {
            let (f, n) = target(r)?;
            let s = valid_spec(&f)?;
            let e = engine(db, options)?;
            let deps_done: Vec<Vec<String>> = done_this_session(&e, &f, &s, &session.session)?
                .into_iter()
                .collect();
            drop(e);
            let (_, out) = record(
                db,
                options,
                &stream(&f, &n.address)?,
                Command::Done {
                    spec: f.text.clone(),
                    deps_done,
                },
                Some(&session.session),
            )?;
            finish(
                out,
                db,
                options,
                &r.spec,
                &n.address,
                Some(session.session.as_str()),
            )?;
            Ok(code::OK)
        }
    }
}

/// The draft a spec declares: read relative to the spec's git toplevel (else the
/// nearest directory holding `.work/`), and only from inside it.
fn read_draft(f: &SpecFile) -> Draft {
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
        (Ok(p), Ok(r)) if p.starts_with(&r) => {
            std::fs::read_to_string(p).map_or(Draft::Unavailable, Draft::Text)
        }
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

/// Decides first (nothing written on a refusal), then writes the new spec, then
/// appends; if the append fails the spec is put back.
fn edit_and_record(
    db: &Db,
    options: &Options,
    f: &SpecFile,
    s: &StreamId,
    command: Command,
    ctx: cairn::Context,
    new_text: &str,
) -> Result<Value, Failure> {
    let state = load(&engine(db, options)?, s)?;
    WorkNode::decide(&state, &command, &ctx).map_err(cairn::Error::Rejected)?;
    write_spec(f, new_text)?;
    match crate::record::execute::<WorkNode>(db, options, s, &command, &ctx, None) {
        Ok(done) => {
            let names: Vec<&str> = done.events.iter().map(WorkNode::event_name).collect();
            eprintln!(
                "cairn: recorded {} on {s} (version {}); {} rewritten",
                names.join(", "),
                done.version,
                f.path.display()
            );
            Ok(
                json!({"stream": s.to_string(), "version": done.version, "events": names, "state": WorkNode::state_name(&done.state), "spec": f.path}),
            )
        }
        Err(e) => {
            let _ = write_spec(f, &f.text);
            Err(e)
        }
    }
}

/// Prints a node verb's output with both axes: lifecycle (from the spec as it is
/// now and this session's `done` records) and verification provenance.
fn finish(
    mut out: Value,
    db: &Db,
    options: &Options,
    spec: &str,
    address: &[String],
    session: Option<&str>,
) -> Result<(), Failure> {
    let env_session = std::env::var("CAIRN_SESSION").ok();
    let session = session.or(env_session.as_deref());
    let f = read_spec(spec)?;
    let s = valid_spec(&f)?;
    let e = engine(db, options)?;
    let done = match session {
        Some(sess) => done_this_session(&e, &f, &s, sess)?,
        None => BTreeSet::new(),
    };
    if let (Some(n), Some((lifecycle, blockers))) =
        (s.node(address), lifecycles(&s, &done).get(address))
    {
        let state = load(&e, &stream(&f, address)?)?;
        let p = provenance(state.run(), n, session.unwrap_or(""));
        out["lifecycle"] = json!(lifecycle);
        out["blockers"] = json!(blockers);
        out["verification"] = json!(p);
        out["verification_words"] = json!(p.words());
        out["session"] = json!(session);
    }
    output::json(&out);
    Ok(())
}

/// A node verb that only records its command: record it, print it with both axes.
fn node_verb(db: &Db, options: &Options, r: &WorkNodeRef, command: Command) -> Result<u8, Failure> {
    let (f, n) = target(r)?;
    let (_, out) = record(db, options, &stream(&f, &n.address)?, command, None)?;
    finish(out, db, options, &r.spec, &n.address, None)?;
    Ok(code::OK)
}

fn target(r: &WorkNodeRef) -> Result<(SpecFile, Node), Failure> {
    let f = read_spec(&r.spec)?;
    let s = valid_spec(&f)?;
    let n = resolve(&s, &r.node)?.clone();
    Ok((f, n))
}
