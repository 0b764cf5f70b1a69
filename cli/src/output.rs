//! Writing to stdout: one JSON object per machine-facing verb, or text. A closed
//! pipe is not an error.

use std::io::Write;

use serde::Serialize;

/// Prints one JSON object, keys sorted at every level, and a newline.
pub fn json<T: Serialize>(value: &T) {
    let text = match serde_json::to_value(value).and_then(|v| serde_json::to_string(&sorted(v))) {
        Ok(t) => t,
        Err(e) => format!(
            "{{\"error\":{{\"kind\":\"internal\",\"message\":{}}}}}",
            serde_json::Value::String(e.to_string())
        ),
    };
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
