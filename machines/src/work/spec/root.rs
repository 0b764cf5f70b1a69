//! The spec's root sections beyond the work tree — `links`, `corrects`,
//! `supersedes`, `advisory_dispositions` — their closed shapes, the text lints
//! (`description-too-long`, `intent-description-duplicate`), and the
//! dispositions: an authority's recorded acceptance of one warning (matched by
//! code and rendered path), never of an error.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::finding::{key, with};
use super::schema::Checker;
use super::{render_path, Finding, Seg, Severity};

/// The most characters a description may have before it is a warning.
pub const DESCRIPTION_MAX: usize = 500;

/// The codes a disposition may accept (the warnings).
pub const WARNING_CODES: [&str; 5] = [
    "touches-concentration",
    "touch-overlap",
    "description-too-long",
    "intent-description-duplicate",
    "disposition-unmatched",
];

/// An authority's acceptance of one warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disposition {
    /// The warning's code.
    pub code: String,
    /// The warning's rendered path (`$.work[0].touches`).
    pub target: String,
    /// Why it is accepted.
    pub reason: String,
    /// Who accepted it.
    pub authority: String,
    /// When.
    pub at: String,
}

impl Checker {
    /// `links [{url*, note}]`, `corrects` / `supersedes [{spec*, reason}]`,
    /// `advisory_dispositions (≥1) [{code*, target*, reason*, authority*, at*}]`.
    pub(super) fn root_sections(&mut self, m: &Map<String, Value>) -> Vec<(usize, Disposition)> {
        let items = |c: &mut Checker, k: &str| -> Vec<(Vec<Seg>, Value)> {
            c.array(m, &[], k)
                .map(|a| {
                    a.iter()
                        .enumerate()
                        .map(|(i, v)| (vec![Seg::Key(k.into()), Seg::Index(i)], v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        for (p, v) in items(self, "links") {
            if let Some(o) = self.object(&v, &p, &["url"], &["note"]) {
                self.string(o, &p, "url", true);
                self.string(o, &p, "note", false);
            }
        }
        for k in ["corrects", "supersedes"] {
            for (p, v) in items(self, k) {
                if let Some(o) = self.object(&v, &p, &["spec"], &["reason"]) {
                    self.string(o, &p, "spec", true);
                    self.string(o, &p, "reason", false);
                }
            }
        }
        if m.get("advisory_dispositions")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            self.err(
                "schema-invalid",
                vec![Seg::Key("advisory_dispositions".into())],
                "at least one disposition (omit the key otherwise)",
            );
        }
        let fields = ["code", "target", "reason", "authority", "at"];
        let mut out = vec![];
        for (p, v) in items(self, "advisory_dispositions") {
            let Some(o) = self.object(&v, &p, &fields, &[]) else {
                continue;
            };
            let [code, target, reason, authority, at] = fields.map(|f| self.string(o, &p, f, true));
            if let (Some(code), Some(target), Some(reason), Some(authority), Some(at)) =
                (code, target, reason, authority, at)
            {
                let i = match p[1] {
                    Seg::Index(i) => i,
                    Seg::Key(_) => 0,
                };
                out.push((
                    i,
                    Disposition {
                        code,
                        target,
                        reason,
                        authority,
                        at,
                    },
                ));
            }
        }
        out
    }
}

/// The text lints of a readable spec: a description over [`DESCRIPTION_MAX`]
/// characters (the root's or a node's), and an intent that repeats the description
/// (a token overlap of 0.9 or more).
pub(super) fn text_lints(root: &Value) -> Vec<Finding> {
    let mut out = vec![];
    let too_long = |v: &Value, path: &[Seg], out: &mut Vec<Finding>| {
        if let Some(d) = v.get("description").and_then(Value::as_str) {
            let n = d.chars().count();
            if n > DESCRIPTION_MAX {
                out.push(Finding::warning(
                    "description-too-long",
                    key(path, "description"),
                    format!("{n} characters (more than {DESCRIPTION_MAX}): keep the contract in the brief"),
                ));
            }
        }
    };
    too_long(root, &[], &mut out);
    let mut pending = vec![(vec![], root)];
    while let Some((path, v)) = pending.pop() {
        if let Some(work) = v.get("work").and_then(Value::as_array) {
            for (i, n) in work.iter().enumerate().rev() {
                let p = with(&key(&path, "work"), Seg::Index(i));
                too_long(n, &p, &mut out);
                pending.push((p, n));
            }
        }
    }
    if let (Some(i), Some(d)) = (
        root.get("intent").and_then(Value::as_str),
        root.get("description").and_then(Value::as_str),
    ) {
        let overlap = token_overlap(i, d);
        if overlap >= 0.9 {
            out.push(Finding::warning(
                "intent-description-duplicate",
                vec![Seg::Key("intent".into())],
                format!(
                    "the intent repeats the description ({:.0}% of their words shared): say why, not what",
                    overlap * 100.0
                ),
            ));
        }
    }
    out
}

/// Shared words over all words (lower-case alphanumeric tokens, as sets).
fn token_overlap(a: &str, b: &str) -> f64 {
    let tokens = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (tokens(a), tokens(b));
    let all = a.union(&b).count();
    if all == 0 {
        return 1.0;
    }
    // Word counts are small; the ratio needs no more precision than f64 gives.
    #[allow(clippy::cast_precision_loss)]
    let ratio = a.intersection(&b).count() as f64 / all as f64;
    ratio
}

/// Applies the dispositions to the findings: each matched warning carries its
/// disposition; a repeated disposition, or one accepting an error code, is an
/// error; one that matches no warning is a warning.
pub(super) fn dispose(findings: &mut Vec<Finding>, dispositions: &[(usize, Disposition)]) {
    let mut seen = BTreeSet::new();
    let mut more = vec![];
    for (i, d) in dispositions {
        let p = vec![Seg::Key("advisory_dispositions".into()), Seg::Index(*i)];
        if !seen.insert((d.code.clone(), d.target.clone())) {
            more.push(Finding::error(
                "duplicate-advisory-disposition",
                p,
                format!("`{}` at `{}` is already disposed of", d.code, d.target),
            ));
            continue;
        }
        if !WARNING_CODES.contains(&d.code.as_str()) {
            more.push(Finding::error(
                "disposition-targets-error",
                key(&p, "code"),
                format!("`{}` is not a warning: an error cannot be accepted", d.code),
            ));
            continue;
        }
        let hit = findings.iter_mut().find(|f| {
            f.severity == Severity::Warning && f.code == d.code && render_path(&f.path) == d.target
        });
        match hit {
            Some(f) => f.disposition = Some(d.clone()),
            None => more.push(Finding::warning(
                "disposition-unmatched",
                p,
                format!("no `{}` warning at `{}`", d.code, d.target),
            )),
        }
    }
    findings.extend(more);
}
