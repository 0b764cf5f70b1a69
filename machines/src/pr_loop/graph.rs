//! The pr-loop graph: `idle → observing`, the offer states, `merge-offered →
//! merge-confirmed → complete`, a closed PR `awaiting-operator`, and the operator
//! pausing or abandoning from any open state; every event has one target state, so
//! no edge is ambiguous.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The declared states and edges.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name, terminal| StateSpec { name, terminal };
    let mut edges = Vec::new();
    // The states with an observed PR whose loop has not ended.
    let open = [
        "observing",
        "ready-offered",
        "review-request-offered",
        "merge-offered",
        "merge-confirmed",
        "escalation-proposed",
        "awaiting-operator",
    ];
    for from in std::iter::once("idle").chain(open).chain(["paused"]) {
        edges.push(e(from, "observed", "observing"));
    }
    edges.extend([
        e("observing", "round-started", "observing"),
        e("observing", "escalation-proposed", "escalation-proposed"),
        e("escalation-proposed", "escalation-applied", "observing"),
        e("escalation-proposed", "escalation-held", "observing"),
        e("observing", "escalation-clamped", "observing"),
        e("observing", "ready-offered", "ready-offered"),
        e("ready-offered", "ready-confirmed", "observing"),
        e(
            "observing",
            "review-request-offered",
            "review-request-offered",
        ),
        e(
            "review-request-offered",
            "review-request-confirmed",
            "observing",
        ),
        e("observing", "merge-offered", "merge-offered"),
        e("merge-offered", "merge-confirmed", "merge-confirmed"),
        e("merge-confirmed", "merged-by-loop", "complete"),
        e("observing", "merge-observed", "complete"),
        e("observing", "closed-observed", "awaiting-operator"),
    ]);
    for from in open {
        edges.push(e(from, "paused", "paused"));
    }
    for from in open.into_iter().chain(["paused"]) {
        edges.push(e(from, "abandoned", "abandoned"));
    }
    GraphSpec {
        machine: NAME,
        initial: "idle",
        states: vec![
            s("idle", false),
            s("observing", false),
            s("ready-offered", false),
            s("review-request-offered", false),
            s("merge-offered", false),
            s("merge-confirmed", false),
            s("escalation-proposed", false),
            s("awaiting-operator", false),
            s("paused", false),
            s("abandoned", true),
            s("complete", true),
        ],
        edges,
    }
}
