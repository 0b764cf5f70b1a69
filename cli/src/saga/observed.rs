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
                repository: state.handed_repository,
            });
        }
    }
    Ok(out)
}

/// The revision the build loop `from` (`build-loop/<saga id>:<unit>`, refused at
/// input otherwise) handed to code review, as the journal holds it now (`None`:
/// nothing handed, or no such loop). The decision reads the loop again inside the
/// append; this only fills a reviewed SHA the caller left out.
pub(super) fn handed_by(rec: &Recorder, from: &str) -> Result<Option<String>, Failure> {
    let s = StreamId::parse(from)
        .ok()
        .filter(|s| cairn::machines::reads::build_loop_thread(s.as_str()).is_some())
        .ok_or_else(|| {
            input(
                "from",
                "build-loop-stream",
                &format!("`{from}` is not a build loop's stream: `build-loop/<saga id>:<unit>`"),
            )
        })?;
    let Some(engine) = rec.existing_engine()? else {
        return Ok(None);
    };
    Ok(match engine.read_stream_at(&s, None)?.fact {
        Some(Fact::BuildLoop { handed }) => handed.map(|c| c.to_string()),
        _ => None,
    })
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
    // An issue thread's build loop is its own issue's: another issue's loop never
    // vouches for it (found: `--issue 43` gave issue 42 PR-ready on a loop it
    // never ran).
    if let (Some(own), Some(n)) = (saga_id.strip_prefix("issue-"), issue) {
        if own != n.to_string() {
            return Err(input(
                "issue",
                "thread-issue",
                &format!("`{saga_id}`'s build loop is issue {own}'s, not issue {n}'s"),
            ));
        }
    }
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
    // Which repository the review is read fresh in: the turn merges there.
    let repository = cairn::observe::repository(&repo);
    let command = Command::PrReady {
        repo,
        handed,
        runs,
        repository,
    };
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
    let ancestor = cairn::observe::run(&gates::ancestor_plan(
        &repo,
        &gates::branch_ref(&row.branch),
        &target,
    ));
    let merge_head = row
        .merge_worktree
        .as_ref()
        .filter(|wt| std::path::Path::new(wt).exists())
        .map(|wt| Box::new(cairn::observe::run(&gates::merge_head_plan(wt))));
    let repository = cairn::observe::repository(&repo);
    let command = Command::ReleaseTurn {
        unit: unit.to_owned(),
        repo,
        target,
        ancestor: Box::new(ancestor),
        merge_head,
        repository,
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
    let s = StreamId::parse(from)
        .ok()
        .filter(|s| cairn::machines::reads::is_ship_stream(s.as_str()))
        .ok_or_else(|| {
            input(
                "from",
                "ship-stream",
                &format!("`{from}` is not a ship run's stream: `{SHIP_MACHINE}/<SHORT_ID>` (1–64 of [A-Za-z0-9._-])"),
            )
        })?;
    let fact = match rec.existing_engine()? {
        Some(engine) => engine.read_stream_at(&s, None)?.fact,
        None => None,
    };
    Ok((s, fact))
}

/// What the caller left out, from the ship run it names (`--from`): the value it
/// typed, else the run's, else an error naming `--flag` (`from` when the run
/// recorded none to take).
struct FromShip<'a> {
    from: Option<&'a str>,
    /// What the run recorded (none: no run, or no `--from`).
    recorded: Option<ShipRecord>,
}

/// `(repo, target, merged)` as a ship run recorded them.
type ShipRecord = (String, String, Option<String>);

impl<'a> FromShip<'a> {
    fn read(rec: &Recorder, from: Option<&'a str>) -> Result<(Self, Option<String>), Failure> {
        let ship = from.map(|f| ship_run(rec, f)).transpose()?;
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
        Ok((
            FromShip { from, recorded },
            ship.map(|(s, _)| s.to_string()),
        ))
    }

    /// `typed`, else what the run recorded (`take` from the triple).
    fn pick(
        &self,
        typed: Option<&str>,
        take: fn(&ShipRecord) -> Option<String>,
    ) -> Result<Option<String>, Failure> {
        if let Some(v) = typed {
            return Ok(Some(v.to_owned()));
        }
        let Some(from) = self.from else {
            return Ok(None);
        };
        match &self.recorded {
            None => Err(input(
                "from",
                cairn::machines::reads::JOURNAL_AGREES,
                &format!("the journal holds no ship run `{from}`"),
            )),
            Some(r) => match take(r) {
                Some(v) => Ok(Some(v)),
                None => Err(input(
                    "from",
                    cairn::machines::reads::JOURNAL_AGREES,
                    &format!("`{from}` has not merged: cairn has not seen its merge land (`cairn ship merge`)"),
                )),
            },
        }
    }
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
    let (ship, from) = FromShip::read(rec, m.from)?;
    let required = |v: Option<String>, field: &str| {
        v.ok_or_else(|| {
            input(
                field,
                "required",
                &format!("name --{}", field.replace('_', "-")),
            )
        })
    };
    let repo = required(ship.pick(m.repo, |r| Some(r.0.clone()))?, "repo")?;
    let target = required(ship.pick(m.target, |r| Some(r.1.clone()))?, "target")?;
    let tip = required(ship.pick(m.merged_tip, |r| r.2.clone())?, "merged_tip")?;
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
        Some(row) => gates::merged_plan(
            &repo,
            from.is_none().then_some(row.branch.as_str()),
            row.reviewed.as_ref().map(|c| c.as_str()),
            &merged_tip,
            &target,
        )
        .iter()
        .map(|argv| cairn::observe::run(argv))
        .collect(),
        None => vec![],
    };
    let repository = cairn::observe::repository(&repo);
    let command = Command::MarkMerged {
        unit: m.unit.to_owned(),
        holder: m.holder.to_owned(),
        merged_tip,
        repo,
        target,
        runs,
        from,
        repository,
    };
    gate_verb(rec, saga_id, Step::new(&s, &command).request(request))
}

/// What `saga release` names.
pub(super) struct ReleaseArgs<'a> {
    pub destination: &'a str,
    pub reviewed_head: Option<&'a str>,
    pub landed_commit: Option<&'a str>,
    pub absence_reason: Option<&'a str>,
    pub repo: Option<&'a str>,
    pub target: Option<&'a str>,
    pub from: Option<&'a str>,
}

/// `saga release --destination D [--reviewed-head SHA] (--landed-commit SHA --repo
/// DIR --target T | --from ship/SHORT_ID | --absence-reason R)`: a landed commit is
/// recorded only as cairn's reading shows it on the branch it landed on.
pub(super) fn release(rec: &Recorder, saga_id: &str, a: ReleaseArgs<'_>) -> Result<Done, Failure> {
    let (ship, from) = FromShip::read(rec, a.from)?;
    let landed_commit = ship
        .pick(a.landed_commit, |r| r.2.clone())?
        .map(|c| {
            full_commit(
                "landed_commit",
                "landed-commit",
                "the full landed commit (and no absence reason)",
                &c,
            )
        })
        .transpose()?;
    let s = stream(saga_id)?;
    // The reviewed head is the thread's own recorded review unless typed (a
    // typed one the review contradicts is refused by the machine): nothing is
    // copied by hand from one verb's output into the next.
    let reviewed_head = match a.reviewed_head {
        Some(h) => Some(full_commit(
            "reviewed_head",
            "full-sha",
            "the full reviewed head",
            h,
        )?),
        None => rec
            .current::<Saga>(&s)?
            .thread()
            .and_then(|t| t.gates.review.as_ref())
            .map(|review| review.reviewed_sha.clone()),
    };
    // Where the landed commit is read: typed, else the ship run's; none without one.
    let place = match &landed_commit {
        Some(_) => {
            let repo = ship.pick(a.repo, |r| Some(r.0.clone()))?;
            let target = ship.pick(a.target, |r| Some(r.1.clone()))?;
            let (Some(repo), Some(target)) = (repo, target) else {
                let field = if a.repo.is_none() { "repo" } else { "target" };
                return Err(input(
                    field,
                    "landed-observed",
                    "a landed commit is recorded only as cairn reads it: name the repository (--repo) and the branch it landed on (--target), or the ship run that merged it (--from)",
                ));
            };
            Some((
                crate::failure::require_abs_path("repo", &repo)?,
                not_option_like("target", &target)?,
            ))
        }
        None => {
            if let Some(field) = [("repo", a.repo), ("target", a.target)]
                .iter()
                .find_map(|(f, v)| v.map(|_| *f))
            {
                return Err(input(
                    field,
                    "landed-commit",
                    "nothing landed to read: --repo and --target read a landed commit",
                ));
            }
            None
        }
    };
    // The key stands for the request; a retry reads git no more.
    let request = Request::new(
        "saga release",
        json!({ "destination": a.destination, "reviewed_head": a.reviewed_head, "landed_commit": a.landed_commit, "absence_reason": a.absence_reason, "repo": a.repo, "target": a.target, "from": a.from }),
    );
    if let Some(done) = rec.recall::<Saga>(&s, &request)? {
        print_gates(saga_id, &done);
        return Ok(Done::Recorded(done.outcome));
    }
    let landed = match (&landed_commit, place) {
        (Some(commit), Some((repo, target))) => {
            let run = cairn::observe::run(&gates::ancestor_plan(&repo, commit, &target));
            let repository = cairn::observe::repository(&repo);
            Some(Box::new(gates::LandedReading {
                repo,
                target,
                run,
                repository,
            }))
        }
        _ => None,
    };
    let command = Command::Release {
        release: gates::Release {
            destination: a.destination.to_owned(),
            reviewed_head,
            landed_commit,
            absence_reason: a.absence_reason.map(str::to_owned),
        },
        landed,
        from,
    };
    gate_verb(rec, saga_id, Step::new(&s, &command).request(request))
}
