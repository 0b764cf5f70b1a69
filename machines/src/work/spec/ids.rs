//! Ids and dependencies: duplicate ids, self and unresolved dependencies, and
//! cycles found with petgraph's strongly connected components.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::graph::{DiGraph, NodeIndex};

use super::finding::{key, with};
use super::{Finding, Node, Seg};

/// Sibling ids unique, dependencies resolved among siblings and acyclic (a cycle
/// named in dependency order), criterion ids unique in the spec.
pub(super) fn ids_and_dependencies(nodes: &[Node]) -> Vec<Finding> {
    let mut out = vec![];
    // Siblings: grouped by parent address.
    let mut groups: BTreeMap<Vec<String>, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        groups
            .entry(n.address[..n.address.len() - 1].to_vec())
            .or_default()
            .push(n);
    }
    for siblings in groups.values() {
        let mut seen = BTreeSet::new();
        for n in siblings {
            let id = n.address.last().cloned().unwrap_or_default();
            if !seen.insert(id.clone()) {
                out.push(Finding::error(
                    "duplicate-node-id",
                    key(&n.path, "id"),
                    format!("`{id}` is already the id of a sibling"),
                ));
            }
        }
        // A deterministic graph (no hashing): node i is sibling i.
        let mut g: DiGraph<usize, ()> = DiGraph::new();
        for i in 0..siblings.len() {
            g.add_node(i);
        }
        for (i, n) in siblings.iter().enumerate() {
            let id = n.address.last().cloned().unwrap_or_default();
            for (j, d) in n.depends_on.iter().enumerate() {
                let dp = with(&key(&n.path, "depends_on"), Seg::Index(j));
                if *d == id {
                    out.push(Finding::error(
                        "dependency-self",
                        dp,
                        format!("`{id}` depends on itself"),
                    ));
                    continue;
                }
                match siblings.iter().position(|s| s.address.last() == Some(d)) {
                    Some(k) => {
                        g.add_edge(NodeIndex::new(i), NodeIndex::new(k), ());
                    }
                    None => out.push(Finding::error(
                        "dependency-unresolved",
                        dp,
                        format!("`{d}` is not a sibling of `{id}`"),
                    )),
                }
            }
        }
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() < 2 {
                continue;
            }
            let mut members: Vec<usize> = scc.iter().map(|x| x.index()).collect();
            members.sort_unstable();
            let first = siblings[members[0]];
            // Name the cycle in dependency order, starting at its first member.
            let mut cycle = vec![members[0]];
            let mut at = members[0];
            while cycle.len() <= members.len() {
                let next = g
                    .neighbors(NodeIndex::new(at))
                    .map(|x| x.index())
                    .filter(|n| members.contains(n))
                    .min();
                match next {
                    Some(n) if n == members[0] => {
                        cycle.push(n);
                        break;
                    }
                    Some(n) if !cycle.contains(&n) => {
                        cycle.push(n);
                        at = n;
                    }
                    _ => break,
                }
            }
            let names: Vec<String> = cycle
                .iter()
                .map(|i| siblings[*i].address.last().cloned().unwrap_or_default())
                .collect();
            out.push(Finding::error(
                "dependency-cycle",
                key(&first.path, "depends_on"),
                format!("dependency cycle: {}", names.join(" → ")),
            ));
        }
    }
    let mut criteria = BTreeSet::new();
    for n in nodes {
        for (i, c) in n.acceptance.iter().enumerate() {
            if !criteria.insert(c.id.clone()) {
                out.push(Finding::error(
                    "duplicate-criterion-id",
                    with(
                        &with(&key(&n.path, "acceptance"), Seg::Index(i)),
                        Seg::Key("id".into()),
                    ),
                    format!("`{}` is already a criterion id in this spec", c.id),
                ));
            }
        }
    }
    out
}
