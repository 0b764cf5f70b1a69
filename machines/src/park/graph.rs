//! The park graph: `fresh → prepared → checkpoint-authorized → receipt-authorized →
//! receipt-validated → safe-to-close` (terminal); a new attempt returns to
//! `prepared` from any open state.

use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The declared states and edges.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name, terminal| StateSpec { name, terminal };
    GraphSpec {
        machine: NAME,
        initial: "fresh",
        states: vec![
            s("fresh", false),
            s("prepared", false),
            s("checkpoint-authorized", false),
            s("receipt-authorized", false),
            s("receipt-validated", false),
            s("safe-to-close", true),
        ],
        edges: vec![
            e("fresh", "attempt-prepared", "prepared"),
            e("prepared", "attempt-prepared", "prepared"),
            e("checkpoint-authorized", "attempt-prepared", "prepared"),
            e("receipt-authorized", "attempt-prepared", "prepared"),
            e("receipt-validated", "attempt-prepared", "prepared"),
            e("prepared", "checkpoint-authorized", "checkpoint-authorized"),
            e(
                "checkpoint-authorized",
                "checkpoint-authorized",
                "checkpoint-authorized",
            ),
            e("prepared", "receipt-authorized", "receipt-authorized"),
            e(
                "checkpoint-authorized",
                "receipt-authorized",
                "receipt-authorized",
            ),
            e(
                "receipt-authorized",
                "receipt-authorized",
                "receipt-authorized",
            ),
            e(
                "receipt-authorized",
                "receipt-validated",
                "receipt-validated",
            ),
            e(
                "receipt-validated",
                "receipt-validated",
                "receipt-validated",
            ),
            e("receipt-validated", "receipt-confirmed", "safe-to-close"),
        ],
    }
}
