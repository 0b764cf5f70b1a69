//! `plan`: the node's receipt from `work_plan`, before its dispatch or after an
//! approved scope amendment.

use super::super::{Event, PlanReceipt, State};
use super::guards::Guard;
use crate::Rejection;

/// A plannable stage, this stream's node, a fully valid spec (lineage included),
/// no worker profile (blocked in v1), the approved touches in
/// the spec, writes confined to the node's touches with escalation off, and the
/// brief's hash.
pub(super) fn decide_plan(
    g: Guard<'_>,
    spec: &str,
    draft: Option<&str>,
    address: &[String],
    receipt: &PlanReceipt,
) -> Result<Vec<Event>, Rejection> {
    if !matches!(
        g.state,
        State::Unplanned | State::Planned { .. } | State::AmendmentApproved { .. }
    ) {
        return g.no("plannable", None, "a node is planned before its dispatch, or re-planned after an approved scope amendment");
    }
    if let Some(run) = g.state.run() {
        if run.address != address {
            return g.no(
                "node-address",
                Some("address"),
                "this stream is another node's",
            );
        }
    }
    let (_, node) = g.spec_node(spec, draft, address)?;
    if let Some(profile) = node.worker.as_ref().and_then(|w| w.profile.as_deref()) {
        return g.no(
            "worker-profile-unsupported",
            Some("worker.profile"),
            &format!("the worker profile `{profile}` is not supported until pi-delegate #142 ships: revise the spec or raise the product decision (never drop it silently)"),
        );
    }
    if let State::AmendmentApproved { run } = g.state {
        let approved = run.approved_touches.clone().unwrap_or_default();
        if !approved.iter().all(|t| node.touches.contains(t)) {
            return g.no("revalidated-touches", Some("spec"), "update the workspec's touches to the approved scope and re-validate before re-planning");
        }
    }
    if !receipt.confine_writes || receipt.escalation != "off" {
        return g.no(
            "plan-contract",
            Some("receipt"),
            "a plan confines writes and sets escalation off",
        );
    }
    if receipt.writable_roots != node.touches {
        return g.no(
            "plan-contract",
            Some("receipt.writable_roots"),
            "writable roots are the node's touches",
        );
    }
    if receipt.brief_sha256.len() != 64
        || !receipt.brief_sha256.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return g.no(
            "brief-hash",
            Some("receipt.brief_sha256"),
            "the brief's SHA-256 (64 hex)",
        );
    }
    Ok(vec![Event::Planned {
        address: address.to_vec(),
        receipt: receipt.clone(),
    }])
}
