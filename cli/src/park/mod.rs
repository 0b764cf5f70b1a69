//! `cairn park <verb>`: the park helper's wire format on stdin/stdout (its exact
//! bytes: `wire_json`); recorded transitions when the three journal-identity flags
//! are given. cairn's own explanation of an answer goes to stderr.

mod wire_json;

use cairn::journal::Options;
use cairn::machines::park::{
    self, bind, fold, gate, observation, prepare, receipt, AttemptId, EpisodeId, IntentId, Park,
};
use cairn::StreamId;
use serde_json::json;

use crate::args::{ClaimGate, ParkCommand, ParkIdentity};
use crate::failure::{input, require_abs_path, Done, Failure};
use crate::input::{document, read_stdin};
use crate::record::{Db, Recorded, Recorder, Step};

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

/// The journal identity of a verb that records with it, or `None` (the verb only
/// evaluates); a key without the identity is refused.
fn journal_identity(flags: &ParkIdentity) -> Result<Option<Identity>, Failure> {
    let id = identity(flags)?;
    if id.is_none() {
        if let Some(field) = recording_flag(&flags.key) {
            return Err(input(
                field,
                "identity-flags",
                &format!(
                    "--{} applies to a recorded transition: give --episode-id, --intent-id and --attempt-id",
                    field.replace('_', "-")
                ),
            ));
        }
    }
    Ok(id)
}

/// The first flag given that only a recorded transition takes, if any.
fn recording_flag(key: &crate::args::Key) -> Option<&'static str> {
    if key.get().is_some() {
        Some("idempotency_key")
    } else if key.fencing_token.is_some() {
        Some("fencing_token")
    } else {
        None
    }
}

/// Records `command` on `episode`'s stream, with fresh ids handed out already
/// when `ids` says so.
fn record(
    rec: &Recorder,
    episode: &EpisodeId,
    command: park::Command,
    ids: Option<Vec<uuid::Uuid>>,
) -> Result<Recorded<Park>, Failure> {
    let stream = StreamId::new(park::NAME, &episode.to_string())?;
    let step = Step::new(&stream, &command);
    rec.record(match ids {
        Some(ids) => step.with_ids(ids),
        None => step,
    })
}

/// Runs one park verb.
pub fn run(verb: &ParkCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    match verb {
        ParkCommand::PrepareAttempt(key) => {
            let rec = Recorder::new(db, options, key)?;
            // A mistyped location is refused even when nothing is recorded
            // (helper-62: it read the clock first, and refused it there).
            rec.location()?;
            let v = document()?;
            // The ids are minted once: the ones handed out are the ones recorded.
            // The answer needs no clock, so the clock is read only if the step
            // records, on the session it appends on (on PostgreSQL, a prepare
            // that records nothing opens no session, and one that records opens
            // one where it opened two).
            let ids = rec.fresh_ids::<Park>();
            let mut prepared = prepare::prepare_with_ids(&v, &ids)?;
            if prepared.action != prepare::PrepareAction::Evaluate {
                if let Some(field) = recording_flag(key) {
                    return Err(input(
                        field,
                        "nothing-to-record",
                        "this prepare-attempt records no transition",
                    ));
                }
                wire_json::print(&prepared);
                return Ok(Done::Ok);
            }
            let episode = EpisodeId::parse(&prepared.episode_id)
                .map_err(|e| input("episode_id", "episode-id", &e.to_string()))?;
            let r = record(
                &rec,
                &episode,
                park::Command::PrepareAttempt { input: v },
                Some(ids),
            )?;
            // The attempt is the recorded one: an idempotent retry returns the first attempt.
            for e in &r.events {
                if let park::Event::AttemptPrepared { attempt_id, .. } = e {
                    prepared.attempt_id = Some(attempt_id.to_string());
                }
            }
            wire_json::print(&prepared);
            Ok(Done::Recorded(r.outcome))
        }
        ParkCommand::Evaluate(flags) => {
            let id = journal_identity(flags)?;
            // Parsed once: the answer and `decide` both use this parse.
            let observed = park::Observed::parse(document()?)?;
            // `Observed::parse` always keeps its parse.
            let obs = observed.parsed().expect("parsed above");
            let Some(id) = id else {
                answer(&obs, &fold::evaluate(&obs));
                return Ok(Done::Ok);
            };
            let rec = Recorder::new(db, options, &flags.key)?;
            let r = record(
                &rec,
                &id.episode_id,
                park::Command::Evaluate {
                    episode_id: id.episode_id,
                    intent_id: id.intent_id,
                    attempt_id: id.attempt_id,
                    observation: observed,
                },
                None,
            )?;
            // What was recorded is what is printed (a replay prints the first
            // evaluation); an unsafe evaluation records nothing and is printed as
            // evaluated.
            let recorded = r.events.iter().find_map(|e| match e {
                park::Event::CheckpointAuthorized { evaluation, .. }
                | park::Event::ReceiptAuthorized { evaluation, .. } => Some(evaluation.clone()),
                park::Event::AttemptPrepared { .. }
                | park::Event::ReceiptValidated { .. }
                | park::Event::ReceiptConfirmed { .. } => None,
            });
            answer(&obs, &recorded.unwrap_or_else(|| fold::evaluate(&obs)));
            Ok(Done::Recorded(r.outcome))
        }
        ParkCommand::Check => {
            let obs = observation::parse(&document()?)?;
            answer(&obs, &fold::evaluate(&obs));
            Ok(Done::Ok)
        }
        ParkCommand::ValidateReceipt(flags) => {
            let id = journal_identity(flags)?;
            let text = read_stdin()?;
            let bytes = text.strip_suffix('\n').unwrap_or(text).to_owned();
            receipt::validate_bytes(&bytes)?;
            let done = match id {
                None => Done::Ok,
                Some(id) => {
                    let rec = Recorder::new(db, options, &flags.key)?;
                    let r = record(
                        &rec,
                        &id.episode_id,
                        park::Command::ValidateReceipt {
                            episode_id: id.episode_id,
                            intent_id: id.intent_id,
                            attempt_id: id.attempt_id,
                            receipt_bytes: bytes,
                        },
                        None,
                    )?;
                    Done::Recorded(r.outcome)
                }
            };
            wire_json::print(&json!({ "valid": true }));
            Ok(done)
        }
        ParkCommand::ConfirmReadback(flags) => {
            let id = journal_identity(flags)?;
            let v = document()?;
            // The read-back answer (its reasons are not recorded) is a pure function
            // of the document the transition is decided on.
            let receipt::Confirmed {
                readback, notes, ..
            } = receipt::confirm(&receipt::parse_readback(&v)?)?;
            for note in notes {
                crate::output::stderr_line(format_args!("cairn: {note}"));
            }
            let done = match id {
                None => Done::Ok,
                Some(id) => {
                    let rec = Recorder::new(db, options, &flags.key)?;
                    let r = record(
                        &rec,
                        &id.episode_id,
                        park::Command::ConfirmReadback {
                            episode_id: id.episode_id,
                            intent_id: id.intent_id,
                            attempt_id: id.attempt_id,
                            input: v,
                        },
                        None,
                    )?;
                    Done::Recorded(r.outcome)
                }
            };
            wire_json::print(&readback);
            Ok(done)
        }
        ParkCommand::BindRepository => {
            let v = document()?;
            wire_json::print(&bind::bind(&bind::parse(&v)?)?);
            Ok(Done::Ok)
        }
        ParkCommand::ResumeGate { claim_gate } => {
            let v = document()?;
            match claim_gate {
                ClaimGate::V1 => wire_json::print(&gate::resume_gate(&v)?),
                ClaimGate::V2 => {
                    let request = gate::parse(&v)?;
                    let (lease, now) = claim_readback(db, options, &request)?;
                    let answer = gate::resume_gate_v2(&request, lease.as_ref(), &now);
                    crate::output::stderr_line(format_args!(
                        "cairn: resume-gate v2: {}",
                        answer.reason
                    ));
                    wire_json::print(&answer);
                }
            }
            Ok(Done::Ok)
        }
        ParkCommand::ObserveVcs { root } => {
            require_abs_path("repo", root)?;
            wire_json::print(&json!({ "checks": cairn::observe::park_vcs_checks(root) }));
            Ok(Done::Ok)
        }
    }
}

/// The readback gate v2 judges: the episode's claim stream as the journal holds
/// it now (`None` when there is no journal or no such stream; reading never
/// creates one), and the instant it is judged at.
fn claim_readback(
    db: &Db,
    options: &Options,
    request: &gate::Request,
) -> Result<(Option<cairn::Read>, cairn::Timestamp), Failure> {
    let reader = Recorder::reader(db, options);
    let Some(engine) = reader.existing_engine()? else {
        return Ok((None, reader.now()?));
    };
    let stream = StreamId::parse(&request.claim_stream())?;
    let read = if engine.journal().stream_version(stream.as_str())? > 0 {
        Some(engine.read_stream_at(&stream, None)?)
    } else {
        None
    };
    Ok((read, engine.now()?))
}

/// Prints an evaluation (the helper's answer) on stdout and cairn's explanation of
/// it on stderr.
fn answer(obs: &observation::Observation, evaluation: &fold::Evaluation) {
    for line in fold::explain(obs, evaluation) {
        crate::output::stderr_line(format_args!("cairn: {line}"));
    }
    wire_json::print(evaluation);
}
