//! The end of the line: `merge` (the merged tree and commit the integration
//! evidence must run against) and `done` (every [`terminal_truth()`] item holds).

use super::super::{terminal_truth, Event, State, NAME};
use super::guards::Guard;
use crate::evidence::{is_full_git_id, is_normal_abs_path};
use crate::{Context, Rejection, Violation};

/// A node whose worker tree verified (or a re-merge), an absolute merged tree and
/// its full commit.
pub(super) fn decide_merge(
    g: Guard<'_>,
    merged_tree: &str,
    commit: &str,
) -> Result<Vec<Event>, Rejection> {
    if !matches!(g.state, State::Verified { .. } | State::Merged { .. }) {
        return g.no("verified", None, "merge a node whose worker tree verified");
    }
    if !is_normal_abs_path(merged_tree) || !is_full_git_id(commit) {
        return g.no(
            "merged-tree",
            Some("merged_tree"),
            "the merged tree's absolute path and full commit",
        );
    }
    Ok(vec![Event::Merged {
        merged_tree: merged_tree.to_owned(),
        commit: commit.to_owned(),
    }])
}

/// A session, a recorded node, a valid spec with this node, then one
/// `terminal-truth` violation per failing checklist item.
pub(super) fn decide_done(
    g: Guard<'_>,
    spec: &str,
    deps_done: &[Vec<String>],
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let session = ctx
        .session
        .clone()
        .ok_or_else(|| g.reject("session", Some("session"), "done is decided in a session"))?;
    let Some(run) = g.state.run() else {
        return g.no("planned", None, "nothing is recorded for this node");
    };
    let (spec, node) = g.spec_node(spec, &run.address)?;
    let missing = terminal_truth(run, &spec, &node, deps_done, &session);
    if !missing.is_empty() {
        let violations = missing
            .iter()
            .map(|m| Violation::new("terminal-truth", None, m.clone()))
            .collect();
        // `missing` is non-empty, so there is a violation to report.
        return Err(
            Rejection::from_violations(NAME, g.command, g.state.name(), violations).unwrap_or_else(
                || {
                    g.reject(
                        "terminal-truth",
                        None,
                        "the terminal truth checklist does not hold",
                    )
                },
            ),
        );
    }
    Ok(vec![Event::Done { session }])
}
