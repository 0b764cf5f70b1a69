//! What a valid workspec reads into: nodes with their criteria and evidence, the
//! spec with its qualified addresses (lookup, `--node` resolution, effective
//! dependencies), and the validation result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Finding, Seg, Severity};

/// A criterion's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Evidence {
    /// A command cairn runs in the tree.
    Command {
        /// The shell string (`sh -c`).
        run: String,
        /// The expected exit status.
        exit: i64,
        /// The floor: must appear in stdout or stderr.
        output_includes: String,
        /// The timeout.
        timeout_ms: u64,
        /// Environment names passed through.
        inherit_env: Vec<String>,
    },
    /// An agent judge: `agent-unavailable` in v1.
    Agent {
        /// The agent.
        agent: String,
        /// Its rubric.
        rubric: String,
    },
    /// A question for the host user.
    User {
        /// The prompt.
        prompt: String,
    },
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    /// Its id (unique in the spec).
    pub id: String,
    /// Its accepted text.
    pub statement: String,
    /// Its evidence.
    pub evidence: Evidence,
    /// The criterion as written (for the contract hash).
    pub raw: Value,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The qualified address.
    pub address: Vec<String>,
    /// The path of the node in the document.
    pub path: Vec<Seg>,
    /// Sibling ids this node depends on.
    pub depends_on: Vec<String>,
    /// Literal paths the node may write.
    pub touches: Vec<String>,
    /// Criteria.
    pub acceptance: Vec<Criterion>,
    /// Checklist items.
    pub checklist: Vec<String>,
    /// Child addresses.
    pub children: Vec<Vec<String>>,
    /// The task.
    pub task: String,
    /// The worker the node asks for, when it names one.
    #[serde(default)]
    pub worker: Option<Worker>,
}

/// A node's `worker`: every key optional (as in pi-work), each non-empty when given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worker {
    /// A delegate profile (blocked in v1: `worker-profile-unsupported`).
    pub profile: Option<String>,
    /// The delegate agent (default `worker`).
    pub agent: Option<String>,
    /// Skills to load.
    pub skills: Vec<String>,
    /// The model.
    pub model: Option<String>,
}

/// A spec read as far as it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Every node, depth-first.
    pub nodes: Vec<Node>,
    /// The open decision ids.
    pub open_decisions: Vec<String>,
}

impl Spec {
    /// The node at `address`.
    pub fn node(&self, address: &[String]) -> Option<&Node> {
        self.nodes.iter().find(|n| n.address == address)
    }
    /// Resolves `--node`: a JSON address array, or a bare id that must be unique.
    pub fn resolve(&self, selector: &str) -> Result<&Node, String> {
        if selector.starts_with('[') {
            let addr: Vec<String> = serde_json::from_str(selector)
                .map_err(|e| format!("not a JSON array of ids: {e}"))?;
            return self
                .node(&addr)
                .ok_or_else(|| format!("no node at {selector}"));
        }
        let hits: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| n.address.last().is_some_and(|id| id == selector))
            .collect();
        match hits.as_slice() {
            [one] => Ok(one),
            [] => Err(format!("no node has the id `{selector}`")),
            many => Err(format!(
                "the bare id `{selector}` is ambiguous: {}; give the qualified address",
                many.iter()
                    .map(|n| serde_json::to_string(&n.address).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    /// Effective dependencies: own `depends_on` and every ancestor's, as addresses.
    pub fn effective_deps(&self, address: &[String]) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for depth in 1..=address.len() {
            let prefix = &address[..depth];
            if let Some(n) = self.node(prefix) {
                for d in &n.depends_on {
                    let mut a = prefix[..depth - 1].to_vec();
                    a.push(d.clone());
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
        }
        out
    }
}

/// The result of validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// Every finding, errors first.
    pub findings: Vec<Finding>,
    /// The spec, when it could be read (even with errors).
    pub spec: Option<Spec>,
}

impl Validation {
    /// No errors.
    pub fn valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}
