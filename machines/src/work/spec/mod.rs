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
mod root;
mod schema;
mod shapes;

pub use finding::{render_path, Finding, Seg, Severity};
pub use lineage::{validate_with_draft, Draft};
pub use model::{Criterion, Evidence, Node, Spec, Validation, Worker};
pub use root::{Disposition, DESCRIPTION_MAX, WARNING_CODES};

use std::collections::BTreeSet;

use ids::ids_and_dependencies;
use lints::lints;
use schema::Checker;

/// Validates a workspec document.
pub fn validate(text: &str) -> Validation {
    let (value, mut findings, order) = crate::work::yaml::read_in_order(text);
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
    let mut dispositions = Vec::new();
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
        dispositions = c.root_sections(m);
    }
    let mut findings_ids = ids_and_dependencies(&nodes);
    c.findings.append(&mut findings_ids);
    let errors = c.findings.iter().any(|f| f.severity == Severity::Error);
    if !errors {
        c.findings.extend(lints(&nodes));
        c.findings.extend(root::text_lints(&value));
    }
    findings.append(&mut c.findings);
    root::dispose(&mut findings, &dispositions);
    // Errors first, then warnings; within each, in document order (the place in
    // the document of the deepest part of the path it holds); no duplicates.
    let mut seen = BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.severity, render_path(&f.path))));
    let mut at = std::collections::HashMap::new();
    for (i, p) in order.iter().enumerate() {
        at.entry(render_path(p)).or_insert(i + 1);
    }
    let place = |path: &[Seg]| {
        (0..=path.len())
            .rev()
            .find_map(|n| at.get(&render_path(&path[..n])).copied())
            .unwrap_or(0)
    };
    findings.sort_by_key(|f| (f.severity, place(&f.path)));
    Validation {
        findings,
        spec: Some(Spec {
            nodes,
            open_decisions,
        }),
    }
}
