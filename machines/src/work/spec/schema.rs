//! The schema's primitives: closed objects (required and allowed keys), strings
//! and string arrays, each failure a finding with its path.

use serde_json::{Map, Value};

use super::finding::{key, with};
use super::{Finding, Seg};

/// Collects findings while the document is read.
pub(super) struct Checker {
    /// Every finding so far, in the order found.
    pub(super) findings: Vec<Finding>,
}

impl Checker {
    /// Records an error.
    pub(super) fn err(&mut self, code: &str, path: Vec<Seg>, message: impl Into<String>) {
        self.findings.push(Finding::error(code, path, message));
    }

    /// A closed object: required and allowed keys; `None` if not an object.
    pub(super) fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &[Seg],
        required: &[&str],
        optional: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(m) = v.as_object() else {
            self.err("schema-invalid", path.to_vec(), "expected an object");
            return None;
        };
        for r in required {
            if !m.contains_key(*r) {
                self.err(
                    "schema-required",
                    key(path, r),
                    format!("`{r}` is required"),
                );
            }
        }
        for k in m.keys() {
            if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
                self.err(
                    "schema-additional-properties",
                    key(path, k),
                    format!("`{k}` is not a property here"),
                );
            }
        }
        Some(m)
    }

    /// The string at `k`, if present and a string (non-empty when `nonempty`).
    pub(super) fn string(
        &mut self,
        m: &Map<String, Value>,
        path: &[Seg],
        k: &str,
        nonempty: bool,
    ) -> Option<String> {
        match m.get(k)? {
            Value::String(s) if nonempty && s.trim().is_empty() => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must not be empty"),
                );
                None
            }
            Value::String(s) => Some(s.clone()),
            _ => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must be a string"),
                );
                None
            }
        }
    }

    /// The strings of the array at `k` (each non-empty when `nonempty`); empty when absent.
    pub(super) fn strings(
        &mut self,
        m: &Map<String, Value>,
        path: &[Seg],
        k: &str,
        nonempty: bool,
    ) -> Vec<String> {
        let Some(v) = m.get(k) else { return vec![] };
        let Some(a) = v.as_array() else {
            self.err(
                "schema-invalid",
                key(path, k),
                format!("`{k}` must be an array"),
            );
            return vec![];
        };
        let mut out = vec![];
        for (i, x) in a.iter().enumerate() {
            match x {
                Value::String(s) if nonempty && s.trim().is_empty() => self.err(
                    "schema-invalid",
                    with(&key(path, k), Seg::Index(i)),
                    "must not be empty",
                ),
                Value::String(s) => out.push(s.clone()),
                _ => self.err(
                    "schema-invalid",
                    with(&key(path, k), Seg::Index(i)),
                    "must be a string",
                ),
            }
        }
        out
    }

    /// The array at `k`, if present and an array.
    pub(super) fn array<'a>(
        &mut self,
        m: &'a Map<String, Value>,
        path: &[Seg],
        k: &str,
    ) -> Option<&'a Vec<Value>> {
        let v = m.get(k)?;
        match v.as_array() {
            Some(a) => Some(a),
            None => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must be an array"),
                );
                None
            }
        }
    }
}
