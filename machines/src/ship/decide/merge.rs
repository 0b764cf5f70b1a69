//! `merge` (§phase-3-ship-agent step 5): the anchor re-asserted, `git merge
//! --ff-only`, and the readings that prove the primary is at the branch tip.

use super::super::event::Event;
use super::super::gates::{self, Runs};
use super::guards::Guard;
use crate::evidence::{is_full_git_id, CommandRun};
use crate::Rejection;

/// `merge`: the anchor held (else nothing ran), the bound merge ran; a merge that
/// exited 0 is accepted only when the primary's HEAD and the branch tip read as
/// the same full commit; the first rejection allows one retry, the second stops.
pub(super) fn decide_merge(
    guard: Guard<'_>,
    anchor: &CommandRun,
    merge: &Option<CommandRun>,
    after: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    if let Some(drifted) =
        guard.anchor_drift(anchor, root, merge.is_some() || !after.is_empty(), "merge")?
    {
        return Ok(drifted);
    }
    let m = merge.as_ref().ok_or_else(|| {
        guard.bad(
            "merge",
            "evidence-complete",
            "the anchor held: the merge must have run",
        )
    })?;
    guard.argv_is("merge", m, &gates::merge_argv(p, root))?;
    let attempt = run.merge_attempts + 1;
    let merged_sha = if m.exit_status == Some(0) {
        guard.exact("after", after, &gates::merge_after_plan(p, root))?;
        let plan = gates::merge_after_plan(p, root);
        let r = Runs(after);
        match (r.line(&plan[0]), r.line(&plan[1])) {
            (Some(a), Some(b)) if a == b && is_full_git_id(&a) => Some(a),
            _ => None,
        }
    } else {
        if !after.is_empty() {
            return Err(guard.bad(
                "after",
                "not-merged",
                "a rejected merge has no readings after it",
            ));
        }
        None
    };
    let (anchor, merge, after) = (anchor.clone(), m.clone(), after.to_vec());
    Ok(vec![match merged_sha {
        Some(merged_sha) => Event::MergeAccepted {
            attempt,
            anchor,
            merge,
            after,
            merged_sha,
        },
        None if merge.exit_status == Some(0) => Event::MergeStopped {
            attempt,
            anchor,
            merge,
            after,
            code: "stopped:merge-unverified".into(),
        },
        None if attempt >= 2 => Event::MergeStopped {
            attempt,
            anchor,
            merge,
            after,
            code: "stopped:ff-rejected-twice".into(),
        },
        None => Event::MergeRejected {
            attempt,
            anchor,
            merge,
        },
    }])
}
