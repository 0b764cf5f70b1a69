//! The work verbs that write nothing: `validate`, `ready`, `status`.

use cairn::machines::work::node::{provenance, WorkNode};
use cairn::machines::work::ready::{lifecycles, Lifecycle};
use cairn::machines::work::spec::{render_path, validate_with_draft, Severity};
use cairn::Machine;
use serde_json::json;

use super::scope::read_draft;
use super::view::{NodeStatus, NotReady, ReadyView, SpecError, SpecFinding, StatusView, Validated};
use super::{load, read_spec, read_spec_to_read, standing, stream, valid_spec};
use crate::failure::{Done, Failure};
use crate::output;
use crate::record::Recorder;

/// Every finding with its stable code and path; exit 2 when the spec has an error.
pub fn validate(spec: &str) -> Result<Done, Failure> {
    let f = read_spec(spec, None)?;
    let v = validate_with_draft(&f.text, &read_draft(&f));
    let findings: Vec<SpecFinding> = v
        .findings
        .iter()
        .map(|x| SpecFinding {
            code: json!(x.code),
            severity: json!(x.severity),
            path: render_path(&x.path),
            message: x.message.clone(),
            rendered: x.render(),
            disposition: x.disposition.as_ref().map(|d| json!(d)),
        })
        .collect();
    let errors = v
        .findings
        .iter()
        .filter(|x| x.severity == Severity::Error)
        .count();
    let error = v
        .findings
        .iter()
        .find(|x| x.severity == Severity::Error)
        .map(|first| SpecError {
            kind: "invalid-spec",
            field: render_path(&first.path),
            rule: json!(first.code),
            message: first.message.clone(),
        });
    output::json(&Validated {
        path: json!(f.path),
        valid: v.valid(),
        error_count: errors,
        warning_count: v.findings.len() - errors,
        findings,
        error,
    });
    Ok(if v.valid() { Done::Ok } else { Done::Invalid })
}

/// The ready set, and every other node's lifecycle and blockers.
pub fn ready(rec: &Recorder, spec: &str, session: &str) -> Result<Done, Failure> {
    let f = read_spec_to_read(spec, rec)?;
    let s = valid_spec(&f)?;
    let e = rec.existing_engine()?;
    let (done, satisfied) = standing(&e, &f, &s, session)?;
    let lc = lifecycles(&s, &done, &satisfied);
    let ready: Vec<Vec<String>> = lc
        .iter()
        .filter(|(_, (l, _))| *l == Lifecycle::Ready)
        .map(|(a, _)| a.clone())
        .collect();
    let not_ready: Vec<NotReady> = lc
        .iter()
        .filter(|(_, (l, _))| *l != Lifecycle::Ready)
        .map(|(a, (l, b))| NotReady {
            address: a.clone(),
            lifecycle: json!(l),
            blockers: json!(b),
        })
        .collect();
    output::json(&ReadyView {
        spec: json!(f.path),
        session: session.to_owned(),
        ready,
        not_ready,
    });
    Ok(Done::Ok)
}

/// Every node's lifecycle, blockers and verification provenance.
pub fn status(rec: &Recorder, spec: &str, session: &str) -> Result<Done, Failure> {
    let f = read_spec_to_read(spec, rec)?;
    let s = valid_spec(&f)?;
    let e = rec.existing_engine()?;
    let (done, satisfied) = standing(&e, &f, &s, session)?;
    let lc = lifecycles(&s, &done, &satisfied);
    let mut nodes = vec![];
    for n in &s.nodes {
        let state = load(&e, &stream(&f, &n.address)?)?;
        let p = provenance(state.run(), n, session);
        let (lifecycle, blockers) = &lc[&n.address];
        // The last verification is the proof (captured output, containment, tree
        // watch) the provenance speaks of.
        let last = state.run().and_then(|r| r.verifications.last());
        nodes.push(NodeStatus {
            address: n.address.clone(),
            lifecycle: json!(lifecycle),
            blockers: json!(blockers),
            verification: json!(p),
            verification_words: json!(p.words()),
            containment: last.map_or(json!([]), super::verify::containment),
            proof: json!(last),
            stage: WorkNode::state_name(&state),
            reviews: state.run().map(|r| r.reviews.len()).unwrap_or(0),
        });
    }
    let ready: Vec<Vec<String>> = lc
        .iter()
        .filter(|(_, (l, _))| *l == Lifecycle::Ready)
        .map(|(a, _)| a.clone())
        .collect();
    output::json(&StatusView {
        spec: json!(f.path),
        session: session.to_owned(),
        ready,
        nodes,
    });
    Ok(Done::Ok)
}
