//! Parsing an observation document: the top-level fields, each check with its typed
//! evidence and the outcome that evidence supports, then which checks must be
//! present and that every VCS reading names the bound root.

use serde_json::Value;

use super::derive::derive;
use super::evidence::{BeadEvidence, Evidence, PreservationState};
use super::{
    outcome_str, Backend, Bead, Category, CheckItem, CheckName, Observation, Phase,
    NONTERMINAL_STATUSES, OBSERVATION_KEYS,
};
use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::evidence::HttpUrl;
use crate::{Outcome, Timestamp};

/// Parses and validates an observation document.
pub fn parse(v: &Value) -> Result<Observation> {
    parse_at(v, "", &[])
}

/// Parses the observation fields of `v` (which may carry `extra` keys, as a receipt does).
pub fn parse_at(v: &Value, path: &str, extra: &[&str]) -> Result<Observation> {
    let map = wire::object(v, path, &OBSERVATION_KEYS, extra)?;
    let schema_version: u32 = wire::field(map, path, "schema_version")?;
    if schema_version != 1 {
        return Err(InputError::new(
            at(path, "schema_version"),
            "schema-version",
            "only schema_version 1 is understood",
        ));
    }
    let protocol_phase: Phase = wire::field(map, path, "protocol_phase")?;
    let pr_backed: bool = wire::field(map, path, "pr_backed")?;
    let bead: Bead = wire::field(map, path, "bead")?;
    let derived = bead.pr_url.as_deref().is_some_and(is_pr_url);
    if pr_backed != derived {
        return Err(InputError::new(
            at(path, "pr_backed"),
            "pr-backed-derived",
            format!("pr_backed must be {derived}: it is true exactly when bead.pr_url is a valid non-empty http(s) URL"),
        ));
    }
    let checks_path = at(path, "checks");
    let raw_checks = map
        .get("checks")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::new(&checks_path, "type", "expected an array of checks"))?;
    let mut checks: Vec<CheckItem> = Vec::with_capacity(raw_checks.len());
    for (i, raw) in raw_checks.iter().enumerate() {
        let p = idx(&checks_path, i);
        let item = parse_check(raw, &p, &bead, protocol_phase)?;
        if checks.iter().any(|c| c.name == item.name) {
            return Err(InputError::new(
                at(&p, "name"),
                "duplicate-check",
                format!("`{}` appears twice", item.name.as_str()),
            ));
        }
        checks.push(item);
    }
    checks.sort_by_key(|c| c.name);
    let obs = Observation {
        schema_version,
        protocol_phase,
        pr_backed,
        bead,
        checks,
    };
    applicability(&obs, &checks_path)?;
    correlation(&obs, &checks_path)?;
    Ok(obs)
}

/// One check: its name, category, outcome, timestamp and typed evidence, an
/// outcome its evidence supports, and preservation evidence of its phase.
/// The bead's PR URL is an http(s) URL (the bead keeps it as text).
fn is_pr_url(url: &str) -> bool {
    HttpUrl::parse(url).is_ok()
}

fn parse_check(raw: &Value, p: &str, bead: &Bead, phase: Phase) -> Result<CheckItem> {
    let map = wire::object(
        raw,
        p,
        &["name", "category", "outcome", "evidence", "observed_at"],
        &[],
    )?;
    let name: CheckName = wire::field(map, p, "name").map_err(|e| InputError {
        rule: "unknown-check",
        ..e
    })?;
    if name == CheckName::PrMerged && !bead.pr_url.as_deref().is_some_and(is_pr_url) {
        return Err(InputError::new(
            p,
            "inapplicable-check",
            "`pr_merged` is inapplicable: a bead that is not PR-backed must omit it",
        ));
    }
    let category: Category = wire::field(map, p, "category")?;
    if category != name.category() {
        return Err(InputError::new(
            at(p, "category"),
            "check-category",
            format!(
                "`{}` belongs to category `{}`",
                name.as_str(),
                format!("{:?}", name.category()).to_lowercase()
            ),
        ));
    }
    let outcome: Outcome = wire::field(map, p, "outcome")?;
    let observed_at: Timestamp = wire::field(map, p, "observed_at")?;
    let ep = at(p, "evidence");
    let raw_ev = map.get("evidence").cloned().unwrap_or(Value::Null);
    if !raw_ev.as_object().is_some_and(|o| !o.is_empty()) {
        return Err(InputError::new(
            &ep,
            "typed-evidence",
            "evidence must be a non-empty typed object",
        ));
    }
    let evidence = match name {
        CheckName::AnchorConfirmed => Evidence::Anchor(wire::typed(raw_ev, &ep)?),
        CheckName::RepositoryResolved => Evidence::Repository(wire::typed(raw_ev, &ep)?),
        CheckName::NoActiveDispatch => Evidence::Dispatch(wire::typed(raw_ev, &ep)?),
        CheckName::NoRunningChildOperation => Evidence::Child(wire::typed(raw_ev, &ep)?),
        CheckName::NoVcsOperationOrConflict => Evidence::Vcs(wire::typed(raw_ev, &ep)?),
        CheckName::TreePreserved | CheckName::CommitsReachableOrCheckpointResolvable => {
            Evidence::Preservation(wire::typed(raw_ev, &ep)?)
        }
        CheckName::CloseConditionSatisfied => Evidence::Close(wire::typed(raw_ev, &ep)?),
        CheckName::BeadTerminal => Evidence::Bead(wire::typed(raw_ev, &ep)?),
        CheckName::PrMerged => Evidence::Pr(wire::typed(raw_ev, &ep)?),
        CheckName::ResumeTargetResolvable => Evidence::Resume(wire::typed(raw_ev, &ep)?),
    };
    let derived = derive(&evidence, bead, &ep)?;
    if !derived.contains(&outcome) {
        return Err(InputError::new(
            at(p, "outcome"),
            "outcome-contradicts-evidence",
            format!(
                "`{}` is `{}` but its evidence supports only {}",
                name.as_str(),
                outcome_str(outcome),
                derived
                    .iter()
                    .map(|o| format!("`{}`", outcome_str(*o)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    if let Evidence::Preservation(pres) = &evidence {
        preservation_phase(pres.state, phase, &at(&ep, "state"))?;
    }
    Ok(CheckItem {
        name,
        category,
        outcome,
        evidence,
        observed_at,
    })
}

/// Preservation evidence belongs to one phase: a preflight observation carries
/// `checkpointable` evidence only (it authorizes the checkpoint), a durable one
/// never does (it carries the resolved references, or why they are missing).
fn preservation_phase(state: PreservationState, phase: Phase, path: &str) -> Result<()> {
    let fits = match state {
        PreservationState::Checkpointable => phase == Phase::Preflight,
        PreservationState::Durable
        | PreservationState::Unpreserved
        | PreservationState::Unknown => phase == Phase::Durable,
    };
    if fits {
        return Ok(());
    }
    Err(InputError::new(
        path,
        "preservation-phase",
        match phase {
            Phase::Preflight => "a preflight observation carries checkpointable preservation evidence from rsry_workspace_checkpoint",
            Phase::Durable => "checkpointable evidence is preflight evidence: a durable observation carries resolved durable references (or unpreserved / unknown state)",
        },
    ))
}

/// Which checks must be present, given the others.
fn applicability(obs: &Observation, checks_path: &str) -> Result<()> {
    let bead_fails_nonterminal = matches!(
        obs.check(CheckName::BeadTerminal).map(|c| &c.evidence),
        Some(Evidence::Bead(BeadEvidence { status: Some(s), .. })) if NONTERMINAL_STATUSES.contains(&s.as_str())
    );
    for name in CheckName::ALL {
        let required = match name {
            CheckName::PrMerged => obs.pr_backed,
            CheckName::ResumeTargetResolvable => bead_fails_nonterminal,
            _ => true,
        };
        let present = obs.check(name).is_some();
        if required && !present {
            return Err(InputError::new(
                checks_path,
                "missing-check",
                format!("`{}` is required here", name.as_str()),
            ));
        }
        if !required && present {
            let why = match name {
                CheckName::PrMerged => "a bead that is not PR-backed must omit it",
                _ => "it is present only when bead_terminal fails from a non-terminal status",
            };
            return Err(InputError::new(
                checks_path,
                "inapplicable-check",
                format!("`{}` is inapplicable: {why}", name.as_str()),
            ));
        }
    }
    Ok(())
}

/// All VCS, preservation and resume evidence uses the binding's backend and bound root.
fn correlation(obs: &Observation, checks_path: &str) -> Result<()> {
    let mut seen: Vec<(CheckName, Backend, &str)> = Vec::new();
    for c in &obs.checks {
        match &c.evidence {
            Evidence::Vcs(v) => seen.push((c.name, v.backend, &v.bound_root)),
            Evidence::Preservation(p) => seen.push((c.name, p.backend, &p.bound_root)),
            Evidence::Resume(r) => seen.push((c.name, r.backend, &r.bound_root)),
            _ => {}
        }
    }
    let anchor: Option<(Backend, &str)> = obs
        .binding()
        .map(|b| (b.backend, b.bound_root.as_str()))
        .or_else(|| seen.first().map(|s| (s.1, s.2)));
    if let Some((backend, root)) = anchor {
        for (name, b, r) in &seen {
            if *b != backend || *r != root {
                return Err(InputError::new(
                    checks_path,
                    "bound-root-mismatch",
                    format!(
                        "`{}` observed {} at `{r}`, the binding is {} at `{root}`",
                        name.as_str(),
                        b.as_str(),
                        backend.as_str()
                    ),
                ));
            }
        }
    }
    heads_agree(obs, checks_path)?;
    if let (Some(binding), Some(anchor)) = (obs.binding(), obs.anchor()) {
        if binding.receipt_identity.anchor_bead != anchor {
            return Err(InputError::new(
                checks_path,
                "anchor-binding-mismatch",
                "the binding was made for another anchor",
            ));
        }
    }
    Ok(())
}

/// Passing durable references and a passing resume target resolve to one head:
/// a receipt names that head as `repository.head`, so evidence that passes all
/// three checks at different heads contradicts itself.
fn heads_agree(obs: &Observation, checks_path: &str) -> Result<()> {
    if obs.protocol_phase != Phase::Durable
        || obs.outcome(CheckName::ResumeTargetResolvable) != Outcome::Pass
    {
        return Ok(());
    }
    let Some(target) = obs.resume_target() else {
        return Ok(());
    };
    for name in [
        CheckName::CommitsReachableOrCheckpointResolvable,
        CheckName::TreePreserved,
    ] {
        let head = obs
            .preservation(name)
            .filter(|_| obs.outcome(name) == Outcome::Pass)
            .and_then(|p| p.resolved_head.as_deref());
        if let Some(head) = head {
            if head != target.resolved_head {
                return Err(InputError::new(
                    checks_path,
                    "heads-agree",
                    format!(
                        "`{}` resolves to {head}, resume_target_resolvable to {}: passing evidence names one head",
                        name.as_str(),
                        target.resolved_head
                    ),
                ));
            }
        }
    }
    Ok(())
}
