//! `merge` (§phase-3-ship-agent step 5): the anchor re-asserted, the primary read
//! right before (the checkout of its own repository, on TARGET_BRANCH, clean, the
//! branch still at the checked tip),
//! `git merge --ff-only` of exactly that tip, and the readings that prove
//! TARGET_BRANCH holds it.

use super::super::event::Event;
use super::super::gates::{self, MergeAfter, MergeBefore};
use super::super::state::Stage;
use super::guards::Guard;
use crate::evidence::{CommandRun, FullCommit};
use crate::Rejection;

/// `merge`: the anchor held (else nothing ran); the readings before ran, and unless
/// the primary is on TARGET_BRANCH and clean (else `merge-blocked`) and the branch
/// is still at the checked tip (else `merge-tip-moved`), nothing further ran; the
/// merge of the checked tip ran; a merge that exited 0 is accepted only when the
/// readings after it show the primary on TARGET_BRANCH and TARGET_BRANCH holding
/// the tip; the first rejection allows one retry, the second stops.
pub(super) fn decide_merge(
    guard: Guard<'_>,
    anchor: &CommandRun,
    before: &[CommandRun],
    merge: &Option<CommandRun>,
    after: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    let ran_after = !before.is_empty() || merge.is_some() || !after.is_empty();
    if let Some(drifted) = guard.anchor_drift(anchor, root, ran_after, "before")? {
        return Ok(drifted);
    }
    let tip = checked_tip(guard)?;
    guard.exact("before", before, &gates::merge_before_plan(p, root))?;
    let held = match blocked(
        &gates::merge_before(p, root, before, run.repository.as_deref()),
        root,
        &p.target_branch,
        &tip,
    ) {
        Held::Yes => None,
        Held::Blocked(code) => Some(Event::MergeBlocked {
            anchor: anchor.clone(),
            before: before.to_vec(),
            code,
        }),
        Held::Moved(seen) => Some(Event::MergeTipMoved {
            anchor: anchor.clone(),
            before: before.to_vec(),
            checked: tip.clone(),
            seen,
        }),
    };
    if let Some(event) = held {
        if merge.is_some() || !after.is_empty() {
            return Err(guard.bad(
                "merge",
                "evidence-bound",
                "nothing is merged once the readings before refuse it",
            ));
        }
        return Ok(vec![event]);
    }
    let m = merge.as_ref().ok_or_else(|| {
        guard.bad(
            "merge",
            "evidence-complete",
            "the readings held: the merge must have run",
        )
    })?;
    guard.argv_is("merge", m, &gates::merge_argv(root, &tip))?;
    let attempt = run.merge_attempts + 1;
    let verified = if m.exit_status == Some(0) {
        guard.exact("after", after, &gates::merge_after_plan(p, root, &tip))?;
        let MergeAfter {
            current,
            holds,
            repository,
        } = gates::merge_after(p, root, &tip, after, run.repository.as_deref());
        current.as_deref() == Some(p.target_branch.as_str())
            && holds == Some(true)
            && repository == Some(true)
    } else {
        if !after.is_empty() {
            return Err(guard.bad(
                "after",
                "not-merged",
                "a rejected merge has no readings after it",
            ));
        }
        false
    };
    let (anchor, before, merge, after) =
        (anchor.clone(), before.to_vec(), m.clone(), after.to_vec());
    Ok(vec![if verified {
        Event::MergeAccepted {
            attempt,
            anchor,
            before,
            merge,
            after,
            merged_sha: tip,
        }
    } else if merge.exit_status == Some(0) {
        Event::MergeStopped {
            attempt,
            anchor,
            before,
            merge,
            after,
            code: "stopped:merge-unverified".into(),
        }
    } else if attempt >= 2 {
        Event::MergeStopped {
            attempt,
            anchor,
            before,
            merge,
            after,
            code: "stopped:ff-rejected-twice".into(),
        }
    } else {
        Event::MergeRejected {
            attempt,
            anchor,
            before,
            merge,
        }
    }])
}

/// The tip the pre-merge checks bound into the stage (`admits` lets `merge` through
/// only with one).
fn checked_tip(guard: Guard<'_>) -> Result<FullCommit, Rejection> {
    match guard.state.stage() {
        Some(Stage::MergeReady { tip: Some(t) } | Stage::MergeRejected { tip: Some(t) }) => {
            Ok(t.clone())
        }
        _ => Err(guard.reject(
            "checked-tip",
            None,
            "no checked tip is bound: run `cairn ship pre-merge`",
        )),
    }
}

/// What the readings before the merge allow.
enum Held {
    /// Merge.
    Yes,
    /// `merge-blocked` with this code.
    Blocked(String),
    /// `merge-tip-moved`: the branch's tip now (if it could be read).
    Moved(Option<String>),
}

/// The primary still the checkout of its own repository, on TARGET_BRANCH (a
/// detached HEAD is not), clean, and the branch still at `tip`.
fn blocked(b: &MergeBefore, root: &str, target: &str, tip: &FullCommit) -> Held {
    match b.repository {
        None => return Held::Blocked("stopped:unreadable:repository".into()),
        // The wire format's code for a checkout that is not the run's repository.
        Some(false) => return Held::Blocked(format!("stopped:wrong-repo:{root}")),
        Some(true) => {}
    }
    match b.current.as_deref() {
        None => return Held::Blocked("stopped:unreadable:current-branch".into()),
        Some(c) if c != target => return Held::Blocked("stopped:primary-off-branch".into()),
        Some(_) => {}
    }
    match b.clean {
        None => return Held::Blocked("stopped:unreadable:status".into()),
        Some(false) => return Held::Blocked("stopped:primary-dirty".into()),
        Some(true) => {}
    }
    match &b.tip {
        Some(t) if tip == t => Held::Yes,
        seen => Held::Moved(seen.clone()),
    }
}
