//! The verification-provenance axis: whether a node's last verification counts
//! for this session, this contract and this tree.

use serde::{Deserialize, Serialize};

use super::{contract_hash, NodeRun, State};
use crate::work::spec::Node;

/// The verification-provenance axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Passed this session, on the current target and contract.
    VerifiedThisSession,
    /// Failed this session.
    FailedThisSession,
    /// Passed in another session: `observed green; not verified this session`.
    ObservedGreenNotVerifiedThisSession,
    /// Failed in another session.
    ObservedFailureNotVerifiedThisSession,
    /// Ran against a tree or commit that is no longer the target (e.g. before a merge).
    StaleObservation,
    /// Ran against another criterion contract than the spec's current one.
    ConflictingObservation,
    /// Never verified.
    Unverified,
}

impl Provenance {
    /// The words a report must use.
    pub fn words(self) -> &'static str {
        match self {
            Provenance::VerifiedThisSession => "verified this session",
            Provenance::FailedThisSession => "failed this session",
            Provenance::ObservedGreenNotVerifiedThisSession => {
                "observed green; not verified this session"
            }
            Provenance::ObservedFailureNotVerifiedThisSession => {
                "observed failure; not verified this session"
            }
            Provenance::StaleObservation => "stale observation",
            Provenance::ConflictingObservation => "conflicting observation",
            Provenance::Unverified => "unverified",
        }
    }
}

/// The verification provenance of `run` for `session` against the spec's node.
pub fn provenance(run: Option<&NodeRun>, node: &Node, session: &str) -> Provenance {
    let Some(run) = run else {
        return Provenance::Unverified;
    };
    let Some(last) = run.verifications.last() else {
        return Provenance::Unverified;
    };
    let current: Vec<String> = node.acceptance.iter().map(contract_hash).collect();
    let hashes: Vec<String> = last
        .criteria
        .iter()
        .map(|c| c.contract_hash.clone())
        .collect();
    if hashes != current {
        return Provenance::ConflictingObservation;
    }
    let after_merge = run.verifications.len() > run.merge_mark;
    if run.merged.is_some() && !after_merge {
        return Provenance::StaleObservation;
    }
    match (last.session == session, last.passed) {
        (true, true) => Provenance::VerifiedThisSession,
        (true, false) => Provenance::FailedThisSession,
        (false, true) => Provenance::ObservedGreenNotVerifiedThisSession,
        (false, false) => Provenance::ObservedFailureNotVerifiedThisSession,
    }
}

/// Whether a node satisfies its dependents (and its parent) in `session`: its
/// lifecycle is `done`, and its last verification — integration evidence, in a
/// tree containing the merged commit — passed in `session` on the current
/// contract. The session that recorded `done` has that verification; a later
/// session re-verifies the node first. Cached, replayed or another session's
/// results never satisfy a dependency.
pub fn satisfies_dependents(state: &State, node: &Node, session: &str) -> bool {
    let State::Done { run } = state else {
        return false;
    };
    provenance(Some(run), node, session) == Provenance::VerifiedThisSession
        && run.verifications.last().is_some_and(|v| v.integration)
}
