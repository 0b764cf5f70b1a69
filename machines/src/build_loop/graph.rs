//! The build loop's graph: from any state an iteration is green or not green.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The declared states and edges.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name| StateSpec {
        name,
        terminal: false,
    };
    let mut edges = vec![];
    for from in ["not-run", "green", "not-green"] {
        edges.push(e(from, "iteration-green", "green"));
        edges.push(e(from, "iteration-not-green", "not-green"));
    }
    GraphSpec {
        machine: NAME,
        initial: "not-run",
        states: vec![s("not-run"), s("not-green"), s("green")],
        edges,
    }
}
