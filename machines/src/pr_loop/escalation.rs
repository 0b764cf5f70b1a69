//! Between-rounds tier escalation: exactly one rung up, clamped at the ladder top
//! and the session ceiling, applied only on confirmation.

use serde::{Deserialize, Serialize};

use crate::evidence::wire::{InputError, Result};

/// The tier context a failure row carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tiers {
    /// The ladder, cheapest first (ordinal cost = position).
    pub ladder: Vec<String>,
    pub current: String,
    /// The session's ceiling (a rung of the ladder).
    pub ceiling: String,
}

/// A proposal: one rung up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    pub from: String,
    pub to: String,
    /// The ordinal cost delta: always 1.
    pub cost_delta: u32,
}

/// The one-rung proposal, or `None` with the reason when clamped.
pub fn propose(t: &Tiers) -> Result<std::result::Result<Proposal, String>> {
    let pos = |name: &str, field: &str| {
        t.ladder.iter().position(|r| r == name).ok_or_else(|| {
            InputError::new(
                format!("tiers.{field}"),
                "tier-on-ladder",
                format!("`{name}` is not a rung of the ladder"),
            )
        })
    };
    if t.ladder.is_empty() {
        return Err(InputError::new(
            "tiers.ladder",
            "tier-ladder",
            "the ladder is empty",
        ));
    }
    for (i, r) in t.ladder.iter().enumerate() {
        if r.trim().is_empty() || t.ladder[..i].contains(r) {
            return Err(InputError::new(
                format!("tiers.ladder[{i}]"),
                "tier-ladder",
                "rungs are non-empty and unique",
            ));
        }
    }
    let current = pos(&t.current, "current")?;
    let ceiling = pos(&t.ceiling, "ceiling")?;
    if current >= ceiling {
        return Ok(Err(format!(
            "clamped: `{}` is at or above the session ceiling `{}`",
            t.current, t.ceiling
        )));
    }
    Ok(Ok(Proposal {
        from: t.current.clone(),
        to: t.ladder[current + 1].clone(),
        cost_delta: 1,
    }))
}
