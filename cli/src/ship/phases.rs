//! The ship verbs that read git without mutating it — `open`, `preflight` and the
//! phase reports (`verify`, `refine`, `pre-merge`) with cairn's own gate readings.

use cairn::machines::evidence::{wire, AbsPath, CommandRun, FullCommit};
use cairn::machines::reads::Sieve;
use cairn::machines::ship::{self, gates, history, Command, Params, Ship, Verb};
use cairn::observe::{run as exec, run_all};
use cairn::StreamId;
use serde_json::{json, Value};

use super::{admitted, observed, observed_again, review};
use crate::args::{ShipOpen, ShipReport, ShipReview};
use crate::failure::{input, require_abs_path, Done, Failure, Violation};
use crate::record::{Recorder, Request};

/// The §repo-anchor divergence advisory's readings (no fetch: the stored remote ref).
fn advisory(p: &Params, root: &str) -> Vec<CommandRun> {
    let mut runs = vec![exec(&gates::upstream_argv(p, root))];
    let plan = gates::advisory_plan(p, root, &runs);
    if let Some(count) = plan.get(1) {
        runs.push(exec(count));
    }
    runs
}

/// `open`: capture REPO_ROOT, record the parameters and the preflight.
pub fn open(rec: Result<Recorder, Failure>, o: &ShipOpen) -> Result<Done, Failure> {
    // Every broken input at once, the first of each field: the idempotency key
    // and fencing token, `--repo`, the run's parameters, `--for`, where the
    // worktree sits under `--repo` (judged when both hold on their own), and
    // the review's detail: all before any git runs (helper-93: a bad
    // `--review-detail` was refused by `decide`, after the preflight's git).
    let mut broken = Vec::new();
    let rec = match rec {
        Ok(rec) => Some(rec),
        Err(Failure::Input(v)) => {
            broken.extend(v);
            None
        }
        Err(other) => return Err(other),
    };
    let repo_holds = match require_abs_path("repo", &o.repo) {
        Ok(_) => true,
        Err(Failure::Input(v)) => {
            broken.extend(v);
            false
        }
        Err(other) => return Err(other),
    };
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
        consumer_fields: o.consumer_fields.clone(),
    };
    let of_params = params.violations();
    let worktree_holds = !of_params
        .iter()
        .any(|(field, _, _)| ["short_id", "worktree_path"].contains(field));
    broken.extend(
        of_params
            .into_iter()
            .map(|(field, rule, message)| Violation::new(field, rule, message)),
    );
    if let Some(s) = o.acts_for.as_deref() {
        if !cairn::machines::reads::is_saga_stream(s) {
            broken.push(Violation::new(
                "for",
                "saga-stream",
                format!(
                    "`{s}` is not a saga thread's stream: `saga/issue-<N>` or `saga/task-<slug>`"
                ),
            ));
        }
    }
    // REPO_ROOT is `--repo` or a directory above it: refused here, before any git,
    // unless WORKTREE_PATH names one of them (`decide` then requires REPO_ROOT itself).
    let named = params.worktree_root().unwrap_or_default();
    if repo_holds
        && worktree_holds
        && !(o.repo == named || o.repo.starts_with(&format!("{named}/")))
    {
        broken.push(Violation::new(
            "worktree_path",
            "worktree-path",
            format!(
                "must be `<REPO_ROOT>/.claude/worktrees/{}`, with REPO_ROOT `--repo` or a directory above it",
                params.short_id
            ),
        ));
    }
    if let Err((rule, message)) = cairn::machines::evidence::names::text(&o.review.review_detail) {
        broken.push(Violation::new("review_detail", rule, message));
    }
    let Some(rec) = rec.filter(|_| broken.is_empty()) else {
        return Err(Failure::Input(broken));
    };
    let rec = &rec;
    let stream = &super::stream(&o.id)?;
    let review_status = review(&o.review);
    // A run that acts for no thread keeps the request it always had.
    let request = match &o.acts_for {
        None => Request::new(
            "ship open",
            json!({"repo": o.repo, "params": params, "review_status": review_status}),
        ),
        Some(s) => Request::new(
            "ship open",
            json!({"repo": o.repo, "params": params, "review_status": review_status, "for": s}),
        ),
    };
    observed(rec, stream, request, || {
        ship::admits(&rec.current::<Ship>(stream)?, Verb::Open).map_err(cairn::Error::Rejected)?;
        let capture = exec(&gates::anchor_argv(&o.repo));
        let root = gates::Runs(std::slice::from_ref(&capture))
            .line(&capture.argv)
            .unwrap_or_default();
        // An anchor that names no repository is refused by the machine; run nothing more.
        let (runs, advisory) = if AbsPath::parse(&root).is_ok() {
            (
                run_all(&gates::preflight_plan(&params, &root)),
                advisory(&params, &root),
            )
        } else {
            (vec![], vec![])
        };
        Ok(Command::Open {
            params,
            anchor: capture,
            runs,
            review_status,
            advisory,
            acts_for: o.acts_for.clone(),
        })
    })
}

/// `preflight`: re-run the recorded preflight.
pub fn preflight(rec: &Recorder, r: &ShipReview, stream: &StreamId) -> Result<Done, Failure> {
    let review_status = review(r);
    let request = Request::new("ship preflight", json!({ "review_status": review_status }));
    observed(rec, stream, request, || {
        let run = admitted(&rec.current::<Ship>(stream)?, Verb::Preflight)?;
        Ok(Command::Preflight {
            runs: run_all(&gates::preflight_plan(&run.params, &run.repo_root)),
            review_status,
            advisory: advisory(&run.params, &run.repo_root),
        })
    })
}

/// The phase report verbs.
#[derive(Debug, Clone, Copy)]
pub enum Phase {
    /// `verify`: the phase-1 report and §phase-1d.
    Verify,
    /// `refine`: the phase-2 report and the worktree re-verify.
    Refine,
    /// `pre-merge`: the phase-3 report and cairn's pre-merge checks.
    PreMerge,
}

/// A phase report verb: the report (stdin or packet), then cairn's readings.
pub fn report_verb(
    rec: &Recorder,
    r: &ShipReport,
    phase: Phase,
    stream: &StreamId,
    work_nodes: &[String],
) -> Result<Done, Failure> {
    let (verb, name, packet) = match phase {
        Phase::Verify => (Verb::Verify, "ship verify", "resolve"),
        Phase::Refine => (Verb::Refine, "ship refine", "refine"),
        Phase::PreMerge => (Verb::PreMerge, "ship pre-merge", "ship"),
    };
    let state = rec.current::<Ship>(stream)?;
    let run = match admitted(&state, verb) {
        // Without a key (or a run) nothing can be replayed: refused before the
        // report is read.
        Err(e) if !rec.keyed() || state.run().is_none() => return Err(e),
        guard => guard,
    };
    let doc = report(r, state.run(), packet)?;
    // The work nodes are part of the request (a retry naming others is another
    // request); a request naming none keeps the shape it always had.
    let request = if work_nodes.is_empty() {
        Request::new(name, json!({ "report": doc }))
    } else {
        Request::new(name, json!({ "report": doc, "work_nodes": work_nodes }))
    };
    let (run, mut refusal) = match run {
        Ok(run) => (Some(run), None),
        Err(e) => (None, Some(e)),
    };
    let observe = || {
        let Some(run) = run.as_ref() else {
            // A refusal ends the verb: the closure runs once when there is one.
            return Err(refusal.take().expect("a run or its refusal, taken once"));
        };
        let (p, root) = (&run.params, run.repo_root.as_str());
        Ok(match phase {
            Phase::Verify => {
                let stopped = doc
                    .get("verdict")
                    .and_then(Value::as_str)
                    .is_some_and(|v| v.starts_with("stopped:"));
                let runs = if stopped {
                    vec![]
                } else {
                    run_all(&gates::phase1d_plan(p, root))
                };
                Command::Verify {
                    report: doc.clone(),
                    runs,
                }
            }
            Phase::Refine => {
                let passed = doc.get("verdict").and_then(Value::as_str) == Some("passed");
                let runs = if passed {
                    run_all(&gates::refine_plan(p, root))
                } else {
                    vec![]
                };
                Command::Refine {
                    report: doc.clone(),
                    runs,
                }
            }
            Phase::PreMerge => {
                let conflict =
                    doc.get("rebase_outcome_3_2").and_then(Value::as_str) == Some("conflict");
                let squashed = !matches!(
                    doc.get("squash").and_then(Value::as_str),
                    Some("n/a") | None
                );
                let pre = doc
                    .get("pre_squash_sha")
                    .and_then(Value::as_str)
                    .filter(|s| FullCommit::parse(s).is_ok());
                let runs = if conflict {
                    vec![]
                } else {
                    let mut runs = run_all(&gates::premerge_plan(
                        p,
                        root,
                        if squashed { pre } else { None },
                    ));
                    // Then the ancestries `failed-work-absent` reads, planned on
                    // the journal's placed nodes as they stand (the decision reads
                    // them again and refuses readings that no longer match).
                    let shipped = if squashed {
                        pre.and_then(|s| FullCommit::parse(s).ok())
                    } else {
                        gates::premerge_tip(p, &runs)
                    };
                    if let Some(shipped) = shipped {
                        let placed = match rec.existing_engine()? {
                            Some(engine) => engine.scan(Sieve::PlacedNodes)?,
                            None => vec![],
                        };
                        let linked = history::ship_nodes(run, work_nodes, placed.iter());
                        let tip = gates::premerge_tip(p, &runs);
                        runs.extend(run_all(&history::plan(
                            &p.worktree_path,
                            &history::targets(&shipped, tip.as_ref()),
                            &linked,
                            placed.iter(),
                        )));
                    }
                    runs
                };
                Command::PreMerge {
                    report: doc.clone(),
                    runs,
                    work_nodes: work_nodes.to_vec(),
                }
            }
        })
    };
    match phase {
        Phase::PreMerge => observed_again(rec, stream, request, observe),
        Phase::Verify | Phase::Refine => observed(rec, stream, request, observe),
    }
}

/// A phase report: stdin, or the leaf's packet under the worktree (read once,
/// through the same strict, depth-bounded parse as stdin).
fn report(r: &ShipReport, run: Option<&ship::Run>, phase: &str) -> Result<Value, Failure> {
    if !r.packet {
        return crate::input::document();
    }
    let run =
        run.ok_or_else(|| input("short_id", "opened", "no ship run is open on this SHORT_ID"))?;
    let path = format!(
        "{}/.run-ship/{phase}-{}.json",
        run.params.worktree_path, run.params.short_id
    );
    let text = crate::input::read_file(std::path::Path::new(&path), "packet", "packet-readable")
        .map_err(|mut e| {
            // A missing packet is the leaf's structured stop: say so.
            if let Failure::Input(v) = &mut e {
                for v in v.iter_mut().filter(|v| v.rule == "packet-readable") {
                    v.message
                        .push_str(" (a missing packet is a structured stop)");
                }
            }
            e
        })?;
    Ok(wire::parse_document(crate::input::keep(text))?)
}

/// `--work-node` values: each a work node's stream (refused at input otherwise,
/// naming the flag), as the journal spells it.
pub fn work_nodes(values: &[String]) -> Result<Vec<String>, Failure> {
    let mut seen = std::collections::BTreeSet::new();
    values
        .iter()
        // A node named twice is checked once.
        .filter(|v| seen.insert(v.as_str()))
        .map(|v| match StreamId::parse(v) {
            Ok(s) if cairn::machines::reads::is_work_node_stream(s.as_str()) => Ok(s.to_string()),
            _ => Err(crate::failure::input(
                "work_node",
                "work-node-stream",
                &format!("`{v}` is not a work node's stream: `work-node/<spec>:<address>` (the `stream` the `cairn work` verbs print)"),
            )),
        })
        .collect()
}
