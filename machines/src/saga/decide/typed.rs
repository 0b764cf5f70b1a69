//! What a caller types into a thread's command, read as the people who read the
//! thread take it (helper-75, helper-76: an override's operator `-ana` + U+200B
//! and a 3 MB rationale, a doc review's source and a release's absence reason
//! with a bidirectional override were recorded): units, holders, operators and
//! scenario names are labels, a source one line of text, rationales, reasons,
//! causes and evidence prose. `save`, `adjust` and `boundary` check their own.
//! A blank value is left to the command's own rule (`nonempty-string`).

use super::super::command::Command;
use crate::evidence::names::{self, Refused, NAME_MAX};

/// The first typed value that breaks its rule: `(field, rule, message)`.
pub(super) fn typed(command: &Command) -> Result<(), (String, &'static str, String)> {
    let at =
        |field: &str, r: Result<(), Refused>| r.map_err(|(rule, m)| (field.to_owned(), rule, m));
    let label = |field: &str, s: &str| match s.trim().is_empty() {
        true => Ok(()),
        false => at(field, names::label(field, s, NAME_MAX)),
    };
    let prose = |field: &str, s: &str| at(field, names::prose(s));
    let text = |field: &str, s: &str| at(field, names::text(s));
    match command {
        Command::DocReview { review } => text("source", &review.source),
        Command::Override {
            rationale,
            operator,
            ..
        } => {
            label("operator", operator)?;
            prose("rationale", rationale)
        }
        Command::PrReady { handed, .. } => handed
            .iter()
            .enumerate()
            .try_for_each(|(i, h)| label(&format!("handed[{i}].unit"), &h.unit)),
        Command::TakeTurn { unit, holder, .. } | Command::MarkMerged { unit, holder, .. } => {
            label("unit", unit)?;
            label("holder", holder)
        }
        Command::ReleaseTurn { unit, .. } => label("unit", unit),
        Command::Release { release, .. } => {
            text("destination", &release.destination)?;
            release
                .absence_reason
                .as_deref()
                .map_or(Ok(()), |a| prose("absence_reason", a))
        }
        Command::Board {
            boundary,
            written_field,
            pair,
            ..
        } => {
            if !boundary.trim().is_empty() {
                at(
                    "boundary",
                    names::ascii_label("boundary", boundary, NAME_MAX),
                )?;
            }
            label("written_field", written_field)?;
            pair.as_ref().map_or(Ok(()), |(a, b)| {
                text("pair[0]", a)?;
                text("pair[1]", b)
            })
        }
        Command::Qa { scenarios, .. } => scenarios.iter().enumerate().try_for_each(|(i, s)| {
            label(&format!("scenarios[{i}].name"), &s.name)?;
            for (field, v) in [("cause", &s.cause), ("evidence", &s.evidence)] {
                if let Some(v) = v {
                    prose(&format!("scenarios[{i}].{field}"), v)?;
                }
            }
            Ok(())
        }),
        Command::Save { .. }
        | Command::Review { .. }
        | Command::Adjust { .. }
        | Command::Boundary { .. } => Ok(()),
    }
}
