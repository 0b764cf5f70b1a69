//! The work verbs that write nothing: `validate`, `ready`, `status`.

use cairn::machines::work::node::{provenance, WorkNode};
use cairn::machines::work::ready::{lifecycles, Lifecycle};
use cairn::machines::work::spec::{render_path, validate_with_draft, Severity};
use cairn::Machine;
use serde_json::{json, Value};

use super::scope::read_draft;
use super::{load, read_spec, standing, stream, valid_spec};
use crate::failure::{Done, Failure};
use crate::output;
use crate::record::Recorder;

/// Every finding with its stable code and path; exit 2 when the spec has an error.
pub fn validate(spec: &str) -> Result<Done, Failure> {
    let f = read_spec(spec)?;
    let v = validate_with_draft(&f.text, &read_draft(&f));
    let findings: Vec<Value> = v
        .findings
        .iter()
        .map(|x| {
            let mut f = json!({"code": x.code, "severity": x.severity, "path": render_path(&x.path), "message": x.message, "rendered": x.render()});
            if let Some(d) = &x.disposition {
                f["disposition"] = json!(d);
            }
            f
        })
        .collect();
    let errors = v
        .findings
        .iter()
        .filter(|x| x.severity == Severity::Error)
        .count();
    let mut out = json!({
        "path": f.path,
        "valid": v.valid(),
        "errorCount": errors,
        "warningCount": v.findings.len() - errors,
        "findings": findings,
    });
    if let Some(first) = v.findings.iter().find(|x| x.severity == Severity::Error) {
        out["error"] = json!({"kind": "invalid-spec", "field": render_path(&first.path), "rule": first.code, "message": first.message});
    }
    output::json(&out);
    Ok(if v.valid() { Done::Ok } else { Done::Invalid })
}

/// The ready set, and every other node's lifecycle and blockers.
pub fn ready(rec: &Recorder, spec: &str, session: &str) -> Result<Done, Failure> {
    let f = read_spec(spec)?;
    let s = valid_spec(&f)?;
    let e = rec.existing_engine()?;
    let (done, satisfied) = standing(&e, &f, &s, session)?;
    let lc = lifecycles(&s, &done, &satisfied);
    let ready: Vec<&Vec<String>> = lc
        .iter()
        .filter(|(_, (l, _))| *l == Lifecycle::Ready)
        .map(|(a, _)| a)
        .collect();
    let others: Vec<Value> = lc
        .iter()
        .filter(|(_, (l, _))| *l != Lifecycle::Ready)
        .map(|(a, (l, b))| json!({"address": a, "lifecycle": l, "blockers": b}))
        .collect();
    output::json(&json!({"spec": f.path, "session": session, "ready": ready, "not_ready": others}));
    Ok(Done::Ok)
}

/// Every node's lifecycle, blockers and verification provenance.
pub fn status(rec: &Recorder, spec: &str, session: &str) -> Result<Done, Failure> {
    let f = read_spec(spec)?;
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
        nodes.push(json!({
            "address": n.address,
            "lifecycle": lifecycle,
            "blockers": blockers,
            "verification": p,
            "verification_words": p.words(),
            "containment": last.map_or(json!([]), super::verify::containment),
            "proof": last,
            "stage": WorkNode::state_name(&state),
            "reviews": state.run().map(|r| r.reviews.len()).unwrap_or(0),
        }));
    }
    let ready: Vec<&Vec<String>> = lc
        .iter()
        .filter(|(_, (l, _))| *l == Lifecycle::Ready)
        .map(|(a, _)| a)
        .collect();
    output::json(&json!({"spec": f.path, "session": session, "ready": ready, "nodes": nodes}));
    Ok(Done::Ok)
}
