//! `create` (§phase-1b): the anchor re-asserted, whether the branch exists right
//! before, `git worktree add -b`, its four verifications, and the removal of what
//! a failed creation made (a partial worktree, or the branch a failed add made).

use super::super::event::Event;
use super::super::gates;
use super::guards::Guard;
use crate::evidence::CommandRun;
use crate::{Outcome, Rejection};

/// The runs of one `create`.
pub(super) struct CreateRuns<'a> {
    pub(super) anchor: &'a CommandRun,
    pub(super) before: &'a [CommandRun],
    pub(super) add: &'a Option<CommandRun>,
    pub(super) verify: &'a [CommandRun],
    pub(super) cleanup: &'a [CommandRun],
}

/// `create`: the anchor held (else nothing ran); the branch was read, then the
/// bound add ran. A failed add is read again: the branch it made (absent before,
/// present after, held by no worktree) is removed, and nothing else (the path is
/// not ours). A verified worktree is kept; a failed verification removes exactly
/// what the add made.
pub(super) fn decide_create(guard: Guard<'_>, c: CreateRuns<'_>) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    let ran_after =
        !c.before.is_empty() || c.add.is_some() || !c.verify.is_empty() || !c.cleanup.is_empty();
    if let Some(drifted) = guard.anchor_drift(c.anchor, root, ran_after, "add")? {
        return Ok(drifted);
    }
    guard.exact("before", c.before, &gates::create_before_plan(p, root))?;
    let add = c.add.as_ref().ok_or_else(|| {
        guard.bad(
            "add",
            "evidence-complete",
            "the anchor held: `git worktree add` must have run",
        )
    })?;
    guard.argv_is("add", add, &gates::create_argv(p, root))?;
    let failed = |verify: &[CommandRun], cleanup: &[CommandRun], failed: Vec<String>| {
        Event::WorktreeCreationFailed {
            anchor: c.anchor.clone(),
            before: c.before.to_vec(),
            add: add.clone(),
            verify: verify.to_vec(),
            cleanup: cleanup.to_vec(),
            failed,
        }
    };
    if add.exit_status != Some(0) {
        guard.exact("verify", c.verify, &gates::create_failed_plan(p, root))?;
        let plan = if gates::add_made_branch(p, root, c.before, c.verify) {
            gates::create_failed_cleanup_plan(p, root)
        } else {
            vec![]
        };
        guard.exact("cleanup", c.cleanup, &plan)?;
        return Ok(vec![failed(
            c.verify,
            c.cleanup,
            vec!["worktree-add".into()],
        )]);
    }
    guard.exact("verify", c.verify, &gates::create_verify_plan(p, root))?;
    let g = gates::create_gates(p, root, c.verify, run.repository.as_deref());
    let failing: Vec<String> = g
        .iter()
        .filter(|g| g.outcome != Outcome::Pass)
        .map(|g| g.name.clone())
        .collect();
    if failing.is_empty() {
        if !c.cleanup.is_empty() {
            return Err(guard.bad(
                "cleanup",
                "not-failed",
                "a verified worktree is not removed",
            ));
        }
        Ok(vec![Event::WorktreeCreated {
            anchor: c.anchor.clone(),
            before: c.before.to_vec(),
            add: add.clone(),
            verify: c.verify.to_vec(),
            gates: g,
        }])
    } else {
        guard.exact("cleanup", c.cleanup, &gates::create_cleanup_plan(p, root))?;
        Ok(vec![failed(c.verify, c.cleanup, failing)])
    }
}
