//! Where in a JSON command the decoder's error arises, and which entries it
//! ignored. serde reads an internally tagged enum's fields through a buffer
//! that keeps no path (`serde_path_to_error` and `serde_ignored` see only the
//! buffer), so cairn asks the decoder itself: it decodes probes of the
//! document — an entry removed, added or replaced — and compares the answers.
//! Only on the error path of a caller's JSON (`cairn exec`), never on a
//! recorded one.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// One step of a path into a JSON document.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where in `doc` the decoder's error `message` arises: the deepest value whose
/// removal makes the error go away or change. serde raises a bad value, an
/// unknown field or an unknown variant while it walks a struct's entries, before
/// it checks for missing ones, so removing a sound entry leaves the same error
/// and removing the faulty one changes it (to another error, a missing field,
/// or none). `None` when no entry of the document is at fault alone (the
/// document itself is the wrong type); the `command` tag is never removed.
pub(crate) fn locate<T: DeserializeOwned>(doc: &Value, message: &str) -> Option<String> {
    // Each probe decodes the whole document: bounded, so a document of many
    // entries costs a bounded multiple of one decode (found by a hostile pass:
    // unbounded, 16,000 objects took minutes). Past the bound the path found so
    // far is named — a prefix of the culprit's.
    let budget = std::cell::Cell::new(probes(doc));
    let same = |probe: Value| {
        budget.set(budget.get().saturating_sub(1));
        matches!(serde_json::from_value::<T>(probe), Err(e) if e.to_string() == message)
    };
    let mut path: Vec<Step> = vec![];
    loop {
        let here = at(doc, &path)?;
        let children: Vec<Step> = match here {
            Value::Object(m) => m
                .keys()
                .filter(|k| !(path.is_empty() && k.as_str() == "command"))
                .map(|k| Step::Key(k.clone()))
                .collect(),
            // A length error is the array's own (found: `review[0]` named for
            // a struct given as an array of the wrong length).
            Value::Array(_) if message.starts_with("invalid length") => break,
            // In an array the first bad element in order raises the error:
            // the shortest prefix that still raises it ends with it (a binary
            // search; removing an element would shift the ones after it, and
            // a struct given as an array reads by position).
            Value::Array(a) => {
                // Length 0 still raising it: the array itself is at fault.
                let (mut lo, mut hi) = (0, a.len());
                while lo < hi && budget.get() > 0 {
                    let mid = (lo + hi) / 2;
                    let mut probe = doc.clone();
                    if let Some(Value::Array(p)) = at_mut(&mut probe, &path) {
                        p.truncate(mid);
                    }
                    if same(probe) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                if lo == 0 || lo > a.len() {
                    break;
                }
                path.push(Step::Index(lo - 1));
                continue;
            }
            _ => break,
        };
        let culprit = children.into_iter().find(|child| {
            if budget.get() == 0 {
                return false;
            }
            let mut probe = doc.clone();
            let parent = at_mut(&mut probe, &path);
            match (parent, child) {
                (Some(Value::Object(m)), Step::Key(k)) => {
                    m.remove(k);
                }
                (Some(Value::Array(a)), Step::Index(i)) => {
                    a.remove(*i);
                }
                _ => return false,
            }
            !same(probe)
        });
        match culprit {
            Some(step) => {
                // An unknown field is at fault whole: its value is not read
                // (found: a large object under one took minutes to probe).
                let unknown = matches!(&step, Step::Key(k)
                    if message.starts_with(&format!("unknown field `{k}`")));
                path.push(step);
                if unknown {
                    break;
                }
            }
            None => break,
        }
    }
    (!path.is_empty()).then(|| render(&path))
}

/// Where the field `key` that the decoder's error `message` says is missing
/// belongs: the first object (the document first, then breadth-first) where
/// adding `key` changes the error into anything but that object refusing it as
/// unknown. serde checks missing fields after a struct's entries, so only the
/// struct that needs `key` answers differently.
pub(crate) fn locate_missing<T: DeserializeOwned>(
    doc: &Value,
    message: &str,
    key: &str,
) -> Option<String> {
    let unknown = format!("unknown field `{key}`");
    let mut budget = probes(doc);
    let mut queue: std::collections::VecDeque<Vec<Step>> = [vec![]].into();
    while let Some(path) = queue.pop_front() {
        if budget == 0 {
            return None;
        }
        let mut probe = doc.clone();
        let Some(here) = at_mut(&mut probe, &path) else {
            continue;
        };
        match here {
            Value::Object(m) => {
                for (k, v) in m.iter() {
                    if v.is_object() || v.is_array() {
                        queue.push_back(extend(&path, Step::Key(k.clone())));
                    }
                }
                if !m.contains_key(key) {
                    budget -= 1;
                    m.insert(key.to_owned(), Value::Null);
                    match serde_json::from_value::<T>(probe) {
                        Err(e)
                            if e.to_string() == message || e.to_string().starts_with(&unknown) => {}
                        _ => return Some(render(&extend(&path, Step::Key(key.to_owned())))),
                    }
                }
            }
            Value::Array(a) => queue.extend(nested_items(&path, a)),
            _ => {}
        }
    }
    None
}

/// The value at `path` in `doc`, if there is one.
fn at<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, s| match s {
        Step::Key(k) => v.get(k),
        Step::Index(i) => v.get(*i),
    })
}

/// [`at`], to change it.
fn at_mut<'a>(doc: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(doc, |v, s| match s {
        Step::Key(k) => v.get_mut(k),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// The paths of an array's items that hold objects or arrays (the places a
/// breadth-first probe descends into).
fn nested_items<'a>(path: &'a [Step], items: &'a [Value]) -> impl Iterator<Item = Vec<Step>> + 'a {
    items
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_object() || v.is_array())
        .map(|(i, _)| extend(path, Step::Index(i)))
}

fn extend(path: &[Step], step: Step) -> Vec<Step> {
    let mut out: Vec<Step> = path.iter().map(Step::clone).collect();
    out.push(step);
    out
}

/// A path as the errors spell it: `review.outcome`, `runs[2].argv`.
fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The first entry of `doc` the decoder ignored (a field none of the command's
/// types has, nested where `deny_unknown_fields` does not reach): one whose
/// value, replaced by a boolean, a string or a number, decodes each time to the
/// very command `read` is. A field the command has refuses one of them or
/// decodes to another command. The `command` tag is its own.
pub(crate) fn ignored<T: DeserializeOwned + Serialize>(doc: &Value, read: &T) -> Option<String> {
    let decoded = serde_json::to_value(read).ok()?;
    // Only entries the command, written back, does not show are probed: a field
    // it has shows (unless skipped as a default), so a sound document costs one
    // decode and one write, whatever its size (found: probing every entry made
    // 4,000 objects take over a minute). The probes are bounded as `locate`'s.
    let mut budget = probes(doc);
    let mut queue: std::collections::VecDeque<Vec<Step>> = [vec![]].into();
    while let Some(path) = queue.pop_front() {
        let here = at(doc, &path)?;
        let written = at(&decoded, &path);
        match here {
            Value::Object(m) => {
                for (k, v) in m {
                    if path.is_empty() && k == "command" {
                        continue;
                    }
                    let place = extend(&path, Step::Key(k.clone()));
                    let shown = written.is_some_and(|w| w.get(k).is_some());
                    if !shown && budget > 0 {
                        budget -= 1;
                        let unheard = [json!(true), json!("\u{1}"), json!(0.5)].into_iter().all(|probe| {
                            let mut doc = doc.clone();
                            if let Some(slot) = at_mut(&mut doc, &place) {
                                *slot = probe;
                            }
                            matches!(serde_json::from_value::<T>(doc).map(|t| serde_json::to_value(t).ok()), Ok(Some(v)) if v == decoded)
                        });
                        if unheard {
                            return Some(render(&place));
                        }
                    }
                    if v.is_object() || v.is_array() {
                        queue.push_back(place);
                    }
                }
            }
            Value::Array(a) => queue.extend(nested_items(&path, a)),
            _ => {}
        }
    }
    None
}

/// serde's message with what it expected said in JSON's words, never a Rust
/// type's name (found by a hostile pass: `expected struct Scenario`, `expected
/// u8`, `expected variant identifier`).
pub(crate) fn plain(message: &str) -> String {
    let Some(at) = message.find("expected ") else {
        return message.to_owned();
    };
    let (head, rest) = message.split_at(at + "expected ".len());
    let mut words = rest.split(' ');
    let first = words.next().unwrap_or("");
    let said = match first {
        "struct" | "map" => {
            // `struct Name` or `struct Name with 2 elements`
            words.next();
            "an object".to_owned()
        }
        "tuple" | "enum" | "unit" => {
            words.next();
            words.next();
            "a value of the field's kind".to_owned()
        }
        "variant" => {
            words.next();
            "a variant's name (a string)".to_owned()
        }
        "u8" | "u16" | "u32" | "u64" | "usize" => {
            let max = match first {
                "u8" => u8::MAX as u64,
                "u16" => u16::MAX as u64,
                "u32" => u32::MAX as u64,
                _ => u64::MAX,
            };
            format!("a whole number from 0 to {max}")
        }
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "bool" => "true or false".to_owned(),
        _ => return message.to_owned(),
    };
    // Whatever followed the type (`with 2 elements`) goes with it.
    format!("{head}{said}")
}

/// How many whole-document decodes `locate` or `ignored` may make: 256 for a
/// document up to 64 KiB, fewer for a larger one (about 16 MiB of decoding in
/// all), never fewer than 8 (found: a 16 MiB document took seconds a probe).
fn probes(doc: &Value) -> usize {
    let size = serde_json::to_string(doc)
        .map_or(usize::MAX, |t| t.len())
        .max(1);
    ((16usize << 20) / size).clamp(8, 256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::Deserialize;

    /// A command shaped as the machines' are: internally tagged, strict at the
    /// top, lenient inside (no `deny_unknown_fields`), optional and defaulted
    /// fields, a list of structs and a nested enum.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
    enum Cmd {
        Go {
            inner: Inner,
            list: Vec<Inner>,
            #[serde(default)]
            note: Option<String>,
        },
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Inner {
        n: u32,
        #[serde(default)]
        flag: bool,
        name: Option<String>,
        kind: Kind,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Kind {
        Plain,
        Fancy,
    }

    fn inner(i: u32) -> Value {
        json!({"n": i, "flag": i % 2 == 0, "name": "x", "kind": "plain"})
    }

    fn doc(len: usize) -> Value {
        json!({
            "command": "go",
            "inner": inner(0),
            "list": (0..len as u32).map(inner).collect::<Vec<_>>(),
            "note": "n",
        })
    }

    /// The path of every leaf of an `Inner` at `at`, with a value of the wrong type.
    fn wrong(at: &str) -> Vec<(String, Value)> {
        vec![
            (format!("{at}.n"), json!("seven")),
            (format!("{at}.flag"), json!(3)),
            (format!("{at}.name"), json!([1])),
            (format!("{at}.kind"), json!("odd")),
        ]
    }

    fn set(doc: &mut Value, path: &str, value: Value) {
        let mut here = doc;
        for part in path.split('.') {
            here = match part.split_once('[') {
                Some((key, index)) => {
                    let i: usize = index.trim_end_matches(']').parse().expect("an index");
                    &mut here[key][i]
                }
                None => &mut here[part],
            };
        }
        *here = value;
    }

    fn error_at(doc: &Value) -> Option<String> {
        let e = serde_json::from_value::<Cmd>(doc.clone()).err()?;
        let raw = e.to_string();
        match raw.strip_prefix("missing field `") {
            Some(rest) => locate_missing::<Cmd>(doc, &raw, rest.split('`').next()?),
            None => locate::<Cmd>(doc, &raw),
        }
    }

    proptest! {
        /// A value of the wrong type anywhere is named by its path.
        #[test]
        fn a_bad_value_is_named_by_its_path(len in 1usize..4, pick in 0usize..64, leaf in 0usize..4) {
            let at = match pick % (len + 1) {
                0 => "inner".to_owned(),
                i => format!("list[{}]", i - 1),
            };
            let (path, value) = wrong(&at).swap_remove(leaf);
            let mut d = doc(len);
            set(&mut d, &path, value);
            prop_assert_eq!(error_at(&d), Some(path));
        }

        /// A required field left out is named by its path.
        #[test]
        fn a_missing_field_is_named_by_its_path(len in 1usize..4, pick in 0usize..64, key in 0usize..2) {
            let key = ["n", "kind"][key];
            let mut d = doc(len);
            let at = match pick % (len + 1) {
                0 => {
                    d["inner"].as_object_mut().expect("an object").remove(key);
                    "inner".to_owned()
                }
                i => {
                    d["list"][i - 1].as_object_mut().expect("an object").remove(key);
                    format!("list[{}]", i - 1)
                }
            };
            // serde names the first missing field it meets: the inner one
            // first, then the list's, in the document's order.
            prop_assert_eq!(error_at(&d), Some(format!("{at}.{key}")));
        }

        /// An entry no type has, at any depth, is named by its path; a sound
        /// document has none.
        #[test]
        fn an_ignored_entry_is_named_by_its_path(len in 1usize..4, pick in 0usize..64) {
            let sound = doc(len);
            let read: Cmd = serde_json::from_value(sound.clone()).expect("a sound command");
            prop_assert_eq!(ignored::<Cmd>(&sound, &read), None);
            let at = match pick % (len + 1) {
                0 => "inner".to_owned(),
                i => format!("list[{}]", i - 1),
            };
            let mut d = sound;
            set(&mut d, &format!("{at}.typo"), json!(1));
            let read: Cmd = serde_json::from_value(d.clone()).expect("ignored, not refused");
            prop_assert_eq!(ignored::<Cmd>(&d, &read), Some(format!("{at}.typo")));
        }
    }

    #[test]
    fn messages_name_no_rust_type() {
        for (raw, plain_text) in [
            (
                "invalid type: string \"s\", expected struct Scenario",
                "invalid type: string \"s\", expected an object",
            ),
            (
                "invalid length 1, expected struct Review with 2 elements",
                "invalid length 1, expected an object",
            ),
            (
                "invalid value: integer `256`, expected u8",
                "invalid value: integer `256`, expected a whole number from 0 to 255",
            ),
            (
                "invalid type: integer `1`, expected variant identifier",
                "invalid type: integer `1`, expected a variant's name (a string)",
            ),
            (
                "invalid type: integer `7`, expected a string",
                "invalid type: integer `7`, expected a string",
            ),
        ] {
            assert_eq!(plain(raw), plain_text);
        }
    }

    #[test]
    fn the_document_itself_has_no_path() {
        assert_eq!(error_at(&json!("go")), None);
        assert_eq!(
            error_at(&json!({"command": "go", "inner": 1, "list": [], "note": null})),
            Some("inner".into())
        );
    }
}
