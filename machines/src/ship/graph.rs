//! The ship machine's graph: state and event names (the graph's labels) and every
//! edge `(from, event, to)`, each (state, event) pair with one target.

use super::event::Event;
use super::state::{Stage, State};
use super::NAME;
use crate::{EdgeSpec, GraphSpec, StateSpec};

/// The state's name in the graph.
pub(super) fn state_name(state: &State) -> &'static str {
    match state.stage() {
        None => "idle",
        Some(s) => match s {
            Stage::Preflighted { outcome } if outcome.may_create_worktree() => "preflight-clean",
            Stage::Preflighted { .. } => "preflight-blocked",
            Stage::Phase1 => "phase-1",
            Stage::ScopeTripped { .. } => "scope-tripped",
            Stage::Phase2 => "phase-2",
            Stage::Phase3 => "phase-3",
            Stage::MergeReady { .. } => "merge-ready",
            Stage::MergeRejected { .. } => "merge-rejected",
            Stage::Merged => "merged",
            Stage::Stopped { .. } => "stopped",
            Stage::Tiebreaker { .. } => "tiebreaker-pending",
            Stage::TeardownPending { .. } => "teardown-pending",
            Stage::Shipped => "shipped",
            Stage::TornDown { .. } => "torn-down",
            Stage::Abandoned { .. } => "abandoned",
            Stage::CreationFailed { .. } => "creation-failed",
            Stage::PermissionBoundary { .. } => "permission-boundary",
        },
    }
}

/// The events whose journal name is not serde's tag: `(tag, journal name)`. The
/// journal spells the phase number apart (`phase-1-reported`) where serde writes
/// the payload's `type` as `phase1-reported`; both were recorded before names were
/// derived, and both stay, so every journal replays and audits byte for byte.
pub const JOURNAL_NAMES: [(&str, &str); 8] = [
    ("phase1-reported", "phase-1-reported"),
    ("phase1-verified", "phase-1-verified"),
    ("phase1d-failed", "phase-1d-failed"),
    ("respawned-phase2", "respawned-phase-2"),
    ("respawned-phase3", "respawned-phase-3"),
    ("resumed-phase1", "resumed-phase-1"),
    ("resumed-phase2", "resumed-phase-2"),
    ("resumed-phase3", "resumed-phase-3"),
];

/// The event's name: its edge label and its journal `event_type` — serde's tag
/// (derived), save for [`JOURNAL_NAMES`].
pub(super) fn event_name(event: &Event) -> &'static str {
    let tag = event.variant_name();
    JOURNAL_NAMES
        .iter()
        .find(|(serde, _)| *serde == tag)
        .map_or(tag, |(_, journal)| journal)
}

/// Every state and edge.
pub(super) fn graph() -> GraphSpec {
    let e = |from, event, to| EdgeSpec { from, event, to };
    let s = |name, terminal| StateSpec { name, terminal };
    const LIVE: [&str; 15] = [
        "idle",
        "preflight-clean",
        "preflight-blocked",
        "phase-1",
        "scope-tripped",
        "phase-2",
        "phase-3",
        "merge-ready",
        "merge-rejected",
        "merged",
        "stopped",
        "tiebreaker-pending",
        "teardown-pending",
        "creation-failed",
        "permission-boundary",
    ];
    let mut edges = vec![
        e("idle", "opened", "preflight-blocked"),
        e("preflight-clean", "anchor-drifted", "preflight-blocked"),
        e("preflight-clean", "worktree-created", "phase-1"),
        e(
            "preflight-clean",
            "worktree-creation-failed",
            "creation-failed",
        ),
        e("preflight-blocked", "abandoned", "abandoned"),
        e("phase-1", "phase-1-reported", "phase-1"),
        e("phase-1", "phase-1-verified", "phase-2"),
        e("phase-1", "scope-tripped", "scope-tripped"),
        e("phase-1", "phase-1d-failed", "stopped"),
        e("phase-1", "leaf-stopped", "stopped"),
        e("phase-1", "leaf-stopped-for-teardown", "teardown-pending"),
        e("scope-tripped", "scope-proceeded", "phase-2"),
        e("scope-tripped", "scope-aborted", "teardown-pending"),
        e("phase-2", "refined", "phase-3"),
        e("stopped", "refined", "phase-3"),
        e("phase-2", "refine-stopped", "stopped"),
        e("stopped", "refine-stopped", "stopped"),
        e("phase-2", "tiebreaker-raised", "tiebreaker-pending"),
        e("stopped", "tiebreaker-raised", "tiebreaker-pending"),
        e("tiebreaker-pending", "respawned-phase-2", "phase-2"),
        e("tiebreaker-pending", "respawned-phase-3", "phase-3"),
        e("merge-ready", "merge-accepted", "merged"),
        e("merge-ready", "merge-rejected", "merge-rejected"),
        e("merge-ready", "merge-stopped", "stopped"),
        e("merge-rejected", "merge-accepted", "merged"),
        e("merge-rejected", "merge-stopped", "stopped"),
        e("merged", "merge-lost", "stopped"),
        e("merged", "torn-down", "shipped"),
        e("merged", "teardown-partial", "stopped"),
        e("teardown-pending", "torn-down", "torn-down"),
        e("teardown-pending", "teardown-partial", "teardown-pending"),
        e("teardown-pending", "anchor-drifted", "teardown-pending"),
        // Abandoning: with nothing of the run's own in git, the end; with its
        // worktree and branch, their (forced) teardown. (`stopped → abandoned` is
        // how journals before rules 3 abandoned a stop.)
        e("stopped", "abandoned", "abandoned"),
        e("creation-failed", "abandoned", "abandoned"),
        e("permission-boundary", "abandoned", "abandoned"),
        e("stopped", "abandoned-for-teardown", "teardown-pending"),
        e(
            "tiebreaker-pending",
            "abandoned-for-teardown",
            "teardown-pending",
        ),
        e(
            "permission-boundary",
            "abandoned-for-teardown",
            "teardown-pending",
        ),
    ];
    // The preflight runs again after a blocked one, a failed creation, or a
    // permission boundary reached before the worktree was made.
    for from in [
        "preflight-clean",
        "preflight-blocked",
        "creation-failed",
        "permission-boundary",
    ] {
        edges.push(e(from, "preflight-passed", "preflight-clean"));
        edges.push(e(from, "preflight-blocked", "preflight-blocked"));
    }
    // Phase 3 checks the tip; a rejected merge or a moved branch is checked again.
    for from in ["phase-3", "merge-ready", "merge-rejected"] {
        edges.push(e(from, "pre-merge-checked", "merge-ready"));
        edges.push(e(from, "pre-merge-stopped", "stopped"));
        edges.push(e(from, "tiebreaker-raised", "tiebreaker-pending"));
    }
    for from in ["merge-ready", "merge-rejected"] {
        edges.push(e(from, "merge-blocked", "stopped"));
        edges.push(e(from, "merge-tip-moved", "phase-3"));
    }
    for from in [
        "phase-1",
        "scope-tripped",
        "phase-2",
        "phase-3",
        "merge-ready",
        "merge-rejected",
        "merged",
        "stopped",
        "tiebreaker-pending",
        "permission-boundary",
    ] {
        edges.push(e(from, "anchor-drifted", from));
        edges.push(e(from, "resume-blocked", from));
        edges.push(e(from, "resumed-phase-1", "phase-1"));
        edges.push(e(from, "resumed-phase-2", "phase-1"));
        edges.push(e(from, "resumed-phase-3", "phase-3"));
        edges.push(e(from, "resumed-teardown", "merged"));
    }
    // A crashed `create` is recovered by `resume` from the clean preflight.
    for (event, to) in [
        ("resumed-phase-1", "phase-1"),
        ("resumed-phase-2", "phase-1"),
        ("resume-blocked", "preflight-clean"),
    ] {
        edges.push(e("preflight-clean", event, to));
    }
    for from in LIVE.iter().filter(|s| **s != "idle") {
        // Nothing mutates git from a blocked preflight or a failed creation.
        if !matches!(*from, "preflight-blocked" | "creation-failed") {
            edges.push(e(from, "step-begun", from));
        }
        // At the boundary nothing is retried: no external operation is recorded.
        if *from != "permission-boundary" {
            edges.push(e(from, "external-op-recorded", from));
            edges.push(e(
                from,
                "permission-boundary-reached",
                "permission-boundary",
            ));
        }
    }
    let mut states: Vec<StateSpec> = LIVE.iter().map(|n| s(*n, false)).collect();
    for t in ["shipped", "torn-down", "abandoned"] {
        states.push(s(t, true));
    }
    GraphSpec {
        machine: NAME,
        initial: "idle",
        states,
        edges,
    }
}
