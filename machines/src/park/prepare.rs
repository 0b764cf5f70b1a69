//! `prepare-attempt`: stable episode/intent ids, prior-receipt dedupe, a fresh attempt id.

use serde::Serialize;
use serde_json::Value;

use super::receipt::{self, id_key};
use super::{AttemptId, EpisodeId, IntentId};
use crate::evidence::wire::{self, at, idx, InputError, Result};
use crate::Context;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrepareAction {
    Retry,
    ReturnExisting,
    Evaluate,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PriorSource {
    pub comment_id: Value,
    pub source_bytes: String,
}

/// `prepare-attempt` output.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Prepared {
    pub ready: bool,
    pub action: PrepareAction,
    pub episode_id: String,
    pub intent_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_sources: Option<Vec<PriorSource>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
    #[serde(skip)]
    pub anchor_bead: String,
}

/// Quotes a word for a POSIX shell, only when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@%+=,-".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Runs `prepare-attempt`. Fresh ids come from the context: 0 episode, 1 intent, 2 attempt.
pub fn prepare(v: &Value, ctx: &Context) -> Result<Prepared> {
    prepare_with_ids(v, &ctx.fresh_ids)
}

/// [`prepare`] with its fresh ids alone: the answer depends on nothing else of
/// the context (no clock), so a caller can answer before it reads the clock,
/// and read it only when there is something to record.
pub fn prepare_with_ids(v: &Value, fresh_ids: &[uuid::Uuid]) -> Result<Prepared> {
    let map = wire::object(
        v,
        "",
        &[
            "mode",
            "anchor_bead",
            "episode_id",
            "intent_id",
            "prior_receipts",
        ],
        &[],
    )?;
    if map.get("mode").and_then(Value::as_str) != Some("park") {
        return Err(InputError::new(
            "mode",
            "mode",
            "prepare-attempt runs in mode `park`",
        ));
    }
    let anchor = wire::nonempty(map, "", "anchor_bead")?;
    // The anchor is the retry command's one positional argument: one that reads
    // as an option, or a character a person cannot see, is refused (helper-70,
    // LOW: `--help` and U+202E were recorded and pasted into `retry_command`).
    crate::evidence::ids::refuse_option_like(&anchor, "anchor bead")
        .map_err(|e| InputError::new("anchor_bead", e.rule, &e.message))?;
    crate::evidence::names::visible(&anchor)
        .map_err(|(rule, message)| InputError::new("anchor_bead", rule, &message))?;
    let fresh = |i: usize, field: &str| {
        fresh_ids
            .get(i)
            .copied()
            .ok_or_else(|| InputError::new(field, "fresh-id", "the context minted no id"))
    };
    let episode = match wire::opt_nonempty(map, "", "episode_id")? {
        Some(s) => Some(
            EpisodeId::parse(&s)
                .map_err(|e| InputError::new("episode_id", "episode-id", e.to_string()))?,
        ),
        None => None,
    };
    let intent = match wire::opt_nonempty(map, "", "intent_id")? {
        Some(s) => Some(
            IntentId::parse(&s)
                .map_err(|e| InputError::new("intent_id", "intent-id", e.to_string()))?,
        ),
        None => None,
    };
    let priors = map
        .get("prior_receipts")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::new("prior_receipts", "type", "expected an array"))?;
    let (episode, intent) = match (episode, intent) {
        (Some(e), Some(i)) => (e, i),
        (e, i) => {
            let e = e.map_or_else(|| fresh(0, "episode_id").map(EpisodeId::from_uuid), Ok)?;
            let i = i.map_or_else(|| fresh(1, "intent_id").map(IntentId::from_uuid), Ok)?;
            return Ok(Prepared {
                ready: false,
                action: PrepareAction::Retry,
                episode_id: e.to_string(),
                intent_id: i.to_string(),
                retry_command: Some(format!(
                    "/park-work --episode-id {e} --intent-id {i} {}",
                    shell_quote(&anchor)
                )),
                receipt: None,
                prior_sources: None,
                attempt_id: None,
                anchor_bead: anchor,
            });
        }
    };

    // Every prior is read (a malformed one is refused, never skipped); every
    // matching-intent candidate is validated; they must all agree.
    let mut matching: Vec<Prior> = Vec::new();
    for (i, item) in priors.iter().enumerate() {
        let p = idx("prior_receipts", i);
        let (receipt_value, source) = prior(item, &p)?;
        if receipt_value.get("intent_id").and_then(Value::as_str)
            != Some(intent.to_string().as_str())
        {
            continue;
        }
        let r = receipt::validate(&receipt_value).map_err(|e| {
            InputError::new(at(&p, &e.field), e.rule, format!("unsafe: {}", e.message))
        })?;
        if r.episode_id != episode || r.anchor_bead != anchor {
            return Err(InputError::new(
                p,
                "identity-conflict",
                "unsafe: a receipt for this intent names another episode or anchor",
            ));
        }
        matching.push(Prior {
            semantics: r.semantics(),
            receipt: receipt_value,
            source,
        });
    }
    if let Some(first) = matching.first() {
        if matching.iter().any(|m| m.semantics != first.semantics) {
            return Err(InputError::new(
                "prior_receipts",
                "prior-receipts-agree",
                "unsafe: prior successes for this intent disagree",
            ));
        }
        // Sourced priors first, by comment id then bytes; bare ones by their canonical JSON.
        matching.sort_by_cached_key(|m| match &m.source {
            Some(s) => (0, id_key(&s.comment_id), s.source_bytes.clone()),
            None => (1, (0, 0, String::new()), m.receipt.to_string()),
        });
        let sources: Vec<PriorSource> = matching.iter().filter_map(|m| m.source.clone()).collect();
        return Ok(Prepared {
            ready: true,
            action: PrepareAction::ReturnExisting,
            episode_id: episode.to_string(),
            intent_id: intent.to_string(),
            retry_command: None,
            receipt: Some(matching.swap_remove(0).receipt),
            prior_sources: (!sources.is_empty()).then_some(sources),
            attempt_id: None,
            anchor_bead: anchor,
        });
    }
    let attempt = AttemptId::from_uuid(fresh(2, "attempt_id")?);
    Ok(Prepared {
        ready: true,
        action: PrepareAction::Evaluate,
        episode_id: episode.to_string(),
        intent_id: intent.to_string(),
        retry_command: None,
        receipt: None,
        prior_sources: None,
        attempt_id: Some(attempt.to_string()),
        anchor_bead: anchor,
    })
}

/// A validated prior success for this intent.
struct Prior {
    semantics: Value,
    receipt: Value,
    source: Option<PriorSource>,
}

/// The fields that make a prior a `{receipt, source_bytes, comment_id}` wrapper.
const WRAPPER: [&str; 3] = ["receipt", "source_bytes", "comment_id"];

/// One prior: a bare receipt, or a wrapper (any of its fields makes it one, and
/// then it has exactly all three) whose `source_bytes` parse to its `receipt`.
fn prior(item: &Value, p: &str) -> Result<(Value, Option<PriorSource>)> {
    let Some(obj) = item.as_object() else {
        return Err(InputError::new(
            p,
            "type",
            "a prior receipt is an object: a receipt, or {receipt, source_bytes, comment_id}",
        ));
    };
    if !WRAPPER.iter().any(|k| obj.contains_key(*k)) {
        return Ok((item.clone(), None));
    }
    // `object` checked all three keys are present: indexing cannot miss.
    let m = wire::object(item, p, &WRAPPER, &[])?;
    let receipt = &m["receipt"];
    if !receipt.is_object() {
        return Err(InputError::new(
            at(p, "receipt"),
            "type",
            "expected the receipt as a JSON object",
        ));
    }
    let bytes = wire::nonempty(m, p, "source_bytes")?;
    let comment_id = m["comment_id"].clone();
    let nonempty = comment_id.as_str().is_some_and(|s| !s.trim().is_empty());
    if !(nonempty || comment_id.is_u64() || comment_id.is_i64()) {
        return Err(InputError::new(
            at(p, "comment_id"),
            "comment-id",
            "a comment id is a non-empty string or an integer",
        ));
    }
    let parsed = wire::parse_document(&bytes)
        .map_err(|e| InputError::new(at(p, "source_bytes"), e.rule, e.message))?;
    if &parsed != receipt {
        return Err(InputError::new(
            at(p, "source_bytes"),
            "source-bytes-match",
            "source_bytes do not parse to the receipt beside them",
        ));
    }
    Ok((
        parsed,
        Some(PriorSource {
            comment_id,
            source_bytes: bytes,
        }),
    ))
}
