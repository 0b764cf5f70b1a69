//! Strict parsing of wire documents (every machine's stdin JSON): every error names
//! the field (a JSON path) and the rule it broke.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Rejection, Violation};

/// A schema, evidence or correlation error in an input document (exit 2).
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
    /// An error at `field` (a JSON path) breaking `rule`.
    pub fn new(field: impl Into<String>, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule,
            message: message.into(),
        }
    }

    /// As a [`Rejection`] of `command` by `machine` in `state`.
    pub fn into_rejection(self, machine: &str, command: &str, state: &str) -> Rejection {
        Rejection::single(
            machine,
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

/// A parse result whose error names a field and a rule.
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
pub fn field<T: DeserializeOwned + serde::Serialize>(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<T> {
    let v = map.get(key).cloned().unwrap_or(Value::Null);
    typed(v, &at(path, key))
}

/// Deserializes `v` into `T`, naming the path on failure (in words a caller
/// knows: never a Rust type's name). An array where `T` reads an object is
/// refused at its place: serde reads a struct from an array by position, a
/// document no contract spells (helper-54).
pub fn typed<T: DeserializeOwned + serde::Serialize>(v: Value, path: &str) -> Result<T> {
    let read = T::deserialize(&v)
        .map_err(|e| InputError::new(path, "type", without_type_names(&e.to_string())))?;
    // Only a document that holds an array can have been read by position.
    if !holds_array(&v) {
        return Ok(read);
    }
    // A value just read writes back (cairn's wire types have string keys); were
    // one not to, there is no shape to compare and the read stands.
    if let Ok(written) = serde_json::to_value(&read) {
        if let Some(place) = positional(&v, &written, path) {
            return Err(InputError::new(
                place,
                "type",
                "expected a JSON object: an array is not read by position",
            ));
        }
    }
    Ok(read)
}

/// The first place (a path from `path`) where `doc` has an array that `written`
/// — the value read from it, written back — shows as an object.
pub fn positional(doc: &Value, written: &Value, path: &str) -> Option<String> {
    // The walk that names the place allocates its paths: only when there is one.
    if !has_positional(doc, written) {
        return None;
    }
    place(doc, written, path)
}

fn holds_array(v: &Value) -> bool {
    match v {
        Value::Array(_) => true,
        Value::Object(m) => m.values().any(holds_array),
        _ => false,
    }
}

fn has_positional(doc: &Value, written: &Value) -> bool {
    match (doc, written) {
        (Value::Array(_), Value::Object(_)) => true,
        (Value::Object(d), Value::Object(w)) => d
            .iter()
            .any(|(k, v)| w.get(k).is_some_and(|wv| has_positional(v, wv))),
        (Value::Array(d), Value::Array(w)) => {
            d.iter().zip(w).any(|(dv, wv)| has_positional(dv, wv))
        }
        _ => false,
    }
}

fn place(doc: &Value, written: &Value, path: &str) -> Option<String> {
    match (doc, written) {
        (Value::Array(_), Value::Object(_)) => {
            Some(if path.is_empty() { "$" } else { path }.to_owned())
        }
        (Value::Object(d), Value::Object(w)) => d
            .iter()
            .find_map(|(k, v)| w.get(k).and_then(|wv| place(v, wv, &at(path, k)))),
        (Value::Array(d), Value::Array(w)) => d
            .iter()
            .zip(w)
            .enumerate()
            .find_map(|(i, (dv, wv))| place(dv, wv, &idx(path, i))),
        _ => None,
    }
}

/// serde's message with the Rust type names it quotes (`expected struct
/// BindOutput`, `enum Phase`, `untagged enum Evidence`) said as JSON shapes.
pub fn without_type_names(message: &str) -> String {
    const UNTAGGED: &str = "data did not match any variant of untagged enum ";
    if message.starts_with(UNTAGGED) {
        return "matches none of the shapes this value may have".to_owned();
    }
    // Longest first: `tuple struct X` before `struct X`.
    const SHAPES: [(&str, &str); 7] = [
        ("internally tagged enum ", "an object with a known tag"),
        ("adjacently tagged enum ", "an object with a known tag"),
        ("untagged enum ", "one of its shapes"),
        ("tuple struct ", "an array"),
        ("unit struct ", "null"),
        ("struct ", "a JSON object"),
        ("enum ", "one of its names"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for (word, shape) in SHAPES {
            let at_word_start = out.is_empty() || out.ends_with(' ');
            if at_word_start && rest.starts_with(word) {
                let after = &rest[word.len()..];
                let name_len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                if after.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push_str(shape);
                    rest = &after[name_len..];
                    continue 'scan;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
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

/// The deepest nesting of arrays and objects an input document may have.
///
/// Every document cairn records is stored inside its command (and often inside
/// an event and the state), a few levels deeper than it came in, and serde_json
/// reads JSON back only up to 128 levels. A document deeper than this bound would
/// be recorded and then be unreadable (`state`, later verbs and `journal audit`
/// would fail on the stream), so it is refused at the input, before anything is
/// run or written.
pub const MAX_DEPTH: usize = 64;

/// Parses stdin text as exactly one JSON document. Stricter than JSON itself: a
/// duplicate key in any object is refused (a second value must never silently
/// win), and nesting deeper than [`MAX_DEPTH`] is refused (rule `depth`), never
/// recorded and never a stack overflow.
pub fn parse_document(text: &str) -> Result<Value> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict { depth: 0 }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| {
            let text = e.to_string();
            let rule = if text.starts_with(DUPLICATE) {
                "duplicate-key"
            } else if text.starts_with(TOO_DEEP) {
                "depth"
            } else {
                "json"
            };
            // The field is the document (`$`); where in its text is in the message.
            InputError::new("$", rule, format!("not one JSON document: {e}"))
        })?;
    Ok(value)
}

const DUPLICATE: &str = "duplicate key";
const TOO_DEEP: &str = "nested deeper than";

/// Reads one JSON value whose objects have unique keys, at nesting `depth`.
#[derive(Clone, Copy)]
struct Strict {
    depth: usize,
}

impl Strict {
    /// The seed for a child of a container at this depth, or the depth error.
    fn enter<E: serde::de::Error>(self) -> std::result::Result<Strict, E> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(E::custom(format!(
                "{TOO_DEEP} {MAX_DEPTH} levels of arrays and objects"
            )));
        }
        Ok(Strict { depth })
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let child = self.enter()?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(child)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let child = self.enter()?;
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("{DUPLICATE} `{key}`")));
            }
            let v = map.next_value_seed(child)?;
            object.insert(key, v);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_strict() {
        assert_eq!(
            parse_document(r#"{"a":[1,{"b":null}],"c":"d"}"#).unwrap()["a"][1]["b"],
            Value::Null
        );
        let dup = parse_document(r#"{"a":1,"b":{"x":1,"x":2}}"#).unwrap_err();
        assert_eq!(dup.rule, "duplicate-key");
        assert_eq!(dup.field, "$");
        assert!(dup.message.contains("line 1"), "{dup:?}");
        assert_eq!(parse_document("{} {}").unwrap_err().rule, "json");
        assert_eq!(parse_document(&"[".repeat(200)).unwrap_err().rule, "depth");
        assert_eq!(parse_document("1e999").unwrap_err().rule, "json");
    }

    #[test]
    fn messages_never_name_rust_types() {
        #[derive(Debug, serde::Deserialize, serde::Serialize)]
        struct BindOutput {
            a: u8,
        }
        let e = typed::<BindOutput>(Value::String("x".into()), "binding").unwrap_err();
        assert_eq!(e.field, "binding");
        assert!(!e.message.contains("BindOutput"), "{e:?}");
        // Read by position, serde would take `[7]` for `{"a": 7}`: refused there.
        #[derive(Debug, serde::Deserialize, serde::Serialize)]
        struct Outer {
            inner: BindOutput,
        }
        let e = typed::<Outer>(serde_json::json!({"inner": [7]}), "doc").unwrap_err();
        assert_eq!((e.field.as_str(), e.rule), ("doc.inner", "type"));
        assert!(typed::<Outer>(serde_json::json!({"inner": {"a": 7}}), "doc").is_ok());
        assert!(e.message.contains("expected a JSON object"), "{e:?}");
        assert_eq!(
            without_type_names("invalid type: integer `1`, expected enum Phase"),
            "invalid type: integer `1`, expected one of its names"
        );
        assert_eq!(
            without_type_names("data did not match any variant of untagged enum Evidence"),
            "matches none of the shapes this value may have"
        );
        // Words that merely look alike are left alone.
        assert_eq!(
            without_type_names("unknown field `struct`, the enum value x"),
            "unknown field `struct`, the enum value x"
        );
    }

    /// `n` objects nested in each other: `{"a":{"a":…{"a":0}…}}`.
    fn nested(n: usize) -> String {
        format!("{}0{}", "{\"a\":".repeat(n), "}".repeat(n))
    }

    #[test]
    fn depth_is_bounded_at_the_input() {
        let at_bound = parse_document(&nested(MAX_DEPTH)).unwrap();
        assert!(at_bound.pointer(&"/a".repeat(MAX_DEPTH)).is_some());
        let arrays = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_document(&arrays).is_ok());
        for n in [MAX_DEPTH + 1, 100, 126, 127, 10_000] {
            let e = parse_document(&nested(n)).unwrap_err();
            assert_eq!(e.rule, "depth", "{n}: {e:?}");
            assert_eq!(e.field, "$", "{e:?}");
            assert!(e.message.contains("line 1"), "{e:?}");
        }
        // Duplicate keys and bad JSON keep their own rules under the bound.
        assert_eq!(
            parse_document(r#"{"a":{"b":[1,{"c":1,"c":2}]}}"#)
                .unwrap_err()
                .rule,
            "duplicate-key"
        );
        assert_eq!(parse_document("1e999").unwrap_err().rule, "json");
    }
}
