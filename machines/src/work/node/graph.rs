//! The transition graph: every (state, event, state) edge `evolve` may apply.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The transition graph.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name, terminal| StateSpec { name, terminal };
    GraphSpec {
        machine: NAME,
        initial: "unplanned",
        states: vec![
            s("unplanned", false),
            s("planned", false),
            s("dispatched", false),
            s("verified", false),
            s("rejected", false),
            s("escalated", true),
            s("merged", false),
            s("amendment-approved", false),
            // Not terminal: a later session re-verifies a done node (`verified` /
            // `verification-failed` back to `done`), and its criteria may be amended.
            s("done", false),
        ],
        edges: vec![
            e("amendment-approved", "planned", "planned"),
            e("unplanned", "planned", "planned"),
            e("planned", "planned", "planned"),
            e("planned", "not-dispatched", "planned"),
            e("planned", "dispatched", "dispatched"),
            e("done", "verified", "done"),
            e("done", "verification-failed", "done"),
            e("dispatched", "verified", "verified"),
            e("dispatched", "verification-failed", "rejected"),
            e("verified", "verified", "verified"),
            e("verified", "verification-failed", "rejected"),
            // Rules v1 only (retired): a rejected node is now redispatched before
            // it is verified again. Kept so journals recorded under v1 still audit.
            e("rejected", "verified", "verified"),
            e("rejected", "verification-failed", "rejected"),
            e("dispatched", "review-approved", "dispatched"),
            e("dispatched", "review-rejected", "rejected"),
            e("verified", "review-approved", "verified"),
            e("verified", "review-rejected", "rejected"),
            e("rejected", "remediation-dispatched", "dispatched"),
            e("rejected", "escalated", "escalated"),
            e("verified", "merged", "merged"),
            e("merged", "merged", "merged"),
            e("merged", "verified", "merged"),
            e("merged", "verification-failed", "merged"),
            e("merged", "done", "done"),
        ]
        .into_iter()
        .chain(
            [
                "unplanned",
                "planned",
                "dispatched",
                "verified",
                "rejected",
                "merged",
                "amendment-approved",
                "done",
            ]
            .into_iter()
            .map(|from| e(from, "criterion-amended", from)),
        )
        .chain(
            ["dispatched", "verified", "rejected", "merged"]
                .into_iter()
                .flat_map(|from| {
                    [
                        e(from, "scope-raised", from),
                        e(from, "scope-passed-up", from),
                        e(from, "scope-not-approved", from),
                        e(from, "scope-approved", "amendment-approved"),
                    ]
                }),
        )
        .collect(),
    }
}
