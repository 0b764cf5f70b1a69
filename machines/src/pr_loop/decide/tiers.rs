//! The tier context an observation carries, checked against the journal: the
//! ladder is the one the loop started with, and the current tier is the one the
//! journal's approved escalations make it (a reading that disagrees is refused).

use super::super::escalation::Tiers;
use super::super::state::Loop;
use crate::Violation;

/// Adds a violation for each way `t` disagrees with the loop's journal.
pub(super) fn check(l: Option<&Loop>, t: &Tiers, v: &mut Vec<Violation>) {
    let Some(l) = l else { return };
    if l.ladder.as_ref().is_some_and(|ladder| *ladder != t.ladder) {
        v.push(Violation::new(
            "tier-ladder",
            Some("tiers.ladder"),
            format!(
                "the loop's ladder is {:?}; a rung is escalated one at a time on it",
                l.ladder.as_deref().unwrap_or_default()
            ),
        ));
    }
    if let Some(current) = l.current_tier() {
        if current != t.current {
            v.push(Violation::new(
                "tier-from-journal",
                Some("tiers.current"),
                format!(
                    "the journal's approved escalations put the loop at `{current}`, not `{}`",
                    t.current
                ),
            ));
        }
    }
}
