//! Writing to stdout: one JSON object per machine-facing verb, or text; and
//! stderr lines, each in one write. A closed pipe (or a full disk) on either is
//! not an error: what was recorded stays recorded and the exit code still says so
//! (`eprintln!` would panic, exit 101, after the journal was written).

use std::io::Write;

use serde::Serialize;

use crate::failure::{ErrorBody, ErrorDocument, Kind};

/// Prints one JSON object, keys sorted at every level, and a newline.
pub fn json<T: Serialize>(value: &T) {
    let render = |v: serde_json::Result<serde_json::Value>| {
        v.and_then(|v| serde_json::to_string(&sorted(v)))
    };
    let text = render(serde_json::to_value(value)).unwrap_or_else(|e| {
        let error = ErrorDocument {
            error: ErrorBody {
                kind: Kind::Internal,
                message: format!("cannot write the answer as JSON: {e}"),
                ..ErrorBody::default()
            },
        };
        render(serde_json::to_value(&error))
            .unwrap_or_else(|_| r#"{"error":{"kind":"internal","message":"unwritable"}}"#.into())
    });
    text_line(&text);
}

/// Prints text as is.
pub fn text(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

fn text_line(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Prints one line on stderr in one write, ignoring a stderr that cannot be
/// written (closed pipe, full disk): the verb's outcome is its exit code and
/// stdout, never a panic.
pub fn stderr_line(line: std::fmt::Arguments<'_>) {
    let mut text = line.to_string();
    text.push('\n');
    stderr_text(&text);
}

/// `n` and `noun`, the noun plural unless `n` is 1: "1 stream", "5 events".
pub fn count(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    let s = if n == "1" { "" } else { "s" };
    format!("{n} {noun}{s}")
}

/// Prints text on stderr as is, ignoring a stderr that cannot be written.
pub fn stderr_text(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Rebuilds every object with its keys in sorted order (whatever map type
/// serde_json was built with).
fn sorted(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
