//! The evidence vocabulary every machine shares: outcomes and checks, recorded
//! process runs, the planned git argv and the observer's environment, strict wire
//! parsing, and the checked values (full commits, absolute paths). No machine
//! module imports another machine's: what two machines share lives here.

pub mod fresh;
pub mod git;
pub mod ids;
pub mod names;
pub mod pr;
pub mod run;
pub mod text;
pub mod watch;
pub mod wire;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Timestamp;

pub use ids::{AbsPath, FullCommit, HttpUrl, Invalid, JjChange, RefName};
pub use run::CommandRun;
pub use wire::{InputError, Result as WireResult};

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(bytes.as_ref()))
}

/// The next review round: `max(rounds_seen) + 1`, or 1. Derived, never stored;
/// the saga thread and the PR loop count rounds by this one rule. A round list
/// [`bad_round`] passes always has a next round; one recorded before that rule
/// stays at [`MAX_ROUND`] + 1 rather than wrap to 0 (helper-75: a round of
/// `u32::MAX` had the next one recorded as round 0).
pub fn next_round(rounds_seen: &[u32]) -> u32 {
    rounds_seen.iter().max().map_or(1, |m| m.saturating_add(1))
}

/// The highest round a caller may name: one below `u32::MAX`, so the round
/// after it is a number.
pub const MAX_ROUND: u32 = u32::MAX - 1;

/// The first place in `rounds` that breaks the rule for a round list, with why:
/// rounds are numbered from 1 to [`MAX_ROUND`], each named once.
pub fn bad_round(rounds: &[u32]) -> Option<(usize, String)> {
    rounds.iter().enumerate().find_map(|(i, r)| {
        if *r == 0 {
            Some((i, "rounds are numbered from 1".to_owned()))
        } else if *r > MAX_ROUND {
            Some((
                i,
                format!("a round is at most {MAX_ROUND}: the next one must be a number"),
            ))
        } else if rounds[..i].contains(r) {
            Some((i, format!("round {r} is named twice")))
        } else {
            None
        }
    })
}

/// The result of one check. `Unknown` never opens a gate.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The evidence proves the property.
    Pass,
    /// The evidence disproves the property.
    Fail,
    /// The property could not be established either way.
    Unknown,
}

impl Outcome {
    /// True only for [`Outcome::Pass`]: the single value that may open a gate.
    pub fn opens_gate(self) -> bool {
        matches!(self, Outcome::Pass)
    }

    /// Folds several outcomes fail-closed: any `fail` fails, else any `unknown`
    /// is unknown, else (all passed, and at least one) pass. An empty set is
    /// `unknown`: no evidence is not evidence of success.
    pub fn all<I: IntoIterator<Item = Outcome>>(outcomes: I) -> Outcome {
        let mut seen_any = false;
        let mut unknown = false;
        for o in outcomes {
            seen_any = true;
            match o {
                Outcome::Fail => return Outcome::Fail,
                Outcome::Unknown => unknown = true,
                Outcome::Pass => {}
            }
        }
        if !seen_any || unknown {
            Outcome::Unknown
        } else {
            Outcome::Pass
        }
    }
}

/// One observed check: what was checked, in which category, with which outcome,
/// on which typed evidence, observed when.
///
/// `E` is the machine's evidence type for this check (usually an enum with one
/// variant per check name), so "a truthy string" can never stand in for evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check<N, C, E> {
    /// The check's name (an enum of the machine's fixed check set).
    pub name: N,
    /// The check's category (an enum of the machine's categories).
    pub category: C,
    /// Its outcome.
    pub outcome: Outcome,
    /// The typed evidence behind the outcome.
    pub evidence: E,
    /// When it was observed; RFC3339 with an offset.
    pub observed_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_fail_closed() {
        use Outcome::*;
        assert_eq!(Outcome::all([]), Unknown);
        assert_eq!(Outcome::all([Pass]), Pass);
        assert_eq!(Outcome::all([Pass, Unknown]), Unknown);
        assert_eq!(Outcome::all([Unknown, Fail]), Fail);
        assert!(!Unknown.opens_gate() && !Fail.opens_gate() && Pass.opens_gate());
    }

    #[test]
    fn outcome_wire_form_is_lower_case_and_strict() {
        assert_eq!(
            serde_json::to_string(&Outcome::Unknown).unwrap(),
            "\"unknown\""
        );
        assert!(serde_json::from_str::<Outcome>("\"PASS\"").is_err());
        assert!(serde_json::from_str::<Outcome>("true").is_err());
    }
}
