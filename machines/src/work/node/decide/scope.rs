//! Scope amendments: `raise-scope` (a worker needs a path outside `touches`),
//! `pass-up` (the root hands it to the user) and `resolve-scope` (an explicit
//! choice among [`SCOPE_OPTIONS`], never a default or silence).

use super::super::{Event, Holder, ScopeRequest, State, SCOPE_OPTIONS};
use super::guards::Guard;
use crate::{Context, Rejection};

/// A dispatched node, no request pending, the change described, literal relative
/// touches, and a fresh id for the request.
pub(super) fn decide_raise_scope(
    g: Guard<'_>,
    target: &str,
    add_touches: &[String],
    change: &str,
    rationale: &str,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let Some(run) = g.state.run() else {
        return g.no(
            "dispatched",
            None,
            "a scope amendment is raised for a dispatched node",
        );
    };
    if !matches!(
        g.state,
        State::Dispatched { .. }
            | State::Verified { .. }
            | State::Rejected { .. }
            | State::Merged { .. }
    ) {
        return g.no(
            "dispatched",
            None,
            "a scope amendment is raised for a dispatched node",
        );
    }
    if run.scope.is_some() {
        return g.no("one-pending", None, "a scope amendment is already pending");
    }
    if [target, change, rationale]
        .iter()
        .any(|x| x.trim().is_empty())
    {
        return g.no(
            "nonempty-string",
            Some("change"),
            "target, change and rationale are required",
        );
    }
    if add_touches.is_empty()
        || add_touches.iter().any(|t| {
            t.contains(['*', '?', '[', '{'])
                || t.starts_with('/')
                || t.split('/').any(|x| x == "..")
        })
    {
        return g.no(
            "literal-touches",
            Some("add_touches"),
            "the literal relative paths the change adds to touches (no globs)",
        );
    }
    let id = ctx
        .fresh_ids
        .first()
        .ok_or_else(|| g.reject("fresh-id", None, "the context minted no id"))?;
    Ok(vec![Event::ScopeRaised {
        request: ScopeRequest {
            request_id: format!("amend-{id}"),
            target: target.to_owned(),
            add_touches: add_touches.to_vec(),
            change: change.to_owned(),
            rationale: rationale.to_owned(),
            holder: Holder::Root,
        },
    }])
}

/// The pending request, still held by the root, passed up with context and a
/// recommendation.
pub(super) fn decide_pass_up(
    g: Guard<'_>,
    request_id: &str,
    context: &str,
    recommendation: &str,
) -> Result<Vec<Event>, Rejection> {
    let pending = g.state.run().and_then(|r| r.scope.as_ref());
    match pending {
        Some(r) if r.request_id == request_id && r.holder == Holder::Root => {}
        Some(r) if r.request_id == request_id => {
            return g.no("root-held", None, "the request is already with the user")
        }
        _ => {
            return g.no(
                "pending-request",
                Some("request_id"),
                "no such pending request (never fabricate a request id)",
            )
        }
    }
    if context.trim().is_empty() || recommendation.trim().is_empty() {
        return g.no(
            "nonempty-string",
            Some("context"),
            "pass up with context and a recommendation",
        );
    }
    Ok(vec![Event::ScopePassedUp {
        request_id: request_id.to_owned(),
        context: context.to_owned(),
        recommendation: recommendation.to_owned(),
    }])
}

/// The pending request, exactly one existing option (the custom one alone and with
/// its instruction), who chose, and the holder's authority: options 0 and 1
/// approve, the others change nothing.
pub(super) fn decide_resolve_scope(
    g: Guard<'_>,
    request_id: &str,
    selected: &[usize],
    note: &str,
    custom_instruction: Option<&str>,
    on_behalf_of_user: bool,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    let Some(r) = g
        .state
        .run()
        .and_then(|r| r.scope.as_ref())
        .filter(|r| r.request_id == request_id)
    else {
        return g.no(
            "pending-request",
            Some("request_id"),
            "no such pending request (never fabricate a resolution)",
        );
    };
    let custom = SCOPE_OPTIONS.len() - 1;
    let one = match selected {
        [one] if *one < SCOPE_OPTIONS.len() => *one,
        [one] => {
            return g.no(
                "option-index",
                Some("selected"),
                &format!("option {one} does not exist (0..{custom})"),
            )
        }
        [] => {
            return g.no(
                "explicit-choice",
                Some("selected"),
                "an explicit choice: never a default or silence",
            )
        }
        _ if selected.contains(&custom) => {
            return g.no(
                "custom-alone",
                Some("selected"),
                "the custom option is selected alone",
            )
        }
        _ => {
            return g.no(
                "single-select",
                Some("selected"),
                "an amendment decision selects exactly one option",
            )
        }
    };
    if one == custom && custom_instruction.map_or(true, |c| c.trim().is_empty()) {
        return g.no(
            "custom-instruction",
            Some("custom_instruction"),
            "the custom option needs a non-empty customInstruction",
        );
    }
    if one != custom && custom_instruction.is_some() {
        return g.no(
            "custom-instruction",
            Some("custom_instruction"),
            "a customInstruction goes only with the custom option",
        );
    }
    if operator.trim().is_empty() {
        return g.no("nonempty-string", Some("operator"), "who chose");
    }
    if r.holder == Holder::User && !on_behalf_of_user {
        return g.no("on-behalf-of-user", Some("on_behalf_of_user"), "a user-held request is resolved only with onBehalfOfUser: true, after the operator actually chose");
    }
    if r.holder == Holder::Root && on_behalf_of_user {
        return g.no(
            "on-behalf-of-user",
            Some("on_behalf_of_user"),
            "the root resolves within its own authority; pass up to act for the user",
        );
    }
    let (request_id, note, operator) =
        (request_id.to_owned(), note.to_owned(), operator.to_owned());
    Ok(vec![if one <= 1 {
        Event::ScopeApproved {
            request_id,
            selected: one,
            add_touches: r.add_touches.clone(),
            note,
            operator,
            on_behalf_of_user,
        }
    } else {
        Event::ScopeNotApproved {
            request_id,
            selected: one,
            note,
            custom_instruction: custom_instruction.map(str::to_owned),
            operator,
            on_behalf_of_user,
        }
    }])
}
