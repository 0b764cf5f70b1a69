//! `teardown` (§phase-3-ship-agent step 6, and the abort teardown): readings first,
//! then only what they show is removed.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Stage;
use super::guards::Guard;
use crate::evidence::{CommandRun, FullCommit};
use crate::Rejection;

/// `teardown`: the anchor held (else nothing ran), the readings ran; after a merge,
/// TARGET_BRANCH still holds the merged commit (else `merge-lost`, nothing removed);
/// what the readings show is there was removed with the bound argv (forced only on
/// an abort teardown), and nothing else was; `clean` or `partial:<what>`.
pub(super) fn decide_teardown(
    guard: Guard<'_>,
    anchor: &CommandRun,
    before: &[CommandRun],
    remove: &Option<CommandRun>,
    delete: &Option<CommandRun>,
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    let (p, root) = (&run.params, run.repo_root.as_str());
    if let Some(drifted) = guard.anchor_drift(
        anchor,
        root,
        !before.is_empty() || remove.is_some() || delete.is_some(),
        "before",
    )? {
        return Ok(drifted);
    }
    let force = matches!(guard.state.stage(), Some(Stage::TeardownPending { .. }));
    // After a merge, `shipped` needs TARGET_BRANCH to hold the merged commit still.
    let merged = run.merged_sha.as_ref().filter(|_| !force);
    guard.exact(
        "before",
        before,
        &gates::teardown_before_plan(p, root, merged.map(FullCommit::as_str)),
    )?;
    if let Some(sha) = merged {
        // The target read is REPO_ROOT's own repository's (helper-77: a `.git`
        // swapped after the merge answered for a clone's `main`).
        let opened = run.repository.as_deref();
        let own = gates::primary_repository(root, before, opened) == Some(true);
        if !gates::merge_held(p, root, before, sha, opened) {
            if remove.is_some() || delete.is_some() {
                return Err(guard.bad(
                    "remove",
                    "evidence-bound",
                    "nothing is removed once the merge is not on TARGET_BRANCH",
                ));
            }
            return Ok(vec![Event::MergeLost {
                anchor: anchor.clone(),
                before: before.to_vec(),
                merged_sha: sha.clone(),
                code: if own {
                    "stopped:merge-not-on-target".to_owned()
                } else {
                    format!("stopped:wrong-repo:{root}")
                },
            }]);
        }
    }
    let (listed, branch) = gates::teardown_present(p, root, before);
    let expect = |present: Option<bool>,
                  run: &Option<CommandRun>,
                  want: Vec<String>,
                  field: &str|
     -> Result<bool, Rejection> {
        match (present, run) {
            (Some(true), Some(r)) => {
                guard.argv_is(field, r, &want)?;
                Ok(r.exit_status == Some(0))
            }
            (Some(true), None) => Err(guard.bad(
                field,
                "evidence-complete",
                "it is there: it must be removed",
            )),
            (Some(false), None) => Ok(true),
            (None, None) => Ok(false),
            (_, Some(_)) => Err(guard.bad(
                field,
                "evidence-bound",
                "only what the readings show is removed",
            )),
        }
    };
    let removed = expect(
        listed,
        remove,
        gates::teardown_remove_argv(p, root, force),
        "remove",
    )?;
    let deleted = expect(
        branch,
        delete,
        gates::teardown_delete_argv(p, root, force),
        "delete",
    )?;
    let teardown = match (removed, deleted) {
        (true, true) => "clean".to_owned(),
        (false, true) => "partial:worktree".to_owned(),
        (true, false) => "partial:branch".to_owned(),
        (false, false) => "partial:worktree,branch".to_owned(),
    };
    let (anchor, before, remove, delete) = (
        anchor.clone(),
        before.to_vec(),
        remove.clone(),
        delete.clone(),
    );
    Ok(vec![if teardown == "clean" {
        Event::TornDown {
            anchor,
            before,
            remove,
            delete,
        }
    } else {
        Event::TeardownPartial {
            anchor,
            before,
            remove,
            delete,
            teardown,
        }
    }])
}
