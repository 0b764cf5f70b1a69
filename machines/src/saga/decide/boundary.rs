//! The operator's directive (`adjust`) and what it means at a `boundary`: proceed,
//! hold, or stay paused where the thread paused.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Thread;
use super::Refuse;
use crate::evidence::names;
use crate::Rejection;

/// `adjust`: a directive that parses; `continue` only while something is paused.
pub(super) fn decide_adjust(
    r: &Refuse,
    t: &Thread,
    directive: &str,
) -> Result<Vec<Event>, Rejection> {
    // helper-75: `pause_after:phase\u{200B}-2` was recorded and never matched the
    // boundary it was meant to pause at.
    names::text(directive).map_err(|(rule, m)| r.rejection(rule, Some("directive"), &m))?;
    let d = gates::parse_directive(directive)
        .map_err(|m| r.rejection("directive", Some("directive"), &m))?;
    if let gates::Directive::Pause(b) = &d {
        names::ascii_label("boundary", b, names::NAME_MAX)
            .map_err(|(rule, m)| r.rejection(rule, Some("directive"), &m))?;
    }
    if d == gates::Directive::Continue && t.gates.paused_at.is_none() {
        return r.no("paused", Some("directive"), "nothing is paused");
    }
    Ok(vec![Event::DirectiveSet { directive: d }])
}

/// `boundary`: a named boundary, crossed, held or paused at as the directive says.
pub(super) fn decide_boundary(
    r: &Refuse,
    t: &Thread,
    boundary: &str,
) -> Result<Vec<Event>, Rejection> {
    // A boundary is matched by its exact name: one a person cannot read as it
    // is (helper-75: `phase-2 `, `phase\u{200B}-2`) would pass a pause set for
    // the name it looks like.
    names::ascii_label("boundary", boundary, names::NAME_MAX)
        .map_err(|(rule, m)| r.rejection(rule, Some("boundary"), &m))?;
    let g = &t.gates;
    Ok(vec![
        match gates::at_boundary(g.directive.as_ref(), g.paused_at.as_deref(), boundary) {
            gates::BoundaryDecision::Proceed => Event::BoundaryCrossed {
                boundary: boundary.to_owned(),
            },
            gates::BoundaryDecision::Hold => Event::BoundaryHeld {
                boundary: boundary.to_owned(),
                directive: g.directive.clone().unwrap_or(gates::Directive::Halt),
            },
            gates::BoundaryDecision::Paused => Event::PausedAtBoundary {
                boundary: g.paused_at.clone().unwrap_or_else(|| boundary.to_owned()),
            },
        },
    ])
}
