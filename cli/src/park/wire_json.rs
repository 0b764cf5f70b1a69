//! The park helper's stdout bytes: one JSON object as Python's
//! `json.dump(obj, sort_keys=True)` writes it — keys sorted at every level, `", "`
//! between items and `": "` after keys, every character outside printable ASCII
//! escaped as `\uXXXX` (lower-case hex; astral characters as a surrogate pair),
//! floats as Python's `repr` — then a newline. Only the park verbs print this way;
//! every other verb keeps cairn's compact JSON.

use serde::Serialize;
use serde_json::{Number, Value};

use crate::output;

/// Prints `value` as the helper prints its answer, and a newline.
pub fn print<T: Serialize>(value: &T) {
    let mut text = match serde_json::to_value(value) {
        Ok(v) => to_string(&v),
        // Unreachable for the park answers (plain structs of strings, bools and
        // JSON values); still one JSON object rather than a panic.
        Err(e) => to_string(&serde_json::json!({
            "error": {"kind": "internal", "message": e.to_string()}
        })),
    };
    text.push('\n');
    output::text(&text);
}

/// `value` in the helper's bytes (no trailing newline).
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value);
    out
}

fn write(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Python sorts keys by code point: the same order as UTF-8 bytes.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                string(out, key);
                out.push_str(": ");
                write(out, item);
            }
            out.push('}');
        }
    }
}

/// A JSON string with `ensure_ascii`: printable ASCII as is, the short escapes
/// Python uses, everything else `\uXXXX`.
fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// An integer as is; a float as Python's `repr`: the shortest round-trip digits,
/// positional from 1e-4 up to 1e16 (with `.0` when whole), else `d.ddde±XX`.
fn number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as Python's repr does.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        if exp < 0 {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            return format!("{sign}0.{zeros}{digits}");
        }
        let whole = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= whole {
            let zeros = "0".repeat(whole - digits.len());
            return format!("{sign}{digits}{zeros}.0");
        }
        return format!("{sign}{}.{}", &digits[..whole], &digits[whole..]);
    }
    let mantissa = if digits.len() == 1 {
        digits.clone()
    } else {
        format!("{}.{}", &digits[..1], &digits[1..])
    };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{mantissa}e{exp_sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::to_string;

    /// Each input, and what `python3 -c 'import json,sys;
    /// print(json.dumps(json.loads(sys.stdin.read()), sort_keys=True))'` printed for it.
    const PYTHON: &[(&str, &str)] = &[
        (r#"{"valid":true}"#, r#"{"valid": true}"#),
        (r#"{"b":[],"a":{},"c":[{}, []]}"#, r#"{"a": {}, "b": [], "c": [{}, []]}"#),
        (r#"{"z":{"y":1,"x":[null,false]}}"#, r#"{"z": {"x": [null, false], "y": 1}}"#),
        (
            "{\"a\":\"\u{e9}\u{1F600}\u{7f}\\u0001\\t\\\"\\\\/<\\b\\f\\r\\n\u{2028}\"}",
            r#"{"a": "\u00e9\ud83d\ude00\u007f\u0001\t\"\\/<\b\f\r\n\u2028"}"#,
        ),
        (r#"{"é":1,"e":2,"f":3,"E":4}"#, r#"{"E": 4, "e": 2, "f": 3, "\u00e9": 1}"#),
        (
            "[1,2.5,1e100,1e-5,1e16,1e15,0.0001,-0.0,0.1,-1.5e-7,123.456,1.0,-2.0,18446744073709551615,-9223372036854775808,1.7976931348623157e308,5e-324]",
            "[1, 2.5, 1e+100, 1e-05, 1e+16, 1000000000000000.0, 0.0001, -0.0, 0.1, -1.5e-07, 123.456, 1.0, -2.0, 18446744073709551615, -9223372036854775808, 1.7976931348623157e+308, 5e-324]",
        ),
    ];

    #[test]
    fn the_bytes_are_pythons() {
        for (input, want) in PYTHON {
            let v: serde_json::Value = serde_json::from_str(input).unwrap();
            assert_eq!(to_string(&v), *want, "{input}");
        }
    }
}
