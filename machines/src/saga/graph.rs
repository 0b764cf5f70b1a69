//! The saga's graph: `empty → before-qa → qa → retro`, the QA events inside
//! `before-qa`, and every gate event a self-loop of each thread state.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The gate events: each a self-loop of `before-qa`, `qa` and `retro`.
const GATE_EVENTS: [&str; 14] = [
    "doc-review-recorded",
    "review-recorded",
    "override-recorded",
    "ready-for-pr",
    "directive-set",
    "boundary-crossed",
    "boundary-held",
    "paused-at-boundary",
    "turn-taken",
    "turn-released",
    "unit-merged",
    "released",
    "board-moved",
    "board-half-write",
];

/// The declared states and edges.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name, terminal| StateSpec { name, terminal };
    GraphSpec {
        machine: NAME,
        initial: "empty",
        states: vec![
            s("empty", false),
            s("before-qa", false),
            s("qa", false),
            s("retro", false),
        ],
        edges: vec![
            e("empty", "tick-saved", "before-qa"),
            e("before-qa", "tick-saved", "before-qa"),
            e("before-qa", "qa-extension-granted", "before-qa"),
            e("before-qa", "qa-cycle-recorded", "before-qa"),
            e("before-qa", "advanced-to-qa", "qa"),
            e("qa", "tick-saved", "qa"),
            e("qa", "retro-tick-saved", "retro"),
            e("retro", "retro-tick-saved", "retro"),
        ]
        .into_iter()
        .chain(
            ["before-qa", "qa", "retro"]
                .into_iter()
                .flat_map(|from| GATE_EVENTS.iter().map(move |ev| e(from, ev, from))),
        )
        .collect(),
    }
}
