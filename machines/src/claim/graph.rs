//! The claim's graph: `unclaimed → held ⇄ released`; a held lease is renewed or
//! taken over (once expired) without leaving `held`.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The declared states and edges.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name| StateSpec {
        name,
        terminal: false,
    };
    GraphSpec {
        machine: NAME,
        initial: "unclaimed",
        states: vec![s("unclaimed"), s("held"), s("released")],
        edges: vec![
            e("unclaimed", "acquired", "held"),
            e("released", "acquired", "held"),
            e("held", "taken-over", "held"),
            e("held", "renewed", "held"),
            e("held", "released", "released"),
        ],
    }
}
