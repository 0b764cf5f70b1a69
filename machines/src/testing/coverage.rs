//! Graph coverage: which declared states a harness reached, which declared edges
//! it took, which predicates refused its commands — and what a test names as
//! unreachable by design, with its reason.

use std::collections::BTreeMap;
use std::fmt;

use crate::GraphSpec;

/// An edge as the graph declares it: `(from, event, to)`.
pub type Edge = (&'static str, &'static str, &'static str);

/// A state or an edge a test declares unreachable by design, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// A declared state no command sequence can reach.
    State {
        /// The state's name in the graph.
        name: &'static str,
        /// Why, in a sentence (e.g. "declared for journals written before rules v2").
        reason: String,
    },
    /// A declared edge no command sequence can take.
    Edge {
        /// The edge.
        edge: Edge,
        /// Why, in a sentence.
        reason: String,
    },
}

/// What a harness covered of a machine's graph. Every declared state and edge is a
/// key from the start (count 0 until reached), so what was missed is visible.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Coverage {
    /// The machine.
    pub machine: &'static str,
    /// Every declared state, with how often a sequence was in it after an event
    /// (the initial state counts once per sequence).
    pub states: BTreeMap<&'static str, u64>,
    /// Every declared edge, with how often an appended event took it.
    pub edges: BTreeMap<Edge, u64>,
    /// Refusals by `(command, predicate)`: what the guards said, and how often.
    pub rejections: BTreeMap<(String, String), u64>,
    /// States reached that the graph does not declare (an invariant already failed).
    pub undeclared_states: BTreeMap<&'static str, u64>,
    /// What the test named unreachable by design.
    pub unreachable: Vec<Unreachable>,
}

impl Coverage {
    /// Nothing covered yet: every state and edge of `graph` at 0.
    pub fn new(graph: &GraphSpec) -> Self {
        Self {
            machine: graph.machine,
            states: graph.states.iter().map(|s| (s.name, 0)).collect(),
            edges: graph
                .edges
                .iter()
                .map(|e| ((e.from, e.event, e.to), 0))
                .collect(),
            ..Self::default()
        }
    }

    /// A sequence was in state `name`.
    pub fn state(&mut self, name: &'static str) {
        match self.states.get_mut(name) {
            Some(n) => *n += 1,
            None => *self.undeclared_states.entry(name).or_insert(0) += 1,
        }
    }

    /// An event took `from --event--> to` (and so reached `to`). An edge the graph
    /// does not declare is not counted here: the harness fails on it as an invariant.
    pub fn edge(&mut self, from: &'static str, event: &'static str, to: &'static str) {
        if let Some(n) = self.edges.get_mut(&(from, event, to)) {
            *n += 1;
        }
        self.state(to);
    }

    /// The guards refused `command` naming `predicate`.
    pub fn rejection(&mut self, command: &str, predicate: &str) {
        *self
            .rejections
            .entry((command.to_owned(), predicate.to_owned()))
            .or_insert(0) += 1;
    }

    /// Adds another run's counts to these.
    pub fn merge(&mut self, other: &Coverage) {
        for (k, n) in &other.states {
            *self.states.entry(k).or_insert(0) += n;
        }
        for (k, n) in &other.edges {
            *self.edges.entry(*k).or_insert(0) += n;
        }
        for (k, n) in &other.rejections {
            *self.rejections.entry(k.clone()).or_insert(0) += n;
        }
        for (k, n) in &other.undeclared_states {
            *self.undeclared_states.entry(k).or_insert(0) += n;
        }
    }

    fn named_state(&self, name: &str) -> bool {
        self.unreachable
            .iter()
            .any(|u| matches!(u, Unreachable::State { name: n, .. } if *n == name))
    }

    fn named_edge(&self, edge: &Edge) -> bool {
        self.unreachable
            .iter()
            .any(|u| matches!(u, Unreachable::Edge { edge: e, .. } if e == edge))
    }

    /// Declared states never reached and not named unreachable.
    pub fn missing_states(&self) -> Vec<&'static str> {
        self.states
            .iter()
            .filter(|(name, n)| **n == 0 && !self.named_state(name))
            .map(|(name, _)| *name)
            .collect()
    }

    /// Declared edges never taken and not named unreachable.
    pub fn missing_edges(&self) -> Vec<Edge> {
        self.edges
            .iter()
            .filter(|(e, n)| **n == 0 && !self.named_edge(e))
            .map(|(e, _)| *e)
            .collect()
    }

    /// What the test named unreachable but a sequence reached after all (the name
    /// is wrong, or the machine changed), or what it named that the graph does
    /// not declare.
    pub fn misnamed(&self) -> Vec<String> {
        let mut out = vec![];
        for u in &self.unreachable {
            match u {
                Unreachable::State { name, .. } => match self.states.get(name) {
                    None => out.push(format!("state `{name}` is not declared by the graph")),
                    Some(n) if *n > 0 => out.push(format!(
                        "state `{name}` is named unreachable but was reached {n} times"
                    )),
                    Some(_) => {}
                },
                Unreachable::Edge { edge, .. } => match self.edges.get(edge) {
                    None => out.push(format!("edge {} is not declared by the graph", show(edge))),
                    Some(n) if *n > 0 => out.push(format!(
                        "edge {} is named unreachable but was taken {n} times",
                        show(edge)
                    )),
                    Some(_) => {}
                },
            }
        }
        out
    }

    /// Every declared state reached and every declared edge taken, save what the
    /// test named unreachable by design (and named rightly).
    pub fn is_complete(&self) -> bool {
        self.missing_states().is_empty()
            && self.missing_edges().is_empty()
            && self.misnamed().is_empty()
    }

    /// The headline: `park: 6/6 states, 13/13 edges (0 named unreachable)`.
    pub fn summary(&self) -> String {
        let reached = self.states.values().filter(|n| **n > 0).count();
        let taken = self.edges.values().filter(|n| **n > 0).count();
        format!(
            "{}: {reached}/{} states, {taken}/{} edges ({} named unreachable), {} refusals by {} predicates",
            self.machine,
            self.states.len(),
            self.edges.len(),
            self.unreachable.len(),
            self.rejections.values().sum::<u64>(),
            self.rejections.len(),
        )
    }
}

/// `from --event--> to`.
pub fn show(edge: &Edge) -> String {
    format!("`{} --{}--> {}`", edge.0, edge.1, edge.2)
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "coverage of {}", self.summary())?;
        writeln!(f, "states:")?;
        for (name, n) in &self.states {
            writeln!(f, "  {name:<28} {n}")?;
        }
        for (name, n) in &self.undeclared_states {
            writeln!(f, "  {name:<28} {n}  (not declared by the graph)")?;
        }
        writeln!(f, "edges:")?;
        for (e, n) in &self.edges {
            writeln!(f, "  {:<60} {n}", format!("{} --{}--> {}", e.0, e.1, e.2))?;
        }
        writeln!(f, "refusals (command: predicate):")?;
        for ((command, predicate), n) in &self.rejections {
            writeln!(f, "  {:<60} {n}", format!("{command}: {predicate}"))?;
        }
        if !self.unreachable.is_empty() {
            writeln!(f, "named unreachable by design:")?;
            for u in &self.unreachable {
                match u {
                    Unreachable::State { name, reason } => {
                        writeln!(f, "  state `{name}`: {reason}")?
                    }
                    Unreachable::Edge { edge, reason } => {
                        writeln!(f, "  edge {}: {reason}", show(edge))?
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EdgeSpec, StateSpec};

    fn graph() -> GraphSpec {
        GraphSpec {
            machine: "t",
            initial: "a",
            states: vec![
                StateSpec {
                    name: "a",
                    terminal: false,
                },
                StateSpec {
                    name: "b",
                    terminal: true,
                },
            ],
            edges: vec![
                EdgeSpec {
                    from: "a",
                    event: "go",
                    to: "b",
                },
                EdgeSpec {
                    from: "a",
                    event: "stay",
                    to: "a",
                },
            ],
        }
    }

    #[test]
    fn an_edge_never_taken_is_missing_until_named() {
        let mut c = Coverage::new(&graph());
        c.state("a");
        c.edge("a", "go", "b");
        assert_eq!(c.missing_edges(), vec![("a", "stay", "a")]);
        assert!(!c.is_complete());
        c.unreachable.push(Unreachable::Edge {
            edge: ("a", "stay", "a"),
            reason: "kept for old journals".into(),
        });
        assert!(c.is_complete(), "{c}");
    }

    #[test]
    fn a_name_that_is_wrong_is_reported() {
        let mut c = Coverage::new(&graph());
        c.state("a");
        c.edge("a", "go", "b");
        c.edge("a", "stay", "a");
        c.unreachable.push(Unreachable::Edge {
            edge: ("a", "stay", "a"),
            reason: "wrong".into(),
        });
        c.unreachable.push(Unreachable::State {
            name: "nowhere",
            reason: "wrong".into(),
        });
        assert_eq!(c.misnamed().len(), 2, "{:?}", c.misnamed());
        assert!(!c.is_complete());
    }

    #[test]
    fn counts_merge_and_the_report_names_everything() {
        let mut c = Coverage::new(&graph());
        c.state("a");
        c.rejection("go", "ready");
        let mut d = Coverage::new(&graph());
        d.edge("a", "go", "b");
        d.rejection("go", "ready");
        c.merge(&d);
        assert_eq!(c.rejections[&("go".into(), "ready".into())], 2);
        let text = c.to_string();
        assert!(text.contains("2/2 states, 1/2 edges"), "{text}");
        assert!(text.contains("a --stay--> a"), "{text}");
        assert!(text.contains("go: ready"), "{text}");
    }
}
