//! `evaluate`: the observation, folded, authorizes a checkpoint or a receipt for
//! the current attempt; an unsafe evaluation appends nothing.

use super::super::bind::BindOutput;
use super::super::command::Observed;
use super::super::event::Event;
use super::super::fold::{self, Action};
use super::super::observation;
use super::super::state::{AttemptId, EpisodeId, IntentId, Placed, State};
use super::Refuse;
use crate::evidence::Outcome;
use crate::park::observation::CheckName;
use crate::reads::{Fact, Sieve};
use crate::{Context, Rejection};

/// `evaluate`: the identity correlates, the attempt is not past evaluation, the
/// observation parses and names the prepared anchor, and no checkpoint follows an
/// authorized receipt.
pub(super) fn decide_evaluate(
    r: &Refuse,
    episode_id: &EpisodeId,
    intent_id: &IntentId,
    attempt_id: &AttemptId,
    observation: &Observed,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let state = r.state;
    let ep = r.correlate(episode_id, intent_id, attempt_id)?;
    if !matches!(
        state,
        State::Prepared { .. }
            | State::CheckpointAuthorized { .. }
            | State::ReceiptAuthorized { .. }
    ) {
        return Err(r.rejection(
            "evaluate-allowed",
            None,
            "this attempt is past evaluation: prepare a new attempt",
        ));
    }
    let obs = observation.observation().map_err(|e| r.input(e))?;
    if obs.anchor().is_some_and(|a| a != ep.anchor_bead) {
        return Err(r.rejection(
            "anchor-matches",
            Some("checks"),
            "anchor_confirmed names another anchor than the prepared episode",
        ));
    }
    journal_agrees(r, &obs, ctx)?;
    no_live_dispatch(r, &obs, ctx, Quiescent::Evaluating)?;
    let evaluation = fold::evaluate(&obs);
    Ok(match evaluation.action {
        Some(Action::Checkpoint) if !matches!(state, State::ReceiptAuthorized { .. }) => {
            vec![Event::CheckpointAuthorized {
                attempt_id: *attempt_id,
                evaluation,
            }]
        }
        Some(Action::Checkpoint) => {
            return Err(r.rejection(
                "checkpoint-after-receipt",
                None,
                "a receipt was already authorized for this attempt",
            ))
        }
        Some(Action::WriteReceipt) => vec![Event::ReceiptAuthorized {
            attempt_id: *attempt_id,
            evaluation,
            placed: placed_in(obs.binding(), ctx),
        }],
        // Unsafe: no transition.
        None => vec![],
    })
}

/// Where the journal knows better than the observation, the journal wins: a
/// `pr_merged: pass` for a PR whose loop in this journal is live and has not seen
/// the merge (`cairn pr observe` or `record-merge` records it) is refused, naming
/// the loop's stream. A loop that is not in the journal says nothing; an
/// abandoned loop no longer speaks for the PR.
fn journal_agrees(
    r: &Refuse,
    obs: &observation::Observation,
    ctx: &Context,
) -> Result<(), Rejection> {
    if obs.outcome(CheckName::PrMerged) != Outcome::Pass {
        return Ok(());
    }
    let Some(url) = obs.bead.pr_url.as_deref() else {
        return Ok(());
    };
    // Fail closed: a URL that is no PR identity cairn can read names no loop the
    // journal could be asked about, so its `pass` cannot be checked (found:
    // `%65xample`, `user@host`, `pull/7%2F` spellings skipped the read).
    let Some(stream) = crate::evidence::pr::loop_stream(url) else {
        return Err(r.rejection(
            "pr-identity",
            Some("bead.pr_url"),
            &format!(
                "pr_merged is pass for `{url}`, which is not a pull request's URL in the form {}: the journal cannot be checked",
                crate::evidence::pr::FORM
            ),
        ));
    };
    match ctx.read(&stream) {
        // A loop the journal holds (version > 0): an absent one says nothing.
        Some(read)
            if read.version > 0
                && matches!(
                read.fact,
                    Some(Fact::PrLoop {
                        merged: false,
                        live: true,
                        ..
                    })
                ) =>
        {
            Err(r.rejection(
                crate::reads::JOURNAL_AGREES,
                Some("checks.pr_merged"),
                &format!(
                    "pr_merged is pass, but the journal's `{stream}` is at `{}` and has not seen the merge: record it with `cairn pr observe` first",
                    read.state
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// When the journal's live dispatches are held against an observation's
/// `no_active_dispatch: pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quiescent {
    /// `evaluate`: the observation is the command's.
    Evaluating,
    /// `confirm-readback`: the observation is the one the receipt embeds, and a
    /// worker dispatched since it was evaluated makes the episode not quiescent.
    ReadingBack,
}

/// Where the journal knows better, the journal wins: `no_active_dispatch: pass`
/// is refused while a work node in this journal is dispatched to a worker tree in
/// the bound repository (the same git common dir) or inside the bound root (a
/// nested repository, a submodule), naming the node's stream; and
/// while one is dispatched where cairn cannot tell (a dispatch it did not observe,
/// or no binding to compare with). A node in another repository says nothing.
pub(super) fn no_live_dispatch(
    r: &Refuse,
    obs: &observation::Observation,
    ctx: &Context,
    when: Quiescent,
) -> Result<(), Rejection> {
    if obs.outcome(CheckName::NoActiveDispatch) != Outcome::Pass {
        return Ok(());
    }
    let bound = obs.binding();
    for read in ctx.scanned(Sieve::LiveDispatch) {
        let worker = match &read.fact {
            Some(Fact::WorkNode { worker, .. }) => worker.as_ref(),
            _ => None,
        };
        let why = match (worker, bound) {
            // Another repository, outside the bound root: nothing to say. A
            // nested repository or submodule inside the bound root writes in the
            // bound working tree all the same.
            (Some(w), Some(b)) if w.repository != b.common_dir && !inside(&w.tree, &b.bound_root) => {
                continue
            }
            (Some(w), Some(b)) if w.repository != b.common_dir => format!(
                "is dispatched to the worker tree `{}` inside the bound root `{}`",
                w.tree, b.bound_root
            ),
            (Some(w), Some(_)) => format!(
                "is dispatched to the worker tree `{}` in this repository",
                w.tree
            ),
            (Some(w), None) => format!(
                "is dispatched to `{}` (repository `{}`), and no binding names the bound repository to compare",
                w.tree, w.repository
            ),
            (None, _) => "is dispatched, and cairn did not observe where its worker writes".to_owned(),
        };
        let (field, message) = match when {
            Quiescent::Evaluating => (
                "checks.no_active_dispatch",
                format!(
                    "no_active_dispatch is pass, but the journal's `{}` {why}: record its verification (`cairn work verify`) or its escalation first",
                    read.stream
                ),
            ),
            Quiescent::ReadingBack => (
                "receipt_bytes",
                format!(
                    "the receipt's no_active_dispatch was pass, but the journal's `{}` {why} now: the episode is not quiescent; record the node's verification or escalation, then prepare a new attempt and evaluate it",
                    read.stream
                ),
            ),
        };
        return Err(r.rejection(crate::reads::JOURNAL_AGREES, Some(field), &message));
    }
    Ok(())
}

/// The work nodes ever placed in the bound repository (the engine scanned them,
/// `Sieve::PlacedNodes`), at the versions read: a node whose worker tree's
/// repository is the binding's, whose tree is inside the bound root, or whose
/// repository cairn never read (a dispatch recorded before it did). With no
/// binding to compare, every placed node. Fail closed, as for live dispatches:
/// the read-back then holds any of them that moves.
pub(super) fn placed_in(bound: Option<&BindOutput>, ctx: &Context) -> Vec<Placed> {
    ctx.scanned(Sieve::PlacedNodes)
        .filter(|read| match (&read.fact, bound) {
            (
                Some(Fact::WorkNode {
                    tree, repository, ..
                }),
                Some(b),
            ) => {
                repository
                    .as_deref()
                    .map_or(true, |r| r == b.common_dir.as_str())
                    || tree.as_deref().is_some_and(|t| inside(t, &b.bound_root))
            }
            _ => true,
        })
        .map(|read| Placed {
            stream: read.stream.clone(),
            version: read.version,
        })
        .collect()
}

/// Whether the absolute path `path` is `root` or under it, segment-wise.
fn inside(path: &str, root: &str) -> bool {
    path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/') || root.ends_with('/'))
}
