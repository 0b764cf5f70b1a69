//! `record-merge`: the skill merged after the operator confirmed the offered merge,
//! and cairn saw it — its own `gh pr view` reading showing `MERGED` with `mergedAt`
//! and the reviewed head, or git showing the target branch contains that head.
//! `merged-by-loop` is reachable only through `merge-confirmed`; a merge time is
//! never the caller's word.

use super::super::classify::{parse_reading, GhState};
use super::super::command::MergeEvidence;
use super::super::event::{Event, MergeVia};
use super::super::identity::canonical_pr;
use super::super::plan::{self, Contains};
use super::super::state::State;
use super::Refuse;
use crate::{Rejection, Timestamp};

/// `record-merge`: the offered merge was confirmed, and cairn's evidence shows it.
pub(super) fn decide_record_merge(
    r: &Refuse,
    merged_at: Option<&Timestamp>,
    evidence: Option<&MergeEvidence>,
) -> Result<Vec<Event>, Rejection> {
    let State::MergeConfirmed { l, .. } = r.state else {
        return Err(r.rejection(
            "merge-confirmed",
            None,
            "cairn records a merge only after the operator confirmed the offered merge",
        ));
    };
    if merged_at.is_some() {
        return Err(r.rejection(
            "merge-observed",
            Some("merged_at"),
            "a merge time is read by cairn, never given",
        ));
    }
    let Some(fresh) = l.merge_head() else {
        return Err(r.rejection(
            "merge-head",
            None,
            "the confirmed offer names no head cairn observed fresh (recorded under rules v1): observe the PR again",
        ));
    };
    let Some(evidence) = evidence else {
        return Err(r.rejection(
            "merge-observed",
            None,
            "cairn records a merge from its own gh reading or git run",
        ));
    };
    let head = &fresh.reviewed_sha;
    let refuse = |predicate: &str, message: String| Err(r.rejection(predicate, None, &message));
    match evidence {
        MergeEvidence::Gh { run } => {
            let pr = canonical_pr(&l.pr).unwrap_or_else(|_| l.pr.clone());
            let v = plan::read_gh(&pr, run, "evidence.run").map_err(|e| r.input(e))?;
            let reading = parse_reading(&v, "evidence.run.stdout").map_err(|e| r.input(e))?;
            if reading.url.as_ref().is_some_and(|u| *u != pr) {
                return refuse("same-pr", format!("the reading is of another PR than {pr}"));
            }
            if reading.state != GhState::Merged || reading.merged_at.is_none() {
                return refuse(
                    "merge-observed",
                    format!("gh shows {pr} {:?}, not merged", reading.state),
                );
            }
            match &reading.head {
                Some(h) if h == head => Ok(vec![Event::MergedByLoop {
                    merged_at: reading.merged_at,
                    via: Some(MergeVia::Gh),
                }]),
                Some(h) => refuse(
                    "merged-head",
                    format!("gh shows head {h} merged, not the reviewed and confirmed {head}"),
                ),
                None => refuse(
                    "merged-head",
                    "the reading does not name the merged head (headRefOid)".into(),
                ),
            }
        }
        // The target is a branch name by its type (`target-branch`).
        MergeEvidence::Git { repo, target, run } => {
            // Read in the repository the review was observed fresh in (found by a
            // hostile pass: another clone's local `main`, moved by hand, read as
            // the PR's merge).
            if *repo != fresh.repo {
                return Err(r.rejection(
                    "merge-repo",
                    Some("repo"),
                    &format!(
                        "the offered head was observed fresh in `{}`: a merge is read there, not in `{repo}`",
                        fresh.repo
                    ),
                ));
            }
            // Read on the branch the PR merges into, which a reading named (found:
            // `--target` naming the PR's own head branch, which holds the head by
            // construction, completed a loop where nothing merged).
            match l.base.as_deref() {
                Some(base) if base == target.as_str() && l.base_observed => {}
                Some(base) if base == target.as_str() => {
                    return Err(r.rejection(
                        "merge-target",
                        Some("target"),
                        &format!("only a reading on stdin named `{base}` as the branch the PR merges into, and it is the caller's word: observe the PR with cairn's gh reading (`pr observe --pr URL`), or record the merge from gh"),
                    ))
                }
                Some(base) => {
                    return Err(r.rejection(
                        "merge-target",
                        Some("target"),
                        &format!("the PR merges into `{base}`, not `{target}`"),
                    ))
                }
                None => {
                    return Err(r.rejection(
                        "merge-target",
                        Some("target"),
                        "no reading of this PR named the branch it merges into (`baseRefName`): observe it with cairn's gh reading (`pr observe --pr URL`), or record the merge from gh",
                    ))
                }
            }
            match plan::read_merge(repo, head, target, run) {
                Some(Contains::Yes) => Ok(vec![Event::MergedByLoop {
                    merged_at: None,
                    via: Some(MergeVia::Git {
                        target: target.clone(),
                        head: head.clone(),
                    }),
                }]),
                Some(Contains::No) => refuse(
                    "merge-observed",
                    format!("`{target}` does not contain the reviewed head {head}"),
                ),
                Some(Contains::Unreadable) => refuse(
                    "merge-observed",
                    format!(
                        "git could not tell whether `{target}` contains {head}: {}",
                        run.stderr.trim()
                    ),
                ),
                None => refuse(
                    "merge-observed",
                    "the recorded run is not cairn's merge-base check of the reviewed head".into(),
                ),
            }
        }
    }
}
