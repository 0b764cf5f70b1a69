//! `create` (§phase-1b): the anchor re-asserted, `git worktree add -b`, its four
//! verifications, and the removal of a partial worktree.

use super::super::event::Event;
use super::super::gates;
use super::guards::Guard;
use crate::evidence::CommandRun;
use crate::{Outcome, Rejection};

/// `create`: the anchor held (else nothing ran), the bound add ran; a failed add
/// is never cleaned up (the path is not ours); a verified worktree is kept, a
/// failed verification removes exactly what the add made.
pub(super) fn decide_create(
    guard: Guard<'_>,
    anchor: &CommandRun,
    add: &Option<CommandRun>,
    verify: &[CommandRun],
    cleanup: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    if let Some(drifted) = guard.anchor_drift(
        anchor,
        root,
        add.is_some() || !verify.is_empty() || !cleanup.is_empty(),
        "add",
    )? {
        return Ok(drifted);
    }
    let add = add.as_ref().ok_or_else(|| {
        guard.bad(
            "add",
            "evidence-complete",
            "the anchor held: `git worktree add` must have run",
        )
    })?;
    guard.argv_is("add", add, &gates::create_argv(p, root))?;
    if add.exit_status != Some(0) {
        // The add failed: whatever is at the path is not ours (a TOCTOU
        // race with a live session): never remove it.
        if !verify.is_empty() || !cleanup.is_empty() {
            return Err(guard.bad(
                "cleanup",
                "not-ours",
                "after a failed `git worktree add`, nothing is verified or removed",
            ));
        }
        return Ok(vec![Event::WorktreeCreationFailed {
            anchor: anchor.clone(),
            add: add.clone(),
            verify: vec![],
            cleanup: vec![],
            failed: vec!["worktree-add".into()],
        }]);
    }
    guard.exact("verify", verify, &gates::create_verify_plan(p, root))?;
    let g = gates::create_gates(p, root, verify);
    let failed: Vec<String> = g
        .iter()
        .filter(|g| g.outcome != Outcome::Pass)
        .map(|g| g.name.clone())
        .collect();
    if failed.is_empty() {
        if !cleanup.is_empty() {
            return Err(guard.bad(
                "cleanup",
                "not-failed",
                "a verified worktree is not removed",
            ));
        }
        Ok(vec![Event::WorktreeCreated {
            anchor: anchor.clone(),
            add: add.clone(),
            verify: verify.to_vec(),
            gates: g,
        }])
    } else {
        guard.exact("cleanup", cleanup, &gates::create_cleanup_plan(p, root))?;
        Ok(vec![Event::WorktreeCreationFailed {
            anchor: anchor.clone(),
            add: add.clone(),
            verify: verify.to_vec(),
            cleanup: cleanup.to_vec(),
            failed,
        }])
    }
}
