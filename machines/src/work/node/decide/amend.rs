//! `amend-criterion`: a criterion's statement changes only through an amendment
//! chain entry, and only for a criterion of this node.

use super::super::{sha256_hex, Event};
use super::guards::Guard;
use crate::work::amend::{amend_criterion, AmendRequest};
use crate::{Context, Rejection};

/// The amendment applies to the spec and its draft; once the node is planned, the
/// criterion is this node's.
pub(super) fn decide_amend_criterion(
    g: Guard<'_>,
    spec: &str,
    draft: Option<&str>,
    request: &AmendRequest,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let at = ctx.now.to_string();
    let amended = amend_criterion(spec, draft, request, &at)
        .map_err(|(code, m)| g.reject(code, Some("criterion"), &m))?;
    if let Some(run) = g.state.run() {
        let (_, node) = g.spec_node(spec, draft, &run.address)?;
        if !node.acceptance.iter().any(|c| c.id == request.criterion_id) {
            return g.no(
                "criterion-of-node",
                Some("criterion"),
                "the criterion belongs to another node",
            );
        }
    }
    Ok(vec![Event::CriterionAmended {
        request: request.clone(),
        at,
        spec_sha256_before: sha256_hex(spec.as_bytes()),
        spec_sha256_after: sha256_hex(amended.as_bytes()),
    }])
}
