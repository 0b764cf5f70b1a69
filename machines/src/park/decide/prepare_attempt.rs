//! `prepare-attempt`: recorded only when it hands out a fresh attempt; a new
//! attempt of an open episode keeps its episode, intent and anchor.

use serde_json::Value;

use super::super::event::Event;
use super::super::prepare;
use super::super::state::{AttemptId, EpisodeId, IntentId, State};
use super::Refuse;
use crate::{Context, Rejection, Violation};

/// `prepare-attempt`: the input prepares (else nothing is recorded), its ids parse,
/// and an existing episode is still open and keeps its identity and anchor.
pub(super) fn decide_prepare_attempt(
    r: &Refuse,
    input: &Value,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let state = r.state;
    let prepared = prepare::prepare(input, ctx).map_err(|e| r.input(e))?;
    if prepared.action != prepare::PrepareAction::Evaluate {
        return Ok(vec![]);
    }
    let bad = |e: crate::Error| r.rejection("id", None, &e.to_string());
    let episode_id = EpisodeId::parse(&prepared.episode_id).map_err(bad)?;
    let intent_id = IntentId::parse(&prepared.intent_id).map_err(bad)?;
    let attempt_id =
        AttemptId::parse(prepared.attempt_id.as_deref().unwrap_or_default()).map_err(bad)?;
    if let Some(ep) = state.episode() {
        let mut v = Vec::new();
        if matches!(state, State::SafeToClose { .. }) {
            v.push(Violation::new(
                "episode-open",
                None,
                "the episode is already safe to close: pass its receipt as a prior receipt",
            ));
        }
        if ep.episode_id != episode_id {
            v.push(Violation::new(
                "episode-matches",
                Some("episode_id"),
                "the stream belongs to another episode",
            ));
        }
        if ep.intent_id != intent_id {
            v.push(Violation::new(
                "intent-preserved",
                Some("intent_id"),
                format!("this episode's intent is {}", ep.intent_id),
            ));
        }
        if ep.anchor_bead != prepared.anchor_bead {
            v.push(Violation::new(
                "anchor-preserved",
                Some("anchor_bead"),
                format!("this episode's anchor is {}", ep.anchor_bead),
            ));
        }
        r.all(v)?;
    }
    Ok(vec![Event::AttemptPrepared {
        episode_id,
        intent_id,
        anchor_bead: prepared.anchor_bead,
        attempt_id,
        at: ctx.now.clone(),
    }])
}
