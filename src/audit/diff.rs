//! The field-level difference between the events a transition recorded and the
//! events re-deciding it yields: what an auditor reads in a `redecide-mismatch`.

use cairn_machines::RawEvent;
use serde::Serialize;
use serde_json::{json, Value};

/// One field that differs. `path` is a JSON path into the list of events, written
/// as the input errors write theirs (`[0].payload.head`, `[1].event_type`); a side
/// without the field has no value (absent, not `null`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FieldDiff {
    /// Where, in the list of events.
    pub path: String,
    /// The value in the journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Value>,
    /// The value re-deciding yields today.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redecided: Option<Value>,
}

/// Every field where `redecided` and `recorded` differ, in event order then in
/// the payload's key order (sorted).
pub fn events(recorded: &[RawEvent], redecided: &[RawEvent]) -> Vec<FieldDiff> {
    let as_value = |e: &RawEvent| {
        json!({
            "event_type": e.event_type,
            "schema_version": e.schema_version,
            "payload": e.payload,
        })
    };
    let mut out = Vec::new();
    for i in 0..recorded.len().max(redecided.len()) {
        let path = format!("[{i}]");
        let r = recorded.get(i).map(as_value);
        let d = redecided.get(i).map(as_value);
        values(&path, r.as_ref(), d.as_ref(), &mut out);
    }
    out
}

/// Appends the differences between `recorded` and `redecided` at `path`.
fn values(
    path: &str,
    recorded: Option<&Value>,
    redecided: Option<&Value>,
    out: &mut Vec<FieldDiff>,
) {
    match (recorded, redecided) {
        (Some(Value::Object(r)), Some(Value::Object(d))) => {
            let mut keys: Vec<&String> = r.keys().chain(d.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                values(&member(path, k), r.get(k), d.get(k), out);
            }
        }
        (Some(Value::Array(r)), Some(Value::Array(d))) => {
            for i in 0..r.len().max(d.len()) {
                values(&format!("{path}[{i}]"), r.get(i), d.get(i), out);
            }
        }
        (r, d) if r == d => {}
        (r, d) => out.push(FieldDiff {
            path: path.to_owned(),
            recorded: r.cloned(),
            redecided: d.cloned(),
        }),
    }
}

/// `path.key`, or `path["key"]` when the key is not a plain name.
fn member(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::from(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: &str, payload: Value) -> RawEvent {
        RawEvent {
            event_type: t.into(),
            schema_version: 1,
            payload,
        }
    }

    #[test]
    fn names_each_differing_field_with_both_values() {
        let recorded = [
            ev(
                "commented",
                json!({"text": "done", "by": ["a", "b"], "n": 1}),
            ),
            ev("closed", json!({})),
        ];
        let redecided = [ev(
            "commented",
            json!({"text": "on it", "by": ["a"], "n": 1, "odd key": true}),
        )];
        let d = events(&recorded, &redecided);
        let got: Vec<(&str, Option<&Value>, Option<&Value>)> = d
            .iter()
            .map(|f| (f.path.as_str(), f.recorded.as_ref(), f.redecided.as_ref()))
            .collect();
        assert_eq!(
            got,
            [
                ("[0].payload.by[1]", Some(&json!("b")), None),
                ("[0].payload[\"odd key\"]", None, Some(&json!(true))),
                (
                    "[0].payload.text",
                    Some(&json!("done")),
                    Some(&json!("on it"))
                ),
                (
                    "[1]",
                    Some(&json!({"event_type": "closed", "schema_version": 1, "payload": {}})),
                    None
                ),
            ]
        );
        assert!(events(&recorded, &recorded).is_empty());
        // A value that changes type is one difference at its path.
        let d = events(
            &[ev("x", json!({"a": {"b": 1}}))],
            &[ev("x", json!({"a": 2}))],
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "[0].payload.a");
    }
}
