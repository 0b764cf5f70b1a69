//! Re-deciding one recorded transition, and comparing what that yields with
//! the events the journal recorded for it.

use cairn_journal::StoredTransition;
use cairn_machines::reads::check_fence;
use cairn_machines::{Context, DecideFailure, DynFold, DynMachine, RawEvent};
use serde_json::Value;

use super::{diff, AuditReport, Finding, FindingKind};

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
    (t, decided, seen): (StoredTransition, Option<Vec<RawEvent>>, Vec<RawEvent>),
    report: &mut AuditReport,
    stream: &str,
) {
    let Some(decided) = decided else { return };
    if decided == seen {
        report.redecided += 1;
    } else {
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
