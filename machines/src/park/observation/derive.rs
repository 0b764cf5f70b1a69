//! `derive`: the outcomes a check's evidence supports, one function per evidence
//! type. An evidence object either carries a result or names its error, never both;
//! every VCS command is argv bound to the bound root.

use serde_json::Value;

use super::super::bind;
use super::evidence::{
    AnchorEvidence, BeadEvidence, ChildEvidence, ChildSource, CloseEvidence, DispatchEvidence,
    Evidence, PrEvidence, PreservationEvidence, PreservationSource, PreservationState, Provider,
    RepositoryEvidence, ResumeEvidence, VcsEvidence,
};
use super::{Backend, Bead, NONTERMINAL_STATUSES, TERMINAL_STATUSES};
use crate::evidence::wire::{at, idx, InputError, Result};
use crate::evidence::{AbsPath, RefName};
use crate::Outcome::{self, Fail, Pass, Unknown};
use crate::Timestamp;

/// The outcomes the evidence supports (one, or `fail`/`unknown` for an error-only object).
pub fn derive(evidence: &Evidence, bead: &Bead, ep: &str) -> Result<Vec<Outcome>> {
    match evidence {
        Evidence::Anchor(a) => anchor(a, ep),
        Evidence::Repository(r) => repository(r, ep),
        Evidence::Dispatch(d) => dispatch(d, ep),
        Evidence::Child(c) => child(c, ep),
        Evidence::Vcs(v) => vcs(v, ep),
        Evidence::Preservation(p) => preserved(p, ep),
        Evidence::Close(c) => close(c, ep),
        Evidence::Bead(b) => bead_status(b, ep),
        Evidence::Pr(p) => pr(p, bead, ep),
        Evidence::Resume(r) => resume(r, ep),
    }
}

/// `pr_merged` from `gh pr view --json state,mergedAt,url`.
pub fn pr_outcome(response: &Value, pr_url: &str) -> Outcome {
    let state = response.get("state").and_then(Value::as_str);
    let url = response.get("url").and_then(Value::as_str);
    let merged_at = response.get("mergedAt");
    if url != Some(pr_url) {
        return Outcome::Unknown;
    }
    match (state, merged_at) {
        (Some("MERGED"), Some(Value::String(t))) if Timestamp::parse(t).is_ok() => Outcome::Pass,
        (Some("OPEN" | "CLOSED"), None | Some(Value::Null)) => Outcome::Fail,
        _ => Outcome::Unknown,
    }
}

/// `anchor_confirmed`: an anchor, or an error (`fail` or `unknown`), from a source
/// that confirms it; a detected anchor is only a proposal until a human confirms it.
fn anchor(a: &AnchorEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&a.detail, ep)?;
    if !a.source.confirms() {
        return Err(InputError::new(
            at(ep, "source"),
            "anchor-unconfirmed",
            "a detected anchor (active dispatch, current branch, recently touched bead) is a proposal: have a human confirm it and send source `human_confirmation`",
        ));
    }
    Ok(match &a.anchor {
        Some(s) if !s.trim().is_empty() && a.error.is_none() => vec![Pass],
        Some(s) if s.trim().is_empty() => {
            return Err(InputError::new(
                at(ep, "anchor"),
                "nonempty-string",
                "the anchor is empty",
            ))
        }
        _ => {
            error_only(&a.error, a.anchor.is_some(), ep)?;
            vec![Fail, Unknown]
        }
    })
}

/// `repository_resolved`: a binding that checks out, or an error.
fn repository(r: &RepositoryEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&r.detail, ep)?;
    Ok(match &r.binding {
        Some(b) => {
            if r.error.is_some() {
                return Err(InputError::new(
                    ep,
                    "contradictory-evidence",
                    "evidence carries both a binding and an error",
                ));
            }
            bind::check_output(b, &at(ep, "binding"))?;
            vec![Pass]
        }
        None => {
            error_only(&r.error, false, ep)?;
            vec![Fail, Unknown]
        }
    })
}

/// `no_active_dispatch`: the active records (none passes), or an error.
fn dispatch(d: &DispatchEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&d.detail, ep)?;
    Ok(match &d.active_records {
        Some(records) if d.error.is_none() => {
            vec![if records.is_empty() { Pass } else { Fail }]
        }
        _ => {
            error_only(&d.error, d.active_records.is_some(), ep)?;
            vec![Unknown]
        }
    })
}

/// `no_running_child_operation`: an authoritative read of the running children, or an error.
fn child(c: &ChildEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&c.detail, ep)?;
    let source_client = match c.source {
        ChildSource::Codex => Provider::Codex,
        ChildSource::Claude => Provider::Claude,
    };
    if source_client != c.client {
        return Err(InputError::new(
            at(ep, "client"),
            "child-source-client",
            "the client must be the one the source names",
        ));
    }
    Ok(match (&c.running, c.authoritative) {
        (Some(running), true) if c.error.is_none() => {
            vec![if running.is_empty() { Pass } else { Fail }]
        }
        (Some(_), true) => {
            return Err(InputError::new(
                ep,
                "contradictory-evidence",
                "evidence carries both a result and an error",
            ))
        }
        (Some(running), false) if !running.is_empty() => {
            // A non-authoritative read that still shows a running child: it is running.
            vec![Fail, Unknown]
        }
        _ => {
            error_only(&c.error, false, ep)?;
            vec![Unknown]
        }
    })
}

/// `no_vcs_operation_or_conflict`: the bound commands with their conflicts and operations, or an error.
fn vcs(v: &VcsEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&v.detail, ep)?;
    if v.source != v.backend {
        return Err(InputError::new(
            at(ep, "source"),
            "vcs-source-backend",
            "source and backend must name the same VCS",
        ));
    }
    root(&v.bound_root, &at(ep, "bound_root"))?;
    Ok(match (&v.commands, &v.conflicts, &v.operations) {
        (Some(commands), Some(conflicts), Some(operations)) if v.error.is_none() => {
            if commands.is_empty() {
                return Err(InputError::new(
                    at(ep, "commands"),
                    "argv",
                    "the commands that were run must be listed",
                ));
            }
            for (i, argv) in commands.iter().enumerate() {
                bound_argv(argv, v.backend, &v.bound_root, &idx(&at(ep, "commands"), i))?;
            }
            vec![if conflicts.is_empty() && operations.is_empty() {
                Pass
            } else {
                Fail
            }]
        }
        (None, None, None) => {
            error_only(&v.error, false, ep)?;
            vec![Unknown]
        }
        _ => return Err(InputError::new(
            ep,
            "vcs-evidence-shape",
            "a VCS reading carries commands, conflicts and operations together, or only an error",
        )),
    })
}

/// `close_condition_satisfied`: v1 cannot prove it mechanically, so only an error.
fn close(c: &CloseEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&c.detail, ep)?;
    if c.error.trim().is_empty() {
        return Err(InputError::new(
            at(ep, "error"),
            "nonempty-string",
            "name the missing mechanism",
        ));
    }
    // v1: the close condition cannot be proven mechanically (rosary-a6166d).
    Ok(vec![Unknown])
}

/// `bead_terminal`: the bead's status, or an error.
fn bead_status(b: &BeadEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&b.detail, ep)?;
    Ok(match b.status.as_deref() {
        Some(s) if TERMINAL_STATUSES.contains(&s) && b.error.is_none() => vec![Pass],
        Some(s) if NONTERMINAL_STATUSES.contains(&s) && b.error.is_none() => vec![Fail],
        Some(s) if TERMINAL_STATUSES.contains(&s) || NONTERMINAL_STATUSES.contains(&s) => {
            return Err(InputError::new(
                ep,
                "contradictory-evidence",
                "evidence carries both a status and an error",
            ))
        }
        Some(s) => {
            return Err(InputError::new(
                at(ep, "status"),
                "bead-status",
                format!("`{s}` is not a bead status (open, in_progress, blocked, done, closed)"),
            ))
        }
        None => {
            error_only(&b.error, false, ep)?;
            vec![Unknown]
        }
    })
}

/// `pr_merged`: the exact `gh pr view` argv and its response, or an error.
fn pr(p: &PrEvidence, bead: &Bead, ep: &str) -> Result<Vec<Outcome>> {
    detail(&p.detail, ep)?;
    let url = bead.pr_url.clone().unwrap_or_default();
    let want: Vec<String> = [
        "gh",
        "pr",
        "view",
        url.as_str(),
        "--json",
        "state,mergedAt,url",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if p.command != want {
        return Err(InputError::new(
            at(ep, "command"),
            "pr-command",
            format!("expected exactly `{}`", want.join(" ")),
        ));
    }
    Ok(match &p.response {
        Some(r) if p.error.is_none() => vec![pr_outcome(r, &url)],
        Some(_) => {
            return Err(InputError::new(
                ep,
                "contradictory-evidence",
                "evidence carries both a response and an error",
            ))
        }
        None => {
            error_only(&p.error, false, ep)?;
            vec![Unknown]
        }
    })
}

/// `resume_target_resolvable`: a resolved target with its resolver command, or an error.
fn resume(r: &ResumeEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&r.detail, ep)?;
    if r.source != r.backend {
        return Err(InputError::new(
            at(ep, "source"),
            "vcs-source-backend",
            "source and backend must name the same VCS",
        ));
    }
    root(&r.bound_root, &at(ep, "bound_root"))?;
    Ok(match (&r.target, &r.resolver_command) {
        (Some(t), Some(cmd)) if r.error.is_none() => {
            if t.value.trim().is_empty() {
                return Err(InputError::new(
                    at(ep, "target.value"),
                    "nonempty-string",
                    "the resume target is empty",
                ));
            }
            if RefName::parse(&t.value).is_err() {
                return Err(option_like(&at(ep, "target.value")));
            }
            if !r.backend.is_full_head(&t.resolved_head) {
                return Err(InputError::new(
                    at(ep, "target.resolved_head"),
                    "full-head",
                    "expected a full immutable head",
                ));
            }
            if r.backend == Backend::Git {
                let want: Vec<String> = [
                    "git",
                    "-C",
                    r.bound_root.as_str(),
                    "rev-parse",
                    t.value.as_str(),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                if *cmd != want {
                    return Err(InputError::new(
                        at(ep, "resolver_command"),
                        "resolver-command",
                        format!("expected exactly `{}`", want.join(" ")),
                    ));
                }
            } else {
                bound_argv(cmd, r.backend, &r.bound_root, &at(ep, "resolver_command"))?;
            }
            // Resolved now, but the target may have drifted or moved since the
            // receipt: `fail` with resolver evidence is an unsafe result.
            vec![Pass, Fail]
        }
        (None, None) => {
            error_only(&r.error, false, ep)?;
            vec![Fail, Unknown]
        }
        _ => {
            return Err(InputError::new(
                ep,
                "resume-evidence-shape",
                "a resolved target carries target and resolver_command together, or only an error",
            ))
        }
    })
}

/// `tree_preserved` / `commits_reachable_or_checkpoint_resolvable`: the bound
/// workspace, then what its preservation state requires.
fn preserved(p: &PreservationEvidence, ep: &str) -> Result<Vec<Outcome>> {
    detail(&p.detail, ep)?;
    root(&p.bound_root, &at(ep, "bound_root"))?;
    if p.workspace != p.bound_root {
        return Err(InputError::new(
            at(ep, "workspace"),
            "bound-workspace",
            "the workspace must be the bound root",
        ));
    }
    preservation(p, ep)
}

/// What each preservation state requires of its evidence.
fn preservation(p: &PreservationEvidence, ep: &str) -> Result<Vec<Outcome>> {
    let positive = p.captured_head.is_some()
        || p.checkpoint_available.is_some()
        || p.reference.is_some()
        || p.resolved_head.is_some()
        || p.resolver_command.is_some();
    match p.state {
        PreservationState::Checkpointable => {
            if p.source != PreservationSource::RsryWorkspaceCheckpoint {
                return Err(InputError::new(
                    at(ep, "source"),
                    "preservation-source",
                    "checkpointable evidence comes from rsry_workspace_checkpoint",
                ));
            }
            let head = p.captured_head.as_deref().unwrap_or("");
            if !p.backend.is_full_head(head) {
                return Err(InputError::new(
                    at(ep, "captured_head"),
                    "full-head",
                    "expected the full captured head",
                ));
            }
            if p.checkpoint_available != Some(true) {
                return Err(InputError::new(
                    at(ep, "checkpoint_available"),
                    "checkpoint-available",
                    "checkpointable evidence needs checkpoint_available: true",
                ));
            }
            if p.reference.is_some()
                || p.resolved_head.is_some()
                || p.resolver_command.is_some()
                || p.error.is_some()
            {
                return Err(InputError::new(ep, "preservation-shape", "checkpointable evidence carries no reference, resolved head, resolver or error"));
            }
            Ok(vec![Pass])
        }
        PreservationState::Durable => {
            let source_backend = match p.source {
                PreservationSource::Git => Backend::Git,
                PreservationSource::Jj => Backend::Jj,
                PreservationSource::RsryWorkspaceCheckpoint => {
                    return Err(InputError::new(
                        at(ep, "source"),
                        "preservation-source",
                        "durable evidence is resolved by the VCS itself (git or jj)",
                    ))
                }
            };
            if source_backend != p.backend {
                return Err(InputError::new(
                    at(ep, "source"),
                    "vcs-source-backend",
                    "source and backend must name the same VCS",
                ));
            }
            let reference = p
                .reference
                .as_deref()
                .filter(|r| !r.trim().is_empty())
                .ok_or_else(|| {
                    InputError::new(
                        at(ep, "reference"),
                        "nonempty-string",
                        "durable evidence names its reference",
                    )
                })?;
            if RefName::parse(reference).is_err() {
                return Err(option_like(&at(ep, "reference")));
            }
            let head = p.resolved_head.as_deref().unwrap_or("");
            if !p.backend.is_full_head(head) {
                return Err(InputError::new(
                    at(ep, "resolved_head"),
                    "full-head",
                    "expected the full resolved head",
                ));
            }
            let cmd = p.resolver_command.as_deref().ok_or_else(|| {
                InputError::new(
                    at(ep, "resolver_command"),
                    "required",
                    "durable evidence names its resolver command",
                )
            })?;
            if p.backend == Backend::Git {
                let want: Vec<String> = [
                    "git",
                    "-C",
                    p.bound_root.as_str(),
                    "cat-file",
                    "-e",
                    &format!("{reference}^{{commit}}"),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                if cmd != want.as_slice() {
                    return Err(InputError::new(
                        at(ep, "resolver_command"),
                        "resolver-command",
                        format!("expected exactly `{}`", want.join(" ")),
                    ));
                }
            } else {
                bound_argv(cmd, p.backend, &p.bound_root, &at(ep, "resolver_command"))?;
            }
            if p.captured_head.is_some() || p.checkpoint_available.is_some() || p.error.is_some() {
                return Err(InputError::new(
                    ep,
                    "preservation-shape",
                    "durable evidence carries no captured head, checkpoint flag or error",
                ));
            }
            Ok(vec![Pass])
        }
        PreservationState::Unpreserved => {
            if p.source == PreservationSource::RsryWorkspaceCheckpoint {
                return Err(InputError::new(
                    at(ep, "source"),
                    "preservation-source",
                    "unpreserved state is read from the VCS (git or jj)",
                ));
            }
            error_only(&p.error, positive, ep)?;
            Ok(vec![Fail])
        }
        PreservationState::Unknown => {
            error_only(&p.error, positive, ep)?;
            Ok(vec![Unknown])
        }
    }
}

/// An error-only evidence object: `error` non-empty and no positive fields.
fn error_only(error: &Option<String>, positive: bool, ep: &str) -> Result<()> {
    match error {
        Some(e) if !e.trim().is_empty() && !positive => Ok(()),
        Some(_) if positive => Err(InputError::new(
            ep,
            "contradictory-evidence",
            "evidence carries both a result and an error",
        )),
        _ => Err(InputError::new(
            at(ep, "error"),
            "nonempty-string",
            "evidence without a result must name its error",
        )),
    }
}

/// A name that stands in a resolver's argv where git would read `-x` as an
/// option (the helper's argv has no `--end-of-options`): refused at the input.
fn option_like(path: &str) -> InputError {
    InputError::new(
        path,
        "option-like",
        "a name starting with `-` would be read by git as an option",
    )
}

fn detail(d: &str, ep: &str) -> Result<()> {
    if d.trim().is_empty() {
        return Err(InputError::new(
            at(ep, "detail"),
            "nonempty-string",
            "evidence needs a human detail",
        ));
    }
    Ok(())
}

fn bound_argv(argv: &[String], backend: Backend, root: &str, path: &str) -> Result<()> {
    let prefix = backend.bound_prefix(root);
    if argv.len() <= prefix.len() || argv[..prefix.len()] != prefix[..] {
        return Err(InputError::new(
            path,
            "bound-command",
            format!("every command must be argv starting `{}`", prefix.join(" ")),
        ));
    }
    Ok(())
}

fn root(root: &str, path: &str) -> Result<()> {
    if AbsPath::parse(root).is_err() {
        return Err(InputError::new(
            path,
            "absolute-path",
            "expected an absolute, normalised path",
        ));
    }
    Ok(())
}
