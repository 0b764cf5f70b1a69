//! Lifecycle and the ready set, from the spec, the nodes whose `done` is recorded
//! (the lifecycle axis: a done node stays done in every session) and the nodes
//! that satisfy a dependency *in the current session* (done, and verified this
//! session: the caller passes only those, so a cached, replayed or other-session
//! result never unblocks anything).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::spec::Spec;

/// The lifecycle axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// `done` was recorded (in this or an earlier session).
    Done,
    /// Dependencies and children done, no open decision.
    Ready,
    /// A dependency or child is not done.
    Blocked,
    /// The spec has open decisions.
    NeedsDecision,
}

/// Why a node is not ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Blocker {
    /// Effective dependencies not done.
    Dependency {
        /// Their addresses.
        addresses: Vec<Vec<String>>,
    },
    /// Children not done.
    Children {
        /// Their addresses.
        addresses: Vec<Vec<String>>,
    },
    /// Open decisions.
    OpenDecision {
        /// Their ids.
        ids: Vec<String>,
    },
}

/// Every node's lifecycle and blockers: `done` are the nodes whose `done` is
/// recorded, `satisfied` those that satisfy a dependency this session (see
/// `node::satisfies_dependents`).
pub fn lifecycles(
    spec: &Spec,
    done: &BTreeSet<Vec<String>>,
    satisfied: &BTreeSet<Vec<String>>,
) -> BTreeMap<Vec<String>, (Lifecycle, Vec<Blocker>)> {
    let mut out = BTreeMap::new();
    for n in &spec.nodes {
        if done.contains(&n.address) {
            out.insert(n.address.clone(), (Lifecycle::Done, vec![]));
            continue;
        }
        let deps: Vec<Vec<String>> = spec
            .effective_deps(&n.address)
            .into_iter()
            .filter(|d| !satisfied.contains(d))
            .collect();
        let children: Vec<Vec<String>> = n
            .children
            .iter()
            .filter(|c| !satisfied.contains(*c))
            .cloned()
            .collect();
        let mut blockers = vec![];
        if !deps.is_empty() {
            blockers.push(Blocker::Dependency { addresses: deps });
        }
        if !children.is_empty() {
            blockers.push(Blocker::Children {
                addresses: children,
            });
        }
        let lifecycle = if !blockers.is_empty() {
            Lifecycle::Blocked
        } else if !spec.open_decisions.is_empty() {
            blockers.push(Blocker::OpenDecision {
                ids: spec.open_decisions.clone(),
            });
            Lifecycle::NeedsDecision
        } else {
            Lifecycle::Ready
        };
        out.insert(n.address.clone(), (lifecycle, blockers));
    }
    out
}

/// The ready set.
pub fn ready_set(
    spec: &Spec,
    done: &BTreeSet<Vec<String>>,
    satisfied: &BTreeSet<Vec<String>>,
) -> Vec<Vec<String>> {
    lifecycles(spec, done, satisfied)
        .into_iter()
        .filter(|(_, (l, _))| *l == Lifecycle::Ready)
        .map(|(a, _)| a)
        .collect()
}
