//! The `PlanReceipt` `plan` prints, in pi-work's shape (camelCase): the node id
//! and qualified address, the brief by reference and its hash, and the
//! paste-ready delegate invocation (`agent` — default `worker` —, `skills`,
//! `model`, `reads: [briefPath]`, `task`, `writableRoots` = `touches`,
//! `confineWrites: true`, `escalation: "off"`, `worktree`), with the
//! `touch-overlap` advisory. Built from the recorded receipt and the recorded spec
//! text's node, so it is what the journal holds, not a second record.

use serde_json::{json, Map, Value};

use super::PlanReceipt;
use crate::work::spec::Node;

/// The delegate's task: a pointer to the brief, which is the contract (never a
/// shortened copy of it).
pub fn delegate_task(node: &Node, brief_path: &str) -> String {
    format!(
        "Read the brief at {brief_path} first: it is the contract for work node {}. Then: {}",
        serde_json::to_string(&node.address).unwrap_or_default(),
        node.task
    )
}

/// The receipt `plan` prints for `node`, planned with `receipt`, from the spec at
/// `schema_path`.
pub fn plan_receipt(node: &Node, schema_path: &str, receipt: &PlanReceipt) -> Value {
    let worker = node.worker.clone().unwrap_or_default();
    let mut delegate = Map::new();
    delegate.insert(
        "agent".into(),
        json!(worker.agent.as_deref().unwrap_or("worker")),
    );
    if !worker.skills.is_empty() {
        delegate.insert("skills".into(), json!(worker.skills));
    }
    if let Some(m) = &worker.model {
        delegate.insert("model".into(), json!(m));
    }
    delegate.insert("reads".into(), json!([receipt.brief_path]));
    delegate.insert(
        "task".into(),
        json!(delegate_task(node, &receipt.brief_path)),
    );
    if !receipt.writable_roots.is_empty() {
        delegate.insert("writableRoots".into(), json!(receipt.writable_roots));
    }
    delegate.insert("confineWrites".into(), json!(receipt.confine_writes));
    delegate.insert("escalation".into(), json!(receipt.escalation));
    delegate.insert("worktree".into(), json!(receipt.worktree));
    let mut out = json!({
        "nodeId": node.address.last(),
        "nodeAddress": node.address,
        "schemaPath": schema_path,
        "briefPath": receipt.brief_path,
        "briefSha256": receipt.brief_sha256,
        "delegate": delegate,
    });
    if !receipt.overlaps.is_empty() {
        out["advisories"] = json!([{"kind": "touch-overlap", "overlaps": receipt.overlaps}]);
    }
    out
}
