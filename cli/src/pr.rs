//! `cairn pr <verb>`: the PR continuation loop. cairn's own observations (the `gh pr
//! view` reading with `--pr`, the freshness runs with `--repo`, the merge's gh or
//! git evidence) are planned by the machine, run by the one observer
//! (`cairn::observe::run`) and recorded in the command, so the audit re-reads them.

use cairn::journal::Options;
use cairn::machines::evidence::{fresh, CommandRun, FullCommit, RefName};
use cairn::machines::pr_loop::identity::PrId;
use cairn::machines::pr_loop::{
    self, canonical_pr, classify::Classification, classify_input, plan, Command, Decision,
    Disposition, FreshnessRuns, MergeEvidence, Mode, ObserveInput, Observed, Offer, PrLoop, State,
};
use cairn::{Machine, StreamId};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use crate::args::{DecisionArg, DispositionArg, ModeArg, OfferArg, PrCommand};
use crate::failure::{input, require_abs_path, Done, Failure};
use crate::input::document;
use crate::output;
use crate::record::{Db, Recorded, Recorder, Request, Step};

/// The stream of the PR a URL names (any spelling of it: one identity).
fn stream(pr: &str) -> Result<StreamId, Failure> {
    let instance = PrId::parse(pr, "pr")?.instance();
    Ok(StreamId::new(pr_loop::NAME, &instance)?)
}

/// Runs cairn's `gh pr view` of the PR: the reading and the run.
fn gh_reading(pr: &str) -> Result<(Value, CommandRun), Failure> {
    let pr = canonical_pr(pr)?;
    let run = cairn::observe::run(&plan::gh_view(&pr));
    if run.exit_status.is_none() {
        return Err(input("gh", "gh-installed", "gh is not installed here: run `gh pr view` where it is and pipe its JSON to cairn on stdin"));
    }
    if !run.ok() {
        return Err(input(
            "pr",
            "gh-read",
            &format!("`gh pr view` failed: {}", run.stderr.trim()),
        ));
    }
    let reading = plan::read_gh(&pr, &run, "gh")?;
    Ok((reading, run))
}

/// Completes the observe document with what cairn observes itself: with `pr`, the
/// reading (gh); with `repo`, the freshness runs of the reviewed SHA (git).
fn observe_input(
    mut v: Value,
    repo: &Option<String>,
    pr: &Option<String>,
) -> Result<(ObserveInput, Observed), Failure> {
    let mut observed = Observed::default();
    if let Some(url) = pr {
        if v.get("reading").is_some() {
            return Err(input(
                "reading",
                "one-source",
                "with --pr, cairn reads the PR itself: leave `reading` out",
            ));
        }
        let canonical = canonical_pr(url)?;
        if let Some(given) = v.get("pr").and_then(Value::as_str) {
            if canonical_pr(given)? != canonical {
                return Err(input("pr", "one-source", "`pr` names another PR than --pr"));
            }
        }
        let (reading, run) = gh_reading(url)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("reading".into(), reading);
            obj.insert("pr".into(), json!(url));
        }
        // A refusal is checked against the schema as completed, reading included.
        crate::input::completed(v.to_string());
        observed.gh = Some(run);
    }
    let doc = pr_loop::parse_document(v)?;
    if let Some(repo) = repo {
        let repo = require_abs_path("repo", repo)?;
        if doc.commits_since_review.is_some() {
            return Err(input(
                "commits_since_review",
                "one-source",
                "give commits_since_review or --repo, not both",
            ));
        }
        let sha = doc.reviewed_sha.as_deref().ok_or_else(|| {
            input(
                "reviewed_sha",
                "required",
                "--repo observes freshness since reviewed_sha: name it",
            )
        })?;
        let sha = FullCommit::parse(sha).map_err(|_| {
            input(
                "reviewed_sha",
                "full-head",
                "expected a full 40/64-hex commit id",
            )
        })?;
        let runs = cairn::observe::run_all(&fresh::plan(&repo, &sha));
        observed.freshness = Some(FreshnessRuns { repo, runs });
    }
    Ok((doc, observed))
}

/// What a recorded (or replayed) pr-loop transition prints: its events and the loop after them.
fn view(r: &Recorded<PrLoop>) -> PrView {
    use pr_loop::Event;
    let l = r.state.looped();
    let proposal = match &r.state {
        State::EscalationProposed { proposal, .. } => Some(proposal),
        _ => None,
    };
    let merged_at = r.events.iter().find_map(|e| match e {
        Event::MergedByLoop { merged_at, .. } | Event::MergeObserved { merged_at } => {
            Some(merged_at.clone())
        }
        _ => None,
    });
    PrView {
        stream: r.stream.to_string(),
        version: r.version,
        events: r.names(),
        state: PrLoop::state_name(&r.state),
        pr: l.map(|l| l.pr.clone()),
        classification: l.map(|l| l.last.clone()),
        reading_source: l.and_then(|l| l.source).map(|s| json!(s)),
        freshness: l.and_then(|l| l.freshness.as_ref()).map(|f| json!(f)),
        rounds_seen: l.map(|l| l.rounds_seen.clone()).unwrap_or_default(),
        next_round: l.map_or(1, |l| l.next_round()),
        tier: l.and_then(|l| l.tier.clone()),
        current_tier: l.and_then(|l| l.current_tier()).map(str::to_owned),
        proposal: proposal.map(|p| json!(p)),
        merged_at: merged_at.flatten().map(|m| json!(m)),
    }
}

/// What every recording `pr` verb prints: this transition and the loop after it.
/// The loop's own values are shown as the machine serializes them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PrView {
    /// `pr-loop/<host>/<owner>/<repo>/pull/<n>`.
    pub stream: String,
    /// The stream's version after this transition.
    pub version: u64,
    /// The event types this transition recorded.
    pub events: Vec<&'static str>,
    /// The loop's state name.
    pub state: &'static str,
    /// The PR's canonical URL (null before the first observation).
    pub pr: Option<String>,
    /// The last classification.
    pub classification: Option<Classification>,
    /// Where the last reading came from.
    pub reading_source: Option<Value>,
    /// The review's freshness, as last observed.
    pub freshness: Option<Value>,
    /// The rounds seen.
    pub rounds_seen: Vec<u32>,
    /// The round the next failing observation would start.
    pub next_round: u32,
    /// The tier an applied escalation set.
    pub tier: Option<String>,
    /// The current tier (the applied one, else the base tier).
    pub current_tier: Option<String>,
    /// The escalation proposed (`escalation-proposed`).
    pub proposal: Option<Value>,
    /// When the merge happened, once observed.
    pub merged_at: Option<Value>,
}

/// `pr fetch`: the PR's canonical URL, cairn's strict reading of it and the gh run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Fetched {
    pub pr: String,
    /// The strict reading (`cairn schema pr observe` shows its shape, `reading`).
    pub reading: Value,
    /// The `gh pr view` run it was read from.
    pub observation: cairn::machines::evidence::CommandRun,
}

/// `pr classify`: the classification of the document, with the review's freshness.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Classified {
    #[serde(flatten)]
    pub classification: Classification,
    /// Commits on the PR since the review (cairn's count, else the caller's).
    pub commits_since_review: Option<u64>,
    /// cairn's freshness observation, when it made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<Value>,
}

/// Records a command whose input is exactly the command (the key stands for it).
fn record(rec: &Recorder, pr: &str, command: Command) -> Result<Recorded<PrLoop>, Failure> {
    rec.record(Step::new(&stream(pr)?, &command))
}

/// `observe`: the key stands for the caller's document and flags, and is looked
/// up before cairn reads the PR with gh or runs git.
fn observe(
    rec: &Recorder,
    repo: &Option<String>,
    pr: &Option<String>,
    from: &Option<String>,
) -> Result<Recorded<PrLoop>, Failure> {
    let mut v = document()?;
    let request = Request::new(
        "pr observe",
        json!({"document": v, "repo": repo, "pr": pr, "from": from}),
    );
    let named = pr
        .clone()
        .or_else(|| v.get("pr").and_then(Value::as_str).map(str::to_owned));
    if let Some(s) = named.as_deref().map(stream).and_then(Result::ok) {
        if let Some(r) = rec.recall::<PrLoop>(&s, &request)? {
            return Ok(r);
        }
    }
    // A loop that follows a thread is observed against it, named or not.
    let from = match from {
        Some(f) => Some(f.clone()),
        None => match named.as_deref().map(stream).and_then(Result::ok) {
            Some(s) => rec
                .current::<PrLoop>(&s)?
                .looped()
                .and_then(|l| l.thread.clone()),
            None => None,
        },
    };
    if let Some(thread) = &from {
        from_thread(rec, thread, &mut v)?;
    }
    let (doc, observed) = observe_input(v, repo, pr)?;
    // Classify first: a reading the table cannot place is an input error, and
    // writes nothing.
    let placed = classify_input(&doc, &observed)?;
    let s = stream(&placed.pr)?;
    let command = Command::Observe {
        input: Box::new(doc),
        observed: Box::new(observed),
        from,
    };
    rec.record(Step::new(&s, &command).request(request))
}

/// `record-merge`: cairn observes the merge itself — its `gh pr view` reading, or
/// (with `--target`) git's answer to whether the target contains the confirmed
/// head. Keyed on the caller's flags, looked up before anything runs.
fn record_merge(
    rec: &Recorder,
    pr: &str,
    target: &Option<String>,
    repo: &Option<String>,
) -> Result<Recorded<PrLoop>, Failure> {
    let s = stream(pr)?;
    let request = Request::new(
        "pr record-merge",
        json!({"pr": pr, "target": target, "repo": repo}),
    );
    if let Some(r) = rec.recall::<PrLoop>(&s, &request)? {
        return Ok(r);
    }
    let target = target
        .as_deref()
        .map(|t| {
            RefName::parse(t)
                .map_err(|e| input("target", e.rule, "a branch name, never an option"))?;
            plan::TargetBranch::parse(t).map_err(|e| {
                input(
                    "target",
                    e.rule,
                    "the branch the merge landed on (not HEAD, a commit id or a revision expression)",
                )
            })
        })
        .transpose()?;
    // `--repo` without `--target` is refused by clap (`requires`).
    let repo = repo
        .as_deref()
        .map(|r| require_abs_path("repo", r))
        .transpose()?;
    // Only a confirmed merge with a head cairn observed fresh can be checked; any
    // other state is refused by `decide`, and nothing runs.
    let state = rec.current::<PrLoop>(&s)?;
    let confirmed = match &state {
        State::MergeConfirmed { l, .. } => l.merge_head().cloned(),
        _ => None,
    };
    let evidence = match (confirmed, target) {
        (None, _) => None,
        (Some(_), None) => Some(MergeEvidence::Gh {
            run: gh_reading(pr)?.1,
        }),
        (Some(fresh), Some(target)) => {
            let repo = repo.unwrap_or(fresh.repo);
            let run = cairn::observe::run(&plan::merge_plan(&repo, &fresh.reviewed_sha, &target));
            Some(MergeEvidence::Git { repo, target, run })
        }
    };
    let command = Command::RecordMerge {
        merged_at: None,
        evidence: evidence.map(Box::new),
    };
    rec.record(Step::new(&s, &command).request(request))
}

pub fn run(verb: &PrCommand, db: &Db, options: &Options) -> Result<Done, Failure> {
    let recorded = match verb {
        PrCommand::Classify { repo } => {
            let (doc, observed) = observe_input(document()?, repo, &None)?;
            let placed = classify_input(&doc, &observed)?;
            let counted = placed
                .freshness
                .as_ref()
                .and_then(|f| f.result.commits_since());
            output::json(&Classified {
                commits_since_review: counted.or(doc.commits_since_review),
                freshness: placed.freshness.as_ref().map(|f| json!(f)),
                classification: placed.classification,
            });
            return Ok(Done::Ok);
        }
        PrCommand::Fetch(r) => {
            let (reading, run) = gh_reading(&r.pr)?;
            output::json(&Fetched {
                pr: canonical_pr(&r.pr)?,
                reading,
                observation: run,
            });
            return Ok(Done::Ok);
        }
        PrCommand::Observe {
            repo,
            pr,
            from,
            key,
        } => observe(&Recorder::new(db, options, key)?, repo, pr, from)?,
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
        PrCommand::RecordMerge {
            pr,
            target,
            repo,
            key,
        } => record_merge(&Recorder::new(db, options, key)?, &pr.pr, target, repo)?,
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

/// Fills what the document leaves out from the saga thread it names: the reviewed
/// SHA from its recorded code review, its rounds. A value the document types is
/// left as typed (the machine refuses one the thread contradicts, having read it).
fn from_thread(rec: &Recorder, thread: &str, v: &mut Value) -> Result<(), Failure> {
    let saga_id = thread
        .strip_prefix("saga/")
        .filter(|_| cairn::machines::reads::is_saga_stream(thread))
        .ok_or_else(|| {
            input(
                "from",
                "saga-stream",
                &format!("`{thread}` is not a saga thread's stream: `saga/<saga id>`"),
            )
        })?;
    let s = StreamId::new(cairn::machines::saga::NAME, saga_id)?;
    let state = rec.current::<cairn::machines::saga::Saga>(&s)?;
    let Some(t) = state.thread() else {
        return Err(input(
            "from",
            cairn::machines::reads::JOURNAL_AGREES,
            &format!("`{thread}` is not in the journal"),
        ));
    };
    if let Some(obj) = v.as_object_mut() {
        if !obj.contains_key("reviewed_sha") {
            if let Some(review) = &t.gates.review {
                obj.insert("reviewed_sha".into(), json!(review.reviewed_sha));
            }
        }
        if !obj.contains_key("saga_rounds_seen") && !t.rounds_seen.is_empty() {
            // The thread's set (a save may repeat a round: `2|1|2`).
            let mut rounds = t.rounds_seen.clone();
            rounds.sort_unstable();
            rounds.dedup();
            obj.insert("saga_rounds_seen".into(), json!(rounds));
        }
    }
    Ok(())
}
