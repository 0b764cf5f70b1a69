//! `release`: the closeout records what landed — the full landed commit, or for
//! destination `none` the absence and its reason — never a fabricated commit. A
//! commit lands only through the gates upstream of it: code review's outcome
//! passes, PR-ready passed for that review, the release is bound to the reviewed
//! head, and the thread's destination merges at all.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Thread;
use super::review::review_passes;
use super::{ship_link, Refuse};
use crate::evidence::FullCommit;
use crate::{Context, Rejection, Violation};

/// What stands behind a landed commit: cairn's reading of where it landed, and
/// the ship run that merged it, when named.
#[derive(Clone, Copy)]
pub(super) struct Landed<'a> {
    pub reading: Option<&'a gates::LandedReading>,
    pub from: Option<&'a str>,
}

/// The landed commit as cairn's reading shows it: read by exactly the planned
/// argv, and on the branch it landed on (exit 0); and, with a ship run named, the
/// run merged exactly it, there. Never a landed commit on the caller's word.
fn observed(
    commit: &FullCommit,
    landed: Landed<'_>,
    (saga_stream, anchor): (&str, Option<&str>),
    ctx: &Context,
) -> Vec<Violation> {
    let Some(reading) = landed.reading else {
        return vec![Violation::new(
            "landed-observed",
            Some("landed_commit"),
            format!("cairn has not read where `{commit}` landed: name the repository and the branch it landed on"),
        )];
    };
    let plan = gates::ancestor_plan(&reading.repo, commit, &reading.target);
    if reading.run.argv != plan {
        return vec![Violation::new(
            "evidence-bound",
            Some("landed"),
            "expected `git -C REPO merge-base --is-ancestor --end-of-options LANDED TARGET`",
        )];
    }
    let mut out = match reading.run.exit_status {
        Some(0) => vec![],
        Some(1) => vec![Violation::new(
            "landed-observed",
            Some("landed_commit"),
            format!("git shows `{commit}` is not on `{}`", reading.target),
        )],
        _ => vec![Violation::new(
            "landed-observed",
            Some("landed_commit"),
            format!(
                "git could not read whether `{commit}` is on `{}`: nothing is recorded on trust",
                reading.target
            ),
        )],
    };
    // Read in the repository PR-ready read the review fresh in (saga rules 9).
    out.extend(super::turn::same_repository(
        anchor,
        &reading.repo,
        &reading.repository,
        "repo",
    ));
    if let Some(ship) = landed.from {
        out.extend(ship_link::agrees(
            ship,
            ctx,
            ship_link::Expect {
                saga: saga_stream,
                branch: None,
                repo: &reading.repo,
                target: &reading.target,
                merged: (commit, "landed_commit"),
            },
        ));
    }
    out
}

/// `release`: a landed commit or a recorded absence, and a reviewed head (if named)
/// that is the SHA code review accepted (both full by their types). A landed commit also needs every
/// upstream gate (each failed one is named).
pub(super) fn decide_release(
    r: &Refuse,
    t: &Thread,
    release: &gates::Release,
    landed: Landed<'_>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    match (
        release.destination.as_str(),
        &release.landed_commit,
        &release.absence_reason,
    ) {
        ("none", None, Some(reason)) if !reason.trim().is_empty() => {}
        ("none", _, _) => {
            return r.no(
                "absence-recorded",
                Some("absence_reason"),
                "destination `none` records the absence with its reason, and no landed commit",
            )
        }
        // Full by its type: the CLI refuses a short one at input (`landed-commit`).
        (_, Some(_), None) => {}
        (_, None, _) => {
            return r.no(
                "landed-commit",
                Some("landed_commit"),
                "nothing landed: a closeout is never filled with a fabricated commit",
            )
        }
        _ => {
            return r.no(
                "landed-commit",
                Some("landed_commit"),
                "the full landed commit (and no absence reason)",
            )
        }
    }
    let g = &t.gates;
    let mut blocks = vec![];
    match &release.landed_commit {
        Some(_) => {}
        None if landed.reading.is_some() || landed.from.is_some() => {
            return r.no(
                "evidence-bound",
                Some("landed"),
                "nothing landed: no reading and no ship run stand behind a release without a landed commit",
            )
        }
        None => {}
    }
    // Nothing released while a unit is merging: the turn's merge may land yet
    // (found: `--destination none` was recorded under a held turn).
    if release.landed_commit.is_none() {
        if let Some((unit, _)) = g
            .units
            .iter()
            .find(|(_, row)| row.merge_state == gates::MergeState::Merging)
        {
            blocks.push(Violation::new(
                "turn-held",
                Some("destination"),
                format!("unit `{unit}` holds the merge turn: its merge may land yet, so nothing is released as absent"),
            ));
        }
    }
    if release.landed_commit.is_some() {
        // The release follows the merge turn (the seed's 5.4: the turn merges a
        // unit, then the release merges the parent), and lands on a branch that
        // is not a unit's own (helper-80: `--target <the unit's branch>` recorded
        // a landed commit with no turn taken and nothing merged, and QA began).
        if !g
            .units
            .values()
            .any(|row| row.merge_state == gates::MergeState::Merged)
        {
            blocks.push(Violation::new(
                "merged-first",
                Some("landed_commit"),
                "no unit's merge is recorded: the release follows the merge turn (`cairn saga merge-turn merged`)",
            ));
        }
        if let Some((unit, row)) = landed.reading.and_then(|r| {
            g.units
                .iter()
                .find(|(_, row)| row.branch == r.target.as_str())
        }) {
            blocks.push(Violation::new(
                "branch-is-target",
                Some("target"),
                format!(
                    "`{}` is unit `{unit}`'s branch: a release lands the work on another branch",
                    row.branch
                ),
            ));
        }
        if t.destination.as_deref() == Some(gates::PLAN_ONLY) {
            blocks.push(Violation::new(
                "destination",
                Some("landed_commit"),
                "the thread's destination is `plan-only`: it merges nothing",
            ));
        }
        match &g.review {
            None => {
                blocks.push(Violation::new(
                    "review-gate",
                    None,
                    "no code-review outcome is recorded: nothing lands unreviewed",
                ));
                blocks.push(Violation::new("pr-ready", None, "PR-ready has not passed"));
            }
            Some(review) => {
                if !review_passes(g, review) {
                    blocks.push(Violation::new(
                        "review-gate",
                        Some("outcome"),
                        format!(
                            "the review outcome blocks the release: {:?} (only a recorded review-gate override passes)",
                            review.outcome
                        ),
                    ));
                }
                if g.ready_for_pr.as_deref() != Some(review.reviewed_sha.as_str()) {
                    blocks.push(Violation::new(
                        "pr-ready",
                        None,
                        "PR-ready has not passed for the recorded review (`cairn saga pr-ready`)",
                    ));
                }
                if release.reviewed_head.as_deref() != Some(review.reviewed_sha.as_str()) {
                    blocks.push(Violation::new(
                        "reviewed-head",
                        Some("reviewed_head"),
                        "the release is bound to the head code review accepted: name it as the reviewed head",
                    ));
                }
            }
        }
    } else if let (Some(h), Some(review)) = (&release.reviewed_head, &g.review) {
        if *h != review.reviewed_sha {
            blocks.push(Violation::new(
                "reviewed-head",
                Some("reviewed_head"),
                "the reviewed head is the SHA code review accepted",
            ));
        }
    }
    // Last: the upstream gates name what to do first; the reading, what git shows.
    if let Some(commit) = &release.landed_commit {
        let saga_stream = format!("{}/{}", crate::reads::SAGA_MACHINE, t.saga_id);
        blocks.extend(observed(
            commit,
            landed,
            (&saga_stream, g.ready_repository.as_deref()),
            ctx,
        ));
    }
    r.all(blocks)?;
    Ok(vec![Event::Released {
        release: release.clone(),
    }])
}
