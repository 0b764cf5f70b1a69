//! Re-deciding one recorded transition, and comparing what that yields with
//! the events the journal recorded for it.

use cairn_journal::{StoredEvent, StoredTransition};
use cairn_machines::reads::check_fence;
use cairn_machines::{Context, DecideFailure, DynFold, DynMachine, RawEvent};
use serde_json::Value;

use super::same::text_is_value;
use super::{diff, AuditReport, Finding, FindingKind};
use crate::engine::raw;

/// A record's command and context, parsed once for everything the audit
/// checks of it (an unreadable one is reported by the re-decision).
pub(super) struct Parsed {
    pub(super) command: Result<Value, serde_json::Error>,
    pub(super) context: Result<Context, serde_json::Error>,
}

/// Re-decides a transition; `None` when it could not be (a finding says why).
pub(super) fn redecide(
    machine: &dyn DynMachine,
    fold: &dyn DynFold,
    t: &StoredTransition,
    parsed: &Parsed,
    report: &mut AuditReport,
    stream: &str,
) -> Option<Vec<RawEvent>> {
    let mut push = |kind, detail: String| {
        report.findings.push(Finding {
            kind,
            stream: stream.to_owned(),
            transition_id: Some(t.id),
            seq: None,
            detail,
            diff: None,
        })
    };
    if t.rules_version != machine.rules_version() {
        if machine.retired_rules().contains(&t.rules_version) {
            push(
                FindingKind::RulesChanged,
                format!(
                    "decided under retired rules v{} (this build has v{}): not re-decided",
                    t.rules_version,
                    machine.rules_version()
                ),
            );
        } else {
            push(
                FindingKind::RulesUndeclared,
                format!(
                    "records rules v{}, which `{}` never declared (current v{}, retired {:?}): not a transition this machine decided",
                    t.rules_version,
                    machine.name(),
                    machine.rules_version(),
                    machine.retired_rules()
                ),
            );
        }
        return None;
    }
    let command = match &parsed.command {
        Ok(v) => v,
        Err(e) => {
            push(
                FindingKind::UnreadableRecord,
                format!("recorded command is not JSON: {e}"),
            );
            return None;
        }
    };
    let context = match &parsed.context {
        Ok(c) => c,
        Err(e) => {
            push(
                FindingKind::UnreadableRecord,
                format!("recorded context is invalid: {e}"),
            );
            return None;
        }
    };
    if let Err(r) = check_fence(
        machine.name(),
        stream,
        &t.command_name,
        fold.state_name(),
        context,
    ) {
        push(
            FindingKind::RedecideRejected,
            format!(
                "the fence now refuses the recorded `{}`: {r}",
                t.command_name
            ),
        );
        return None;
    }
    match fold.decide(command, context) {
        Ok(events) => Some(events),
        Err(DecideFailure::Command(e)) => {
            push(
                FindingKind::UnreadableRecord,
                format!(
                    "recorded command `{}` is not a valid command: {e}",
                    t.command_name
                ),
            );
            None
        }
        Err(DecideFailure::Rejected(r)) => {
            push(
                FindingKind::RedecideRejected,
                format!(
                    "the rules now refuse the recorded `{}`: {r}",
                    t.command_name
                ),
            );
            None
        }
        Err(DecideFailure::Encode(e)) => {
            push(FindingKind::UnreadableRecord, e.to_string());
            None
        }
    }
}

pub(super) fn close(
    (t, decided, seen): (StoredTransition, Option<Vec<RawEvent>>, Vec<StoredEvent>),
    report: &mut AuditReport,
    stream: &str,
) {
    let Some(decided) = decided else { return };
    if decided.len() == seen.len() && decided.iter().zip(&seen).all(|(d, s)| same(d, s)) {
        report.redecided += 1;
    } else {
        // Every event kept is JSON (one that is not was not kept).
        let seen: Vec<RawEvent> = seen.iter().filter_map(|e| raw(e).ok()).collect();
        let names = |v: &[RawEvent]| {
            v.iter()
                .map(|e| e.event_type.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        report.findings.push(Finding {
            kind: FindingKind::RedecideMismatch,
            stream: stream.to_owned(),
            transition_id: Some(t.id),
            seq: None,
            detail: format!(
                "re-deciding `{}` yields [{}], the journal records [{}]{}",
                t.command_name,
                names(&decided),
                names(&seen),
                if names(&decided) == names(&seen) {
                    " (same types, different payloads)"
                } else {
                    ""
                }
            ),
            diff: Some(diff::events(&seen, &decided)),
        });
    }
}

/// Whether a re-decided event is the stored one: its type, its schema version,
/// and its payload read as a JSON value.
fn same(decided: &RawEvent, stored: &StoredEvent) -> bool {
    decided.event_type == stored.event_type
        && decided.schema_version == stored.schema_version
        && text_is_value(&stored.payload, &decided.payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(event_type: &str, schema_version: u32, payload: &str) -> StoredEvent {
        StoredEvent {
            seq: 1,
            stream: "s/1".into(),
            version: 1,
            machine: "m".into(),
            event_type: event_type.into(),
            schema_version,
            payload: payload.into(),
            recorded_at: String::new(),
            transition_id: 1,
            hash: String::new(),
        }
    }

    /// The stored event is the re-decided one when its payload is the same JSON
    /// value, however it is spelled; text that only begins or ends like the
    /// value's own, another value, type or schema version is not.
    #[test]
    fn a_stored_event_is_the_decided_one_exactly_when_its_value_is() {
        let decided = RawEvent {
            event_type: "bumped".into(),
            schema_version: 1,
            payload: json!({"by": 2, "note": "a\u{200b}b"}),
        };
        let own = decided.payload.to_string();
        assert!(same(&decided, &stored("bumped", 1, &own)));
        assert!(same(
            &decided,
            &stored("bumped", 1, "{ \"note\" : \"a\\u200bb\", \"by\":2 }")
        ));
        for other in [
            format!("{own} "),
            format!("{own}x"),
            own[..own.len() - 1].to_owned(),
            String::new(),
            r#"{"by":2,"note":"ab"}"#.to_owned(),
            r#"{"by":2,"note":"a\u200bb","more":null}"#.to_owned(),
            r#"{"by":2.0,"note":"a\u200bb"}"#.to_owned(),
        ] {
            let holds = serde_json::from_str::<Value>(&other).is_ok_and(|v| v == decided.payload);
            assert_eq!(
                same(&decided, &stored("bumped", 1, &other)),
                holds,
                "{other}"
            );
        }
        assert!(!same(&decided, &stored("bumped", 1, &format!("{own}x"))));
        assert!(!same(&decided, &stored("bumped", 2, &own)));
        assert!(!same(&decided, &stored("bumpd", 1, &own)));
    }
}
