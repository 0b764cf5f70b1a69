//! The terminal truth checklist `done` is refused on: one item per failing
//! condition (dependencies and children satisfied this session, no open
//! decision, no pending scope amendment, pre-merge and integration evidence this
//! session). A criterion amended after the merge is proved by the integration
//! evidence in the merged tree on its new contract; the worker-tree evidence
//! before the merge counts for it on the contract it ran against.

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
    let current: Vec<(&str, String)> = node
        .acceptance
        .iter()
        .map(|c| (c.id.as_str(), contract_hash(c)))
        .collect();
    // On the current contract; `amended` names criteria whose earlier text counts.
    let counts = |v: &Verification, amended: &[String]| {
        v.passed
            && v.session == session
            && v.criteria.len() == current.len()
            && v.criteria.iter().zip(&current).all(|(r, (id, hash))| {
                r.criterion_id == *id
                    && (&r.contract_hash == hash || amended.iter().any(|a| a == id))
            })
    };
    // Before a merge every verification is pre-merge evidence; after it, those
    // recorded before the last merge.
    let pre_merge = match run.merged {
        Some(_) => &run.verifications[..run.merge_mark.min(run.verifications.len())],
        None => &run.verifications[..],
    };
    let pre = pre_merge.iter().any(|v| {
        !v.integration
            && counts(v, &run.amended_after_merge)
            && worker.as_deref() == Some(v.worktree_path.as_str())
    });
    if !pre {
        missing.push("verify ran in the worker's tree this session and accepted every criterion and the whole checklist".into());
    }
    match &run.merged {
        None => missing.push("integration evidence ran again after the merge, in the merged tree (no merge recorded)".into()),
        Some((tree, commit)) => {
            let integ = run.verifications[run.merge_mark.min(run.verifications.len())..]
                .iter()
                .any(|v| v.integration && counts(v, &[]) && *tree == v.worktree_path && &v.commit == commit);
            if !integ {
                missing.push("integration evidence ran again after the merge, in the merged tree".into());
            }
        }
    }
    missing
}
