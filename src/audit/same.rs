//! Whether a stored payload's text is a given JSON value, read without building
//! the value: the audit compares every recorded event with the one re-deciding
//! yields, and reading each stored payload into a `Value` (a map and a string
//! per field, dropped again) was a tenth of its work.
//!
//! The text is the value when `serde_json::from_str::<Value>(text) == Ok(value)`
//! and no object in it gives a key twice. A `Value` keeps the last of two, a
//! reader elsewhere may keep the first: a repeated key is a payload that says
//! two things, and cairn never writes one (helper-89: `{"text":"evil",
//! "text":"hello"}` passed the audit as `hello`). Each key is looked up among
//! the expected object's own, so the reading is linear in the text however
//! many keys an object has (helper-89: a first form kept every key read in a
//! list and searched it, quadratic in a wide object).

use std::collections::HashSet;
use std::fmt;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Number, Value};

/// Whether `text` is exactly `value`: parsed as `serde_json::from_str::<Value>`
/// parses it, with no key given twice in any object.
pub(super) fn text_is_value(text: &str, value: &Value) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    matches!(Against(Some(value)).deserialize(&mut de), Ok(true)) && de.end().is_ok()
}

/// Reads one JSON value and says whether it is the expected one (`None`: there
/// is none, so whatever is read is not).
struct Against<'v>(Option<&'v Value>);

impl<'de> DeserializeSeed<'de> for Against<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        match self.0 {
            Some(_) => d.deserialize_any(self),
            None => IgnoredAny::deserialize(d).map(|_| false),
        }
    }
}

impl Against<'_> {
    /// A scalar read as `read` (built as the `Value` reader builds it).
    fn scalar(&self, read: &Value) -> bool {
        self.0 == Some(read)
    }
}

impl<'de> Visitor<'de> for Against<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<bool, E> {
        Ok(self.scalar(&Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<bool, E> {
        Ok(self.scalar(&Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<bool, E> {
        Ok(self.scalar(&Value::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<bool, E> {
        // As serde_json's own `Value` reader: a float it cannot hold is null.
        Ok(self.scalar(&Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(matches!(self.0, Some(Value::String(s)) if s == v))
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(matches!(self.0, Some(Value::Null)))
    }

    fn visit_none<E>(self) -> Result<bool, E> {
        Ok(matches!(self.0, Some(Value::Null)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let items = match self.0 {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        };
        let mut same = items.is_some();
        let mut n = 0;
        while let Some(v) = seq.next_element_seed(Against(items.and_then(|a| a.get(n))))? {
            same &= v;
            n += 1;
        }
        Ok(same && items.is_some_and(|a| a.len() == n))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let Some(Value::Object(fields)) = self.0 else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(false);
        };
        let mut seen = Seen::new(fields);
        let mut same = true;
        while let Some(key) = map.next_key_seed(Key)? {
            // A key the value has, met for the first time; anything else
            // (another key, or one given twice) is not the value.
            let expected = match fields.get_key_value(key.as_ref()) {
                Some((k, v)) if same && seen.first(k) => Some(v),
                _ => None,
            };
            same &= map.next_value_seed(Against(expected))?;
        }
        Ok(same && seen.count == fields.len())
    }
}

/// The keys of an expected object met so far, by address (each is the
/// object's own `String`): a list for a few, a set for more.
struct Seen<'v> {
    few: Vec<&'v String>,
    many: Option<HashSet<*const String>>,
    count: usize,
}

/// Above this many keys an object's keys met are kept in a set.
const FEW: usize = 16;

impl<'v> Seen<'v> {
    fn new(fields: &'v Map<String, Value>) -> Self {
        Seen {
            few: Vec::new(),
            many: (fields.len() > FEW).then(HashSet::new),
            count: 0,
        }
    }

    /// Whether `key` is met for the first time (and now it is met).
    fn first(&mut self, key: &'v String) -> bool {
        let new = match &mut self.many {
            Some(set) => set.insert(key as *const String),
            None if self.few.iter().any(|k| std::ptr::eq(*k, key)) => false,
            None => {
                self.few.push(key);
                true
            }
        };
        self.count += usize::from(new);
        new
    }
}

/// A map's key, borrowed from the text where it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = std::borrow::Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(v.to_owned()))
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

    fn has_a_key(v: &Value) -> bool {
        match v {
            Value::Object(fields) => !fields.is_empty() || fields.values().any(has_a_key),
            Value::Array(items) => items.iter().any(has_a_key),
            _ => false,
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
        /// says, and no where a key is given twice: for the value itself however
        /// written, for another value, and for the text cut short or followed by
        /// more.
        #[test]
        fn the_text_is_the_value_exactly_when_its_value_reader_says_so(
            written in value(),
            expected in value(),
            s in spelling(),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut text = String::new();
            write(&written, s, &mut text);
            // `write` gives a key twice in every object that has one.
            let twice = s.twice && has_a_key(&written);
            let by_value = |t: &str, v: &Value| {
                !(twice && t.len() == text.len())
                    && serde_json::from_str::<Value>(t).is_ok_and(|r| r == *v)
            };
            prop_assert_eq!(text_is_value(&text, &written), by_value(&text, &written), "{}", text);
            prop_assert_eq!(text_is_value(&text, &expected), by_value(&text, &expected), "{}", text);
            let short = &text[..text.floor_char_boundary(cut.index(text.len() + 1))];
            prop_assert_eq!(text_is_value(short, &written), by_value(short, &written), "{}", short);
            let more = format!("{text} 1");
            prop_assert!(!text_is_value(&more, &written));
        }
    }

    /// An object of more keys than a list keeps (a set does): the same value
    /// in any key order is it; a key given twice, one missing or one more is not.
    #[test]
    fn a_wide_object_is_read_as_a_narrow_one() {
        let n = FEW * 3;
        let v = Value::Object((0..n).map(|i| (format!("k{i}"), json!(i))).collect());
        let entries = |keys: &mut dyn Iterator<Item = usize>| {
            let body: Vec<String> = keys.map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{{}}}", body.join(","))
        };
        assert!(text_is_value(&entries(&mut (0..n).rev()), &v));
        assert!(!text_is_value(&entries(&mut (0..n).chain([7])), &v));
        assert!(!text_is_value(&entries(&mut (1..n).chain([1])), &v));
        assert!(!text_is_value(&entries(&mut (1..n)), &v));
        assert!(!text_is_value(&entries(&mut (0..=n)), &v));
    }

    /// The cases the property draws only by chance.
    #[test]
    fn spellings_of_one_value_and_the_near_misses() {
        let v = json!({"a": [1, -2, 2.5, null, true, "x\u{e9}"], "b": {}});
        for same in [
            r#"{"b":{},"a":[1,-2,2.5,null,true,"x\u00e9"]}"#,
            r#" { "a" : [ 1 , -2 , 25e-1 , null , true , "x\u00e9" ] , "b" : { } } "#,
        ] {
            assert!(text_is_value(same, &v), "{same}");
        }
        // A key given twice is not the value, whichever of the two is the
        // value's: readers disagree on what the text says.
        for twice in [
            r#"{"a":0,"b":{},"a":[1,-2,2.5,null,true,"xé"]}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{},"a":[1,-2,2.5,null,true,"xé"]}"#,
            r#"{"a":[1,-2,2.5,null,true,"xé"],"b":{},"\u0061":0}"#,
        ] {
            assert!(!text_is_value(twice, &v), "{twice}");
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
