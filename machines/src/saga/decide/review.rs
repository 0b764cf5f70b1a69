//! The review gates: a recorded plan review (`doc-review`), a recorded code review
//! (`review`), an operator's `override`, and `pr-ready`, which passes only when both
//! gates pass and cairn's own readings show the reviewed SHA is still `HEAD`'s
//! (an ancestor, nothing landed since).

use super::super::event::Event;
use super::super::gates;
use super::super::state::{GateRecord, Thread};
use super::Refuse;
use crate::evidence::fresh::{self, Freshness};
use crate::evidence::{AbsPath, CommandRun, FullCommit};
use crate::reads::{Fact, JOURNAL_AGREES};
use crate::{Context, Rejection, Violation};

/// A recorded plan review with unresolved P0/P1 findings and no doc-review override.
pub fn doc_review_blocks(g: &GateRecord) -> bool {
    g.doc_review
        .as_ref()
        .is_some_and(|d| d.unresolved_p0_p1 > 0)
        && !overridden(g, gates::Gate::DocReview, None)
}

/// The doc-review gate has passed: a recorded plan review with no unresolved P0/P1
/// finding, or a recorded doc-review override. (No recorded review has not passed.)
pub fn doc_review_passed(g: &GateRecord) -> bool {
    g.doc_review
        .as_ref()
        .is_some_and(|d| d.unresolved_p0_p1 == 0)
        || overridden(g, gates::Gate::DocReview, None)
}

/// The review gate passes for the recorded review: its typed outcome passes, or a
/// review-gate override was recorded for that reviewed SHA.
pub(super) fn review_passes(g: &GateRecord, review: &gates::Review) -> bool {
    review.outcome.passes() || overridden(g, gates::Gate::ReviewGate, Some(&review.reviewed_sha))
}

/// An override of `gate` is recorded (for the review gate: of the review at `sha`).
fn overridden(g: &GateRecord, gate: gates::Gate, sha: Option<&FullCommit>) -> bool {
    g.overrides.iter().any(|o| {
        o.gate == gate && (gate == gates::Gate::DocReview || o.reviewed_sha.as_ref() == sha)
    })
}

/// `doc-review`: the plan review names its source.
pub(super) fn decide_doc_review(
    r: &Refuse,
    review: &gates::DocReview,
) -> Result<Vec<Event>, Rejection> {
    r.nonempty("source", &review.source)?;
    Ok(vec![Event::DocReviewRecorded {
        review: review.clone(),
    }])
}

/// `review`: the code review names the full SHA it reviewed (by its type: the
/// CLI refuses a short one at input, rule `full-sha`).
pub(super) fn decide_review(
    r: &Refuse,
    t: &Thread,
    review: &gates::Review,
    from: Option<&str>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    if let Some(stream) = from {
        r.all(handed_agrees(stream, t, review, ctx))?;
    }
    Ok(vec![Event::ReviewRecorded {
        review: review.clone(),
    }])
}

/// A review that names its unit's build loop reviews what that loop handed: the
/// loop is this thread's, the journal holds it, and its handed revision is the
/// reviewed SHA (never a SHA copied by hand from elsewhere).
fn handed_agrees(
    stream: &str,
    t: &Thread,
    review: &gates::Review,
    ctx: &Context,
) -> Vec<Violation> {
    let no =
        |field: &str, message: String| vec![Violation::new(JOURNAL_AGREES, Some(field), message)];
    match crate::reads::build_loop_thread(stream) {
        Some(thread) if thread == t.saga_id => {}
        Some(thread) => {
            return no(
                "from",
                format!(
                    "`{stream}` is a build loop of `{thread}`, not of `{}`",
                    t.saga_id
                ),
            )
        }
        None => {
            return no(
                "from",
                format!("`{stream}` is not a build loop: `build-loop/<saga id>:<unit>`"),
            )
        }
    }
    match ctx.read(stream) {
        Some(read) if read.version > 0 => match &read.fact {
            Some(Fact::BuildLoop { handed: Some(c) }) if *c == review.reviewed_sha => vec![],
            Some(Fact::BuildLoop { handed: Some(c) }) => no(
                "reviewed_sha",
                format!(
                    "`{stream}` handed {c} to code review, not {}",
                    review.reviewed_sha
                ),
            ),
            _ => no(
                "from",
                format!("`{stream}` has handed nothing to code review (no green iteration)"),
            ),
        },
        _ => no(
            "from",
            format!("the journal holds no build loop `{stream}`"),
        ),
    }
}

/// `override`: a rationale and an operator; a review-gate override waives the
/// recorded review (and only that SHA's).
pub(super) fn decide_override(
    r: &Refuse,
    t: &Thread,
    gate: gates::Gate,
    rationale: &str,
    operator: &str,
) -> Result<Vec<Event>, Rejection> {
    r.nonempty("rationale", rationale)?;
    r.nonempty("operator", operator)?;
    let reviewed_sha = match gate {
        gates::Gate::DocReview => None,
        gates::Gate::ReviewGate => match &t.gates.review {
            Some(review) => Some(review.reviewed_sha.clone()),
            None => {
                return r.no(
                    "review-recorded",
                    Some("gate"),
                    "a review-gate override waives a recorded review: record it first",
                )
            }
        },
    };
    Ok(vec![Event::OverrideRecorded {
        r#override: gates::Override {
            gate,
            rationale: rationale.to_owned(),
            operator: operator.to_owned(),
            reviewed_sha,
        },
    }])
}

/// `pr-ready`: every blocking gate is named at once — the doc-review gate, the
/// review outcome, the build loop (the reviewed SHA is a revision an iteration went
/// green at and handed to code review), and freshness read back from cairn's own
/// runs (`evidence::fresh`): only `Fresh` passes. A review-gate override waives the
/// outcome and commits landed on top of the review; it never waives unchecked work,
/// a checkout that does not hold the reviewed commit, nor a reading that failed.
pub(super) fn decide_pr_ready(
    r: &Refuse,
    t: &Thread,
    repo: &AbsPath,
    handed: &[gates::Handed],
    (runs, repository): (&[CommandRun], &[CommandRun]),
) -> Result<Vec<Event>, Rejection> {
    let g = &t.gates;
    let mut blocks = vec![];
    if !doc_review_passed(g) {
        blocks.push(Violation::new(
            "doc-review-gate",
            None,
            match &g.doc_review {
                Some(d) => format!(
                    "{} unresolved P0/P1 finding(s) ({}): only a recorded doc-review override passes",
                    d.unresolved_p0_p1, d.source
                ),
                None => "no plan-review result is recorded".to_owned(),
            },
        ));
    }
    let Some(review) = &g.review else {
        blocks.push(Violation::new(
            "review-gate",
            None,
            "no code-review outcome is recorded",
        ));
        r.all(blocks)?;
        return r.no("review-gate", None, "blocked");
    };
    let waived = overridden(g, gates::Gate::ReviewGate, Some(&review.reviewed_sha));
    if !review.outcome.passes() && !waived {
        blocks.push(Violation::new(
            "review-gate",
            Some("outcome"),
            format!("the review outcome blocks PR-ready: {:?}", review.outcome),
        ));
    }
    // Every handed revision is full by its type (the build loop's journaled
    // `handed_to_code_review`).
    let unit = handed.iter().find(|h| h.revision == review.reviewed_sha);
    if handed.is_empty() {
        blocks.push(Violation::new(
            "build-loop-green",
            Some("reviewed_sha"),
            "no build-loop iteration went green (no handed_to_code_review): back to the build loop, never a review of unchecked work",
        ));
    } else if unit.is_none() {
        let list = handed
            .iter()
            .map(|h| format!("{} at {}", h.unit, h.revision))
            .collect::<Vec<_>>()
            .join(", ");
        blocks.push(Violation::new(
            "build-loop-green",
            Some("reviewed_sha"),
            format!("the reviewed SHA is not a revision the build loop went green at ({list}): review the handed revision, or back to the build loop"),
        ));
    }
    let freshness = fresh::read(repo, &review.reviewed_sha, runs);
    match &freshness {
        Freshness::Fresh => {}
        Freshness::Stale { .. } if waived => {}
        Freshness::Stale { commits } => blocks.push(Violation::new(
            "review-gate",
            Some("reviewed_sha"),
            format!("stale review: {commits} commit(s) since the reviewed SHA; re-run code review (or a recorded review-gate override)"),
        )),
        Freshness::NotAncestor => blocks.push(Violation::new(
            "review-gate",
            Some("reviewed_sha"),
            "the reviewed SHA is not an ancestor of HEAD (an old, diverged or rewritten checkout): never fresh, and no override makes it so",
        )),
        Freshness::Unknown { reason } => blocks.push(Violation::new(
            "review-gate",
            Some("reviewed_sha"),
            format!("freshness could not be read ({reason}): fails closed"),
        )),
    }
    // Which repository the review was read fresh in: the turn merges there and
    // the release lands there (saga rules 9; helper-79: a merge made in a clone
    // was credited to the unit, and its release recorded).
    let anchor = crate::evidence::git::repository_of(repo, repository);
    match (&anchor, unit.and_then(|h| h.repository.as_deref())) {
        (None, _) => blocks.push(Violation::new(
            "repository-read",
            Some("repo"),
            "which repository REPO is (its git common dir and that directory on disk) could not be read: fails closed",
        )),
        // The review is read fresh where the build loop went green (saga rules 10;
        // helper-80: PR-ready, the turn and the merge all in a throwaway clone
        // credited the thread with a merge its repository never saw).
        (Some(a), Some(built)) if a != built => blocks.push(Violation::new(
            "same-repository",
            Some("repo"),
            format!(
                "REPO is not the repository the build loop went green in (`{}`): PR-ready reads the review fresh there",
                built.split(' ').next().unwrap_or(built)
            ),
        )),
        _ => {}
    }
    // The thread's repository is the one its first PR-ready read (saga rules 11;
    // helper-81: a build loop, review and PR-ready run again in a clone moved the
    // anchor there, and the merge, release and QA followed).
    if let (Some(a), Some(first)) = (&anchor, g.repository.as_deref()) {
        if a != first {
            blocks.push(Violation::new(
                "same-repository",
                Some("repo"),
                format!(
                    "REPO is not the thread's repository (`{}`, where its first PR-ready read the review)",
                    first.split(' ').next().unwrap_or(first)
                ),
            ));
        }
    }
    r.all(blocks)?;
    Ok(vec![Event::ReadyForPr {
        reviewed_sha: review.reviewed_sha.clone(),
        unit: unit.map(|h| h.unit.clone()),
        commits_since_review: freshness.commits_since(),
        count: None,
        runs: runs.to_vec(),
        repository: anchor,
    }])
}
