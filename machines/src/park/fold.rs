//! `evaluate`: the deterministic fold of a validated observation into a candidate
//! outcome, an action and eligibility, with the helper's reasons: only what
//! blocks, in its words and order. Fail-closed: anything not proven is unsafe.
//! cairn's own narrative of a fold is [`explain`] (the CLI prints it on stderr).

use serde::{Deserialize, Serialize};

use super::observation::{outcome_str, CheckName, Observation, Phase};
use crate::Outcome;

/// The tracker id of the missing close-condition mechanism (seed: `rosary-a6166d`).
pub const CLOSE_CONDITION_MECHANISM: &str = "rosary-a6166d";

/// The reason a terminal bead is not `completed` in v1.
pub const COMPLETED_UNAVAILABLE: &str = "completed unavailable: required Rosary mechanism rosary-a6166d cannot prove the declared acceptance command and latest verdict";
/// The reason the completion checks give no candidate otherwise.
pub const COMPLETION_UNKNOWN: &str = "completion evidence conflicts or is unknown";
/// The only reason a checkpoint-authorizing preflight gives.
pub const DURABLE_REQUIRED: &str = "durable preservation evidence required";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Checkpoint,
    WriteReceipt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    Parked,
    Completed,
}

/// `evaluate`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Evaluation {
    pub action: Option<Action>,
    pub candidate: Option<Candidate>,
    pub eligible: bool,
    pub protocol_phase: Phase,
    pub reasons: Vec<String>,
}

/// The base checks other than preservation, in name order (the order reasons list them).
const QUIESCENT: [CheckName; 5] = [
    CheckName::AnchorConfirmed,
    CheckName::NoActiveDispatch,
    CheckName::NoRunningChildOperation,
    CheckName::NoVcsOperationOrConflict,
    CheckName::RepositoryResolved,
];

/// The preservation checks, in name order.
const PRESERVATION: [CheckName; 2] = [
    CheckName::CommitsReachableOrCheckpointResolvable,
    CheckName::TreePreserved,
];

/// `name=outcome` for each of `names` that is not `pass`.
fn blocking(obs: &Observation, names: &[CheckName]) -> Vec<String> {
    names
        .iter()
        .filter(|n| obs.outcome(**n) != Outcome::Pass)
        .map(|n| format!("{}={}", n.as_str(), outcome_str(obs.outcome(*n))))
        .collect()
}

/// The candidate the completion checks give (v1: `parked` only — a non-terminal
/// bead whose close condition is unavailable, every other completion check
/// known), or the reasons they give none.
fn completion(obs: &Observation) -> Result<Candidate, Vec<String>> {
    let terminal = obs.outcome(CheckName::BeadTerminal);
    let close = obs.outcome(CheckName::CloseConditionSatisfied);
    let pr_unknown = obs.pr_backed && obs.outcome(CheckName::PrMerged) == Outcome::Unknown;
    if terminal == Outcome::Fail && close == Outcome::Unknown && !pr_unknown {
        return Ok(Candidate::Parked);
    }
    let mut reasons = vec![if terminal == Outcome::Pass && close == Outcome::Unknown {
        COMPLETED_UNAVAILABLE.to_owned()
    } else {
        COMPLETION_UNKNOWN.to_owned()
    }];
    if pr_unknown {
        reasons.push("pr_merged=unknown".to_owned());
    }
    Err(reasons)
}

/// Folds an observation. Pure and deterministic.
pub fn evaluate(obs: &Observation) -> Evaluation {
    let phase = obs.protocol_phase;
    let mut reasons = blocking(obs, &QUIESCENT);
    let candidate = match completion(obs) {
        Ok(c) => Some(c),
        Err(why) => {
            reasons.extend(why);
            None
        }
    };
    let result = |action, candidate, eligible, reasons| Evaluation {
        action,
        candidate,
        eligible,
        protocol_phase: phase,
        reasons,
    };
    if phase == Phase::Preflight {
        return match candidate {
            Some(c) if reasons.is_empty() => result(
                Some(Action::Checkpoint),
                Some(c),
                false,
                vec![DURABLE_REQUIRED.to_owned()],
            ),
            _ => result(None, None, false, reasons),
        };
    }
    reasons.extend(blocking(obs, &PRESERVATION));
    if candidate == Some(Candidate::Parked) {
        reasons.extend(blocking(obs, &[CheckName::ResumeTargetResolvable]));
    }
    match candidate {
        Some(c) if reasons.is_empty() => result(Some(Action::WriteReceipt), Some(c), true, vec![]),
        _ => result(None, None, false, reasons),
    }
}

/// cairn's own explanation of a fold, for a human (never part of the wire): every
/// check's outcome, then what the answer means.
pub fn explain(obs: &Observation, evaluation: &Evaluation) -> Vec<String> {
    let checks: Vec<String> = obs
        .checks
        .iter()
        .map(|c| format!("{}={}", c.name.as_str(), outcome_str(c.outcome)))
        .collect();
    let verdict = match (evaluation.action, obs.protocol_phase) {
        (Some(Action::Checkpoint), _) => "checkpoint the bound workspace, then re-observe both preservation checks as durable and evaluate again".to_owned(),
        (Some(Action::WriteReceipt), _) => format!("parked: the bead is not terminal and close_condition_satisfied is unavailable until {CLOSE_CONDITION_MECHANISM}; write the receipt"),
        (None, Phase::Preflight) => "unsafe: no checkpoint is authorized".to_owned(),
        (None, Phase::Durable) => "unsafe: no receipt is authorized".to_owned(),
    };
    vec![format!("checks: {}", checks.join(", ")), verdict]
}
