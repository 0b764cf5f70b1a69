//! The workspec: its schema (closed objects, exactly one node shape), ids and
//! dependencies (a cycle is named), `touches` without globs, the lints, and
//! qualified node addresses. Every finding has a stable code and a path into the
//! document (`$.work[0].depends_on`).
//!
//! By file: `finding` (codes, severities, paths), `model` (what a valid spec
//! reads into, and its addresses), `schema` and `shapes` (closed objects, node and
//! criterion shapes), `ids` (ids and dependencies), `lints`, `lineage` (criteria
//! against the draft). [`validate`] runs them in that order.

mod finding;
mod ids;
mod lineage;
mod lints;
mod model;
mod schema;
mod shapes;

pub use finding::{render_path, Finding, Seg, Severity};
pub use lineage::{validate_with_draft, Draft};
pub use model::{Criterion, Evidence, Node, Spec, Validation, Worker};

use std::collections::BTreeSet;

use ids::ids_and_dependencies;
use lints::lints;
use schema::Checker;

/// Validates a workspec document.
pub fn validate(text: &str) -> Validation {
    let (value, mut findings) = crate::work::yaml::read(text);
    let Some(value) = value else {
        return Validation {
            findings,
            spec: None,
        };
    };
    let mut c = Checker { findings: vec![] };
    let root = c.object(
        &value,
        &[],
        &["title", "description", "intent", "work"],
        &[
            "links",
            "corrects",
            "supersedes",
            "open_decisions",
            "advisory_dispositions",
        ],
    );
    let mut nodes = Vec::new();
    let mut open_decisions = Vec::new();
    if let Some(m) = root {
        for k in ["title", "description", "intent"] {
            c.string(m, &[], k, false);
        }
        if let Some(work) = c.array(m, &[], "work") {
            for (i, n) in work.iter().enumerate() {
                c.node(
                    n,
                    &[Seg::Key("work".into()), Seg::Index(i)],
                    &[],
                    &mut nodes,
                );
            }
        }
        if let Some(ods) = c.array(m, &[], "open_decisions") {
            for (i, d) in ods.iter().enumerate() {
                let p = vec![Seg::Key("open_decisions".into()), Seg::Index(i)];
                if let Some(dm) = c.object(d, &p, &["id", "decides"], &["question", "tripwire"]) {
                    if let Some(id) = c.string(dm, &p, "id", true) {
                        open_decisions.push(id);
                    }
                    c.string(dm, &p, "decides", true);
                }
            }
        }
        for k in ["links", "corrects", "supersedes", "advisory_dispositions"] {
            c.array(m, &[], k);
        }
    }
    let mut findings_ids = ids_and_dependencies(&nodes);
    c.findings.append(&mut findings_ids);
    let errors = c.findings.iter().any(|f| f.severity == Severity::Error);
    if !errors {
        c.findings.extend(lints(&nodes));
    }
    findings.append(&mut c.findings);
    // Errors first, then warnings; stable within each; no duplicates.
    let mut seen = BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.severity, render_path(&f.path))));
    findings.sort_by_key(|f| f.severity);
    Validation {
        findings,
        spec: Some(Spec {
            nodes,
            open_decisions,
        }),
    }
}
