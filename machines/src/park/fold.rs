//! `evaluate`: the deterministic fold of a validated observation into a candidate
//! outcome, an action and eligibility. Fail-closed: anything not proven is unsafe.

use serde::{Deserialize, Serialize};

use super::observation::{outcome_str, CheckName, Observation, Phase, PreservationState};
use crate::Outcome;

/// The tracker id of the missing close-condition mechanism (seed: `rosary-a6166d`).
pub const CLOSE_CONDITION_MECHANISM: &str = "rosary-a6166d";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Checkpoint,
    WriteReceipt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    Parked,
    Completed,
}

/// `evaluate`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluation {
    pub action: Option<Action>,
    pub candidate: Option<Candidate>,
    pub eligible: bool,
    pub protocol_phase: Phase,
    pub reasons: Vec<String>,
}

const BASE: [CheckName; 7] = [
    CheckName::AnchorConfirmed,
    CheckName::RepositoryResolved,
    CheckName::NoActiveDispatch,
    CheckName::NoRunningChildOperation,
    CheckName::NoVcsOperationOrConflict,
    CheckName::TreePreserved,
    CheckName::CommitsReachableOrCheckpointResolvable,
];

const PRESERVATION: [CheckName; 2] = [
    CheckName::TreePreserved,
    CheckName::CommitsReachableOrCheckpointResolvable,
];

/// Folds an observation. Pure and deterministic.
pub fn evaluate(obs: &Observation) -> Evaluation {
    let mut reasons: Vec<String> = obs
        .checks
        .iter()
        .map(|c| format!("{}={}", c.name.as_str(), outcome_str(c.outcome)))
        .collect();
    let phase = obs.protocol_phase;
    let unsafe_with = |mut reasons: Vec<String>, candidate: Option<Candidate>, why: &str| {
        reasons.push(why.to_owned());
        Evaluation {
            action: None,
            candidate,
            eligible: false,
            protocol_phase: phase,
            reasons,
        }
    };

    let failing: Vec<&str> = BASE
        .iter()
        .filter(|n| obs.outcome(**n) != Outcome::Pass)
        .map(|n| n.as_str())
        .collect();
    if !failing.is_empty() {
        return unsafe_with(
            reasons,
            None,
            &format!(
                "unsafe: base evidence not all pass ({})",
                failing.join(", ")
            ),
        );
    }
    match obs.outcome(CheckName::BeadTerminal) {
        Outcome::Pass => {
            return unsafe_with(
                reasons,
                None,
                &format!("unsafe: the bead is terminal but completion cannot be proven: close_condition_satisfied is unavailable until {CLOSE_CONDITION_MECHANISM}"),
            )
        }
        Outcome::Unknown => return unsafe_with(reasons, None, "unsafe: bead status unknown"),
        Outcome::Fail => {}
    }
    if obs.pr_backed && obs.outcome(CheckName::PrMerged) == Outcome::Unknown {
        return unsafe_with(reasons, None, "unsafe: pr_merged unknown");
    }
    if obs.outcome(CheckName::ResumeTargetResolvable) != Outcome::Pass {
        return unsafe_with(reasons, None, "unsafe: resume target not resolvable");
    }
    reasons.push(format!(
        "parked: bead non-terminal; close_condition_satisfied unavailable until {CLOSE_CONDITION_MECHANISM}"
    ));
    let states: Vec<Option<PreservationState>> = PRESERVATION
        .iter()
        .map(|n| obs.preservation(*n).map(|p| p.state))
        .collect();
    match phase {
        Phase::Preflight => {
            if states
                .iter()
                .all(|s| *s == Some(PreservationState::Checkpointable))
            {
                reasons.push("preflight: checkpoint the bound workspace, then re-observe preservation as durable".into());
                Evaluation {
                    action: Some(Action::Checkpoint),
                    candidate: Some(Candidate::Parked),
                    eligible: false,
                    protocol_phase: phase,
                    reasons,
                }
            } else {
                unsafe_with(reasons, Some(Candidate::Parked), "preflight is never receipt-eligible; no checkpoint: both preservation checks must be checkpointable")
            }
        }
        Phase::Durable => {
            if !states
                .iter()
                .all(|s| *s == Some(PreservationState::Durable))
            {
                return unsafe_with(
                    reasons,
                    Some(Candidate::Parked),
                    "unsafe: both preservation checks must carry resolved durable references",
                );
            }
            let heads: Vec<Option<&str>> = PRESERVATION
                .iter()
                .map(|n| {
                    obs.preservation(*n)
                        .and_then(|p| p.resolved_head.as_deref())
                })
                .collect();
            let target = obs.resume_target().map(|t| t.resolved_head.as_str());
            if heads[0] != heads[1] || heads[0] != target {
                return unsafe_with(reasons, Some(Candidate::Parked), "unsafe: the durable references and the resume target resolve to different heads");
            }
            reasons.push("durable: write the receipt".into());
            Evaluation {
                action: Some(Action::WriteReceipt),
                candidate: Some(Candidate::Parked),
                eligible: true,
                protocol_phase: phase,
                reasons,
            }
        }
    }
}
