//! The lints (warnings, decisions to make): touch concentration and touch
//! overlap between nodes no dependency orders.

use std::collections::{BTreeMap, BTreeSet};

use super::finding::key;
use super::{Finding, Node, Spec};

fn clean_touch(t: &str) -> String {
    let t = t.trim_start_matches("./");
    t.trim_end_matches('/').to_owned()
}

fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (clean_touch(a), clean_touch(b));
    a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/"))
}

/// Whether `a` must finish before `b` (transitively, through effective dependencies).
fn ordered(spec: &Spec, a: &[String], b: &[String]) -> bool {
    let mut stack = vec![b.to_vec()];
    let mut seen = BTreeSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) {
            continue;
        }
        for d in spec.effective_deps(&x) {
            if d == a || a.starts_with(&d) || d.starts_with(a) {
                return true;
            }
            stack.push(d.clone());
            // A composite dependency waits for its children.
            for n in spec.nodes.iter().filter(|n| n.address.starts_with(&d)) {
                stack.push(n.address.clone());
            }
        }
    }
    false
}

/// The warnings of an error-free spec: a touch concentrated on three or more
/// nodes, and overlapping touches of nodes that can run in the same wave.
pub(super) fn lints(nodes: &[Node]) -> Vec<Finding> {
    let spec = Spec {
        nodes: nodes.to_vec(),
        open_decisions: vec![],
    };
    let mut out = vec![];
    let mut by_touch: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        for t in &n.touches {
            by_touch.entry(clean_touch(t)).or_default().push(n);
        }
    }
    for (t, ns) in &by_touch {
        if ns.len() >= 3 {
            out.push(Finding::warning(
                "touches-concentration",
                key(&ns[2].path, "touches"),
                format!("`{t}` is touched by {} nodes", ns.len()),
            ));
        }
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let related = a.address.starts_with(&b.address) || b.address.starts_with(&a.address);
            if related
                || ordered(&spec, &a.address, &b.address)
                || ordered(&spec, &b.address, &a.address)
            {
                continue;
            }
            let shared: Vec<String> = a
                .touches
                .iter()
                .flat_map(|x| {
                    b.touches
                        .iter()
                        .filter(move |y| overlaps(x, y))
                        .map(move |_| clean_touch(x))
                })
                .collect();
            if !shared.is_empty() {
                out.push(Finding::warning(
                    "touch-overlap",
                    key(&b.path, "touches"),
                    format!(
                        "{} and {} can run in the same wave and both touch {}",
                        serde_json::to_string(&a.address).unwrap_or_default(),
                        serde_json::to_string(&b.address).unwrap_or_default(),
                        shared.join(", ")
                    ),
                ));
            }
        }
    }
    out
}
