//! `release`: the closeout records what landed — the full landed commit, or for
//! destination `none` the absence and its reason — never a fabricated commit.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Thread;
use super::Refuse;
use crate::evidence::is_full_git_id;
use crate::Rejection;

/// `release`: a landed commit or a recorded absence, and a reviewed head (if named)
/// that is the full SHA code review accepted.
pub(super) fn decide_release(
    r: &Refuse,
    t: &Thread,
    release: &gates::Release,
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
        (_, Some(c), None) if is_full_git_id(c) => {}
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
    if release
        .reviewed_head
        .as_ref()
        .is_some_and(|h| !is_full_git_id(h))
    {
        return r.no("full-sha", Some("reviewed_head"), "the full reviewed head");
    }
    if let (Some(h), Some(review)) = (&release.reviewed_head, &t.gates.review) {
        if *h != review.reviewed_sha {
            return r.no(
                "reviewed-head",
                Some("reviewed_head"),
                "the reviewed head is the SHA code review accepted",
            );
        }
    }
    Ok(vec![Event::Released {
        release: release.clone(),
    }])
}
