//! The saga verbs whose commands carry git runs cairn made itself: `pr-ready`
//! (the shared freshness readings), `merge-turn release` (ancestry and
//! `MERGE_HEAD`) and `merge-turn merged` (the branch in the tip, the tip on the
//! target). Each keys the caller's request and recalls it before any git runs.

use cairn::journal::Options;
use cairn::machines::build_loop::{self, BuildLoop};
use cairn::machines::evidence::fresh;
use cairn::machines::reads::{Fact, SHIP_MACHINE};
use cairn::machines::saga::{gates, Command, Saga};
use cairn::StreamId;
use serde_json::json;

use super::{full_commit, gate_verb, load, not_option_like, print_gates, stream};
use crate::failure::{input, Done, Failure};
use crate::record::{Db, Recorder, Request, Step};

/// The revisions the build loop handed to code review for `issue`: each unit's
/// last green revision, read from its journaled `build-loop/issue-<N>:<unit>` stream
/// (cairn's own record of the loop, not a file a caller could edit).
fn handed(rec: &Recorder, issue: &str) -> Result<Vec<gates::Handed>, Failure> {
    let Some(engine) = rec.existing_engine()? else {
        return Ok(vec![]);
    };
    let prefix = format!("{}/issue-{issue}:", build_loop::NAME);
    let mut out = vec![];
    for info in engine.journal().streams()? {
        let Some(unit) = info.stream.strip_prefix(&prefix) else {
            continue;
        };
        if info.machine != build_loop::NAME {
            continue;
        }
        let (state, _) = engine.load::<BuildLoop>(&StreamId::parse(&info.stream)?)?;
        if let Some(revision) = state.handed_to_code_review {
            out.push(gates::Handed {
                unit: unit.to_owned(),
                revision,
            });
        }
    }
    Ok(out)
}

/// `saga pr-ready --repo DIR [--issue N]`.
pub(super) fn pr_ready(
    rec: &Recorder,
    db: &Db,
    options: &Options,
    saga_id: &str,
    repo: &str,
    issue: Option<u64>,
) -> Result<Done, Failure> {
    let repo = crate::failure::require_abs_path("repo", repo)?;
    let s = stream(saga_id)?;
    // Whose build loop: `--issue`, else the thread's own issue number.
    let issue = issue
        .map(|n| n.to_string())
        .or_else(|| saga_id.strip_prefix("issue-").map(str::to_owned));
    // The key stands for the request; a retry counts nothing again.
    let request = Request::new("saga pr-ready", json!({ "repo": repo, "issue": issue }));
    if let Some(done) = rec.recall::<Saga>(&s, &request)? {
        print_gates(saga_id, &done);
        return Ok(Done::Recorded(done.outcome));
    }
    let state = load(db, options, &s)?;
    let sha = state
        .thread()
        .and_then(|t| t.gates.review.as_ref())
        .map(|r| r.reviewed_sha.clone());
    let ctx = rec.context::<Saga>()?;
    // The shared freshness readings (ancestry, then the count), run only
    // when a review names its SHA: nothing to read otherwise.
    let runs = match sha {
        Some(sha) => fresh::plan(&repo, &sha)
            .iter()
            .map(|argv| cairn::observe::run(argv))
            .collect(),
        None => vec![],
    };
    let handed = match &issue {
        Some(n) => handed(rec, n)?,
        None => vec![],
    };
    let command = Command::PrReady { repo, handed, runs };
    gate_verb(
        rec,
        saga_id,
        Step::new(&s, &command).at(ctx).request(request),
    )
}

/// `saga merge-turn release --unit U --repo DIR --target T`.
pub(super) fn release_turn(
    rec: &Recorder,
    db: &Db,
    options: &Options,
    saga_id: &str,
    unit: &str,
    repo: &str,
    target: &str,
) -> Result<Done, Failure> {
    let repo = crate::failure::require_abs_path("repo", repo)?;
    let target = not_option_like("target", target)?;
    let s = stream(saga_id)?;
    // The key stands for the request; a retry reads git no more.
    let request = Request::new(
        "saga merge-turn release",
        json!({ "unit": unit, "repo": repo, "target": target }),
    );
    if let Some(done) = rec.recall::<Saga>(&s, &request)? {
        print_gates(saga_id, &done);
        return Ok(Done::Recorded(done.outcome));
    }
    let state = load(db, options, &s)?;
    let row = state
        .thread()
        .and_then(|t| t.gates.units.get(unit).cloned())
        .ok_or_else(|| input("unit", "merging", "the unit does not hold the merge turn"))?;
    let ancestor = cairn::observe::run(&gates::ancestor_plan(&repo, &row.branch, &target));
    let merge_head = row
        .merge_worktree
        .as_ref()
        .filter(|wt| std::path::Path::new(wt).exists())
        .map(|wt| Box::new(cairn::observe::run(&gates::merge_head_plan(wt))));
    let command = Command::ReleaseTurn {
        unit: unit.to_owned(),
        repo,
        target,
        ancestor: Box::new(ancestor),
        merge_head,
    };
    gate_verb(rec, saga_id, Step::new(&s, &command).request(request))
}

/// What `merge-turn merged` names.
pub(super) struct MergedArgs<'a> {
    pub unit: &'a str,
    pub holder: &'a str,
    pub merged_tip: Option<&'a str>,
    pub repo: Option<&'a str>,
    pub target: Option<&'a str>,
    pub from: Option<&'a str>,
}

/// The ship run a merge names, as the journal holds it now: its stream (refused at
/// input unless `ship/<SHORT_ID>`) and what it states. The decision reads it again
/// inside the append; this reading only fills what the caller left out.
fn ship_run(rec: &Recorder, from: &str) -> Result<(StreamId, Option<Fact>), Failure> {
    let ship_stream = |message: &str| input("from", "ship-stream", message);
    let s =
        StreamId::parse(from).map_err(|_| ship_stream("`ship/<SHORT_ID>`: a ship run's stream"))?;
    if s.machine() != SHIP_MACHINE {
        return Err(ship_stream(&format!(
            "`{from}` is a `{}` stream: name the ship run as `ship/<SHORT_ID>`",
            s.machine()
        )));
    }
    let fact = match rec.existing_engine()? {
        Some(engine) => engine.read_stream_at(&s, None)?.fact,
        None => None,
    };
    Ok((s, fact))
}

/// `saga merge-turn merged --unit U --holder H (--merged-tip SHA --repo DIR --target T
/// | --from ship/SHORT_ID)`: the holder's merge, recorded only as cairn's readings
/// show it (the unit's branch in the tip, the tip on the target) and, with
/// `--from`, only as the ship run recorded it.
pub(super) fn merged(
    rec: &Recorder,
    db: &Db,
    options: &Options,
    saga_id: &str,
    m: MergedArgs<'_>,
) -> Result<Done, Failure> {
    let ship = m.from.map(|from| ship_run(rec, from)).transpose()?;
    // What the caller left out comes from the ship run; what it typed stays as
    // typed, and the decision refuses it if the run disagrees.
    let recorded = match ship.as_ref().and_then(|(_, fact)| fact.as_ref()) {
        Some(Fact::Ship {
            repo,
            target,
            merged,
            ..
        }) => Some((
            repo.clone(),
            target.clone(),
            merged.as_ref().map(|c| c.to_string()),
        )),
        _ => None,
    };
    let from = m.from.unwrap_or_default();
    let pick = |typed: Option<&str>, field: &str, from_ship: Option<String>| {
        if let Some(v) = typed {
            return Ok(v.to_owned());
        }
        from_ship.ok_or_else(|| match &recorded {
            None => input(
                "from",
                "journal-agrees",
                &format!("the journal holds no ship run `{from}` to take --{} from", field.replace('_', "-")),
            ),
            Some(_) => input(
                "from",
                "journal-agrees",
                &format!("`{from}` has not merged: cairn has not seen its merge land (`cairn ship merge`)"),
            ),
        })
    };
    let repo = pick(m.repo, "repo", recorded.as_ref().map(|r| r.0.clone()))?;
    let target = pick(m.target, "target", recorded.as_ref().map(|r| r.1.clone()))?;
    let tip = pick(
        m.merged_tip,
        "merged_tip",
        recorded.as_ref().and_then(|r| r.2.clone()),
    )?;
    let repo = crate::failure::require_abs_path("repo", &repo)?;
    let target = not_option_like("target", &target)?;
    let merged_tip = full_commit(
        "merged_tip",
        "full-commit",
        "the full merged tip (40 or 64 lower-case hex digits)",
        &tip,
    )?;
    let s = stream(saga_id)?;
    // The key stands for the request; a retry reads git no more.
    let request = Request::new(
        "saga merge-turn merged",
        json!({ "unit": m.unit, "holder": m.holder, "merged_tip": m.merged_tip, "repo": m.repo, "target": m.target, "from": m.from }),
    );
    if let Some(done) = rec.recall::<Saga>(&s, &request)? {
        print_gates(saga_id, &done);
        return Ok(Done::Recorded(done.outcome));
    }
    let state = load(db, options, &s)?;
    // No row, no branch to read: the machine refuses (`holds-turn`) with nothing run.
    let runs = match state.thread().and_then(|t| t.gates.units.get(m.unit)) {
        Some(row) => gates::merged_plan(&repo, &row.branch, &merged_tip, &target)
            .iter()
            .map(|argv| cairn::observe::run(argv))
            .collect(),
        None => vec![],
    };
    let command = Command::MarkMerged {
        unit: m.unit.to_owned(),
        holder: m.holder.to_owned(),
        merged_tip,
        repo,
        target,
        runs,
        from: ship.map(|(s, _)| s.to_string()),
    };
    gate_verb(rec, saga_id, Step::new(&s, &command).request(request))
}
