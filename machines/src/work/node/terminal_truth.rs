//! The terminal truth checklist `done` is refused on: one item per failing
//! condition (dependencies and children done this session, no open decision, no
//! pending scope amendment, pre-merge and integration evidence this session).

use super::{contract_hash, NodeRun, Verification};
use crate::work::spec::{Node, Spec};

/// The terminal truth checklist: every failing item, empty when `done` may be recorded.
pub fn terminal_truth(
    run: &NodeRun,
    spec: &Spec,
    node: &Node,
    deps_done: &[Vec<String>],
    session: &str,
) -> Vec<String> {
    let mut missing = vec![];
    let deps: Vec<Vec<String>> = spec
        .effective_deps(&node.address)
        .into_iter()
        .filter(|d| !deps_done.contains(d))
        .collect();
    if !deps.is_empty() {
        missing.push(format!(
            "every dependency permits the node: not done this session: {}",
            serde_json::to_string(&deps).unwrap_or_default()
        ));
    }
    let children: Vec<&Vec<String>> = node
        .children
        .iter()
        .filter(|c| !deps_done.contains(*c))
        .collect();
    if !children.is_empty() {
        missing.push(format!(
            "every child is done this session: {}",
            serde_json::to_string(&children).unwrap_or_default()
        ));
    }
    if !spec.open_decisions.is_empty() {
        missing.push(format!(
            "no open decision blocks the node: {}",
            spec.open_decisions.join(", ")
        ));
    }
    if let Some(r) = &run.scope {
        missing.push(format!(
            "no v1 limitation is routed around: the scope amendment {} is pending",
            r.request_id
        ));
    }
    let worker = run.worktree.clone();
    if worker.is_none() {
        missing.push(
            "the worker's actual tree and full commit are named (no dispatch recorded)".into(),
        );
    }
    let current: Vec<String> = node.acceptance.iter().map(contract_hash).collect();
    let counts = |v: &Verification| {
        v.passed
            && v.session == session
            && v.criteria
                .iter()
                .map(|c| c.contract_hash.clone())
                .collect::<Vec<_>>()
                == current
    };
    let pre = run.verifications[..run.merge_mark.min(run.verifications.len())]
        .iter()
        .any(|v| !v.integration && counts(v) && Some(&v.worktree_path) == worker.as_ref());
    if !pre {
        missing.push("verify ran in the worker's tree this session and accepted every criterion and the whole checklist".into());
    }
    match &run.merged {
        None => missing.push("integration evidence ran again after the merge, in the merged tree (no merge recorded)".into()),
        Some((tree, commit)) => {
            let integ = run.verifications[run.merge_mark.min(run.verifications.len())..]
                .iter()
                .any(|v| v.integration && counts(v) && &v.worktree_path == tree && &v.commit == commit);
            if !integ {
                missing.push("integration evidence ran again after the merge, in the merged tree".into());
            }
        }
    }
    missing
}
