//! A workspec's YAML read into JSON values, with the YAML-level findings the
//! schema cannot see: syntax, more than one document, unknown tags, tags on the
//! wrong kind of node, duplicate keys. Built on yaml-rust2's event parser (pure
//! Rust, YAML 1.2, maintained) so tags, scalar styles and positions are visible.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::spec::{Finding, Seg};

/// The local tags a block scalar may carry (a language hint, nothing more).
pub const LANGUAGE_TAGS: &[&str] = &[
    "md",
    "markdown",
    "py",
    "python",
    "json",
    "ts",
    "typescript",
    "rs",
    "rust",
    "bash",
    "sh",
    "shell",
    "rb",
    "ruby",
    "diff",
    "patch",
    "toml",
];

enum Frame {
    Seq {
        path: Vec<Seg>,
        items: Vec<Value>,
        anchor: usize,
    },
    Map {
        path: Vec<Seg>,
        map: Map<String, Value>,
        key: Option<String>,
        anchor: usize,
    },
}

/// The most values a document may expand to (aliases included): a bound on memory
/// against alias bombs.
pub const MAX_VALUES: usize = 1_000_000;

fn size(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(size).sum::<usize>(),
        Value::Object(m) => 1 + m.values().map(size).sum::<usize>(),
        _ => 1,
    }
}

struct Builder {
    values: usize,
    stack: Vec<Frame>,
    root: Option<Value>,
    documents: usize,
    anchors: std::collections::HashMap<usize, Value>,
    findings: Vec<Finding>,
    /// Every key's and item's path, in the order the document holds them.
    order: Vec<Vec<Seg>>,
}

impl Builder {
    fn child_path(&self) -> Vec<Seg> {
        match self.stack.last() {
            None => vec![],
            Some(Frame::Seq { path, items, .. }) => {
                let mut p = path.clone();
                p.push(Seg::Index(items.len()));
                p
            }
            Some(Frame::Map { path, key, .. }) => {
                let mut p = path.clone();
                if let Some(k) = key {
                    p.push(Seg::Key(k.clone()));
                }
                p
            }
        }
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn deliver(&mut self, value: Value, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(value);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { map, key, path, .. }) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                // A sequence or mapping used as a key: not a workspec key. The next
                // value then has no key either, so nothing is silently mis-assigned.
                None => {
                    *key = Some(String::new());
                    let p = path.clone();
                    self.findings.push(Finding::error(
                        "yaml-complex-key",
                        p,
                        "a key must be a plain string",
                    ));
                }
            },
        }
    }

    fn key(&mut self, text: String) {
        let path = self.child_path();
        let mut at = path.clone();
        at.push(Seg::Key(text.clone()));
        self.order.push(at);
        if let Some(Frame::Map { map, key, .. }) = self.stack.last_mut() {
            if map.contains_key(&text) {
                let mut p = path;
                p.push(Seg::Key(text.clone()));
                self.findings.push(Finding::error(
                    "yaml-duplicate-key",
                    p,
                    format!("the key `{text}` appears twice"),
                ));
            }
            *key = Some(text);
        }
    }

    /// Tags: `!!` (core schema) tags pass; a listed language tag only on a `|`/`>` scalar.
    fn tag(&mut self, tag: &Option<Tag>, block_scalar: bool) {
        let Some(t) = tag else { return };
        if t.handle == "tag:yaml.org,2002:" {
            return;
        }
        let path = self.child_path();
        let name = format!("{}{}", t.handle, t.suffix);
        if t.handle == "!" && LANGUAGE_TAGS.contains(&t.suffix.as_str()) {
            if !block_scalar {
                self.findings.push(Finding::error(
                    "yaml-tag-style",
                    path,
                    format!("`{name}` is allowed only on a `|` or `>` block scalar"),
                ));
            }
        } else {
            self.findings.push(Finding::error(
                "yaml-unknown-tag",
                path,
                format!("`{name}` is not one of the listed language tags"),
            ));
        }
    }
}

fn resolve(text: &str, style: TScalarStyle, tag: &Option<Tag>) -> Value {
    let core = |s: &str| {
        tag.as_ref()
            .is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == s)
    };
    if style != TScalarStyle::Plain || core("str") || tag.as_ref().is_some_and(|t| t.handle == "!")
    {
        return Value::String(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
    }
    let float_like = !digits.is_empty()
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || b"eE.+-".contains(&b))
        && digits.bytes().any(|b| b.is_ascii_digit());
    if float_like {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(text.to_owned())
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        match ev {
            Event::DocumentStart => self.documents += 1,
            Event::Scalar(text, style, anchor, tag) => {
                if self.expecting_key() {
                    self.key(text);
                    return;
                }
                self.tag(
                    &tag,
                    matches!(style, TScalarStyle::Literal | TScalarStyle::Folded),
                );
                let v = resolve(&text, style, &tag);
                self.order.push(self.child_path());
                self.deliver(v, anchor);
            }
            Event::Alias(id) => {
                let n = self.anchors.get(&id).map_or(1, size);
                self.values = self.values.saturating_add(n);
                if self.values > MAX_VALUES {
                    if !self.findings.iter().any(|f| f.code == "yaml-too-large") {
                        self.findings.push(Finding::error(
                            "yaml-too-large",
                            vec![],
                            format!("the document expands to more than {MAX_VALUES} values (aliases included)"),
                        ));
                    }
                    self.deliver(Value::Null, 0);
                    return;
                }
                let v = self.anchors.get(&id).cloned().unwrap_or(Value::Null);
                if self.expecting_key() {
                    self.key(match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    });
                } else {
                    self.deliver(v, 0);
                }
            }
            Event::SequenceStart(anchor, tag) => {
                self.tag(&tag, false);
                let path = self.child_path();
                self.order.push(path.clone());
                self.stack.push(Frame::Seq {
                    path,
                    items: vec![],
                    anchor,
                });
            }
            Event::MappingStart(anchor, tag) => {
                self.tag(&tag, false);
                let path = self.child_path();
                self.order.push(path.clone());
                self.stack.push(Frame::Map {
                    path,
                    map: Map::new(),
                    key: None,
                    anchor,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Seq { items, anchor, .. }) => self.deliver(Value::Array(items), anchor),
                Some(Frame::Map { map, anchor, .. }) => self.deliver(Value::Object(map), anchor),
                None => {}
            },
            _ => {}
        }
    }
}

/// Reads `text`: the value (if the document could be read) and the YAML findings.
pub fn read(text: &str) -> (Option<Value>, Vec<Finding>) {
    let (value, findings, _) = read_in_order(text);
    (value, findings)
}

/// [`read`], and every key's and sequence item's path in document order (for
/// reporting findings in the order the document holds what they name).
pub fn read_in_order(text: &str) -> (Option<Value>, Vec<Finding>, Vec<Vec<Seg>>) {
    let mut b = Builder {
        values: 0,
        stack: vec![],
        root: None,
        documents: 0,
        anchors: Default::default(),
        findings: vec![],
        order: vec![],
    };
    let mut parser = Parser::new_from_str(text);
    if let Err(e) = parser.load(&mut b, true) {
        let m = e.marker();
        return (
            None,
            vec![Finding::error(
                "yaml-syntax",
                vec![],
                format!("line {}, column {}: {}", m.line(), m.col(), e.info()),
            )],
            vec![],
        );
    }
    if b.documents > 1 {
        b.findings.push(Finding::error(
            "yaml-multiple-documents",
            vec![],
            "a workspec is exactly one YAML document",
        ));
    }
    match b.root {
        None | Some(Value::Null) => {
            b.findings.push(Finding::error(
                "yaml-syntax",
                vec![],
                "the document is empty",
            ));
            (None, b.findings, b.order)
        }
        Some(v) => (Some(v), b.findings, b.order),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complex_key_is_refused_and_nothing_is_mis_assigned() {
        let (v, findings) = read("? [x]\n: y\ntitle: t\n");
        assert!(
            findings.iter().any(|f| f.code == "yaml-complex-key"),
            "{findings:?}"
        );
        let v = v.unwrap();
        assert_eq!(v["title"], "t");
        assert!(
            v.get("y").is_none(),
            "the value of the complex key never becomes a key: {v}"
        );
    }

    #[test]
    fn an_alias_bomb_is_bounded() {
        let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            doc.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(", ")
            ));
        }
        let (_, findings) = read(&doc);
        assert!(
            findings.iter().any(|f| f.code == "yaml-too-large"),
            "{findings:?}"
        );
    }
}
