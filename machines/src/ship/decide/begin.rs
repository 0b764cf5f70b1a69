//! `begin`: announcing a git mutation before it runs, in the name of the process
//! that will run it; or taking over a step in flight whose owner is shown gone.

use super::super::event::Event;
use super::super::owner::{self, Claim, Owner};
use super::super::state::Mutation;
use super::guards::Guard;
use crate::evidence::FullCommit;
use crate::reads::Fact;
use crate::{Context, Outcome, Rejection};

/// `failed-work-absent` again, on the nodes as they stand now and the ancestries
/// pre-merge read: a node outside the run that failed (or was rejected) since,
/// on work the shipped commit holds or that pre-merge never read, refuses the
/// merge before git runs.
fn failed_work_absent(
    guard: Guard<'_>,
    run: &super::super::Run,
    linked: &[String],
    ctx: &Context,
) -> Result<(), Rejection> {
    use super::super::history;
    let Some(shipped) = run.shipped.as_ref() else {
        return Ok(());
    };
    // A run whose pre-merge read nothing (under earlier rules) has read no pair.
    let unread = history::History {
        targets: vec![shipped.clone()],
        read: vec![],
    };
    let h = run.history.as_ref().unwrap_or(&unread);
    match history::gate(h, linked, ctx.scanned(crate::reads::Sieve::PlacedNodes)) {
        Some(g) if g.outcome != Outcome::Pass => Err(guard.reject(
            history::GATE,
            Some("work_node"),
            &format!(
                "work a node outside the run failed on, or does not vouch for, may be in the commits merged ({}): `cairn ship resume`, then `pre-merge` again",
                g.detail
            ),
        )),
        _ => Ok(()),
    }
}

/// `begin`: the claim names this process (its `ps` reading: pid and start time);
/// with nothing in flight nothing else is read; with a step in flight (`admits`
/// let this take it over) its owner's `ps` reading shows it gone. A step announced
/// before rules 3 names no owner, and is taken over as the crash it was read as.
pub(super) fn decide_begin(
    guard: Guard<'_>,
    step: Mutation,
    claim: &Option<Claim>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    // The nodes pre-merge read, and any node placed in the run's worktree since,
    // must vouch for the commit shipped: one rejected or re-verified to a failure
    // since (or a worker dispatched there now) stops the merge before git runs.
    let nodes =
        super::super::history::ship_nodes(run, &[], ctx.scanned(crate::reads::Sieve::PlacedNodes));
    if step == Mutation::Merge && !nodes.is_empty() {
        let vouched = run.vouched.as_ref().or(run.shipped.as_ref());
        let gate = super::pre_merge::nodes_vouch(&nodes, vouched, ctx);
        if gate.outcome != Outcome::Pass {
            return Err(guard.reject(
                "work-nodes-verified",
                Some("work_node"),
                &format!(
                    "the work nodes no longer vouch for the commit shipped ({}): verify them again, then `cairn ship resume` and `pre-merge`",
                    gate.detail
                ),
            ));
        }
    }
    if step == Mutation::Merge {
        failed_work_absent(guard, run, &nodes, ctx)?;
        if let Some(thread) = &run.acts_for {
            // The turn first: a thread not in the journal, or with no turn,
            // is named as such, not as a repository it never read.
            merge_turn_held(guard, thread, &run.params.branch, run.shipped.as_ref(), ctx)?;
            thread_repository(guard, thread, run.repository.as_deref(), ctx)?;
            merges_once(guard, thread, &run.params.branch, run.shipped.as_ref(), ctx)?;
            pr_merge_confirmed(guard, thread, &run.params.target_branch, ctx)?;
        }
    }
    let claim = claim.as_ref().ok_or_else(|| {
        guard.bad(
            "claim",
            "evidence-complete",
            "a step is announced with its owner: this process's pid and start time",
        )
    })?;
    guard.argv_is("claim.me", &claim.me, &owner::ps_argv(claim.pid))?;
    let started = owner::started(&claim.me).ok_or_else(|| {
        guard.bad(
            "claim.me",
            "owner-readable",
            "`ps` did not report this process's start time",
        )
    })?;
    let me = Owner {
        pid: claim.pid,
        started,
    };
    let taken_from = match (&run.begun, &claim.previous) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err(guard.bad(
                "claim.previous",
                "evidence-bound",
                "nothing is in flight: there is no owner to read",
            ))
        }
        (Some(f), previous) => match (&f.owner, previous) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(guard.bad(
                    "claim.previous",
                    "evidence-bound",
                    "the step in flight names no owner to read",
                ))
            }
            (Some(o), None) => {
                return Err(guard.bad(
                    "claim.previous",
                    "evidence-complete",
                    &format!(
                        "a `{}` is in flight: read its owner (pid {})",
                        f.step.verb().name(),
                        o.pid
                    ),
                ))
            }
            (Some(o), Some(prev)) => {
                guard.argv_is("claim.previous", prev, &owner::ps_argv(o.pid))?;
                match owner::gone(o, prev) {
                    Some(true) => Some(o.clone()),
                    Some(false) => {
                        return Err(guard.reject(
                            "owner-gone",
                            Some("claim.previous"),
                            &format!(
                                "a `{}` is in flight and its owner (pid {}, started {}) is alive",
                                f.step.verb().name(),
                                o.pid,
                                o.started
                            ),
                        ))
                    }
                    None => {
                        return Err(guard.reject(
                            "owner-gone",
                            Some("claim.previous"),
                            "the reading of the step's owner says neither alive nor gone",
                        ))
                    }
                }
            }
        },
    };
    Ok(vec![Event::StepBegun {
        step,
        owner: Some(me),
        taken_from,
    }])
}

/// A run acting for a saga thread merges only in the thread's repository: the
/// one its first PR-ready read the review fresh in, as the engine read the
/// thread for this decision, is the one this run was opened in (the device and
/// inode of its git dir and refs). A run opened in a clone would merge into
/// the clone's target, which is not the thread's (ship rules 19).
fn thread_repository(
    guard: Guard<'_>,
    thread: &str,
    opened: Option<&str>,
    ctx: &Context,
) -> Result<(), Rejection> {
    let thread_repository = match ctx.read(thread).and_then(|r| r.fact.as_ref()) {
        Some(Fact::Saga { repository, .. }) => repository.as_deref(),
        _ => None,
    };
    let why = match (thread_repository, opened) {
        (Some(theirs), Some(ours)) if same_identity(theirs, ours) => return Ok(()),
        (Some(theirs), Some(_)) => format!(
            "the run was opened in another repository than `{thread}`'s (`{}`, where its first PR-ready read the review)",
            theirs
                .rsplitn(3, ' ')
                .last()
                .unwrap_or(theirs)
        ),
        (Some(_), None) => "which repository the run was opened in was not read".to_owned(),
        (None, _) => format!("`{thread}` has not read its repository (PR-ready reads it)"),
    };
    Err(guard.reject(
        "same-repository",
        Some("acts_for"),
        &format!("{why}: a run merges for a thread only in the thread's repository"),
    ))
}

/// Whether a thread's repository (`<common dir> <dev:ino>…`) and a run's
/// identity reading (`<dev:ino>` per line) name one git dir and refs on disk.
fn same_identity(thread: &str, run: &str) -> bool {
    let ours: Vec<&str> = run.split_whitespace().collect();
    let theirs: Vec<&str> = thread.split(' ').collect();
    !ours.is_empty() && theirs.len() > ours.len() && theirs[theirs.len() - ours.len()..] == ours[..]
}

/// A run acting for a saga thread merges only under the thread's merge authority:
/// the unit on the run's branch holds the thread's merge turn (`cairn saga
/// merge-turn take`), as the engine read the thread for this decision. A thread
/// not in the journal, or whose turn is free or another branch's, refuses the
/// merge before git runs.
fn merge_turn_held(
    guard: Guard<'_>,
    thread: &str,
    branch: &str,
    shipped: Option<&FullCommit>,
    ctx: &Context,
) -> Result<(), Rejection> {
    let read = ctx.read(thread).filter(|r| r.version > 0);
    let why = match read.and_then(|r| r.fact.as_ref()) {
        Some(Fact::Saga {
            turn: Some(turn),
            ready: false,
            ..
        }) if turn.branch == branch => format!(
            "unit `{}` holds its merge turn, but PR-ready no longer stands for its current review",
            turn.unit
        ),
        // The run ships what code review reviewed (found: a commit made after
        // PR-ready merged under the turn, released beside the older reviewed head).
        Some(Fact::Saga {
            turn: Some(turn),
            reviewed: Some(reviewed),
            ..
        }) if turn.branch == branch && shipped.is_some_and(|s| s != reviewed) => {
            return Err(guard.reject(
                "reviewed-shipped",
                Some("acts_for"),
                &format!(
                    "the run ships {}, but `{thread}`'s code review reviewed {reviewed}: review what ships (and pass PR-ready) before the run merges",
                    shipped.map(FullCommit::as_str).unwrap_or_default()
                ),
            ))
        }
        Some(Fact::Saga {
            turn: Some(turn), ..
        }) if turn.branch == branch => return Ok(()),
        Some(Fact::Saga {
            turn: Some(turn), ..
        }) => format!(
            "its merge turn is held by unit `{}` on `{}`, not on `{branch}`",
            turn.unit, turn.branch
        ),
        Some(_) => "no unit holds its merge turn".to_owned(),
        None => "it is not in the journal".to_owned(),
    };
    Err(guard.reject(
        "merge-turn-held",
        Some("acts_for"),
        &format!(
            "the run acts for `{thread}`, and {why}: the thread's unit on `{branch}` takes the turn (`cairn saga merge-turn take`) before the run merges"
        ),
    ))
}

/// One run merges for a thread at a time, and a commit and a unit's branch merge
/// for it once: another run acting for the thread that is merging now, that
/// merged this run's branch, or that merged (or shipped, then merged) the commit
/// this run ships, refuses the merge before git runs (found: two runs in two
/// clones on one branch name both merged the reviewed commit under one turn). The
/// engine scanned every run acting for a thread that merged or is merging.
fn merges_once(
    guard: Guard<'_>,
    thread: &str,
    branch: &str,
    shipped: Option<&FullCommit>,
    ctx: &Context,
) -> Result<(), Rejection> {
    for read in ctx.scanned(crate::reads::Sieve::ThreadMerges) {
        let Some(Fact::Ship {
            acts_for: Some(other),
            merging,
            merged,
            shipped: theirs,
            branch: their_branch,
            ..
        }) = &read.fact
        else {
            continue;
        };
        if other != thread {
            continue;
        }
        if *merging {
            return Err(guard.reject(
                "merge-in-flight",
                Some("acts_for"),
                &format!(
                    "`{}` is merging for `{thread}` now: one run merges for a thread at a time",
                    read.stream
                ),
            ));
        }
        // The commit merged, or the commit shipped by a run that merged (found by
        // a hostile pass: after a squash the merged commit is the squash, and
        // two more clones merged the same reviewed commit squashed anew).
        // A unit's branch merges once for its thread: one unit holds a branch
        // (`branch-taken`), a merged unit takes no turn again (found by a hostile
        // pass: the commit amended and reviewed anew merged a second time under
        // the one turn).
        if let Some(m) = merged.as_ref().filter(|_| their_branch == branch) {
            return Err(guard.reject(
                "merged-once",
                Some("acts_for"),
                &format!(
                    "`{}` already merged `{branch}` for `{thread}` (as {m}): a unit's branch merges once",
                    read.stream
                ),
            ));
        }
        let theirs = merged.as_ref().and(theirs.as_ref());
        if let (Some(m), Some(s)) = (merged, shipped) {
            if m == s || theirs == Some(s) {
                return Err(guard.reject(
                    "merged-once",
                    Some("acts_for"),
                    &format!(
                        "`{}` already merged {s} for `{thread}`{}: a reviewed commit merges once",
                        read.stream,
                        if m == s {
                            String::new()
                        } else {
                            format!(" (as {m})")
                        }
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A merge into the branch a PR of the thread merges into is that PR's merge, which
/// runs only under the operator's confirmation: while a live PR loop that follows
/// the thread, with that base (or with none a reading named), has not reached
/// `merge-confirmed`, the run's merge is
/// refused before git runs (found: a ship merged the branch into the PR's base while
/// the PR's merge was only offered). The engine scanned every loop that follows a
/// thread.
fn pr_merge_confirmed(
    guard: Guard<'_>,
    thread: &str,
    target: &str,
    ctx: &Context,
) -> Result<(), Rejection> {
    for read in ctx.scanned(crate::reads::Sieve::ThreadLoops) {
        let Some(Fact::PrLoop {
            thread: Some(t),
            base,
            merged,
            live,
            ..
        }) = &read.fact
        else {
            continue;
        };
        // A loop no reading told its base may merge into this target: fail closed.
        let onto = base.as_deref().map_or(true, |b| b == target);
        if t == thread && onto && *live && !*merged && read.state != "merge-confirmed" {
            return Err(guard.reject(
                "merge-unconfirmed",
                Some("acts_for"),
                &format!(
                    "`{}` follows `{thread}`'s PR into `{target}` and is at `{}`: the PR's merge runs only once the operator confirms it (`cairn pr confirm --what merge`)",
                    read.stream, read.state
                ),
            ));
        }
    }
    Ok(())
}
