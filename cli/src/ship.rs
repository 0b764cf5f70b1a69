//! `cairn ship <verb>`: the worktree ship pipeline. cairn runs every git gate
//! itself (`git -C <absolute dir>`), asks the machine whether a mutating step is
//! admitted *before* touching git, and records the runs as the transition's evidence.

use std::path::PathBuf;

use cairn::journal::Options;
use cairn::machines::evidence::wire;
use cairn::machines::evidence::CommandRun;
use cairn::machines::ship::{
    self, admits, gates, recovery, Command, Mutation, Params, ReviewStatus, ScopeAnswer, Ship,
    Stage, State, Verb,
};
use cairn::observe::{run as exec, run_all};
use cairn::{Machine, Outcome, StreamId};
use serde_json::{json, Value};

use crate::args::{
    OpClassArg, ReviewStatusArg, ScopeAnswerArg, ShipCommand, ShipId, ShipReport, ShipReview,
};
use crate::failure::{code, input, require_abs_path, require_nonempty, Failure, NoJournalLocation};
use crate::output;

type Db = Result<PathBuf, NoJournalLocation>;

fn stream(id: &ShipId) -> Result<StreamId, Failure> {
    Ok(StreamId::new(ship::NAME, &id.short_id)?)
}

/// The stream's current state (the initial state when there is no journal yet).
fn current(db: &Db, options: &Options, stream: &StreamId) -> Result<State, Failure> {
    crate::record::current::<Ship>(db, options, stream)
}

fn review(r: &ShipReview) -> ReviewStatus {
    ReviewStatus {
        outcome: match r.review_status {
            ReviewStatusArg::Pass => Outcome::Pass,
            ReviewStatusArg::Fail => Outcome::Fail,
            ReviewStatusArg::Unknown => Outcome::Unknown,
        },
        detail: r.review_detail.clone(),
    }
}

/// The run of an admitted verb: the guard first, so a refused step touches nothing.
fn admitted(state: &State, verb: Verb) -> Result<ship::Run, Failure> {
    admits(state, verb).map_err(cairn::Error::Rejected)?;
    // An admitted verb other than `open` has a run (admits refuses idle streams).
    state
        .run()
        .cloned()
        .ok_or_else(|| input("short_id", "opened", "no ship run is open on this SHORT_ID"))
}

/// The verbs the state admits now.
fn next(state: &State) -> Vec<&'static str> {
    [
        (Verb::Open, "open"),
        (Verb::Preflight, "preflight"),
        (Verb::Create, "create"),
        (Verb::Verify, "verify"),
        (Verb::AnswerScope, "answer-scope"),
        (Verb::Refine, "refine"),
        (Verb::PreMerge, "pre-merge"),
        (Verb::Merge, "merge"),
        (Verb::Teardown, "teardown"),
        (Verb::Resume, "resume"),
        (Verb::AnswerTiebreaker, "answer-tiebreaker"),
        (Verb::Abandon, "abandon"),
    ]
    .into_iter()
    .filter(|(v, _)| {
        let begun = match v {
            Verb::Create => Some(Mutation::Create),
            Verb::Merge => Some(Mutation::Merge),
            Verb::Teardown => Some(Mutation::Teardown),
            Verb::Resume => Some(Mutation::Resume),
            _ => None,
        };
        admits(state, *v).is_ok() || begun.is_some_and(|m| admits(state, Verb::Begin(m)).is_ok())
    })
    .map(|(_, n)| n)
    .collect()
}

/// The state as the CLI shows it: stage, outcome code, the recovery table's action.
pub fn view(state: &State) -> Value {
    let name = Ship::state_name(state);
    let Some(run) = state.run() else {
        return json!({ "state": name, "next": next(state) });
    };
    let stage = state.stage();
    let (code, action) = match stage {
        Some(Stage::Preflighted { outcome }) => {
            (Some(outcome.code()), Some(outcome.action().to_owned()))
        }
        Some(Stage::Stopped { failure, code, .. }) => (
            Some(code.clone()),
            Some(recovery::guidance(*failure).to_owned()),
        ),
        Some(Stage::ScopeTripped { .. }) => (
            Some("scope-gate-tripped".to_owned()),
            Some(recovery::guidance(recovery::Failure::ScopeGate).to_owned()),
        ),
        Some(Stage::Tiebreaker { number, .. }) => (
            Some(format!("tiebreaker:{number}")),
            Some(recovery::guidance(recovery::Failure::StopTiebreaker).to_owned()),
        ),
        Some(Stage::TeardownPending { reason }) => (
            Some(reason.clone()),
            Some("remove worktree and branch: `cairn ship teardown`".to_owned()),
        ),
        Some(Stage::CreationFailed { failed }) => (
            Some("stopped:worktree-prep-failed".to_owned()),
            Some(format!(
                "{} ({})",
                recovery::guidance(recovery::Failure::WorktreeCreation),
                failed.join(", ")
            )),
        ),
        Some(Stage::PermissionBoundary { code }) => (
            Some(code.clone()),
            Some(recovery::guidance(recovery::Failure::PermissionBoundary).to_owned()),
        ),
        Some(Stage::Shipped) => (
            Some("shipped".to_owned()),
            Some(format!(
                "CLOSE_STEP: {} --commit {}",
                run.params.close_step,
                run.merged_sha.as_deref().unwrap_or("")
            )),
        ),
        _ => (None, None),
    };
    json!({
        "state": name,
        "stage": stage,
        "code": code,
        "action": action,
        "repo_root": run.repo_root,
        "branch": run.params.branch,
        "worktree_path": run.params.worktree_path,
        "target_branch": run.params.target_branch,
        "session": run.session,
        "refine_passed": run.refine_passed,
        "merge_attempts": run.merge_attempts,
        "merged_sha": run.merged_sha,
        "next": next(state),
    })
}

/// States (and last events) that mean "recorded, but the pipeline did not advance".
fn not_green(state: &State, events: &[&str]) -> bool {
    matches!(
        Ship::state_name(state),
        "preflight-blocked"
            | "scope-tripped"
            | "stopped"
            | "tiebreaker-pending"
            | "merge-rejected"
            | "creation-failed"
            | "permission-boundary"
    ) || matches!(
        events.last(),
        Some(&"anchor-drifted") | Some(&"resume-blocked")
    ) || events.last() == Some(&"teardown-partial")
}

fn record(db: &Db, options: &Options, stream: &StreamId, command: Command) -> Result<u8, Failure> {
    let done = crate::record::execute::<Ship>(
        db,
        options,
        stream,
        &command,
        &crate::record::context::<Ship>(),
        None,
    )?;
    let names: Vec<&str> = done.events.iter().map(Ship::event_name).collect();
    eprintln!(
        "cairn: recorded {} on {stream} (version {})",
        names.join(", "),
        done.version
    );
    let mut out = view(&done.state);
    out["stream"] = json!(stream.to_string());
    out["version"] = json!(done.version);
    out["events"] = json!(names);
    if let Some(note) = done.events.iter().find_map(|e| match e {
        ship::Event::PreflightPassed { note, .. } | ship::Event::PreflightBlocked { note, .. } => {
            note.clone()
        }
        _ => None,
    }) {
        eprintln!("{note}");
        out["note"] = json!(note);
    }
    if let Some(gates) = done.events.iter().rev().find_map(|e| match e {
        ship::Event::Phase1Verified { gates, .. }
        | ship::Event::ScopeTripped { gates, .. }
        | ship::Event::Phase1dFailed { gates, .. }
        | ship::Event::Refined { gates, .. }
        | ship::Event::RefineStopped { gates, .. }
        | ship::Event::PreMergeChecked { gates, .. }
        | ship::Event::PreMergeStopped { gates, .. }
        | ship::Event::WorktreeCreated { gates, .. } => Some(gates),
        _ => None,
    }) {
        out["gates"] = json!(gates);
    }
    output::json(&out);
    Ok(if not_green(&done.state, &names) {
        code::NOT_GREEN
    } else {
        code::OK
    })
}

/// A phase report: stdin, or the leaf's packet under the worktree.
fn report(r: &ShipReport, run: &ship::Run, phase: &str) -> Result<Value, Failure> {
    if !r.packet {
        return crate::park::document();
    }
    let path = format!(
        "{}/.run-ship/{phase}-{}.json",
        run.params.worktree_path, run.params.short_id
    );
    let text = std::fs::read_to_string(&path).map_err(|e| {
        input(
            "packet",
            "packet-readable",
            &format!("`{path}`: {e} (a missing packet is a structured stop)"),
        )
    })?;
    if text.len() as u64 > crate::park::MAX_INPUT {
        return Err(input("packet", "input-size", "the packet is too large"));
    }
    Ok(wire::parse_document(&text)?)
}

/// Announces a git mutation in the journal before git runs (an append at the version
/// just read: of two racing processes one conflicts, exit 3, and touches nothing).
/// A merge, teardown or resume already in flight (a crash between the git step and
/// its record) is re-run as is: each re-reads git and is idempotent. A crashed
/// `create` is not re-run (the add may have happened): `resume` observes it.
fn begin(
    db: &Db,
    options: &Options,
    stream: &StreamId,
    step: Mutation,
) -> Result<ship::Run, Failure> {
    let state = current(db, options, stream)?;
    let begun = state.run().and_then(|r| r.begun);
    match begun {
        Some(Mutation::Create) if step == Mutation::Create => return Err(input(
            "short_id",
            "create-in-flight",
            "a `create` was begun and never recorded: `cairn ship resume` observes what it left",
        )),
        Some(m) if m == step || step == Mutation::Resume => return admitted(&state, step.verb()),
        _ => {}
    }
    admitted(&state, Verb::Begin(step))?;
    let done = crate::record::execute::<Ship>(
        db,
        options,
        stream,
        &Command::Begin { step },
        &crate::record::context::<Ship>(),
        None,
    )?;
    done.state
        .run()
        .cloned()
        .ok_or_else(|| input("short_id", "opened", "no ship run is open on this SHORT_ID"))
}

/// The §repo-anchor divergence advisory's readings (no fetch: the stored remote ref).
fn advisory(p: &Params, root: &str) -> Vec<CommandRun> {
    let mut runs = vec![exec(&gates::upstream_argv(p, root))];
    let plan = gates::advisory_plan(p, root, &runs);
    if let Some(count) = plan.get(1) {
        runs.push(exec(count));
    }
    runs
}

fn anchor(run: &ship::Run) -> (CommandRun, bool) {
    let a = exec(&gates::anchor_argv(&run.repo_root));
    let held = gates::anchor_gate(&a, &run.repo_root).outcome == Outcome::Pass;
    (a, held)
}

pub fn run_verb(verb: &ShipCommand, db: &Db, options: &Options) -> Result<u8, Failure> {
    match verb {
        ShipCommand::Classify {
            repo_root,
            expected_basename,
            branch,
            worktree_path,
            target_branch,
        } => {
            require_abs_path("repo_root", repo_root)?;
            require_abs_path("worktree_path", worktree_path)?;
            require_nonempty("expected_basename", expected_basename)?;
            require_nonempty("branch", branch)?;
            require_nonempty("target_branch", target_branch)?;
            for (field, value) in [("branch", branch), ("target_branch", target_branch)] {
                if cairn::machines::evidence::is_option_like(value) {
                    return Err(input(
                        field,
                        "option-like",
                        "must not start with `-` (git would read it as an option)",
                    ));
                }
            }
            let (outcome, runs) = cairn::observe::ship_preflight(&cairn::observe::ShipParams {
                repo_root: repo_root.clone(),
                expected_basename: expected_basename.clone(),
                branch: branch.clone(),
                worktree_path: worktree_path.clone(),
                target_branch: target_branch.clone(),
            });
            output::json(&json!({
                "outcome": outcome.code(),
                "may_create_worktree": outcome.may_create_worktree(),
                "action": outcome.action(),
                "observations": runs,
            }));
            Ok(code::OK)
        }
        ShipCommand::Open(o) => {
            require_abs_path("repo", &o.repo)?;
            let params = Params {
                short_id: o.id.short_id.clone(),
                expected_basename: o.expected_basename.clone(),
                branch: o.branch.clone(),
                worktree_path: o.worktree_path.clone(),
                target_branch: o.target_branch.clone(),
                intent_field: o.intent_field.clone(),
                files_max: o.files_max,
                deletions_max: o.deletions_max,
                tiebreaker_4: o.tiebreaker_4.clone(),
                tiebreaker_5: o.tiebreaker_5,
                close_step: o.close_step.clone(),
            };
            params.check().map_err(|(f, r, m)| input(f, r, &m))?;
            let stream = stream(&o.id)?;
            admits(&current(db, options, &stream)?, Verb::Open).map_err(cairn::Error::Rejected)?;
            let capture = exec(&gates::anchor_argv(&o.repo));
            let root = gates::Runs(std::slice::from_ref(&capture))
                .line(&capture.argv)
                .unwrap_or_default();
            // An anchor that names no repository is refused by the machine; run nothing more.
            let (runs, advisory) = if cairn::machines::evidence::is_normal_abs_path(&root) {
                (
                    run_all(&gates::preflight_plan(&params, &root)),
                    advisory(&params, &root),
                )
            } else {
                (vec![], vec![])
            };
            record(
                db,
                options,
                &stream,
                Command::Open {
                    params,
                    anchor: capture,
                    runs,
                    review_status: review(&o.review),
                    advisory,
                },
            )
        }
        ShipCommand::Preflight { id, review: r } => {
            let stream = stream(id)?;
            let run = admitted(&current(db, options, &stream)?, Verb::Preflight)?;
            let runs = run_all(&gates::preflight_plan(&run.params, &run.repo_root));
            let advisory = advisory(&run.params, &run.repo_root);
            record(
                db,
                options,
                &stream,
                Command::Preflight {
                    runs,
                    review_status: review(r),
                    advisory,
                },
            )
        }
        ShipCommand::Create(id) => {
            let stream = stream(id)?;
            let run = begin(db, options, &stream, Mutation::Create)?;
            let (p, root) = (&run.params, run.repo_root.as_str());
            let (a, held) = anchor(&run);
            let command = if !held {
                Command::Create {
                    anchor: a,
                    add: None,
                    verify: vec![],
                    cleanup: vec![],
                }
            } else {
                let add = exec(&gates::create_argv(p, root));
                if add.exit_status != Some(0) {
                    Command::Create {
                        anchor: a,
                        add: Some(add),
                        verify: vec![],
                        cleanup: vec![],
                    }
                } else {
                    let verify = run_all(&gates::create_verify_plan(p, root));
                    let ok = gates::create_gates(p, root, &verify)
                        .iter()
                        .all(|g| g.outcome == Outcome::Pass);
                    let cleanup = if ok {
                        vec![]
                    } else {
                        run_all(&gates::create_cleanup_plan(p, root))
                    };
                    Command::Create {
                        anchor: a,
                        add: Some(add),
                        verify,
                        cleanup,
                    }
                }
            };
            record(db, options, &stream, command)
        }
        ShipCommand::Verify(r) => {
            let stream = stream(&r.id)?;
            let run = admitted(&current(db, options, &stream)?, Verb::Verify)?;
            let doc = report(r, &run, "resolve")?;
            let stopped = doc
                .get("verdict")
                .and_then(Value::as_str)
                .is_some_and(|v| v.starts_with("stopped:"));
            let runs = if stopped {
                vec![]
            } else {
                run_all(&gates::phase1d_plan(&run.params, &run.repo_root))
            };
            record(db, options, &stream, Command::Verify { report: doc, runs })
        }
        ShipCommand::AnswerScope {
            id,
            answer,
            operator,
        } => {
            let answer = match answer {
                ScopeAnswerArg::Proceed => ScopeAnswer::Proceed,
                ScopeAnswerArg::Abort => ScopeAnswer::Abort,
            };
            record(
                db,
                options,
                &stream(id)?,
                Command::AnswerScope {
                    answer,
                    operator: operator.clone(),
                },
            )
        }
        ShipCommand::Refine(r) => {
            let stream = stream(&r.id)?;
            let run = admitted(&current(db, options, &stream)?, Verb::Refine)?;
            let doc = report(r, &run, "refine")?;
            let passed = doc.get("verdict").and_then(Value::as_str) == Some("passed");
            let runs = if passed {
                run_all(&gates::refine_plan(&run.params, &run.repo_root))
            } else {
                vec![]
            };
            record(db, options, &stream, Command::Refine { report: doc, runs })
        }
        ShipCommand::PreMerge(r) => {
            let stream = stream(&r.id)?;
            let run = admitted(&current(db, options, &stream)?, Verb::PreMerge)?;
            let doc = report(r, &run, "ship")?;
            let conflict =
                doc.get("rebase_outcome_3_2").and_then(Value::as_str) == Some("conflict");
            let squashed = !matches!(
                doc.get("squash").and_then(Value::as_str),
                Some("n/a") | None
            );
            let pre = doc
                .get("pre_squash_sha")
                .and_then(Value::as_str)
                .filter(|s| cairn::machines::evidence::is_full_git_id(s));
            let runs = if conflict {
                vec![]
            } else {
                run_all(&gates::premerge_plan(
                    &run.params,
                    &run.repo_root,
                    if squashed { pre } else { None },
                ))
            };
            record(
                db,
                options,
                &stream,
                Command::PreMerge { report: doc, runs },
            )
        }
        ShipCommand::Merge(id) => {
            let stream = stream(id)?;
            let run = begin(db, options, &stream, Mutation::Merge)?;
            let (p, root) = (&run.params, run.repo_root.as_str());
            let (a, held) = anchor(&run);
            let command = if !held {
                Command::Merge {
                    anchor: a,
                    merge: None,
                    after: vec![],
                }
            } else {
                let m = exec(&gates::merge_argv(p, root));
                let after = if m.exit_status == Some(0) {
                    run_all(&gates::merge_after_plan(p, root))
                } else {
                    vec![]
                };
                Command::Merge {
                    anchor: a,
                    merge: Some(m),
                    after,
                }
            };
            record(db, options, &stream, command)
        }
        ShipCommand::Teardown(id) => {
            let stream = stream(id)?;
            let run = begin(db, options, &stream, Mutation::Teardown)?;
            let state = current(db, options, &stream)?;
            let (p, root) = (&run.params, run.repo_root.as_str());
            let force = matches!(state.stage(), Some(Stage::TeardownPending { .. }));
            let (a, held) = anchor(&run);
            let command = if !held {
                Command::Teardown {
                    anchor: a,
                    before: vec![],
                    remove: None,
                    delete: None,
                }
            } else {
                let before = run_all(&gates::teardown_before_plan(p, root));
                let (listed, branch) = gates::teardown_present(p, root, &before);
                let remove = (listed == Some(true))
                    .then(|| exec(&gates::teardown_remove_argv(p, root, force)));
                let delete = (branch == Some(true))
                    .then(|| exec(&gates::teardown_delete_argv(p, root, force)));
                Command::Teardown {
                    anchor: a,
                    before,
                    remove,
                    delete,
                }
            };
            record(db, options, &stream, command)
        }
        ShipCommand::Resume(id) => {
            let stream = stream(id)?;
            let run = begin(db, options, &stream, Mutation::Resume)?;
            let (p, root) = (&run.params, run.repo_root.as_str());
            let (a, held) = anchor(&run);
            let empty = |a| Command::Resume {
                anchor: a,
                runs: vec![],
                reattach: None,
                ahead: None,
                phase1d: vec![],
            };
            if !held {
                return record(db, options, &stream, empty(a));
            }
            let runs = run_all(&gates::resume_plan(p, root));
            let (clean, current_branch, listed, branch) = gates::resume_facts(p, root, &runs);
            let blocked = clean != Some(true)
                || current_branch.as_deref() != Some(p.target_branch.as_str())
                || listed.is_none()
                || (listed == Some(false) && branch != Some(true));
            let mut command = Command::Resume {
                anchor: a,
                runs,
                reattach: None,
                ahead: None,
                phase1d: vec![],
            };
            if !blocked {
                let reattach =
                    (listed == Some(false)).then(|| exec(&gates::reattach_argv(p, root)));
                let reattached = reattach.as_ref().map_or(true, |r| r.exit_status == Some(0));
                let mut ahead = None;
                let mut phase1d = vec![];
                if reattached {
                    let count = exec(&gates::ahead_argv(p));
                    let n = gates::Runs(std::slice::from_ref(&count))
                        .line(&count.argv)
                        .and_then(|s| s.parse::<u64>().ok());
                    if let Some(n) = n {
                        if ship::resume_phase(&run, n) == 2 {
                            phase1d = run_all(&gates::phase1d_plan(p, root));
                        }
                    }
                    ahead = Some(count);
                }
                if let Command::Resume {
                    reattach: r,
                    ahead: h,
                    phase1d: d,
                    ..
                } = &mut command
                {
                    *r = reattach;
                    *h = ahead;
                    *d = phase1d;
                }
            }
            record(db, options, &stream, command)
        }
        ShipCommand::AnswerTiebreaker {
            id,
            number,
            disposition,
            operator,
        } => record(
            db,
            options,
            &stream(id)?,
            Command::AnswerTiebreaker {
                number: *number,
                disposition: disposition.clone(),
                operator: operator.clone(),
            },
        ),
        ShipCommand::ExternalOp {
            id,
            class,
            op,
            denied,
        } => {
            let class = match class {
                OpClassArg::TrackerRead => recovery::OpClass::TrackerRead,
                OpClassArg::ReviewStatusRead => recovery::OpClass::ReviewStatusRead,
                OpClassArg::TrackerWrite => recovery::OpClass::TrackerWrite,
                OpClassArg::TrackerCreate => recovery::OpClass::TrackerCreate,
                OpClassArg::ReviewMutation => recovery::OpClass::ReviewMutation,
                OpClassArg::DaemonManagement => recovery::OpClass::DaemonManagement,
            };
            record(
                db,
                options,
                &stream(id)?,
                Command::ExternalOp {
                    class,
                    op: op.clone(),
                    denied: *denied,
                },
            )
        }
        ShipCommand::Abandon {
            id,
            reason,
            operator,
        } => record(
            db,
            options,
            &stream(id)?,
            Command::Abandon {
                reason: reason.clone(),
                operator: operator.clone(),
            },
        ),
        ShipCommand::Status(id) => {
            let stream = stream(id)?;
            let mut out = view(&current(db, options, &stream)?);
            out["stream"] = json!(stream.to_string());
            output::json(&out);
            Ok(code::OK)
        }
    }
}
