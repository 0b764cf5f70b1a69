//! Transition graphs: declared per machine, checked in tests and by the audit,
//! exported as DOT, Mermaid or JSON.

use std::collections::{BTreeSet, HashMap};

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Bfs;
use serde::Serialize;

/// A state node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StateSpec {
    /// Its name, as the machine's `state_name` returns it.
    pub name: &'static str,
    /// True when no event may leave it.
    pub terminal: bool,
}

/// An edge: `event` applied in `from` leads to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EdgeSpec {
    /// The state the event is applied in.
    pub from: &'static str,
    /// The event's type name.
    pub event: &'static str,
    /// The state it leads to.
    pub to: &'static str,
}

/// A machine's transition graph, declared as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GraphSpec {
    /// The machine's name.
    pub machine: &'static str,
    /// The state of a stream with no events.
    pub initial: &'static str,
    /// Every state.
    pub states: Vec<StateSpec>,
    /// Every allowed (state, event, state) triple.
    pub edges: Vec<EdgeSpec>,
}

/// Something wrong with a declared graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "defect", rename_all = "kebab-case")]
#[allow(missing_docs)] // fields: the state, event and source state each variant names
pub enum GraphDefect {
    /// An edge or the initial state names a state that is not declared.
    UndeclaredState { state: &'static str },
    /// A state is declared twice.
    DuplicateState { state: &'static str },
    /// A state cannot be reached from the initial state.
    Unreachable { state: &'static str },
    /// A terminal state has an outgoing edge.
    TerminalExit {
        state: &'static str,
        event: &'static str,
    },
    /// A non-terminal state has no outgoing edge (a dead end that is not declared terminal).
    DeadEnd { state: &'static str },
    /// The same (from, event) pair leads to two different states.
    Ambiguous {
        from: &'static str,
        event: &'static str,
    },
}

impl GraphSpec {
    /// True if `from --event--> to` is a declared edge.
    pub fn has_edge(&self, from: &str, event: &str, to: &str) -> bool {
        self.edges
            .iter()
            .any(|e| e.from == from && e.event == event && e.to == to)
    }

    /// The distinct event names on the edges.
    pub fn event_names(&self) -> Vec<&'static str> {
        let set: BTreeSet<&'static str> = self.edges.iter().map(|e| e.event).collect();
        set.into_iter().collect()
    }

    /// The graph as a petgraph `DiGraph` (nodes: state names, edges: event names).
    pub fn to_petgraph(
        &self,
    ) -> (
        DiGraph<&'static str, &'static str>,
        HashMap<&'static str, NodeIndex>,
    ) {
        let mut g = DiGraph::new();
        let mut index = HashMap::new();
        for s in &self.states {
            index.entry(s.name).or_insert_with(|| g.add_node(s.name));
        }
        for e in &self.edges {
            let from = *index.entry(e.from).or_insert_with(|| g.add_node(e.from));
            let to = *index.entry(e.to).or_insert_with(|| g.add_node(e.to));
            g.add_edge(from, to, e.event);
        }
        (g, index)
    }

    /// Every defect of the declaration; empty for a well-formed graph.
    pub fn defects(&self) -> Vec<GraphDefect> {
        let mut out = Vec::new();
        let mut declared = BTreeSet::new();
        for s in &self.states {
            if !declared.insert(s.name) {
                out.push(GraphDefect::DuplicateState { state: s.name });
            }
        }
        let mut named: Vec<&'static str> = vec![self.initial];
        for e in &self.edges {
            named.push(e.from);
            named.push(e.to);
        }
        let mut reported = BTreeSet::new();
        for n in named {
            if !declared.contains(n) && reported.insert(n) {
                out.push(GraphDefect::UndeclaredState { state: n });
            }
        }
        let (g, index) = self.to_petgraph();
        let mut reachable = BTreeSet::new();
        if let Some(&start) = index.get(self.initial) {
            let mut bfs = Bfs::new(&g, start);
            while let Some(n) = bfs.next(&g) {
                reachable.insert(g[n]);
            }
        }
        for s in &self.states {
            if !reachable.contains(s.name) {
                out.push(GraphDefect::Unreachable { state: s.name });
            }
            let Some(&ix) = index.get(s.name) else {
                continue;
            };
            let exits: Vec<_> = g.edges(ix).collect();
            if s.terminal {
                for e in exits {
                    out.push(GraphDefect::TerminalExit {
                        state: s.name,
                        event: e.weight(),
                    });
                }
            } else if exits.is_empty() {
                out.push(GraphDefect::DeadEnd { state: s.name });
            }
        }
        let mut seen: HashMap<(&str, &str), &str> = HashMap::new();
        for e in &self.edges {
            if let Some(prev) = seen.insert((e.from, e.event), e.to) {
                if prev != e.to {
                    out.push(GraphDefect::Ambiguous {
                        from: e.from,
                        event: e.event,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(
        edges: Vec<(&'static str, &'static str, &'static str)>,
        terminal: &[&'static str],
    ) -> GraphSpec {
        let mut names = BTreeSet::new();
        names.insert("a");
        for (f, _, t) in &edges {
            names.insert(*f);
            names.insert(*t);
        }
        GraphSpec {
            machine: "t",
            initial: "a",
            states: names
                .into_iter()
                .map(|n| StateSpec {
                    name: n,
                    terminal: terminal.contains(&n),
                })
                .collect(),
            edges: edges
                .into_iter()
                .map(|(from, event, to)| EdgeSpec { from, event, to })
                .collect(),
        }
    }

    #[test]
    fn a_sound_graph_has_no_defects() {
        assert_eq!(
            spec(vec![("a", "go", "b"), ("b", "stop", "c")], &["c"]).defects(),
            vec![]
        );
    }

    #[test]
    fn defects_are_named() {
        let mut g = spec(
            vec![
                ("a", "go", "b"),
                ("c", "x", "b"),
                ("b", "go", "a"),
                ("a", "go", "c"),
            ],
            &["b"],
        );
        g.states.push(StateSpec {
            name: "lonely",
            terminal: false,
        });
        let d = g.defects();
        assert!(
            d.contains(&GraphDefect::Unreachable { state: "lonely" }),
            "{d:?}"
        );
        assert!(
            d.contains(&GraphDefect::DeadEnd { state: "lonely" }),
            "{d:?}"
        );
        assert!(
            d.contains(&GraphDefect::TerminalExit {
                state: "b",
                event: "go"
            }),
            "{d:?}"
        );
        assert!(
            d.contains(&GraphDefect::Ambiguous {
                from: "a",
                event: "go"
            }),
            "{d:?}"
        );
    }
}
