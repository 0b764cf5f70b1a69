//! The ship steps that mutate git — `create`, `merge`, `teardown`, `resume`:
//! each announced in the journal before git runs, then recorded with its runs.

use cairn::machines::evidence::CommandRun;
use cairn::machines::ship::{self, gates, owner, Command, Mutation, Ship, Stage};
use cairn::observe::{run as exec, run_all};
use cairn::{Outcome, StreamId};

use super::{admitted, observed};
use crate::failure::{input, Done, Failure};
use crate::record::{Recorder, Request, Step};

/// Announces a git mutation in the journal before git runs, naming this process
/// (its pid and start time): an append at the version just read, so of two racing
/// processes one conflicts (exit 3) and touches nothing. A step already in flight
/// belongs to its owner while that process lives: this one exits 3 and runs no git.
/// Once the owner is gone (a crash between the git step and its record), one
/// announcement takes the step over: a merge, teardown or resume re-reads git and
/// re-runs; a crashed `create` is not re-run (the add may have happened): `resume`
/// observes it. The announcement is not what the verb's idempotency key stands
/// for: it is recorded without it.
fn begin(rec: &Recorder, stream: &StreamId, step: Mutation) -> Result<ship::Run, Failure> {
    let state = rec.current::<Ship>(stream)?;
    let begun = state.run().and_then(|r| r.begun.clone());
    let previous = match &begun {
        Some(f) => match &f.owner {
            Some(o) => {
                let reading = exec(&owner::ps_argv(o.pid));
                if owner::gone(o, &reading) != Some(true) {
                    return Err(Failure::InFlight(format!(
                        "a `{}` is in flight in process {} (started {}), which {}: it records the result; this process ran nothing",
                        f.step.verb_name(),
                        o.pid,
                        o.started,
                        if owner::gone(o, &reading).is_some() {
                            "is alive"
                        } else {
                            "cannot be shown gone"
                        }
                    )));
                }
                Some(reading)
            }
            None => None,
        },
        None => None,
    };
    if begun.as_ref().is_some_and(|f| f.step == Mutation::Create) && step == Mutation::Create {
        return Err(input(
            "short_id",
            "create-in-flight",
            "a `create` was begun and never recorded, and its process is gone: `cairn ship resume` observes what it left",
        ));
    }
    admitted(&state, ship::Verb::Begin(step))?;
    let pid = std::process::id();
    let claim = owner::Claim {
        pid,
        me: exec(&owner::ps_argv(pid)),
        previous,
    };
    let command = Command::Begin {
        step,
        claim: Some(claim),
    };
    let done = rec
        .without_key()
        .record(Step::<Ship>::new(stream, &command))?;
    done.state
        .run()
        .cloned()
        .ok_or_else(|| input("short_id", "opened", "no ship run is open on this SHORT_ID"))
}

/// Re-asserts the anchor: the run and whether it held.
fn anchor(run: &ship::Run) -> (CommandRun, bool) {
    let a = exec(&gates::anchor_argv(&run.repo_root));
    let held = gates::anchor_gate(&a, &run.repo_root).outcome == Outcome::Pass;
    (a, held)
}

/// A mutating step: its request is the verb alone (the stream is the SHORT_ID).
pub fn step(rec: &Recorder, stream: &StreamId, mutation: Mutation) -> Result<Done, Failure> {
    let verb = match mutation {
        Mutation::Create => "ship create",
        Mutation::Merge => "ship merge",
        Mutation::Teardown => "ship teardown",
        Mutation::Resume => "ship resume",
    };
    observed(
        rec,
        stream,
        Request::new(verb, serde_json::json!({})),
        || {
            let run = begin(rec, stream, mutation)?;
            match mutation {
                Mutation::Create => Ok(create(&run)),
                Mutation::Merge => {
                    // `admits` let `merge` through: the stage binds the checked tip.
                    let tip = match rec.current::<Ship>(stream)?.stage() {
                        Some(
                            Stage::MergeReady { tip: Some(t) }
                            | Stage::MergeRejected { tip: Some(t) },
                        ) => t.to_string(),
                        _ => String::new(),
                    };
                    Ok(merge(&run, &tip))
                }
                Mutation::Teardown => {
                    let state = rec.current::<Ship>(stream)?;
                    let force = matches!(state.stage(), Some(Stage::TeardownPending { .. }));
                    Ok(teardown(&run, force))
                }
                Mutation::Resume => Ok(resume(&run)),
            }
        },
    )
}

/// §phase-1b: `git worktree add` and its four verifications (a failed one cleans up).
fn create(run: &ship::Run) -> Command {
    let (p, root) = (&run.params, run.repo_root.as_str());
    let (a, held) = anchor(run);
    if !held {
        return Command::Create {
            anchor: a,
            before: vec![],
            add: None,
            verify: vec![],
            cleanup: vec![],
        };
    }
    let before = run_all(&gates::create_before_plan(p, root));
    let add = exec(&gates::create_argv(p, root));
    if add.exit_status != Some(0) {
        // `worktree add -b` makes the branch before it fails on the path: remove
        // the branch only when this add made it.
        let verify = run_all(&gates::create_failed_plan(p, root));
        let cleanup = if gates::add_made_branch(p, root, &before, &verify) {
            run_all(&gates::create_failed_cleanup_plan(p, root))
        } else {
            vec![]
        };
        return Command::Create {
            anchor: a,
            before,
            add: Some(add),
            verify,
            cleanup,
        };
    }
    let verify = run_all(&gates::create_verify_plan(p, root));
    let ok = gates::create_gates(p, root, &verify, run.repository.as_deref())
        .iter()
        .all(|g| g.outcome == Outcome::Pass);
    let cleanup = if ok {
        vec![]
    } else {
        run_all(&gates::create_cleanup_plan(p, root))
    };
    Command::Create {
        anchor: a,
        before,
        add: Some(add),
        verify,
        cleanup,
    }
}

/// The primary's readings right before; then, only when it is on TARGET_BRANCH
/// and clean and the branch is still at `tip` (the commit pre-merge checked), `git
/// merge --ff-only TIP` in REPO_ROOT and the readings after it.
fn merge(run: &ship::Run, tip: &str) -> Command {
    let (p, root) = (&run.params, run.repo_root.as_str());
    let (a, held) = anchor(run);
    let nothing = |anchor, before| Command::Merge {
        anchor,
        before,
        merge: None,
        after: vec![],
    };
    if !held {
        return nothing(a, vec![]);
    }
    let before = run_all(&gates::merge_before_plan(p, root));
    if !gates::merge_before(p, root, &before, run.repository.as_deref())
        .admits(&p.target_branch, tip)
    {
        return nothing(a, before);
    }
    let m = exec(&gates::merge_argv(root, tip));
    let after = if m.exit_status == Some(0) {
        run_all(&gates::merge_after_plan(p, root, tip))
    } else {
        vec![]
    };
    Command::Merge {
        anchor: a,
        before,
        merge: Some(m),
        after,
    }
}

/// Removes only what the readings show is there (`--force`/`-D` on an abort
/// teardown); after a merge, only while TARGET_BRANCH still holds the merged commit.
fn teardown(run: &ship::Run, force: bool) -> Command {
    let (p, root) = (&run.params, run.repo_root.as_str());
    let (a, held) = anchor(run);
    if !held {
        return Command::Teardown {
            anchor: a,
            before: vec![],
            remove: None,
            delete: None,
        };
    }
    let merged = run.merged_sha.as_deref().filter(|_| !force);
    let before = run_all(&gates::teardown_before_plan(p, root, merged));
    if let Some(sha) = merged {
        if !gates::merge_held(p, root, &before, sha, run.repository.as_deref()) {
            return Command::Teardown {
                anchor: a,
                before,
                remove: None,
                delete: None,
            };
        }
    }
    let (listed, branch) = gates::teardown_present(p, root, &before);
    let remove = (listed == Some(true)).then(|| exec(&gates::teardown_remove_argv(p, root, force)));
    let delete = (branch == Some(true)).then(|| exec(&gates::teardown_delete_argv(p, root, force)));
    Command::Teardown {
        anchor: a,
        before,
        remove,
        delete,
    }
}

/// §resume-mechanics: locate or re-attach the worktree, pick the phase from the tip,
/// and re-run §phase-1d on the existing tip before phase 2.
fn resume(run: &ship::Run) -> Command {
    let (p, root) = (&run.params, run.repo_root.as_str());
    let (a, held) = anchor(run);
    if !held {
        return Command::Resume {
            anchor: a,
            runs: vec![],
            reattach: None,
            ahead: None,
            phase1d: vec![],
        };
    }
    let runs = run_all(&gates::resume_plan(p, root));
    let (clean, current_branch, listed, branch) = gates::resume_facts(p, root, &runs);
    let blocked = clean != Some(true)
        || current_branch.as_deref() != Some(p.target_branch.as_str())
        || listed.is_none()
        || (listed == Some(false) && branch != Some(true));
    if blocked {
        return Command::Resume {
            anchor: a,
            runs,
            reattach: None,
            ahead: None,
            phase1d: vec![],
        };
    }
    let reattach = (listed == Some(false)).then(|| exec(&gates::reattach_argv(p, root)));
    let reattached = reattach.as_ref().map_or(true, |r| r.exit_status == Some(0));
    let mut ahead = None;
    let mut phase1d = vec![];
    if reattached {
        let count = exec(&gates::ahead_argv(p));
        let n = gates::Runs(std::slice::from_ref(&count))
            .line(&count.argv)
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(n) = n {
            if ship::resume_phase(run, n) == 2 {
                phase1d = run_all(&gates::phase1d_plan(p, root));
            }
        }
        ahead = Some(count);
    }
    Command::Resume {
        anchor: a,
        runs,
        reattach,
        ahead,
        phase1d,
    }
}
