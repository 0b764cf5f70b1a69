//! `dispatch`: `work_dispatch`'s outcome for a planned node, a receipt
//! (`dispatched`) or a degraded `not-dispatched` finding that advances nothing.

use super::super::{Event, State, DEFAULT_BUDGET};
use super::guards::Guard;
use crate::evidence::{git, AbsPath, CommandRun, FullCommit};
use crate::{Context, Rejection};

/// What `work dispatch` records: `work_dispatch`'s outcome, and cairn's reading of
/// the worker tree's repository.
pub(in super::super) struct Receipt<'a> {
    pub run_id: Option<&'a str>,
    pub worktree_path: &'a str,
    pub expected_commit: &'a str,
    pub budget: Option<u32>,
    pub finding: Option<&'a str>,
    pub repository: Option<&'a CommandRun>,
    pub identity: Option<&'a CommandRun>,
}

/// The reading `work dispatch` takes of the worker tree: its top level as git
/// prints it (the tree must be named so: the spelling other lifecycles compare),
/// then its repository, as the git common dir (the same for every worktree of
/// one repository).
pub fn dispatch_plan(worktree_path: &str) -> Vec<String> {
    git::git(
        worktree_path,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
        ],
    )
}

/// The identity reading that follows a [`dispatch_plan`] run: `stat` of the
/// common dir it named (`evidence::git::identity_argv`), when it named one.
pub fn identity_plan(reading: &CommandRun) -> Option<Vec<String>> {
    let mut lines = reading.stdout.lines();
    match (reading.ok(), lines.next(), lines.next(), lines.next()) {
        (true, Some(_), Some(common), None) if AbsPath::parse(common).is_ok() => {
            Some(crate::evidence::git::identity_argv(common))
        }
        _ => None,
    }
}

/// A planned node; a redispatch in the same persistent worktree; then exactly one
/// of a finding (the plan comes back) or a run id with an absolute worker tree, its
/// full starting commit and a budget of at least one round (a redispatch keeps its
/// budget and may not raise it). A dispatch cairn observed names the worker
/// tree's repository: a tree git cannot read as a worktree is refused.
pub(super) fn decide_dispatch(
    g: Guard<'_>,
    receipt: Receipt<'_>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let Receipt {
        run_id,
        worktree_path,
        expected_commit,
        budget,
        finding,
        repository,
        identity,
    } = receipt;
    let State::Planned { run } = g.state else {
        return g.no(
            "planned",
            None,
            "dispatch a planned node (a redispatch after a rejection is `remediate`)",
        );
    };
    if let (Some(w), Some(_)) = (&run.worktree, run_id) {
        if w != worktree_path {
            return g.no(
                "same-worktree",
                Some("worktree_path"),
                "a redispatch reuses the same persistent worktree",
            );
        }
    }
    match (run_id, finding) {
        (None, Some(f)) if !f.trim().is_empty() => {
            // Degraded: the plan comes back; nothing advances.
            let plan = run
                .plan
                .clone()
                .ok_or_else(|| g.reject("planned", None, "no plan"))?;
            Ok(vec![Event::NotDispatched {
                finding: f.to_owned(),
                plan,
            }])
        }
        (Some(id), None) if !id.trim().is_empty() => {
            let worktree_path = AbsPath::parse(worktree_path).map_err(|_| {
                g.reject(
                    "absolute-path",
                    Some("worktree_path"),
                    "the persistent worker tree, absolute",
                )
            })?;
            let expected_commit = FullCommit::parse(expected_commit).map_err(|_| {
                g.reject(
                    "full-commit",
                    Some("expected_commit"),
                    "the full commit the worker starts from",
                )
            })?;
            if budget == Some(0) {
                return g.no(
                    "budget",
                    Some("budget"),
                    "a remediation budget of at least one round",
                );
            }
            // A redispatch (after an approved scope amendment) keeps the rounds
            // already spent and may not raise the budget they count against.
            if run.worktree.is_some() && budget.is_some_and(|b| b > run.budget) {
                return g.no(
                    "budget",
                    Some("budget"),
                    "a redispatch does not raise the remediation budget",
                );
            }
            let repository = match repository {
                None => None,
                Some(run) => Some(worker_repository(&g, run, &worktree_path)?),
            };
            // The repository's identity on disk, read for the common dir the
            // reading named (work-node rules 10; helper-78: another clone's `.git`
            // moved into its place kept every path).
            let identity = match (&repository, identity) {
                (None, None) => None,
                (Some(common), Some(run)) => Some(
                    crate::evidence::git::identity_of(common.as_str(), run).ok_or_else(|| {
                        g.reject(
                            "evidence-bound",
                            Some("identity"),
                            "expected a run of `stat -L --format=%d:%i COMMON COMMON/refs` that exited 0",
                        )
                    })?,
                ),
                (Some(_), None) => {
                    return g.no(
                        "evidence-complete",
                        Some("identity"),
                        "the worker tree's repository was read: its identity on disk must be too",
                    )
                }
                (None, Some(_)) => {
                    return g.no(
                        "evidence-bound",
                        Some("identity"),
                        "an identity without the repository reading it belongs to",
                    )
                }
            };
            Ok(vec![Event::Dispatched {
                run_id: id.to_owned(),
                worktree_path,
                expected_commit,
                budget: budget.unwrap_or(if run.worktree.is_some() {
                    run.budget
                } else {
                    DEFAULT_BUDGET
                }),
                session: ctx.session.clone(),
                repository,
                identity,
            }])
        }
        _ => g.no(
            "dispatch-receipt",
            Some("run_id"),
            "a dispatch receipt (run id) or a not-dispatched finding, exactly one",
        ),
    }
}

/// The worker tree's repository as cairn's reading shows it: the planned argv,
/// exit 0, an absolute path. Anything else refuses the dispatch: a worker tree
/// that git cannot read is no persistent worktree to verify later.
fn worker_repository(
    g: &Guard<'_>,
    run: &CommandRun,
    worktree_path: &AbsPath,
) -> Result<AbsPath, Rejection> {
    if run.argv != dispatch_plan(worktree_path.as_str()) {
        return Err(g.reject(
            "evidence-bound",
            Some("repository"),
            "expected `git -C WORKTREE rev-parse --path-format=absolute --show-toplevel --git-common-dir`",
        ));
    }
    let mut lines = run.stdout.lines();
    let read = match (run.ok(), lines.next(), lines.next(), lines.next()) {
        (true, Some(top), Some(common), None) => {
            AbsPath::parse(top).ok().zip(AbsPath::parse(common).ok())
        }
        _ => None,
    };
    // The tree as git names it, and nothing else (found by a hostile pass: a
    // worker dispatched through a symlink, or into a subdirectory, of a ship
    // run's worktree was not seen as working there).
    if let Some((top, _)) = read.as_ref().filter(|(top, _)| top != worktree_path) {
        return Err(g.reject(
            "worktree-toplevel",
            Some("worktree_path"),
            &format!(
                "git names this worker tree `{top}`: dispatch it by that path (not through a symlink, nor a directory inside it)"
            ),
        ));
    }
    read.map(|(_, common)| common).ok_or_else(|| {
        g.reject(
            "git-worktree",
            Some("worktree_path"),
            &format!(
                "git cannot read `{worktree_path}` as a worktree ({}): dispatch into a persistent git worktree",
                match run.exit_status {
                    Some(code) => format!("exit {code}: {}", run.stderr.trim()),
                    None => "it did not run".to_owned(),
                }
            ),
        )
    })
}
