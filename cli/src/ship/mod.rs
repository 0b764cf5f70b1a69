//! `cairn ship <verb>`: the worktree ship pipeline. cairn runs every git gate
//! itself (`git -C <absolute dir>`), asks the machine whether a mutating step is
//! admitted *before* touching git, and records the runs as the transition's evidence.
//!
//! Every recording verb takes `--idempotency-key`. Its commands carry cairn's own
//! git runs, so the key stands for the caller's request (the verb, its flags, the
//! phase report) and is looked up before anything runs: a retry of a recorded
//! request runs no git and writes nothing; it prints the first result (the
//! exit code of its verdict). With `--packet`, the packet must still be readable.

mod phases;
mod steps;
pub(crate) mod view;

use cairn::journal::Options;
use cairn::machines::ship::{self, admits, names, recovery, Command, Mutation, Ship, State, Verb};
use cairn::{Outcome, StreamId};

use crate::args::{OpClassArg, ReviewStatusArg, ScopeAnswerArg, ShipCommand, ShipId, ShipReview};
use crate::failure::{input, require_abs_path, require_nonempty, Done, Failure};
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};
use phases::Phase;

fn stream(id: &ShipId) -> Result<StreamId, Failure> {
    Ok(StreamId::new(ship::NAME, &id.short_id)?)
}

fn review(r: &ShipReview) -> ship::ReviewStatus {
    ship::ReviewStatus {
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

/// Prints a recorded (or replayed) transition: the view of the state after it,
/// its events, the preflight note and the gates it derived.
fn print(done: &Recorded<Ship>) -> Done {
    let mut out = view::view(&done.state, done.stream.to_string());
    out.version = Some(done.version);
    out.events = Some(done.names());
    if let Some(note) = done.events.iter().find_map(|e| match e {
        ship::Event::PreflightPassed { note, .. } | ship::Event::PreflightBlocked { note, .. } => {
            note.clone()
        }
        _ => None,
    }) {
        crate::output::stderr_line(format_args!("{note}"));
        out.note = Some(note);
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
        out.gates = Some(gates.clone());
    }
    // A partial teardown says why, in git's own words (also in the journal).
    if let Some((remove, delete)) = done.events.iter().find_map(|e| match e {
        ship::Event::TeardownPartial { remove, delete, .. } => Some((remove, delete)),
        _ => None,
    }) {
        let why: Vec<_> = [remove, delete]
            .into_iter()
            .flatten()
            .filter(|r| r.exit_status != Some(0))
            .map(|r| {
                let stderr = r.stderr.trim();
                crate::output::stderr_line(format_args!(
                    "cairn: `{}` failed: {stderr}",
                    r.argv.join(" ")
                ));
                view::Why {
                    argv: r.argv.clone(),
                    exit_status: r.exit_status,
                    stderr: stderr.to_owned(),
                }
            })
            .collect();
        out.why = Some(why);
    }
    output::json(&out);
    Done::Recorded(done.outcome)
}

/// Records a command whose input is exactly the command (the key stands for it).
fn record(rec: &Recorder, stream: &StreamId, command: Command) -> Result<Done, Failure> {
    Ok(print(&rec.record(Step::new(stream, &command))?))
}

/// Records a command cairn observes git for: the key stands for `request` and is
/// looked up first; then the run's fence (a stale or missing `--fencing-token`
/// on a claimed run is refused before any git); `observe` (the guard, then git)
/// runs only when both let it.
fn observed(
    rec: &Recorder,
    stream: &StreamId,
    request: Request,
    observe: impl FnOnce() -> Result<Command, Failure>,
) -> Result<Done, Failure> {
    if let Some(done) = rec.recall::<Ship>(stream, &request)? {
        return Ok(print(&done));
    }
    let command = observe()?;
    Ok(print(
        &rec.record(Step::new(stream, &command).request(request))?,
    ))
}

/// [`observed`], for a step whose readings are planned on the journal as well
/// as the world: pre-merge reads the ancestries of the placed nodes' commits
/// (`failed-work-absent`), and the decision plans them again from its own read.
/// A node that moved in between (a verification that failed while git ran)
/// makes the recorded runs miss or exceed that plan: the step reads the
/// journal and the world again and decides again, up to three times (found: a
/// racing `work verify` made `pre-merge` exit 2, `evidence-complete`, as if the
/// caller's input were at fault).
fn observed_again(
    rec: &Recorder,
    stream: &StreamId,
    request: Request,
    mut observe: impl FnMut() -> Result<Command, Failure>,
) -> Result<Done, Failure> {
    if let Some(done) = rec.recall::<Ship>(stream, &request)? {
        return Ok(print(&done));
    }
    let mut attempts = 0;
    loop {
        let command = observe()?;
        match rec.record(Step::new(stream, &command).request(request.clone())) {
            Err(Failure::Cairn(cairn::Error::Rejected(r)))
                if attempts < 3
                    && r.violations.iter().any(|v| {
                        v.field.as_deref() == Some("runs")
                            && matches!(
                                v.predicate.as_str(),
                                "evidence-complete" | "evidence-bound"
                            )
                    }) =>
            {
                attempts += 1;
            }
            done => return Ok(print(&done?)),
        }
    }
}

pub fn run_verb(verb: &ShipCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let rec = |key| Recorder::new(db, options, key);
    match verb {
        ShipCommand::Classify {
            repo_root,
            expected_basename,
            branch,
            worktree_path,
            target_branch,
        } => {
            require_abs_path("repo", repo_root)?;
            require_abs_path("worktree_path", worktree_path)?;
            require_nonempty("expected_basename", expected_basename)?;
            require_nonempty("branch", branch)?;
            require_nonempty("target_branch", target_branch)?;
            for (field, value) in [("branch", branch), ("target_branch", target_branch)] {
                cairn::machines::evidence::RefName::parse(value).map_err(|e| {
                    input(
                        field,
                        e.rule,
                        "must not start with `-` (git would read it as an option)",
                    )
                })?;
                names::branch(value).map_err(|(rule, m)| input(field, rule, &m))?;
            }
            let short_id = worktree_path.rsplit('/').next().unwrap_or("");
            names::visible(worktree_path)
                .and_then(|()| {
                    names::within(worktree_path, names::WORKTREE_PATH_MAX, names::NAME_MAX)
                })
                .map_err(|(rule, m)| input("worktree_path", rule, &m))?;
            // The classifier reports an anchor that drifted, so REPO_ROOT may differ here.
            if names::worktree_root(worktree_path, short_id).is_none() {
                return Err(input(
                    "worktree_path",
                    "worktree-path",
                    "must be the seed's `<REPO_ROOT>/.claude/worktrees/<SHORT_ID>`",
                ));
            }
            let (outcome, runs) = cairn::observe::ship_preflight(&cairn::observe::ShipParams {
                repo_root: repo_root.clone(),
                expected_basename: expected_basename.clone(),
                branch: branch.clone(),
                worktree_path: worktree_path.clone(),
                target_branch: target_branch.clone(),
            });
            output::json(&view::Classified {
                outcome: outcome.code(),
                may_create_worktree: outcome.may_create_worktree(),
                action: outcome.action(),
                observations: runs,
            });
            Ok(Done::Ok)
        }
        ShipCommand::Open(o) => phases::open(rec(&o.key), o),
        ShipCommand::Preflight { id, review: r, key } => {
            phases::preflight(&rec(key)?, r, &stream(id)?)
        }
        ShipCommand::Create(s) => steps::step(&rec(&s.key)?, &stream(&s.id)?, Mutation::Create),
        ShipCommand::Verify(r) => {
            phases::report_verb(&rec(&r.key)?, r, Phase::Verify, &stream(&r.id)?, &[])
        }
        ShipCommand::AnswerScope {
            id,
            answer,
            operator,
            key,
        } => {
            let answer = match answer {
                ScopeAnswerArg::Proceed => ship::ScopeAnswer::Proceed,
                ScopeAnswerArg::Abort => ship::ScopeAnswer::Abort,
            };
            record(
                &rec(key)?,
                &stream(id)?,
                Command::AnswerScope {
                    answer,
                    operator: operator.clone(),
                },
            )
        }
        ShipCommand::Refine(r) => {
            phases::report_verb(&rec(&r.key)?, r, Phase::Refine, &stream(&r.id)?, &[])
        }
        ShipCommand::PreMerge(m) => {
            let r = &m.report;
            phases::report_verb(
                &rec(&r.key)?,
                r,
                Phase::PreMerge,
                &stream(&r.id)?,
                &phases::work_nodes(&m.work_nodes)?,
            )
        }
        ShipCommand::Merge(s) => steps::step(&rec(&s.key)?, &stream(&s.id)?, Mutation::Merge),
        ShipCommand::Teardown(s) => steps::step(&rec(&s.key)?, &stream(&s.id)?, Mutation::Teardown),
        ShipCommand::Resume(s) => steps::step(&rec(&s.key)?, &stream(&s.id)?, Mutation::Resume),
        ShipCommand::AnswerTiebreaker {
            id,
            number,
            disposition,
            operator,
            key,
        } => record(
            &rec(key)?,
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
            key,
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
                &rec(key)?,
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
            key,
        } => record(
            &rec(key)?,
            &stream(id)?,
            Command::Abandon {
                reason: reason.clone(),
                operator: operator.clone(),
            },
        ),
        ShipCommand::Status(id) => {
            let stream = stream(id)?;
            let reader = Recorder::reader(db, options);
            // Nothing recorded under this SHORT_ID: the one not-found rule.
            let not_found = || Failure::NoSuchStream {
                field: "short_id",
                stream: stream.to_string(),
            };
            let engine = reader.existing_engine()?.ok_or_else(not_found)?;
            crate::verbs::recorded(engine.journal(), "short_id", &stream.to_string())?;
            output::json(&view::view(
                &reader.current::<Ship>(&stream)?,
                stream.to_string(),
            ));
            Ok(Done::Ok)
        }
    }
}
