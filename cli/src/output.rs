//! Writing to stdout: one JSON object per machine-facing verb, or text. A closed
//! pipe is not an error.

use std::io::Write;

use serde::Serialize;

/// Prints one JSON object and a newline.
pub fn json<T: Serialize>(value: &T) {
    let text = match serde_json::to_string(value) {
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
