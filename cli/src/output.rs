//! Writing to stdout: one JSON object per machine-facing verb, or text; and
//! stderr lines, each in one write. A closed pipe (or a full disk) on either is
//! not an error: what was recorded stays recorded and the exit code still says so
//! (`eprintln!` would panic, exit 101, after the journal was written).

use std::borrow::Cow;
use std::io::Write;

use cairn::machines::evidence::names::is_invisible;
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
    text_line(&json_visible(&text));
}

/// Compact JSON with every character a person cannot see written as a `\u`
/// escape: the same document, but a name read from a journal (a bidirectional
/// override, an escape sequence, a zero-width space) cannot reach a terminal
/// as itself. serde_json writes controls below U+0020 escaped already and no
/// whitespace between tokens, so every other such character is inside a string.
fn json_visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_invisible(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every character a person cannot see (controls, line breaks, tabs,
/// bidirectional and zero-width characters, …) shown as its code point, `\u{1b}`:
/// what a human table or report prints of a name or value read from a journal,
/// which a damaged or hand-made file can fill with anything. A line break in a
/// name would otherwise start a forged row, an escape sequence drive the
/// terminal. A backslash the text itself puts where it would read as part of
/// an escape (before `u{`, before an invisible character, or before another
/// backslash in text that has either) is shown doubled, so the text `\u{202e}`
/// never reads as the character (helper-90, helper-91: [`escape_follows`]).
/// The JSON formats carry the exact text.
pub fn visible(s: &str) -> Cow<'_, str> {
    shown(s, true)
}

/// `s` with each character a person cannot see as its code point, and with
/// `backslashes`, a backslash before `u{` doubled ([`visible`]). Without, the
/// text is taken to be shown already: what [`human`] checks a whole rendered
/// view with, so a value escaped once is not escaped again.
fn shown(s: &str, backslashes: bool) -> Cow<'_, str> {
    use std::fmt::Write;
    let escapes = s.chars().any(is_invisible) || (backslashes && s.contains("\\u{"));
    // (A backslash before another or before an invisible character is doubled
    // too; the second case is caught by the first test, the first needs a `u{`
    // after it to matter.)
    if !escapes {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (i, c) in s.char_indices() {
        if is_invisible(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else if backslashes && c == '\\' && escape_follows(&s[i + 1..]) {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// What follows a backslash makes it read as part of an escape: `u{`, an
/// invisible character (shown as `\u{…}`), or another backslash (which may
/// begin one). Such a backslash is shown doubled, so `a\` then U+202E and the
/// text `a\u{202e}` never print alike (helper-91).
fn escape_follows(rest: &str) -> bool {
    rest.starts_with("u{")
        || rest.starts_with('\\')
        || rest.chars().next().is_some_and(is_invisible)
}

/// Prints a human view (a table, a report, a graph) whose values its renderer
/// showed [`visible`], with every character a person cannot see but the line
/// break shown as its code point: the last guard behind each renderer's own.
pub fn human(s: &str) {
    let shown: Vec<Cow<'_, str>> = s.split('\n').map(|l| shown(l, false)).collect();
    text(&shown.join("\n"));
}

/// Raw text of several lines, each line [`visible`].
pub fn lines_visible(s: &str) -> String {
    let shown: Vec<Cow<'_, str>> = s.split('\n').map(visible).collect();
    shown.join("\n")
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
/// stdout, never a panic. It is one line: what it names (a path, a stream, a
/// caller's value) is shown [`visible`], a line break in it too (helper-90: a
/// stream name holding one printed a forged `cairn: …` line).
pub fn stderr_line(line: std::fmt::Arguments<'_>) {
    let mut text = visible(&line.to_string()).into_owned();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaped document reads back as the same value, an invisible
    /// character past U+FFFF written as its surrogate pair.
    #[test]
    fn invisible_characters_in_json_are_escaped_and_read_back_the_same() {
        let v = serde_json::json!({"a\u{202e}": ["x\u{200b}\u{e0041}\u{f0000}y", "plain é"]});
        let text = serde_json::to_string(&v).unwrap();
        let shown = json_visible(&text);
        assert_eq!(
            shown,
            r#"{"a\u202e":["x\u200b\udb40\udc41\udb80\udc00y","plain é"]}"#
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            v
        );
        assert!(matches!(json_visible("{\"a\":1}"), Cow::Borrowed(_)));
    }

    #[test]
    fn visible_shows_code_points() {
        assert_eq!(
            visible("a\n\u{1b}[0m\u{202e}b"),
            "a\\u{a}\\u{1b}[0m\\u{202e}b"
        );
        assert!(matches!(visible("plain é \\ \\n"), Cow::Borrowed(_)));
        // The text of an escape is not the escape.
        assert_eq!(visible("x\\u{202e}y"), "x\\\\u{202e}y");
        assert_eq!(visible("\u{202e}\\u{202e}"), "\\u{202e}\\\\u{202e}");
        // A backslash before the character, or before a backslash that begins
        // the text of an escape: never shown as the other.
        assert_eq!(visible("a\\\u{202e}"), "a\\\\\\u{202e}");
        assert_ne!(visible("a\\\u{202e}"), visible("a\\u{202e}"));
        assert_eq!(visible("a\\\\u{41}"), "a\\\\\\\\u{41}");
        assert_ne!(visible("a\\\\u{41}"), visible("a\\u{41}"));
    }
}
