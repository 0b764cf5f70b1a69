//! `journal audit --format md|html`: the audit as a report an auditor reads — the
//! totals, what was re-decided in each stream, and each finding with its detail
//! and, for a re-decision that differs, the recorded against the re-decided value
//! of every field that differs. The HTML is the Markdown rendered by
//! pulldown-cmark (tables on; raw HTML never passed through).

use cairn::{AuditReport, Finding};

use crate::output::count;

/// The report as Markdown (GitHub's dialect: tables).
pub fn markdown(report: &AuditReport) -> String {
    let failing = report
        .findings
        .iter()
        .filter(|f| f.kind.is_failure())
        .count();
    let notices = report.findings.len() - failing;
    let mut out = String::from("# Journal audit\n\n");
    out.push_str(&if failing == 0 {
        "**Passed**: every transition checked re-decided to exactly its recorded events, and every event is an edge of its machine's graph".to_owned()
    } else {
        format!("**Failed**: {}", count(failing, "failing finding"))
    });
    if notices > 0 {
        out.push_str(&format!(" ({})", count(notices, "notice")));
    }
    out.push_str(".\n\n");
    out.push_str("| streams | transitions | events | re-decided |\n|---:|---:|---:|---:|\n");
    out.push_str(&format!(
        "| {} | {} | {} | {} |\n\n",
        report.streams, report.transitions, report.events, report.redecided
    ));
    out.push_str("## Streams\n\n");
    if report.by_stream.is_empty() {
        out.push_str("No stream was audited.\n\n");
    } else {
        out.push_str("Re-decided: transitions whose recorded command and context, decided again against the state before them, yield exactly the recorded events.\n\n");
        out.push_str(
            "| stream | machine | events | transitions | re-decided | findings |\n|---|---|---:|---:|---:|---:|\n",
        );
        for s in &report.by_stream {
            let found = report
                .findings
                .iter()
                .filter(|f| f.stream == s.stream)
                .count();
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                cell(&code(&s.stream)),
                cell(&code(&s.machine)),
                s.events,
                s.transitions,
                s.redecided,
                found
            ));
        }
        out.push('\n');
    }
    out.push_str("## Findings\n\n");
    if report.findings.is_empty() {
        out.push_str("None.\n");
        return out;
    }
    let mut current: Option<&str> = None;
    for f in &report.findings {
        if current != Some(f.stream.as_str()) {
            current = Some(f.stream.as_str());
            if f.stream.is_empty() {
                out.push_str("### The journal file\n\n");
            } else {
                out.push_str(&format!("### {}\n\n", code(&f.stream)));
            }
        }
        finding(f, &mut out);
    }
    out
}

/// The report as a standalone HTML page.
pub fn html(report: &AuditReport) -> String {
    use pulldown_cmark::{Event, Options, Parser};
    let md = markdown(report);
    // Every value is escaped or in a code span already; raw HTML that got through
    // anyway is shown as text, never interpreted.
    let events = Parser::new_ext(&md, Options::ENABLE_TABLES).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        other => other,
    });
    let mut body = String::new();
    pulldown_cmark::html::push_html(&mut body, events);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Journal audit</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
}

const STYLE: &str = "body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
code { font-size: 0.9em; word-break: break-all; }
";

fn finding(f: &Finding, out: &mut String) {
    let kind = serde_json::to_value(f.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut heading = format!(
        "#### {kind}{}",
        if f.kind.is_failure() { "" } else { " (notice)" }
    );
    if let Some(t) = f.transition_id {
        heading.push_str(&format!(", transition {t}"));
    }
    if let Some(s) = f.seq {
        heading.push_str(&format!(", event seq {s}"));
    }
    out.push_str(&heading);
    out.push_str("\n\n");
    out.push_str(&text(&f.detail));
    out.push_str("\n\n");
    if let Some(diff) = f.diff.as_ref().filter(|d| !d.is_empty()) {
        out.push_str("| field | recorded | re-decided |\n|---|---|---|\n");
        let value = |v: &Option<serde_json::Value>| match v {
            Some(v) => cell(&code(&v.to_string())),
            None => "(absent)".to_owned(),
        };
        for d in diff {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                cell(&code(&d.path)),
                value(&d.recorded),
                value(&d.redecided)
            ));
        }
        out.push('\n');
    }
}

/// `s` as a code span: a fence longer than any run of backticks inside it, padded
/// where `s` begins or ends with one, or begins and ends with a space
/// (CommonMark strips one space from each end of such a span: ` a ` read as
/// `a`); a line break, like every character a person cannot see, shown as its
/// code point (`output::visible`).
fn code(s: &str) -> String {
    code_span(&crate::output::visible(s))
}

/// [`code`] of text already shown visible (a part of a sentence [`text`] showed
/// whole: shown again, an escape would read as the text of one, helper-91).
fn code_span(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let spaced = s.starts_with(' ') && s.ends_with(' ') && !s.bytes().all(|b| b == b' ');
    if s.is_empty() {
        // "``" is no span, and "` `" is a name of one space (helper-93: the two
        // printed alike). Never a code span, so no name reads as it.
        return "*(empty)*".to_owned();
    }
    let pad = if s.starts_with('`') || s.ends_with('`') || spaced {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Inside a table cell, `|` ends the cell unless escaped (in code spans too).
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A sentence of cairn's (names in backticks) as Markdown: the backticked parts
/// as code spans, and every character that could start a link, emphasis, an
/// entity or HTML escaped (and a first character that could start a block), so
/// nothing recorded in a name or a value becomes markup, and every character a
/// person cannot see shown as its code point. Unbalanced backticks are escaped
/// like the rest.
fn text(s: &str) -> String {
    let s = crate::output::visible(s);
    let parts: Vec<&str> = s.split('`').collect();
    let balanced = parts.len() % 2 == 1;
    let escape = |t: &str, at_start: bool| {
        let mut o = String::new();
        for (i, c) in t.chars().enumerate() {
            if MARKUP.contains(c) || (at_start && i == 0 && c.is_ascii_punctuation()) {
                o.push('\\');
            }
            o.push(c);
        }
        o
    };
    if !balanced {
        return escape(&s, true);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                code_span(p)
            } else {
                escape(p, i == 0)
            }
        })
        .collect()
}

/// What starts inline markup in CommonMark (and GitHub's strikethrough).
const MARKUP: &str = "\\`*_[]<>&~";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_hold_any_backticks() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\nb"), "`a\\u{a}b`");
        // CommonMark strips one space from each end of a span that has both
        // and is not all spaces: the pad keeps the name's own.
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code(" a"), "` a`");
        assert_eq!(code("  "), "`  `");
        assert_eq!(code(""), "*(empty)*");
        assert_eq!(code(" "), "` `");
        assert_eq!(code("(empty)"), "`(empty)`");
    }

    #[test]
    fn sentences_keep_their_names_and_escape_the_rest() {
        assert_eq!(
            text("re-deciding `close` yields [closed] (a, b)"),
            "re-deciding `close` yields \\[closed\\] (a, b)"
        );
        assert_eq!(text("a ` b <i>"), "a \\` b \\<i\\>");
        // A name's escape is shown once: not as the text of one.
        assert_eq!(text("event `a\u{1b}b`"), "event `a\\u{1b}b`");
        assert_eq!(text("# not a heading"), "\\# not a heading");
        assert_eq!(
            text("see [x](javascript:1) & *y*"),
            "see \\[x\\](javascript:1) \\& \\*y\\*"
        );
    }
}
