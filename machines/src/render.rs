//! A [`GraphSpec`] drawn for people: parallel edges merged into one labelled edge,
//! an event that every live state takes to one target drawn once (from an "any
//! live state" node), real state names; as Graphviz DOT (petgraph's writer, which
//! escapes), Mermaid (`state "name" as sN`) and an XState machine config.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use petgraph::dot::{Config, Dot, RankDir};
use petgraph::graph::DiGraph;
use petgraph::visit::{EdgeRef as _, NodeRef as _};
use serde::Serialize;

use crate::graph::GraphSpec;

/// Where a drawn edge starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// One state.
    State(&'static str),
    /// Every live (non-terminal) state but the target and, unless
    /// `with_initial`, the initial state.
    AnyLive {
        /// The initial state takes the event too.
        with_initial: bool,
    },
}

/// One drawn edge: `events` (in declaration order) lead from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// Where it starts.
    pub from: Source,
    /// The state it leads to.
    pub to: &'static str,
    /// Every event on it.
    pub events: Vec<&'static str>,
}

/// The DOT graph, node and edge defaults every drawing opens with.
const DOT_DEFAULTS: &str = "    graph [nodesep=0.15 ranksep=0.25]
    node [fontname=\"Helvetica\" fontsize=11 margin=\"0.1,0.03\" height=0.3]
    edge [fontname=\"Helvetica\" fontsize=9 arrowsize=0.6]
";

/// The fewest sources an event needs to be drawn once from "any live state".
const ANY_MIN: usize = 3;

impl Source {
    /// How the "any live state" node reads.
    fn label(self, initial: &str) -> String {
        match self {
            Source::State(s) => s.to_owned(),
            Source::AnyLive { with_initial: true } => "any live state".to_owned(),
            Source::AnyLive {
                with_initial: false,
            } => format!("any live state after {initial}"),
        }
    }
}

impl GraphSpec {
    /// The edges as drawn: an `(event, to)` whose sources are every live state
    /// (but the target, and perhaps the initial state) becomes one edge from "any
    /// live state"; what remains is merged per `(from, to)`.
    pub fn drawing(&self) -> Vec<Drawn> {
        let live: BTreeSet<&str> = self
            .states
            .iter()
            .filter(|s| !s.terminal)
            .map(|s| s.name)
            .collect();
        let mut out: Vec<Drawn> = Vec::new();
        let mut push = |from: Source, to: &'static str, event: &'static str| match out
            .iter_mut()
            .find(|d| d.from == from && d.to == to)
        {
            Some(d) if !d.events.contains(&event) => d.events.push(event),
            Some(_) => {}
            None => out.push(Drawn {
                from,
                to,
                events: vec![event],
            }),
        };
        for e in &self.edges {
            let sources: BTreeSet<&str> = self
                .edges
                .iter()
                .filter(|x| x.event == e.event && x.to == e.to)
                .map(|x| x.from)
                .collect();
            let needed = live
                .iter()
                .filter(|s| **s != e.to && **s != self.initial)
                .all(|s| sources.contains(s));
            if needed && sources.len() >= ANY_MIN {
                let with_initial = sources.contains(self.initial);
                push(Source::AnyLive { with_initial }, e.to, e.event);
            } else {
                push(Source::State(e.from), e.to, e.event);
            }
        }
        out
    }

    /// Graphviz DOT, written (and escaped) by petgraph.
    pub fn to_dot(&self) -> String {
        let drawing = self.drawing();
        let mut g: DiGraph<String, String> = DiGraph::new();
        // Node attributes by index: the start point, the states, the "any" nodes.
        let mut attrs: Vec<&'static str> = Vec::new();
        let start = g.add_node(String::new());
        attrs.push("shape=point width=0.12 height=0.12");
        let mut index = std::collections::HashMap::new();
        for s in &self.states {
            index.insert(Source::State(s.name), g.add_node(s.name.to_owned()));
            attrs.push(if s.terminal {
                "shape=box style=\"rounded,bold\" peripheries=2"
            } else {
                "shape=box style=rounded"
            });
        }
        for d in &drawing {
            if let Source::AnyLive { .. } = d.from {
                index.entry(d.from).or_insert_with(|| {
                    attrs.push("shape=box style=\"rounded,dashed\"");
                    g.add_node(d.from.label(self.initial))
                });
            }
        }
        let mut dashed = Vec::new();
        if let Some(&first) = index.get(&Source::State(self.initial)) {
            g.add_edge(start, first, String::new());
            dashed.push(false);
        }
        for d in &drawing {
            let (Some(&from), Some(&to)) = (index.get(&d.from), index.get(&Source::State(d.to)))
            else {
                continue; // an undeclared state: `defects` names it
            };
            g.add_edge(from, to, d.events.join("\n"));
            dashed.push(matches!(d.from, Source::AnyLive { .. }));
        }
        // Top to bottom, rounded boxes, a smaller type for the edges: the widest
        // graph (ship) stays legible at page width.
        let config = [Config::GraphContentOnly, Config::RankDir(RankDir::TB)];
        let edge = |_, e: petgraph::graph::EdgeReference<'_, String>| {
            if dashed.get(e.id().index()).copied().unwrap_or(false) {
                "style=dashed".to_owned()
            } else {
                String::new()
            }
        };
        let node = |_, n: (petgraph::graph::NodeIndex, &String)| {
            attrs.get(n.id().index()).copied().unwrap_or("").to_owned()
        };
        let dot = Dot::with_attr_getters(&g, &config, &edge, &node);
        format!("digraph {{\n{DOT_DEFAULTS}{dot}}}\n")
    }

    /// A Mermaid `stateDiagram-v2`: states declared by their real names
    /// (`state "checkpoint-authorized" as s2`), edges merged.
    pub fn to_mermaid(&self) -> String {
        let drawing = self.drawing();
        let mut ids: Vec<(Source, String)> = Vec::new();
        let mut s = String::from("stateDiagram-v2\n");
        for (i, st) in self.states.iter().enumerate() {
            let id = format!("s{i}");
            // Writing to a String cannot fail.
            let _ = writeln!(s, "  state \"{}\" as {id}", mermaid_text(st.name));
            ids.push((Source::State(st.name), id));
        }
        let mut any = 0;
        for d in &drawing {
            if matches!(d.from, Source::AnyLive { .. }) && !ids.iter().any(|(f, _)| *f == d.from) {
                let id = format!("any{any}");
                any += 1;
                let _ = writeln!(
                    s,
                    "  state \"{}\" as {id}",
                    mermaid_text(&d.from.label(self.initial))
                );
                ids.push((d.from, id));
            }
        }
        let id = |f: Source| {
            ids.iter()
                .find(|(x, _)| *x == f)
                .map_or("undeclared", |(_, id)| id.as_str())
        };
        let _ = writeln!(s, "  [*] --> {}", id(Source::State(self.initial)));
        for d in &drawing {
            let label: Vec<String> = d.events.iter().map(|e| mermaid_text(e)).collect();
            let _ = writeln!(
                s,
                "  {} --> {}: {}",
                id(d.from),
                id(Source::State(d.to)),
                label.join(", ")
            );
        }
        for st in self.states.iter().filter(|st| st.terminal) {
            let _ = writeln!(s, "  {} --> [*]", id(Source::State(st.name)));
        }
        s
    }

    /// An XState machine config (`createMachine(config)`): every state with its
    /// events (`on: {event: target}`), terminal states `type: final`.
    pub fn to_xstate(&self) -> XstateConfig {
        let states = self
            .states
            .iter()
            .map(|st| {
                let node = if st.terminal {
                    XstateNode::Final {
                        kind: XstateFinal::Final,
                    }
                } else {
                    XstateNode::Live {
                        on: self
                            .edges
                            .iter()
                            .filter(|e| e.from == st.name)
                            .map(|e| (e.event, e.to))
                            .collect(),
                    }
                };
                (st.name, node)
            })
            .collect();
        XstateConfig {
            id: self.machine,
            initial: self.initial,
            states,
        }
    }
}

/// An XState machine config, as `cairn graph M --format xstate` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct XstateConfig {
    /// The machine's name.
    pub id: &'static str,
    /// Its initial state.
    pub initial: &'static str,
    /// Every state by name.
    pub states: BTreeMap<&'static str, XstateNode>,
}

/// One state of an [`XstateConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum XstateNode {
    /// A terminal state: `{"type": "final"}`.
    Final {
        /// `final`.
        #[serde(rename = "type")]
        kind: XstateFinal,
    },
    /// A live state.
    Live {
        /// The state each event leads to.
        on: BTreeMap<&'static str, &'static str>,
    },
}

/// XState's marker of a final state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum XstateFinal {
    /// `final`.
    Final,
}

/// Text Mermaid shows as is: its entity codes for the characters its grammar
/// reads (quotes, the label colon, the statement separator, `#` itself).
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            ':' => out.push_str("#58;"),
            ';' => out.push_str("#59;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{EdgeSpec, StateSpec};

    fn spec(
        edges: &[(&'static str, &'static str, &'static str)],
        terminal: &[&'static str],
    ) -> GraphSpec {
        let mut names: Vec<&'static str> = vec!["a"];
        for (f, _, t) in edges {
            for n in [*f, *t] {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
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
                .iter()
                .map(|&(from, event, to)| EdgeSpec { from, event, to })
                .collect(),
        }
    }

    #[test]
    fn parallel_edges_are_one_labelled_edge() {
        let g = spec(
            &[("a", "go", "b"), ("a", "run", "b"), ("b", "stop", "c")],
            &["c"],
        );
        assert_eq!(
            g.drawing(),
            vec![
                Drawn {
                    from: Source::State("a"),
                    to: "b",
                    events: vec!["go", "run"]
                },
                Drawn {
                    from: Source::State("b"),
                    to: "c",
                    events: vec!["stop"]
                },
            ]
        );
        assert!(
            g.to_mermaid().contains("s0 --> s1: go, run"),
            "{}",
            g.to_mermaid()
        );
        assert!(
            g.to_dot().contains("label = \"go\\lrun\""),
            "{}",
            g.to_dot()
        );
    }

    #[test]
    fn an_event_every_live_state_takes_is_drawn_once() {
        let g = spec(
            &[
                ("a", "go", "b"),
                ("b", "go", "c"),
                ("c", "go", "d"),
                ("b", "quit", "x"),
                ("c", "quit", "x"),
                ("d", "quit", "x"),
                ("d", "done", "e"),
            ],
            &["x", "e"],
        );
        let d = g.drawing();
        assert!(
            d.contains(&Drawn {
                from: Source::AnyLive {
                    with_initial: false
                },
                to: "x",
                events: vec!["quit"]
            }),
            "{d:?}"
        );
        assert_eq!(d.iter().filter(|x| x.events.contains(&"quit")).count(), 1);
        let m = g.to_mermaid();
        assert!(
            m.contains("state \"any live state after a\" as any0"),
            "{m}"
        );
        assert!(m.contains("any0 --> s4: quit"), "{m}");
        // Fewer sources than that stay ordinary edges.
        let small = spec(
            &[("a", "go", "b"), ("b", "quit", "x"), ("a", "quit", "x")],
            &["x"],
        );
        assert!(small
            .drawing()
            .iter()
            .all(|x| matches!(x.from, Source::State(_))));
    }

    #[test]
    fn names_are_shown_as_they_are_and_escaped_where_a_grammar_needs_it() {
        let g = spec(&[("a", "go", "b-\"c\"")], &["b-\"c\""]);
        let m = g.to_mermaid();
        assert!(m.contains("state \"b-#quot;c#quot;\" as s1"), "{m}");
        let dot = g.to_dot();
        assert!(dot.contains(r#"label = "b-\"c\"""#), "{dot}");
        assert!(dot.contains("peripheries=2"), "{dot}");
    }

    #[test]
    fn xstate_lists_every_state_and_event() {
        let g = spec(&[("a", "go", "b"), ("b", "stop", "c")], &["c"]);
        assert_eq!(
            serde_json::to_value(g.to_xstate()).unwrap(),
            serde_json::json!({"id": "t", "initial": "a", "states": {
                "a": {"on": {"go": "b"}},
                "b": {"on": {"stop": "c"}},
                "c": {"type": "final"}
            }})
        );
    }
}
