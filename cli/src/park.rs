//! `cairn park <verb>`: the park helper's wire format on stdin/stdout; recorded
//! transitions when the three journal-identity flags are given.

use std::io::Read;
use std::path::PathBuf;

use cairn::journal::Options;
use cairn::machines::park::{
    self, bind, fold, gate, observation, prepare, receipt, wire, AttemptId, EpisodeId, IntentId,
    Park,
};
use cairn::{Context, StreamId};
use serde_json::{json, Value};

use crate::args::{ParkCommand, ParkIdentity};
use crate::failure::{code, input, require_abs_path, Failure, NoJournalLocation};
use crate::output;

/// The largest stdin document accepted (bytes): a bound on memory for hostile input.
pub const MAX_INPUT: u64 = 16 * 1024 * 1024;

pub fn read_stdin() -> Result<String, Failure> {
    let mut buf = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| input("$", "stdin", &format!("cannot read stdin: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(input(
            "$",
            "input-size",
            &format!("stdin is larger than {MAX_INPUT} bytes"),
        ));
    }
    String::from_utf8(buf).map_err(|e| input("$", "utf-8", &format!("stdin is not UTF-8: {e}")))
}

pub fn document() -> Result<Value, Failure> {
    Ok(wire::parse_document(&read_stdin()?)?)
}

struct Identity {
    episode_id: EpisodeId,
    intent_id: IntentId,
    attempt_id: AttemptId,
}

fn identity(flags: &ParkIdentity) -> Result<Option<Identity>, Failure> {
    match (&flags.episode_id, &flags.intent_id, &flags.attempt_id) {
        (None, None, None) => Ok(None),
        (Some(e), Some(i), Some(a)) => Ok(Some(Identity {
            episode_id: EpisodeId::parse(e).map_err(|err| input("episode_id", "episode-id", &err.to_string()))?,
            intent_id: IntentId::parse(i).map_err(|err| input("intent_id", "intent-id", &err.to_string()))?,
            attempt_id: AttemptId::parse(a).map_err(|err| input("attempt_id", "attempt-id", &err.to_string()))?,
        })),
        _ => Err(input(
            "episode_id",
            "identity-flags",
            "--episode-id, --intent-id and --attempt-id go together: all three record the transition, none only evaluates",
        )),
    }
}

fn context() -> Context {
    crate::record::context::<Park>()
}

/// Records `command` on the episode's stream with `ctx`; a report line on stderr.
fn record(
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
    key: Option<&str>,
    episode: &EpisodeId,
    command: park::Command,
    ctx: &Context,
) -> Result<Vec<park::Event>, Failure> {
    let stream = StreamId::new(park::NAME, &episode.to_string())?;
    let done = crate::record::execute::<Park>(db, options, &stream, &command, ctx, key)?;
    match &done.receipt {
        _ if done.replayed => eprintln!(
            "cairn: idempotency key matched: returning the result recorded at version {} of {stream}; nothing written",
            done.version
        ),
        Some(r) => eprintln!(
            "cairn: recorded {} on {} (version {})",
            done.events
                .iter()
                .map(|e| <Park as cairn::Machine>::event_name(e))
                .collect::<Vec<_>>()
                .join(", "),
            stream,
            r.last_version
        ),
        None => eprintln!("cairn: nothing recorded on {stream} (no transition)"),
    }
    Ok(done.events)
}

/// Records the command `make` builds from the journal identity, when one was given.
fn record_with(
    id: Option<Identity>,
    key: Option<&str>,
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
    make: impl FnOnce(EpisodeId, IntentId, AttemptId) -> park::Command,
) -> Result<(), Failure> {
    match id {
        Some(id) => {
            let command = make(id.episode_id, id.intent_id, id.attempt_id);
            record(db, options, key, &id.episode_id, command, &context()).map(|_| ())
        }
        None if key.is_some() => Err(input(
            "idempotency_key",
            "identity-flags",
            "--idempotency-key applies to a recorded transition: give --episode-id, --intent-id and --attempt-id",
        )),
        None => Ok(()),
    }
}

/// Runs one park verb.
pub fn run(
    verb: &ParkCommand,
    key: Option<&str>,
    db: &Result<PathBuf, NoJournalLocation>,
    options: &Options,
) -> Result<u8, Failure> {
    match verb {
        ParkCommand::PrepareAttempt => {
            let v = document()?;
            let ctx = context();
            let mut prepared = prepare::prepare(&v, &ctx)?;
            if prepared.action == prepare::PrepareAction::Evaluate {
                let episode = EpisodeId::parse(&prepared.episode_id)
                    .map_err(|e| input("episode_id", "episode-id", &e.to_string()))?;
                let command = park::Command::PrepareAttempt { input: v };
                let events = record(db, options, key, &episode, command, &ctx)?;
                // The attempt is the recorded one: an idempotent retry returns the first attempt.
                for e in events {
                    if let park::Event::AttemptPrepared { attempt_id, .. } = e {
                        prepared.attempt_id = Some(attempt_id.to_string());
                    }
                }
            } else if key.is_some() {
                return Err(input(
                    "idempotency_key",
                    "nothing-to-record",
                    "this prepare-attempt records no transition",
                ));
            }
            output::json(&prepared);
        }
        ParkCommand::Evaluate(flags) => {
            let id = identity(flags)?;
            let v = document()?;
            let evaluation = fold::evaluate(&observation::parse(&v)?);
            record_with(id, key, db, options, |episode_id, intent_id, attempt_id| {
                park::Command::Evaluate {
                    episode_id,
                    intent_id,
                    attempt_id,
                    observation: v,
                }
            })?;
            output::json(&evaluation);
        }
        ParkCommand::Check => {
            let v = document()?;
            output::json(&fold::evaluate(&observation::parse(&v)?));
        }
        ParkCommand::ValidateReceipt(flags) => {
            let id = identity(flags)?;
            let text = read_stdin()?;
            let bytes = text.strip_suffix('\n').unwrap_or(&text).to_owned();
            receipt::validate_bytes(&bytes)?;
            record_with(id, key, db, options, |episode_id, intent_id, attempt_id| {
                park::Command::ValidateReceipt {
                    episode_id,
                    intent_id,
                    attempt_id,
                    receipt_bytes: bytes,
                }
            })?;
            output::json(&json!({ "valid": true }));
        }
        ParkCommand::ConfirmReadback(flags) => {
            let id = identity(flags)?;
            let v = document()?;
            let (_, readback) = receipt::confirm(&receipt::parse_readback(&v)?)?;
            record_with(id, key, db, options, |episode_id, intent_id, attempt_id| {
                park::Command::ConfirmReadback {
                    episode_id,
                    intent_id,
                    attempt_id,
                    input: v,
                }
            })?;
            output::json(&readback);
        }
        ParkCommand::BindRepository => {
            let v = document()?;
            output::json(&bind::bind(&bind::parse(&v)?)?);
        }
        ParkCommand::ResumeGate => {
            let v = document()?;
            output::json(&gate::resume_gate(&v)?);
        }
        ParkCommand::ObserveVcs { root } => {
            require_abs_path("root", root)?;
            output::json(&json!({ "checks": cairn::observe::park_vcs_checks(root) }));
        }
    }
    Ok(code::OK)
}
