//! Between-rounds tier escalation: exactly one rung up, clamped at the ladder top
//! and the session ceiling (and the clamp recorded, never silent), applied only with
//! the approval token cairn minted with that one proposal.

use serde::{Deserialize, Serialize};

use crate::evidence::wire::{InputError, Result};

/// The tier context a failure row carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tiers {
    /// The ladder, cheapest first (ordinal cost = position).
    pub ladder: Vec<String>,
    /// The tier the caller says the loop is at: it must be the journal's.
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
    /// The approval token cairn minted with this proposal (absent in proposals
    /// recorded under rules v1, which no token can approve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// Where a clamped escalation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClampedAt {
    /// The current tier is the ladder's top rung.
    LadderTop,
    /// The current tier is at or above the session's ceiling.
    SessionCeiling,
}

/// A clamped escalation: no rung proposed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clamp {
    pub from: String,
    pub ceiling: String,
    pub at: ClampedAt,
}

/// What one depth-shaped failure asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// One rung up (its token still to be minted).
    Propose(Proposal),
    /// No rung: clamped.
    Clamped(Clamp),
}

/// Checks the ladder: non-empty, rungs non-empty and unique, `current` and
/// `ceiling` on it. Returns their positions.
pub fn positions(t: &Tiers) -> Result<(usize, usize)> {
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
        // A rung is found by its exact name (`current`, `ceiling`): one
        // spelling, read as a person reads it (helper-76: `-a` + U+200B).
        crate::evidence::names::ascii_label("rung", r, crate::evidence::names::NAME_MAX)
            .map_err(|(rule, m)| InputError::new(format!("tiers.ladder[{i}]"), rule, m))?;
    }
    let pos = |name: &str, field: &str| {
        t.ladder.iter().position(|r| r == name).ok_or_else(|| {
            InputError::new(
                format!("tiers.{field}"),
                "tier-on-ladder",
                format!("`{name}` is not a rung of the ladder"),
            )
        })
    };
    Ok((pos(&t.current, "current")?, pos(&t.ceiling, "ceiling")?))
}

/// The one-rung proposal, or the clamp that stops it.
pub fn propose(t: &Tiers) -> Result<Step> {
    let (current, ceiling) = positions(t)?;
    if current + 1 == t.ladder.len() {
        return Ok(Step::Clamped(Clamp {
            from: t.current.clone(),
            ceiling: t.ceiling.clone(),
            at: ClampedAt::LadderTop,
        }));
    }
    if current >= ceiling {
        return Ok(Step::Clamped(Clamp {
            from: t.current.clone(),
            ceiling: t.ceiling.clone(),
            at: ClampedAt::SessionCeiling,
        }));
    }
    Ok(Step::Propose(Proposal {
        from: t.current.clone(),
        to: t.ladder[current + 1].clone(),
        cost_delta: 1,
        token: None,
    }))
}

/// The approval token of a proposal, minted from the transition's fresh id (so the
/// audit re-derives it from the recorded context).
pub fn token(fresh_id: uuid::Uuid) -> String {
    format!("esc-{fresh_id}")
}
