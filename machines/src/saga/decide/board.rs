//! `board`: the lifecycle board moves only by the table's (Stage, Status) pairs;
//! the plan-review and build-start moves only once the plan review passed; Verify
//! only after the merge and the non-production deployment; a record of half
//! the pair is recorded as a half-write, a failure.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Thread;
use super::review::doc_review_passed;
use super::Refuse;
use crate::Rejection;

/// `board`: the boundary's pair (none for `review-accepted`), the submitted pair if
/// named, merged and deployed before Verify, and the field the record wrote.
pub(super) fn decide_board(
    r: &Refuse,
    t: &Thread,
    boundary: &str,
    written_field: &str,
    deployment: Option<&gates::Deployment>,
    retro_trigger_fired: bool,
    submitted: Option<&(String, String)>,
) -> Result<Vec<Event>, Rejection> {
    let g = &t.gates;
    let pair = gates::board_pair(boundary, retro_trigger_fired)
        .map_err(|m| r.rejection("board-boundary", Some("boundary"), &m))?;
    if let Some((st, su)) = submitted {
        if pair != Some((st.as_str(), su.as_str())) {
            return r.no("board-pair", Some("pair"), &format!("`{st} / {su}` is not the pair `{boundary}` submits: only the table's pairs are allowed"));
        }
    }
    let Some((stage, status)) = pair else {
        // `review-accepted` submits nothing.
        return Ok(vec![]);
    };
    // Work starts (and the plan counts as reviewed) only once the plan review
    // passed: no move over an open P0/P1 finding, nor without a recorded review.
    if matches!(boundary, "plan-review-pass" | "build-start") && !doc_review_passed(g) {
        return r.no(
            "doc-review-gate",
            Some("boundary"),
            match &g.doc_review {
                Some(_) => "an unresolved P0/P1 plan-review finding is open: only a recorded doc-review override passes",
                None => "no plan-review result is recorded: the move waits for the plan review",
            },
        );
    }
    if boundary == "merge-and-deploy" {
        if !g.landed() {
            return r.no(
                "merged-first",
                Some("boundary"),
                "Verify only after the merge",
            );
        }
        if !matches!(
            deployment,
            Some(gates::Deployment::Succeeded | gates::Deployment::NoDeployableSoftware)
        ) {
            return r.no("deployed-first", Some("deployment"), "Verify only after the non-production deployment succeeded (or there is no deployable software)");
        }
    }
    let (stage, status) = (stage.to_owned(), status.to_owned());
    match written_field {
        "Stage+Status" => Ok(vec![Event::BoardMoved {
            boundary: boundary.to_owned(),
            stage,
            status,
        }]),
        "Status" | "Stage" => Ok(vec![Event::BoardHalfWrite {
            boundary: boundary.to_owned(),
            stage,
            status,
            written_field: written_field.to_owned(),
        }]),
        _ => r.no(
            "board-record",
            Some("written_field"),
            "the lifecycle record's field: `Stage+Status` (or a half)",
        ),
    }
}
