//! Strict parsing of the park helper's wire documents: every error names the
//! field (a JSON path) and the rule it broke.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Rejection, Violation};

/// A schema, evidence or correlation error in a park document (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    /// A JSON path into the input, e.g. `checks[3].evidence.status`.
    pub field: String,
    /// The stable name of the rule that was broken.
    pub rule: &'static str,
    /// A lower-case human sentence.
    pub message: String,
}

impl InputError {
    pub fn new(field: impl Into<String>, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule,
            message: message.into(),
        }
    }

    /// As a [`Rejection`] of `command` by the park machine in `state`.
    pub fn into_rejection(self, command: &str, state: &str) -> Rejection {
        Rejection::single(
            super::NAME,
            command,
            state,
            Violation::new(
                self.rule,
                Some(&self.field),
                format!("{}: {}", self.field, self.message),
            ),
        )
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.field, self.message, self.rule)
    }
}

pub type Result<T> = std::result::Result<T, InputError>;

/// Joins a path and a key.
pub fn at(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Joins a path and an index.
pub fn idx(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The value as an object whose keys are exactly `required` plus any of `optional`.
pub fn object<'a>(
    v: &'a Value,
    path: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a Map<String, Value>> {
    let map = v.as_object().ok_or_else(|| {
        InputError::new(
            if path.is_empty() { "$" } else { path },
            "type",
            "expected a JSON object",
        )
    })?;
    for key in map.keys() {
        if !required.contains(&key.as_str()) && !optional.contains(&key.as_str()) {
            return Err(InputError::new(
                at(path, key),
                "unknown-field",
                format!("unknown field `{key}`"),
            ));
        }
    }
    for key in required {
        if !map.contains_key(*key) {
            return Err(InputError::new(
                at(path, key),
                "required",
                format!("missing field `{key}`"),
            ));
        }
    }
    Ok(map)
}

/// Deserializes the field `key` of `map` into `T`, naming the path on failure.
pub fn field<T: DeserializeOwned>(map: &Map<String, Value>, path: &str, key: &str) -> Result<T> {
    let v = map.get(key).cloned().unwrap_or(Value::Null);
    typed(v, &at(path, key))
}

/// Deserializes `v` into `T`, naming the path on failure.
pub fn typed<T: DeserializeOwned>(v: Value, path: &str) -> Result<T> {
    serde_json::from_value(v).map_err(|e| InputError::new(path, "type", e.to_string()))
}

/// A non-empty string field.
pub fn nonempty(map: &Map<String, Value>, path: &str, key: &str) -> Result<String> {
    match map.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(InputError::new(
            at(path, key),
            "nonempty-string",
            "expected a non-empty string",
        )),
    }
}

/// An optional non-empty string field (absent or null is `None`).
pub fn opt_nonempty(map: &Map<String, Value>, path: &str, key: &str) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => nonempty(map, path, key).map(Some),
    }
}

/// An argv: a non-empty array of strings.
pub fn argv(map: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<String>> {
    let v: Vec<String> = field(map, path, key)?;
    if v.is_empty() {
        return Err(InputError::new(
            at(path, key),
            "argv",
            "expected a non-empty argv array",
        ));
    }
    Ok(v)
}

/// Parses stdin text as exactly one JSON document.
pub fn parse_document(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        InputError::new(
            format!("$ (line {}, column {})", e.line(), e.column()),
            "json",
            format!("not one JSON document: {e}"),
        )
    })
}

/// True for `http://` or `https://` URLs with a host and no whitespace.
pub fn is_http_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("https://") {
        r
    } else if let Some(r) = lower.strip_prefix("http://") {
        r
    } else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or("");
    !host.is_empty()
        && !host.starts_with(':')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// 40 or 64 lower-case hex digits: a full git object id.
pub fn is_full_git_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A full jj change id: 32 characters of jj's `k`–`z` alphabet.
pub fn is_full_jj_change(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| (b'k'..=b'z').contains(&b))
}

/// An absolute, normalised path: starts with `/`, no `.`/`..`/empty segments, no trailing `/`.
pub fn is_normal_abs_path(s: &str) -> bool {
    if s == "/" {
        return true;
    }
    s.starts_with('/')
        && !s.ends_with('/')
        && s[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && !s.chars().any(|c| c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_ids_paths() {
        assert!(is_http_url("https://github.com/o/r/pull/1"));
        assert!(is_http_url("HTTP://example.com"));
        for bad in [
            "",
            "github.com/o/r",
            "ftp://x",
            "https://",
            "https:///x",
            "https://a b",
            "https://:80/x",
        ] {
            assert!(!is_http_url(bad), "{bad}");
        }
        assert!(is_full_git_id(&"a".repeat(40)) && is_full_git_id(&"0".repeat(64)));
        assert!(!is_full_git_id(&"A".repeat(40)) && !is_full_git_id("abc123"));
        assert!(is_full_jj_change(&"k".repeat(32)) && !is_full_jj_change(&"a".repeat(32)));
        assert!(is_normal_abs_path("/work/repo") && is_normal_abs_path("/"));
        for bad in ["work", "/work/", "/a/../b", "/a//b", "/a/./b"] {
            assert!(!is_normal_abs_path(bad), "{bad}");
        }
    }
}
