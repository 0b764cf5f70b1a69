//! Whether a stored payload's text is a given JSON value, read without building
//! the value: the audit compares every recorded event with the one re-deciding
//! yields, and reading each stored payload into a `Value` (a map and a string
//! per field, dropped again) was a tenth of its work.
//!
//! The answer is the one `serde_json::from_str::<Value>(text) == Ok(value)`
//! gives, which stays the definition: wherever this reading cannot be sure of
//! it (a key given twice, where a `Value` keeps the last; text that does not
//! parse) it says so, and the caller reads the value the long way.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// What reading the text against the value found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Same,
    Differs,
    /// A key repeated somewhere in the text: the value it stands for is not
    /// settled by reading it once.
    Unsure,
}

impl Verdict {
    fn and(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::Unsure, _) | (_, Verdict::Unsure) => Verdict::Unsure,
            (Verdict::Same, Verdict::Same) => Verdict::Same,
            _ => Verdict::Differs,
        }
    }

    fn of(same: bool) -> Verdict {
        if same {
            Verdict::Same
        } else {
            Verdict::Differs
        }
    }
}

/// Whether `text` parses to exactly `value` (as `serde_json::from_str::<Value>`
/// would read it).
pub(super) fn text_is_value(text: &str, value: &Value) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Against(Some(value)).deserialize(&mut de);
    match (read, de.end()) {
        (Ok(Verdict::Same), Ok(())) => true,
        (Ok(Verdict::Differs), Ok(())) => false,
        _ => serde_json::from_str::<Value>(text).is_ok_and(|v| v == *value),
    }
}

/// Reads one JSON value and compares it with the expected one (`None`: there
/// is none, so anything read differs).
struct Against<'v>(Option<&'v Value>);

impl<'de> DeserializeSeed<'de> for Against<'_> {
    type Value = Verdict;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Verdict, D::Error> {
        d.deserialize_any(self)
    }
}

impl Against<'_> {
    /// The verdict on a scalar read as `read` (built as the `Value` reader
    /// builds it: no allocation for anything but a string, which is borrowed).
    fn scalar(&self, read: &Value) -> Verdict {
        Verdict::of(self.0 == Some(read))
    }
}

impl<'de> Visitor<'de> for Against<'_> {
    type Value = Verdict;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Verdict, E> {
        Ok(self.scalar(&Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Verdict, E> {
        Ok(self.scalar(&Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Verdict, E> {
        Ok(self.scalar(&Value::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Verdict, E> {
        // As serde_json's own `Value` reader: a float it cannot hold is null.
        Ok(self.scalar(&Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Verdict, E> {
        Ok(Verdict::of(
            matches!(self.0, Some(Value::String(s)) if s == v),
        ))
    }

    fn visit_unit<E>(self) -> Result<Verdict, E> {
        Ok(Verdict::of(matches!(self.0, Some(Value::Null))))
    }

    fn visit_none<E>(self) -> Result<Verdict, E> {
        Ok(Verdict::of(matches!(self.0, Some(Value::Null))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Verdict, A::Error> {
        let items = match self.0 {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        };
        let mut verdict = Verdict::of(items.is_some());
        let mut n = 0;
        while let Some(v) = seq.next_element_seed(Against(items.and_then(|a| a.get(n))))? {
            verdict = verdict.and(v);
            n += 1;
        }
        Ok(verdict.and(Verdict::of(items.is_some_and(|a| a.len() == n))))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Verdict, A::Error> {
        let fields = match self.0 {
            Some(Value::Object(fields)) => Some(fields),
            _ => None,
        };
        let mut verdict = Verdict::of(fields.is_some());
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if keys.contains(&key) {
                // The value keeps the last one given; read the rest and say so.
                verdict = Verdict::Unsure;
            }
            let expected = fields.and_then(|f| f.get(key.as_ref()));
            verdict = verdict.and(map.next_value_seed(Against(expected))?);
            keys.push(key);
        }
        Ok(verdict.and(Verdict::of(fields.is_some_and(|f| f.len() == keys.len()))))
    }
}

/// A map's key, borrowed from the text where it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;
    use serde_json::json;

    /// Any JSON value of a few levels, with keys and strings that need escapes.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "[a-c\"\\\\\u{e9}\u{200b}\n]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-c\u{e9}]{0,2}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// How a value is written out: key order reversed or not, spaces, `\u`
    /// escapes of every character, integers as floats, and a key given twice
    /// (first with another value, which a `Value` reader drops).
    #[derive(Debug, Clone, Copy)]
    struct Spelling {
        reversed: bool,
        spaced: bool,
        escaped: bool,
        float_ints: bool,
        twice: bool,
    }

    fn spelling() -> impl Strategy<Value = Spelling> {
        any::<[bool; 5]>().prop_map(|b| Spelling {
            reversed: b[0],
            spaced: b[1],
            escaped: b[2],
            float_ints: b[3],
            twice: b[4],
        })
    }

    fn write(v: &Value, s: Spelling, out: &mut String) {
        let sp = if s.spaced { " " } else { "" };
        let string = |t: &str, out: &mut String| {
            if s.escaped {
                out.push('"');
                for u in t.encode_utf16() {
                    out.push_str(&format!("\\u{u:04x}"));
                }
                out.push('"');
            } else {
                out.push_str(&Value::String(t.to_owned()).to_string());
            }
        };
        match v {
            Value::Number(n) if s.float_ints && n.is_i64() => {
                out.push_str(&format!("{}.0", n));
            }
            Value::String(t) => string(t, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(sp);
                    write(item, s, out);
                }
                out.push(']');
            }
            Value::Object(fields) => {
                let mut entries: Vec<_> = fields.iter().collect();
                if s.reversed {
                    entries.reverse();
                }
                out.push('{');
                let mut first = true;
                let mut sep = |out: &mut String| {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(sp);
                };
                if let (true, Some((k, _))) = (s.twice, entries.first()) {
                    sep(out);
                    string(k, out);
                    out.push_str(&format!("{sp}:{sp}\"dropped\""));
                }
                for (k, item) in entries {
                    sep(out);
                    string(k, out);
                    out.push_str(&format!("{sp}:{sp}"));
                    write(item, s, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/proptest-regressions/audit-same.txt"
            )))),
            cases: 512,
            ..ProptestConfig::default()
        })]

        /// The reading says what reading the text into a `Value` and comparing
        /// says: for the value itself however written, for another value, and
        /// for the text cut short or followed by more.
        #[test]
        fn the_text_is_the_value_exactly_when_its_value_reader_says_so(
            written in value(),
            expected in value(),
            s in spelling(),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut text = String::new();
            write(&written, s, &mut text);
            let by_value = |t: &str, v: &Value| serde_json::from_str::<Value>(t).is_ok_and(|r| r == *v);
            prop_assert_eq!(text_is_value(&text, &written), by_value(&text, &written), "{}", text);
            prop_assert_eq!(text_is_value(&text, &expected), by_value(&text, &expected), "{}", text);
            let short = &text[..text.floor_char_boundary(cut.index(text.len() + 1))];
            prop_assert_eq!(text_is_value(short, &written), by_value(short, &written), "{}", short);
            let more = format!("{text} 1");
            prop_assert!(!text_is_value(&more, &written));
        }
    }

    /// The cases the property draws only by chance.
    #[test]
    fn spellings_of_one_value_and_the_near_misses() {
        let v = json!({"a": [1, -2, 2.5, null, true, "x\u{e9}"], "b": {}});
        for same in [
            r#"{"b":{},"a":[1,-2,2.5,null,true,"x\u00e9"]}"#,
            r#" { "a" : [ 1 , -2 , 25e-1 , null , true , "x\u00e9" ] , "b" : { } } "#,
            r#"{"a":0,"b":{},"a":[1,-2,2.5,null,true,"xé"]}"#,
        ] {
            assert!(text_is_value(same, &v), "{same}");
        }
        for other in [
            r#"{"a":[1,-2,2.5,null,true,"xé"]}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{},"c":1}"#,
            r#"{"a":[1.0,-2,2.5,null,true,"xé"],"b":{}}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé",1],"b":{}}"#,
            r#"{"a":[1,-2,2.5,null,true],"b":{}}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":[]}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{},"b":null}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{}}}"#,
            "",
        ] {
            assert!(!text_is_value(other, &v), "{other}");
        }
    }
}
