//! §failure-recovery-shared and §external-op-classification as data: each failure
//! maps to one action, and the machine's guards follow the action (a `stop for
//! resume` failure accepts only `resume`; a `teardown` failure only `teardown`; an
//! `ask` failure only the operator's answer).

use serde::{Deserialize, Serialize};

/// A failure the pipeline can stop on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// `stopped:wrong-repo` / `repo-anchor-drift`.
    RepoAnchor,
    /// §preflight-shared gates 1–3 (and the classifier's stopped outcomes).
    PreflightGate,
    /// `git worktree add` errored or a step-2 verification failed.
    WorktreeCreation,
    /// A §phase-1d verification failed.
    Phase1dVerify,
    /// The leaf reported `stopped:worktree-isolation-failed`.
    WorktreeIsolationFailed,
    /// The leaf reported `stopped:empty-result`.
    EmptyResult,
    /// Any other leaf `stopped:*` or a crash.
    LeafStopped,
    /// The §phase-1d scope gate tripped.
    ScopeGate,
    /// Refine `daemon_unhealthy`.
    DaemonUnhealthy,
    /// Refine `flapping`, `stopped:*` or a crash.
    Refine,
    /// The phase-2 worktree re-verify failed.
    Phase2Reverify,
    /// Tiebreaker 3 (a rebase conflict rerere cannot clear) or 5 (multi-target).
    StopTiebreaker,
    /// `stopped:test_lint_fail`.
    TestLint,
    /// A phase-3 pre-merge check failed.
    PreMerge,
    /// `git merge --ff-only` rejected twice.
    FfRejectedTwice,
    /// Teardown left something behind.
    TeardownPartial,
    /// An external operation was denied twice.
    PermissionBoundary,
}

/// What the parent does about a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Refuse and surface; not a `--resume` candidate (no work was done).
    Refuse,
    /// Stop with branch and worktree intact for `--resume`.
    StopForResume,
    /// Remove the (empty-by-contract) worktree and branch: nothing to resume.
    Teardown,
    /// Ask the user (return-and-respawn).
    Ask,
    /// Terminal: stop and never retry.
    Terminal,
}

/// The table: failure → action → what the seed says to do.
pub const RECOVERY: &[(Failure, Action, &str)] = &[
    (
        Failure::RepoAnchor,
        Action::Refuse,
        "refuse and surface REPO_ROOT; never cd-fix",
    ),
    (
        Failure::PreflightGate,
        Action::Refuse,
        "refuse and surface the failing gate",
    ),
    (
        Failure::WorktreeCreation,
        Action::Refuse,
        "remove what the creation made; not a --resume candidate: fix the cause, then `cairn ship preflight` (or abandon)",
    ),
    (
        Failure::Phase1dVerify,
        Action::StopForResume,
        "stop; --resume (a worktree-invariant breach)",
    ),
    (
        Failure::WorktreeIsolationFailed,
        Action::Teardown,
        "remove worktree and branch; not a --resume candidate",
    ),
    (
        Failure::EmptyResult,
        Action::Teardown,
        "remove worktree and branch; not a --resume candidate",
    ),
    (
        Failure::LeafStopped,
        Action::StopForResume,
        "stop; --resume",
    ),
    (
        Failure::ScopeGate,
        Action::Ask,
        "surface the shortstat; the user answers proceed or abort",
    ),
    (
        Failure::DaemonUnhealthy,
        Action::StopForResume,
        "stop; surface the review tool's status output",
    ),
    (
        Failure::Refine,
        Action::StopForResume,
        "stop; --resume, or broaden (a new refine run)",
    ),
    (
        Failure::Phase2Reverify,
        Action::StopForResume,
        "stop; --resume",
    ),
    (
        Failure::StopTiebreaker,
        Action::Ask,
        "the leaf returned a packet; ask, then respawn with the disposition",
    ),
    (
        Failure::TestLint,
        Action::StopForResume,
        "manual fix in the worktree, then --resume",
    ),
    (Failure::PreMerge, Action::StopForResume, "stop; --resume"),
    (
        Failure::FfRejectedTwice,
        Action::StopForResume,
        "stop; --resume",
    ),
    (
        Failure::TeardownPartial,
        Action::StopForResume,
        "--resume finishes the teardown",
    ),
    (
        Failure::PermissionBoundary,
        Action::StopForResume,
        "stopped:permission-boundary: never retried this session; --resume (the preflight again before the worktree exists) or abandon",
    ),
];

/// The action the table gives `f`.
pub fn action(f: Failure) -> Action {
    RECOVERY
        .iter()
        .find(|(x, _, _)| *x == f)
        .map_or(Action::Refuse, |(_, a, _)| *a)
}

/// The table's words for `f`.
pub fn guidance(f: Failure) -> &'static str {
    RECOVERY
        .iter()
        .find(|(x, _, _)| *x == f)
        .map_or("refuse", |(_, _, g)| g)
}

/// §external-op-classification: the class of an operation outside pure reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpClass {
    /// kata list/show/ready/labels/health.
    TrackerRead,
    /// `roborev status`.
    ReviewStatusRead,
    /// kata comment/label/close/owner (parent-owned).
    TrackerWrite,
    /// kata create via a `KATA_PUSH:` packet.
    TrackerCreate,
    /// `/roborev-respond`, `/roborev-refine` writing `~/.roborev/`.
    ReviewMutation,
    /// `kata|roborev daemon start`: reactive only.
    DaemonManagement,
}

/// The stop code a second denial of `class` ends in.
pub fn denial_code(class: OpClass) -> &'static str {
    match class {
        OpClass::TrackerRead | OpClass::DaemonManagement => "stopped:daemon-unreachable",
        OpClass::ReviewStatusRead => "stopped:not-shipped",
        OpClass::TrackerWrite | OpClass::TrackerCreate | OpClass::ReviewMutation => {
            "stopped:permission-boundary"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_one_row() {
        for (f, _, _) in RECOVERY {
            assert_eq!(
                RECOVERY.iter().filter(|(x, _, _)| x == f).count(),
                1,
                "{f:?}"
            );
        }
        assert_eq!(RECOVERY.len(), 17);
        assert_eq!(action(Failure::EmptyResult), Action::Teardown);
        assert_eq!(action(Failure::StopTiebreaker), Action::Ask);
    }
}
