//! `cairn work <verb>`: work nodes of a workspec. cairn validates the spec, keeps
//! one journal stream per node (`work-node/<spec key>:<address>`), runs the
//! criteria itself for `verify`, and refuses what the evidence does not support.
//!
//! `--idempotency-key` on every recording verb. `plan`, `verify`, `merge`,
//! `amend-criterion` and `done` carry what cairn read or ran (the spec and draft
//! as found, the trees, the criterion runs, the merged tree's ancestry, this
//! session's standing of the dependencies), so their key stands for the
//! caller's flags and is looked up first: a retry runs no git, no criterion and
//! rewrites no file. The other verbs' commands are their flags.

mod confirm;
mod plan;
mod read;
mod scope;
mod verify;
pub(crate) mod view;

use std::collections::BTreeSet;
use std::path::PathBuf;

use cairn::journal::Options;
use cairn::machines::work::node::{self, provenance, Command, State, WorkNode};
use cairn::machines::work::ready::lifecycles;
use cairn::machines::work::spec::{render_path, validate_with_draft, Draft, Node, Severity, Spec};
use cairn::{Engine, Machine, StreamId};
use serde_json::json;

use crate::args::{VerdictArg, WorkCommand, WorkNodeRef};
use crate::failure::{input, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Step};
use view::NodeView;

/// A spec read from disk: its absolute path, text and key.
struct SpecFile {
    path: PathBuf,
    text: String,
    key: String,
}

/// The spec's key, the part of its nodes' streams that names the spec. One that
/// survives a clone: inside a git repository, the repository's identity (its root
/// commits, the same in every clone and fork) and the spec's path in it; outside
/// one, the absolute path. A journal that already holds nodes under the
/// absolute-path key (recorded before clone-stable keys) keeps using it, so no
/// recorded node is lost.
///
/// Inside a repository whose identity cannot be read the key is refused
/// (`spec-key`, exit 2), never the absolute path (helper-70, HIGH): on an unborn
/// branch (`git checkout --orphan`) the spec got the absolute-path key, its nodes
/// a second stream each, and from then on the journal's absolute-path streams
/// made every verb use that key, so a lease on the node's first stream fenced
/// nothing; and a shallow clone's "root" is its shallow boundary, which moves with
/// each fetch. So is a git that could not run.
fn spec_key(
    abs: &std::path::Path,
    rec: Option<&Recorder>,
    records: bool,
) -> Result<String, Failure> {
    use cairn::machines::evidence::git::git;
    let legacy = node::sha256_hex(abs.to_string_lossy().as_bytes())[..16].to_owned();
    let Some(dir) = abs.parent().and_then(|d| d.to_str()) else {
        return Ok(legacy);
    };
    let refused = |why: &str| input("spec", "spec-key", why);
    let top = cairn::observe::run(&git(dir, &["rev-parse", "--show-toplevel"]));
    if top.exit_status.is_none() {
        return Err(refused(&format!(
            "git could not run to read the spec's repository: {}",
            top.stderr.trim()
        )));
    }
    if !top.ok() {
        // Not inside a repository: the absolute path. Where a `.git` stands in
        // the spec's directory or above it, git failing is not "no repository"
        // (helper-71: `junk` in `.git/HEAD` for one plan made the absolute-path
        // stream, and every later verb used it): refused.
        if abs
            .ancestors()
            .skip(1)
            .any(|d| d.join(".git").symlink_metadata().is_ok())
        {
            return Err(refused(&format!(
                "git could not read the spec's repository: {}",
                top.stderr.trim()
            )));
        }
        // Outside a repository the absolute-path key only goes on with streams a
        // journal already holds under it: no verb that records starts one
        // (helper-73: `.git` moved aside for one plan made a fresh stream, and a
        // spent budget started over once `.git` was back).
        if records && !holds_streams_under(&legacy, rec)? {
            return Err(refused(
                "the spec is not inside a git repository: a work node's streams are keyed by the spec's repository (its root commits) and its path in it",
            ));
        }
        return Ok(legacy);
    }
    let top = top.stdout.trim().to_owned();
    let line = |argv: Vec<String>| {
        let run = cairn::observe::run(&argv);
        run.ok().then(|| run.stdout.trim().to_owned())
    };
    match line(git(&top, &["rev-parse", "--is-shallow-repository"])).as_deref() {
        Some("false") => {}
        Some("true") => {
            return Err(refused(
                "the spec's repository is a shallow clone: its root commits are not its history's (fetch the whole history: `git fetch --unshallow`)",
            ))
        }
        _ => return Err(refused("whether the spec's repository is shallow could not be read")),
    }
    let roots = line(git(&top, &["rev-list", "--max-parents=0", "HEAD"]))
        .map(|out| {
            let mut r: Vec<&str> = out.lines().collect();
            r.sort_unstable();
            r.join(",")
        })
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            refused("the spec's repository has no commit at HEAD (an unborn branch): its root commits name the spec's nodes; commit, or check out a branch that has commits")
        })?;
    let top = std::fs::canonicalize(&top).ok();
    let rel = top
        .as_deref()
        .and_then(|t| abs.strip_prefix(t).ok())
        .ok_or_else(|| refused("the spec is not inside its repository's top level"))?;
    if holds_streams_under(&legacy, rec)? {
        return Ok(legacy);
    }
    let identity = format!("git\0{roots}\0{}", rel.to_string_lossy());
    Ok(node::sha256_hex(identity.as_bytes())[..16].to_owned())
}

/// Whether the journal (when there is one) holds work-node streams under `key`.
fn holds_streams_under(key: &str, rec: Option<&Recorder>) -> Result<bool, Failure> {
    let Some(engine) = rec.map(Recorder::existing_engine).transpose()?.flatten() else {
        return Ok(false);
    };
    let prefix = format!("{}/{key}:", node::NAME);
    Ok(engine
        .journal()
        .streams()?
        .iter()
        .any(|s| s.stream.starts_with(&prefix)))
}

/// The spec at `path`, for a verb that records on its nodes' streams (`rec`) or
/// only validates it (`None`).
fn read_spec(path: &str, rec: Option<&Recorder>) -> Result<SpecFile, Failure> {
    read_spec_as(path, rec, rec.is_some())
}

/// The spec at `path`, for a verb that only reads its nodes' streams (`status`,
/// `ready`): a spec outside any repository is read (its nodes are unplanned, or
/// under the absolute-path key a journal already holds).
fn read_spec_to_read(path: &str, rec: &Recorder) -> Result<SpecFile, Failure> {
    read_spec_as(path, Some(rec), false)
}

fn read_spec_as(path: &str, rec: Option<&Recorder>, records: bool) -> Result<SpecFile, Failure> {
    let abs = std::fs::canonicalize(path)
        .map_err(|e| input("spec", "read-error", &format!("`{path}`: {e}")))?;
    let text = crate::input::read_file(&abs, "spec", "read-error")?;
    let key = spec_key(&abs, rec, records)?;
    Ok(SpecFile {
        path: abs,
        text,
        key,
    })
}

/// The spec fully validated — schema, ids, dependencies and the criteria's
/// lineage against the draft it declares — as every verb that gates reads it:
/// the first error is refused with its code as the rule.
fn valid_spec(f: &SpecFile) -> Result<Spec, Failure> {
    let v = validate_with_draft(&f.text, &scope::read_draft(f));
    if let Some(first) = v.findings.iter().find(|x| x.severity == Severity::Error) {
        return Err(input(
            &format!("spec {}", render_path(&first.path)),
            &first.code,
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

/// The draft's text as a command carries it (`None`: not declared, absent or
/// unreadable; the machine tells these apart from the spec's first line).
fn draft_text(f: &SpecFile) -> Option<String> {
    match scope::read_draft(f) {
        Draft::Text(t) => Some(t),
        Draft::NotDeclared | Draft::Unavailable => None,
    }
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

fn load(engine: &Option<Engine>, s: &StreamId) -> Result<State, Failure> {
    match engine {
        None => Ok(WorkNode::initial_state()),
        Some(e) => Ok(e.load::<WorkNode>(s)?.0),
    }
}

/// The nodes whose `done` is recorded (the lifecycle axis), and those that
/// satisfy a dependency in `session` (done and verified this session, see
/// `node::satisfies_dependents`).
type Standing = (BTreeSet<Vec<String>>, BTreeSet<Vec<String>>);

fn standing(
    engine: &Option<Engine>,
    f: &SpecFile,
    spec: &Spec,
    session: &str,
) -> Result<Standing, Failure> {
    let (mut done, mut satisfied) = (BTreeSet::new(), BTreeSet::new());
    for n in &spec.nodes {
        let state = load(engine, &stream(f, &n.address)?)?;
        if matches!(state, State::Done { .. }) {
            done.insert(n.address.clone());
        }
        if node::satisfies_dependents(&state, n, session) {
            satisfied.insert(n.address.clone());
        }
    }
    Ok((done, satisfied))
}

/// What every recorded (or replayed) node transition prints before both axes.
fn out_of(done: &Recorded<WorkNode>) -> NodeView {
    NodeView {
        stream: done.stream.to_string(),
        version: done.version,
        events: done.names(),
        state: WorkNode::state_name(&done.state),
        session: None,
        lifecycle: None,
        blockers: None,
        verification: None,
        verification_words: None,
        proof: None,
        plan: None,
        receipt: None,
        dispatch_state: None,
        request: None,
        spec: None,
        containment: None,
    }
}

/// The spec and the node a verb names.
fn target(rec: &Recorder, r: &WorkNodeRef) -> Result<(SpecFile, Node), Failure> {
    let f = read_spec(&r.spec, Some(rec))?;
    let s = valid_spec(&f)?;
    let n = resolve(&s, &r.node)?.clone();
    Ok((f, n))
}

/// A node verb whose command is exactly its flags: record it, print it with both axes.
fn node_verb(rec: &Recorder, r: &WorkNodeRef, command: Command) -> Result<Done, Failure> {
    let (f, n) = target(rec, r)?;
    let done = rec.record(Step::new(&stream(&f, &n.address)?, &command))?;
    finish(out_of(&done), rec, &f, &n.address, None)?;
    Ok(Done::Recorded(done.outcome))
}

/// Prints a node verb's output with both axes: lifecycle (from the spec the verb
/// read — never read again after the write: a file edited meanwhile would make
/// a recorded verb exit with the new file's error — the recorded `done`s and
/// what satisfies a dependency this session) and verification provenance. Both
/// depend on the session: a verb given none (and no `CAIRN_SESSION`) claims
/// neither.
fn finish(
    mut out: NodeView,
    rec: &Recorder,
    f: &SpecFile,
    address: &[String],
    session: Option<&str>,
) -> Result<(), Failure> {
    let env_session = std::env::var("CAIRN_SESSION").ok();
    let session = session.or(env_session.as_deref());
    out.session = session.map(str::to_owned);
    let Some(session) = session else {
        output::json(&out);
        return Ok(());
    };
    let s = valid_spec(f)?;
    let e = rec.existing_engine()?;
    let (done, satisfied) = standing(&e, f, &s, session)?;
    if let (Some(n), Some((lifecycle, blockers))) = (
        s.node(address),
        lifecycles(&s, &done, &satisfied).get(address),
    ) {
        let state = load(&e, &stream(f, address)?)?;
        let p = provenance(state.run(), n, session);
        out.lifecycle = Some(json!(lifecycle));
        out.blockers = Some(json!(blockers));
        out.verification = Some(json!(p));
        out.verification_words = Some(json!(p.words()));
    }
    output::json(&out);
    Ok(())
}

/// The session evidence is bound to, as a person reads it (helper-75: `s\u{200B}1`
/// was taken as a session that reads as `s1`).
fn session_of(s: &crate::args::WorkSession) -> Result<&str, Failure> {
    cairn::machines::evidence::names::label(
        "session",
        &s.session,
        cairn::machines::evidence::names::NAME_MAX,
    )
    .map_err(|(rule, m)| input("session", rule, &m))?;
    Ok(&s.session)
}

pub fn run(verb: &WorkCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let rec = |key| Recorder::new(db, options, key);
    let reader = Recorder::reader(db, options);
    match verb {
        WorkCommand::Validate { spec } => read::validate(spec.path()),
        WorkCommand::Ready { spec, session } => {
            read::ready(&reader, spec.path(), session_of(session)?)
        }
        WorkCommand::Status { spec, session } => {
            read::status(&reader, spec.path(), session_of(session)?)
        }
        WorkCommand::Plan { node: r, with, key } => plan::plan(&rec(key)?, r, with),
        WorkCommand::Dispatch {
            node: r,
            run_id,
            worktree,
            expected_commit,
            budget,
            not_dispatched,
            key,
        } => {
            let rec = rec(key)?;
            let (f, n) = target(&rec, r)?;
            // The worker tree's repository, read only for a receipt (a
            // not-dispatched finding names no tree that holds work), and that
            // repository's identity on disk (work-node rules 10).
            let repository = run_id
                .as_ref()
                .map(|_| cairn::observe::run(&node::dispatch_plan(worktree)));
            let identity = repository
                .as_ref()
                .and_then(node::identity_plan)
                .map(|argv| cairn::observe::run(&argv));
            let command = Command::Dispatch {
                run_id: run_id.clone(),
                worktree_path: worktree.clone(),
                expected_commit: expected_commit.clone(),
                budget: *budget,
                finding: not_dispatched.clone(),
                repository: repository.clone(),
                identity,
            };
            let done = rec.record(Step::new(&stream(&f, &n.address)?, &command))?;
            let mut out = out_of(&done);
            if let Some(node::Event::NotDispatched { plan, .. }) = done.events.first() {
                out.dispatch_state = Some("not-dispatched");
                out.plan = Some(json!(plan));
            }
            finish(out, &rec, &f, &n.address, None)?;
            Ok(Done::Recorded(done.outcome))
        }
        WorkCommand::Verify {
            node: r,
            worktree,
            expected_commit,
            checklist,
            session,
            key,
        } => verify::verify(
            &rec(key)?,
            r,
            &verify::Flags {
                worktree,
                expected_commit,
                checklist,
                session: session_of(session)?,
            },
        ),
        WorkCommand::Review {
            node: r,
            verdict,
            failed,
            concerns,
            key,
        } => {
            let verdict = match verdict {
                VerdictArg::Approve => node::ReviewVerdict::Approve,
                VerdictArg::Reject => node::ReviewVerdict::Reject,
            };
            node_verb(
                &rec(key)?,
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
            key,
        } => node_verb(
            &rec(key)?,
            r,
            Command::Remediate {
                run_id: run_id.clone(),
                worktree_path: worktree.clone(),
            },
        ),
        WorkCommand::Escalate {
            node: r,
            reason,
            key,
        } => node_verb(
            &rec(key)?,
            r,
            Command::Escalate {
                reason: reason.clone(),
            },
        ),
        WorkCommand::Merge {
            node: r,
            merged_tree,
            commit,
            key,
        } => verify::merge(&rec(key)?, r, merged_tree, commit),
        WorkCommand::AmendCriterion {
            spec,
            criterion,
            before,
            after,
            reason,
            authority,
            key,
        } => scope::amend_criterion(
            &rec(key)?,
            spec,
            cairn::machines::work::amend::AmendRequest {
                criterion_id: criterion.clone(),
                before: before.clone(),
                after: after.clone(),
                reason: reason.clone(),
                authority: authority.clone(),
            },
        ),
        WorkCommand::RaiseScope {
            node: r,
            target: t,
            add_touches,
            change,
            rationale,
            key,
        } => {
            let rec = rec(key)?;
            let (f, n) = target(&rec, r)?;
            let command = Command::RaiseScope {
                target: t.clone(),
                add_touches: add_touches.clone(),
                change: change.clone(),
                rationale: rationale.clone(),
            };
            let done = rec.record(Step::new(&stream(&f, &n.address)?, &command))?;
            let mut out = out_of(&done);
            out.request = Some(json!(done.state.run().and_then(|r| r.scope.clone())));
            finish(out, &rec, &f, &n.address, None)?;
            Ok(Done::Recorded(done.outcome))
        }
        WorkCommand::PassUp {
            node: r,
            request_id,
            context,
            recommendation,
            key,
        } => node_verb(
            &rec(key)?,
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
            key,
        } => scope::resolve_scope(
            &rec(key)?,
            r,
            Command::ResolveScope {
                request_id: request_id.clone(),
                selected: selected.clone(),
                note: note.clone(),
                custom_instruction: custom_instruction.clone(),
                on_behalf_of_user: *on_behalf_of_user,
                operator: operator.clone(),
            },
        ),
        WorkCommand::Done {
            node: r,
            session,
            key,
        } => verify::done(&rec(key)?, r, session_of(session)?),
    }
}
