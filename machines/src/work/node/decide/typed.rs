//! What a caller types into a node's command, read as the people who read the
//! node take it (helper-75: a run id `run\u{200B}-1` was recorded and read as
//! `run-1`; a session, a reason or an operator holding a bidirectional override
//! was not refused): labels (run ids, request ids, operators, the session) are
//! names a person reads, prose is lines of visible text.

use super::super::Command;
use crate::evidence::names::{self, Refused, NAME_MAX};
use crate::Context;

/// The first typed value that breaks its rule: `(field, rule, message)`.
pub(super) fn typed(
    command: &Command,
    ctx: &Context,
) -> Result<(), (String, &'static str, String)> {
    // A blank one is left to the command's own rule (`nonempty-string`,
    // `dispatch-receipt`).
    let label = |field: &str, s: &str| match s.trim().is_empty() {
        true => Ok(()),
        false => at(field, names::label(field, s, NAME_MAX)),
    };
    let prose = |field: &str, s: &str| at(field, names::prose(s));
    if let Some(session) = &ctx.session {
        label("session", session)?;
    }
    match command {
        Command::RaiseScope {
            target,
            add_touches,
            change,
            rationale,
        } => {
            label("target", target)?;
            for (i, t) in add_touches.iter().enumerate() {
                // A path, so a path's length.
                let field = format!("add_touches[{i}]");
                if !t.trim().is_empty() {
                    at(&field, names::label(&field, t, names::PATH_MAX))?;
                }
            }
            prose("change", change)?;
            prose("rationale", rationale)
        }
        Command::PassUp {
            request_id,
            context,
            recommendation,
        } => {
            label("request_id", request_id)?;
            prose("context", context)?;
            prose("recommendation", recommendation)
        }
        Command::ResolveScope {
            request_id,
            note,
            custom_instruction,
            operator,
            ..
        } => {
            label("request_id", request_id)?;
            label("operator", operator)?;
            prose("note", note)?;
            custom_instruction
                .as_deref()
                .map_or(Ok(()), |c| prose("custom_instruction", c))
        }
        Command::AmendCriterion { request, .. } => {
            label("criterion_id", &request.criterion_id)?;
            prose("before", &request.before)?;
            prose("after", &request.after)?;
            prose("reason", &request.reason)?;
            prose("authority", &request.authority)
        }
        Command::Dispatch {
            run_id, finding, ..
        } => {
            if let Some(r) = run_id {
                label("run_id", r)?;
            }
            finding.as_deref().map_or(Ok(()), |f| prose("finding", f))
        }
        Command::Remediate { run_id, .. } => label("run_id", run_id),
        Command::Review {
            failed_criteria,
            concerns,
            ..
        } => {
            for (i, c) in failed_criteria.iter().enumerate() {
                label(&format!("failed_criteria[{i}]"), c)?;
            }
            concerns
                .iter()
                .enumerate()
                .try_for_each(|(i, c)| prose(&format!("concerns[{i}]"), c))
        }
        Command::Escalate { reason } => prose("reason", reason),
        _ => Ok(()),
    }
}

fn at(field: &str, r: Result<(), Refused>) -> Result<(), (String, &'static str, String)> {
    r.map_err(|(rule, m)| (field.to_owned(), rule, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn ctx(session: &str) -> Context {
        let at = Timestamp::parse("2026-12-05T09:00:00Z").expect("a fixed time parses");
        let mut c = Context::new(at, vec![]);
        c.session = Some(session.into());
        c
    }

    fn rule(command: &Command, session: &str) -> Option<(String, &'static str)> {
        typed(command, &ctx(session)).err().map(|(f, r, _)| (f, r))
    }

    #[test]
    fn labels_are_visible_names_and_prose_visible_lines() {
        let remediate = |run_id: &str| Command::Remediate {
            run_id: run_id.into(),
            worktree_path: "/srv/lane".into(),
        };
        assert_eq!(rule(&remediate("run-1"), "s1"), None);
        assert_eq!(
            rule(&remediate("run\u{200B}-1"), "s1"),
            Some(("run_id".into(), "invisible-character"))
        );
        assert_eq!(
            rule(&remediate("run-1"), "s\u{200B}1"),
            Some(("session".into(), "invisible-character"))
        );
        let escalate = |reason: &str| Command::Escalate {
            reason: reason.into(),
        };
        assert_eq!(rule(&escalate("two lines\nof reason"), "s1"), None);
        assert_eq!(
            rule(&escalate("a reason\u{202E}"), "s1"),
            Some(("reason".into(), "invisible-character"))
        );
        assert_eq!(
            rule(&escalate(&"x".repeat(names::PROSE_MAX + 1)), "s1"),
            Some(("reason".into(), "length"))
        );
        let review = Command::Review {
            verdict: crate::work::node::ReviewVerdict::Reject,
            failed_criteria: vec![],
            concerns: vec!["fine".into(), "a\u{2066}b".into()],
        };
        assert_eq!(
            rule(&review, "s1"),
            Some(("concerns[1]".into(), "invisible-character"))
        );
        let raise = |target: &str, touch: &str| Command::RaiseScope {
            target: target.into(),
            add_touches: vec!["src/".into(), touch.into()],
            change: "c".into(),
            rationale: "r".into(),
        };
        assert_eq!(rule(&raise("core", "src2/"), "s1"), None);
        assert_eq!(
            rule(&raise("-co\u{202E}re", "src2/"), "s1"),
            Some(("target".into(), "invisible-character"))
        );
        assert_eq!(
            rule(&raise("core", "src2/\u{200B}"), "s1"),
            Some(("add_touches[1]".into(), "invisible-character"))
        );
        assert_eq!(
            rule(&raise("core", "--all"), "s1"),
            Some(("add_touches[1]".into(), "option-like"))
        );
        assert_eq!(
            rule(&remediate("re\u{301}run"), "s1"),
            Some(("run_id".into(), "normal-form"))
        );
    }
}
