//! Criterion lineage: every criterion's text is the retained source draft's, or
//! the end of a valid amendment chain from it.

use super::finding::{key, with};
use super::{validate, Criterion, Finding, Node, Seg, Severity, Validation};

/// What is known of the source draft a spec declares on its first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Draft {
    /// The spec declares no draft: no lineage to check.
    NotDeclared,
    /// Declared, but absent, escaping the tree, or unreadable.
    Unavailable,
    /// Its text.
    Text(String),
}

/// [`validate`], plus criterion lineage against the retained source draft: every
/// criterion's text is the draft's, or the end of a valid amendment chain from it.
pub fn validate_with_draft(text: &str, draft: &Draft) -> Validation {
    let mut v = validate(text);
    let Some(spec) = v.spec.as_ref() else {
        return v;
    };
    if v.findings.iter().any(|f| f.severity == Severity::Error) {
        return v;
    }
    let criteria: Vec<(&Node, usize, &Criterion)> = spec
        .nodes
        .iter()
        .flat_map(|n| n.acceptance.iter().enumerate().map(move |(i, c)| (n, i, c)))
        .collect();
    let mut lineage = vec![];
    match draft {
        Draft::NotDeclared => {}
        Draft::Unavailable if !criteria.is_empty() => lineage.push(Finding::error(
            "criterion-draft-unavailable",
            vec![],
            "the retained source draft is absent or unreadable: restore it or correct the visible path",
        )),
        Draft::Unavailable => {}
        Draft::Text(d) => match crate::work::amend::draft_criteria(d) {
            Err(m) => lineage.push(Finding::error("criterion-draft-invalid", vec![], m)),
            Ok(drafted) => {
                for (n, i, c) in &criteria {
                    let cp = with(&key(&n.path, "acceptance"), Seg::Index(*i));
                    match drafted.get(&c.id) {
                        None => lineage.push(Finding::error(
                            "criterion-draft-criterion-missing",
                            key(&cp, "id"),
                            format!("`{}` is not in the draft", c.id),
                        )),
                        Some(dt) => {
                            let chain: Vec<crate::work::amend::Amendment> = c
                                .raw
                                .get("amendments")
                                .cloned()
                                .and_then(|a| serde_json::from_value(a).ok())
                                .unwrap_or_default();
                            if let Err(code) = crate::work::amend::check_chain(&c.id, dt, &chain, &c.statement) {
                                lineage.push(Finding::error(code, key(&cp, "statement"), format!("`{}`'s text does not follow from the draft through its amendment chain", c.id)));
                            }
                        }
                    }
                }
                for id in drafted.keys() {
                    if !criteria.iter().any(|(_, _, c)| &c.id == id) {
                        lineage.push(Finding::error(
                            "criterion-draft-criterion-unassigned",
                            vec![],
                            format!("the draft's `{id}` is owned by no node"),
                        ));
                    }
                }
            }
        },
    }
    lineage.append(&mut v.findings);
    lineage.sort_by_key(|f| f.severity);
    v.findings = lineage;
    v
}
