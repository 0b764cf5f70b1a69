//! `cairn pr <verb>`: the PR continuation loop.

use cairn::journal::Options;
use cairn::machines::evidence::wire;
use cairn::machines::pr_loop::{
    self, classify_input, Command, Decision, Disposition, Mode, ObserveInput, Offer, PrLoop,
};
use cairn::{Machine, StreamId, Timestamp};
use serde_json::{json, Value};

use crate::args::{DecisionArg, DispositionArg, ModeArg, OfferArg, PrCommand};
use crate::failure::{input, require_abs_path, Done, Failure};
use crate::output;
use crate::park::document;
use crate::record::{Db, Recorded, Recorder, Request, Step};

fn stream(pr: &str) -> Result<StreamId, Failure> {
    let instance = pr_loop::stream_instance(pr)
        .ok_or_else(|| input("pr", "pr-url", "expected the PR's http(s) URL"))?;
    Ok(StreamId::new(pr_loop::NAME, &instance)?)
}

/// Runs `gh pr view URL --json …`: the reading and the run.
fn gh_reading(pr: &str) -> Result<(Value, cairn::machines::evidence::CommandRun), Failure> {
    stream(pr)?;
    let argv: Vec<String> = [
        "gh",
        "pr",
        "view",
        pr,
        "--json",
        "state,reviewDecision,mergeable,mergeStateStatus,statusCheckRollup,isDraft,mergedAt",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = cairn::observe::run(&argv);
    if run.exit_status.is_none() {
        return Err(input("gh", "gh-installed", "gh is not installed here: run `gh pr view` where it is and pipe its JSON to cairn on stdin"));
    }
    if run.exit_status != Some(0) {
        return Err(input(
            "pr",
            "gh-read",
            &format!("`gh pr view` failed: {}", run.stderr.trim()),
        ));
    }
    Ok((wire::parse_document(&run.stdout)?, run))
}

/// Completes the observe document: with `repo`, counts the commits since the
/// reviewed SHA itself; with `pr`, reads the PR with gh.
fn observe_input(
    mut v: Value,
    repo: &Option<String>,
    pr: &Option<String>,
) -> Result<ObserveInput, Failure> {
    if let Some(url) = pr {
        if v.get("reading").is_some() {
            return Err(input(
                "reading",
                "one-source",
                "with --pr, cairn reads the PR itself: leave `reading` out",
            ));
        }
        let (reading, _run) = gh_reading(url)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("reading".into(), reading);
            obj.insert("pr".into(), json!(url));
        }
    }
    wire::object(
        &v,
        "",
        &["pr", "reading", "destination"],
        &[
            "reviewed_sha",
            "commits_since_review",
            "unresolved_threads",
            "failure_shape",
            "tiers",
        ],
    )?;
    let mut doc: ObserveInput = wire::typed(v, "$")?;
    if let Some(repo) = repo {
        require_abs_path("repo", repo)?;
        if doc.commits_since_review.is_some() {
            return Err(input(
                "commits_since_review",
                "one-source",
                "give commits_since_review or --repo, not both",
            ));
        }
        let sha = doc.reviewed_sha.clone().ok_or_else(|| {
            input(
                "reviewed_sha",
                "required",
                "--repo counts commits since reviewed_sha: name it",
            )
        })?;
        if !cairn::machines::evidence::is_full_git_id(&sha) {
            return Err(input(
                "reviewed_sha",
                "full-head",
                "expected a full 40/64-hex commit id",
            ));
        }
        let argv = cairn::observe::git(repo, &["rev-list", &format!("{sha}..HEAD"), "--count"]);
        let run = cairn::observe::run(&argv);
        let count = if run.exit_status == Some(0) {
            run.stdout.trim().parse::<u64>().ok()
        } else {
            None
        };
        match count {
            Some(n) => doc.commits_since_review = Some(n),
            None => {
                return Err(input(
                    "reviewed_sha",
                    "freshness-unreadable",
                    &format!("`{}` failed: {}", argv.join(" "), run.stderr.trim()),
                ))
            }
        }
        doc.freshness_observation = Some(run);
    }
    Ok(doc)
}

/// What a recorded (or replayed) pr-loop transition prints: its events and the loop after them.
fn view(r: &Recorded<PrLoop>) -> Value {
    let l = r.state.looped();
    json!({
        "stream": r.stream.to_string(),
        "version": r.version,
        "events": r.names(),
        "state": PrLoop::state_name(&r.state),
        "classification": l.map(|l| &l.last),
        "rounds_seen": l.map(|l| l.rounds_seen.clone()).unwrap_or_default(),
        "next_round": l.map_or(1, |l| l.next_round()),
        "tier": l.and_then(|l| l.tier.clone()),
    })
}

/// Records a command whose input is exactly the command (the key stands for it).
fn record(rec: &Recorder, pr: &str, command: Command) -> Result<Recorded<PrLoop>, Failure> {
    rec.record(Step::new(&stream(pr)?, &command))
}

/// `observe`: the key stands for the caller's document and flags, and is looked
/// up before cairn reads the PR with gh or counts commits with git.
fn observe(
    rec: &Recorder,
    repo: &Option<String>,
    pr: &Option<String>,
) -> Result<Recorded<PrLoop>, Failure> {
    let v = document()?;
    let request = Request::new("pr observe", json!({"document": v, "repo": repo, "pr": pr}));
    let named = pr
        .clone()
        .or_else(|| v.get("pr").and_then(Value::as_str).map(str::to_owned));
    if let Some(s) = named.as_deref().map(stream).and_then(Result::ok) {
        if let Some(r) = rec.recall::<PrLoop>(&s, &request)? {
            return Ok(r);
        }
    }
    let doc = observe_input(v, repo, pr)?;
    // Classify first: a reading the table cannot place is an input error, and
    // writes nothing.
    classify_input(&doc)?;
    let s = stream(&doc.pr)?;
    let command = Command::Observe {
        input: Box::new(doc),
    };
    rec.record(Step::new(&s, &command).request(request))
}

pub fn run(verb: &PrCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let recorded = match verb {
        PrCommand::Classify { repo } => {
            let doc = observe_input(document()?, repo, &None)?;
            let c = classify_input(&doc)?;
            let mut v = json!(c);
            v["commits_since_review"] = json!(doc.commits_since_review);
            output::json(&v);
            return Ok(Done::Ok);
        }
        PrCommand::Fetch(r) => {
            let (reading, run) = gh_reading(&r.pr)?;
            output::json(&json!({ "pr": r.pr, "reading": reading, "observation": run }));
            return Ok(Done::Ok);
        }
        PrCommand::Observe { repo, pr, key } => {
            observe(&Recorder::new(db, options, key)?, repo, pr)?
        }
        PrCommand::OfferReviewRequest { pr, key } => record(
            &Recorder::new(db, options, key)?,
            &pr.pr,
            Command::OfferReviewRequest,
        )?,
        PrCommand::Confirm {
            pr,
            what,
            operator,
            key,
        } => {
            let what = match what {
                OfferArg::Merge => Offer::Merge,
                OfferArg::Ready => Offer::Ready,
                OfferArg::ReviewRequest => Offer::ReviewRequest,
            };
            record(
                &Recorder::new(db, options, key)?,
                &pr.pr,
                Command::Confirm {
                    what,
                    operator: operator.clone(),
                },
            )?
        }
        PrCommand::ResolveEscalation {
            pr,
            mode,
            decision,
            approval_token,
            key,
        } => {
            let mode = match mode {
                ModeArg::Attended => Mode::Attended,
                ModeArg::Unattended => Mode::Unattended,
            };
            let decision = match decision {
                DecisionArg::Apply => Decision::Apply,
                DecisionArg::Decline => Decision::Decline,
            };
            record(
                &Recorder::new(db, options, key)?,
                &pr.pr,
                Command::ResolveEscalation {
                    mode,
                    decision,
                    approval_token: approval_token.clone(),
                },
            )?
        }
        PrCommand::RecordMerge { pr, merged_at, key } => {
            let merged_at = Timestamp::parse(merged_at)
                .map_err(|e| input("merged_at", "timestamp", &e.to_string()))?;
            record(
                &Recorder::new(db, options, key)?,
                &pr.pr,
                Command::RecordMerge { merged_at },
            )?
        }
        PrCommand::Dispose {
            pr,
            disposition,
            reason,
            operator,
            key,
        } => {
            let disposition = match disposition {
                DispositionArg::Paused => Disposition::Paused,
                DispositionArg::Abandoned => Disposition::Abandoned,
            };
            record(
                &Recorder::new(db, options, key)?,
                &pr.pr,
                Command::Dispose {
                    disposition,
                    reason: reason.clone(),
                    operator: operator.clone(),
                },
            )?
        }
    };
    output::json(&view(&recorded));
    Ok(Done::Recorded(recorded.outcome))
}
