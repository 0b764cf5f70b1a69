//! The merge turn: one unit merges at a time (`take-turn`), a dead turn is released
//! only from what git shows (`release-turn`), and only the holder records its merge
//! (`mark-merged`), and only as git shows it.

use super::super::event::Event;
use super::super::gates;
use super::super::state::Thread;
use super::{ship_link, Refuse};
use crate::evidence::{AbsPath, CommandRun, FullCommit, RefName};
use crate::{Context, Rejection, Violation};

/// `take-turn`: every field named (the branch, which reaches git later through
/// `merge-base`, is one git cannot read as an option, and the merge worktree is
/// absolute, by their types), a destination that merges, no other unit merging,
/// this unit not merged yet, its branch no other unit's.
pub(super) fn decide_take_turn(
    r: &Refuse,
    t: &Thread,
    unit: &str,
    branch: &RefName,
    merge_worktree: &AbsPath,
    holder: &str,
) -> Result<Vec<Event>, Rejection> {
    for (f, v) in [
        ("unit", unit),
        ("branch", branch.as_str()),
        ("merge_worktree", merge_worktree.as_str()),
        ("holder", holder),
    ] {
        r.nonempty(f, v)?;
    }
    // A branch git takes, that a person can see: one that git cannot read would
    // hold the turn for good (no reading could ever release it).
    if let Err((rule, message)) = crate::evidence::names::branch(branch.as_str()) {
        return r.no(rule, Some("branch"), &message);
    }
    if t.destination.as_deref() == Some(gates::PLAN_ONLY) {
        return r.no(
            "destination",
            Some("unit"),
            "the thread's destination is `plan-only`: it merges nothing",
        );
    }
    // The merge turn follows PR-ready (the seed's 5.4 after 5.3): a unit's work is
    // merged only once code review passed and PR-ready held for that review.
    if t.gates.ready_for_pr.is_none() {
        return r.no(
            "pr-ready-first",
            Some("unit"),
            "PR-ready has not passed for the thread's current review: run `cairn saga pr-ready` first",
        );
    }
    // PR-ready passed for one unit's revision: that unit takes the turn (found:
    // after U1 merged, a unit never built or reviewed took it on PR-ready's word).
    if let Some(ready) = t.gates.ready_unit.as_deref().filter(|u| *u != unit) {
        return r.no(
            "pr-ready-unit",
            Some("unit"),
            &format!("PR-ready passed for unit `{ready}`'s revision, not `{unit}`'s"),
        );
    }
    // A branch as the unit names it, never a ref path (found: `refs/heads/x` was
    // taken, and no reading could release the turn: it read `refs/heads/refs/…`).
    if branch.as_str().starts_with("refs/") {
        return r.no(
            "branch-name",
            Some("branch"),
            "name the branch as `x`, not `refs/heads/x`",
        );
    }
    let units = &t.gates.units;
    if let Some((other, _)) = units
        .iter()
        .find(|(_, row)| row.merge_state == gates::MergeState::Merging)
    {
        return r.no(
            "one-merging",
            Some("unit"),
            &format!("`{other}` holds the merge turn"),
        );
    }
    if units
        .get(unit)
        .is_some_and(|row| row.merge_state == gates::MergeState::Merged)
    {
        return r.no("not-merged", Some("unit"), "the unit is already merged");
    }
    // A branch is one unit's work: another unit taking it could record the same
    // merge (the same ship run's) twice.
    if let Some((other, _)) = units
        .iter()
        .find(|(id, row)| id.as_str() != unit && row.branch == branch.as_str())
    {
        return r.no(
            "branch-taken",
            Some("branch"),
            &format!("`{branch}` is unit `{other}`'s branch"),
        );
    }
    Ok(vec![Event::TurnTaken {
        unit: unit.to_owned(),
        branch: branch.to_string(),
        merge_worktree: merge_worktree.to_string(),
        holder: holder.to_owned(),
        reviewed: t.gates.ready_for_pr.clone(),
        repository: t.gates.ready_repository.clone(),
    }])
}

/// What `release-turn` read from git, and where.
pub(super) struct Readings<'a> {
    pub unit: &'a str,
    pub repo: &'a AbsPath,
    pub target: &'a RefName,
    pub ancestor: &'a CommandRun,
    pub merge_head: Option<&'a CommandRun>,
    pub repository: &'a [CommandRun],
}

/// A reading of `repo` made where the turn's PR-ready read the review fresh, or
/// why not (saga rules 9). A turn taken before it kept no repository and is read
/// where it is named, as before.
pub(super) fn same_repository(
    anchor: Option<&str>,
    repo: &str,
    runs: &[CommandRun],
    field: &'static str,
) -> Option<Violation> {
    let anchor = anchor?;
    let Some(seen) = crate::evidence::git::repository_of(repo, runs) else {
        return Some(Violation::new(
            "same-repository",
            Some(field),
            format!("which repository `{repo}` is could not be read: nothing is recorded on trust"),
        ));
    };
    (seen != anchor).then(|| {
        Violation::new(
            "same-repository",
            Some(field),
            format!(
                "`{repo}` is not the repository PR-ready read the review fresh in (`{}`): a merge elsewhere is not this thread's",
                anchor.split(' ').next().unwrap_or(anchor)
            ),
        )
    })
}

/// `release-turn`: the unit holds the turn, the runs are exactly the planned
/// `merge-base --is-ancestor` (and `MERGE_HEAD`) readings of its branch, and git says
/// the merge is not in progress and not unknown: a live holder is never released,
/// nothing on trust.
pub(super) fn decide_release_turn(
    r: &Refuse,
    t: &Thread,
    k: Readings<'_>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let Some(row) = t
        .gates
        .units
        .get(k.unit)
        .filter(|row| row.merge_state == gates::MergeState::Merging)
    else {
        return r.no(
            "merging",
            Some("unit"),
            "the unit does not hold the merge turn",
        );
    };
    // A ship run merging the branch for this thread right now: git's "not merged
    // yet" is no sign the turn died (found: the turn was released mid-merge and
    // the run still merged). The engine scanned every run with a merge in flight.
    let thread = format!("{}/{}", crate::reads::SAGA_MACHINE, t.saga_id);
    let merging = ctx
        .scanned(crate::reads::Sieve::MergeInFlight)
        .find(|read| {
            matches!(&read.fact, Some(crate::reads::Fact::Ship { branch, acts_for: Some(a), .. })
                if *branch == row.branch && *a == thread)
        });
    if let Some(run) = merging {
        return r.no(
            "merge-in-flight",
            Some("unit"),
            &format!(
                "`{}` is merging `{}` for this thread now: the turn's holder is not dead",
                run.stream, row.branch
            ),
        );
    }
    // A ship run acting for this thread merged the branch: the turn's merge
    // happened, whatever a reading on a typed target says (found by a hostile
    // pass: a release read on another target called it not merged, and the unit
    // took the turn again on a new branch and merged a second time).
    let merged = ctx
        .scanned(crate::reads::Sieve::ThreadMerges)
        .find(|read| {
            matches!(&read.fact, Some(crate::reads::Fact::Ship { branch, acts_for: Some(a), merged: Some(_), .. })
                if *branch == row.branch && *a == thread)
        });
    if let Some(run) = merged {
        return r.no(
            "merged-by-run",
            Some("unit"),
            &format!(
                "`{}` merged `{}` for this thread: the turn's merge happened; record it (`cairn saga merge-turn merged --from {}`)",
                run.stream, row.branch, run.stream
            ),
        );
    }
    r.nonempty("target", k.target)?;
    r.all(
        same_repository(row.repository.as_deref(), k.repo, k.repository, "repo")
            .into_iter()
            .collect(),
    )?;
    if k.ancestor.argv != gates::ancestor_plan(k.repo, &gates::branch_ref(&row.branch), k.target) {
        return r.no(
            "evidence-bound",
            Some("ancestor"),
            "expected `git -C REPO merge-base --is-ancestor --end-of-options BRANCH TARGET`",
        );
    }
    if let Some(m) = k.merge_head {
        let wt = row.merge_worktree.clone().unwrap_or_default();
        if m.argv != gates::merge_head_plan(&wt) {
            return r.no(
                "evidence-bound",
                Some("merge_head"),
                "expected `git -C MERGE_WORKTREE rev-parse -q --verify --end-of-options MERGE_HEAD`",
            );
        }
    }
    match gates::turn_evidence(k.ancestor, k.merge_head) {
        gates::TurnEvidence::InProgress => r.no(
            "live-holder",
            Some("unit"),
            "a merge is in progress in the merge worktree: a live holder is never released",
        ),
        gates::TurnEvidence::Unknown => r.no(
            "turn-evidence",
            Some("unit"),
            "git could not say whether the merge happened: nothing is released on trust",
        ),
        // A merge git shows is recorded by `merged`, whose readings check what
        // merged (the reviewed commit in the tip, nothing unreviewed on the
        // branch, the branch not its own target); a dead turn's release only
        // frees a turn that merged nothing (saga rules 11; helper-81: a release
        // read on a copy of the branch, or on the branch itself, or after an
        // unreviewed commit was merged, recorded the unit merged).
        gates::TurnEvidence::Merged => r.no(
            "merged-observed",
            Some("target"),
            &format!(
                "git shows `{}` on `{}`: record the merge with `cairn saga merge-turn merged --holder {}` (its readings check what merged)",
                row.branch,
                k.target,
                row.holder.as_deref().unwrap_or("HOLDER")
            ),
        ),
        evidence => Ok(vec![Event::TurnReleased {
            unit: k.unit.to_owned(),
            evidence,
            ancestor: k.ancestor.clone(),
            merge_head: k.merge_head.cloned(),
        }]),
    }
}

/// What `mark-merged` names and what git showed about it.
pub(super) struct Merge<'a> {
    pub unit: &'a str,
    pub holder: &'a str,
    pub merged_tip: &'a FullCommit,
    pub repo: &'a AbsPath,
    pub target: &'a RefName,
    pub runs: &'a [CommandRun],
    pub from: Option<&'a str>,
    pub repository: &'a [CommandRun],
}

/// `mark-merged`: only the turn's holder (the merged tip full, the repository
/// absolute and the target not option-like by their types), and only as
/// cairn's own readings show it: the unit's branch is in the tip and the tip is in
/// the target. A state that claims a merge is never entered on a holder's word.
/// A merge that names its ship run agrees with what the journal holds of it.
pub(super) fn decide_mark_merged(
    r: &Refuse,
    t: &Thread,
    m: Merge<'_>,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let row = match t.gates.units.get(m.unit) {
        Some(row)
            if row.merge_state == gates::MergeState::Merging
                && row.holder.as_deref() == Some(m.holder) =>
        {
            row
        }
        _ => {
            return r.no(
                "holds-turn",
                Some("holder"),
                "only the turn's holder records its merge",
            )
        }
    };
    r.nonempty("target", m.target)?;
    // A branch merged into itself is no merge: every tip on it is "on the target"
    // (found: a turn taken on `main` credited main's own commit as the merge).
    if row.branch == m.target.as_str() {
        return r.no(
            "branch-is-target",
            Some("target"),
            &format!(
                "the unit's branch `{}` is the target: a merge brings a unit's branch into another",
                row.branch
            ),
        );
    }
    // Named by its ship run, the branch's part is the run's recorded merge of that
    // branch's checked tip (`ship_link`): only the tip's place is read again.
    let branch = m.from.is_none().then_some(row.branch.as_str());
    let reviewed = row.reviewed.as_ref().map(FullCommit::as_str);
    let plan = gates::merged_plan(m.repo, branch, reviewed, m.merged_tip, m.target);
    if m.runs.len() != plan.len() || m.runs.iter().zip(&plan).any(|(run, p)| &run.argv != p) {
        return r.no(
            "evidence-bound",
            Some("runs"),
            if branch.is_some() && reviewed.is_some() {
                "expected `merge-base --is-ancestor --end-of-options BRANCH REVIEWED`, `… REVIEWED TIP`, then `… TIP TARGET`"
            } else if branch.is_some() {
                "expected `merge-base --is-ancestor --end-of-options BRANCH TIP` then `… TIP TARGET`"
            } else {
                "expected `merge-base --is-ancestor --end-of-options TIP TARGET`"
            },
        );
    }
    // Each reading: exit 0 shows it, exit 1 shows it is not so, anything else
    // (an unknown commit, no repository) shows nothing — never a merge on trust.
    let shown = |run: &CommandRun, claim: String| match run.exit_status {
        Some(0) => None,
        Some(1) => Some(Violation::new(
            "merged-observed",
            Some("merged_tip"),
            format!("git shows it is not so that {claim}"),
        )),
        _ => Some(Violation::new(
            "merged-observed",
            Some("merged_tip"),
            format!("git could not read whether {claim}: nothing is recorded on trust"),
        )),
    };
    let saga_stream = format!("{}/{}", crate::reads::SAGA_MACHINE, t.saga_id);
    let mut failed: Vec<Violation> = match m.from {
        Some(ship) => ship_link::agrees(
            ship,
            ctx,
            ship_link::Expect {
                saga: &saga_stream,
                branch: Some(&row.branch),
                repo: m.repo,
                target: m.target,
                merged: (m.merged_tip, "merged_tip"),
            },
        ),
        None => vec![],
    };
    failed.extend(same_repository(
        row.repository.as_deref(),
        m.repo,
        m.repository,
        "repo",
    ));
    let mut claims = match (branch, reviewed) {
        (Some(b), Some(c)) => vec![
            format!("`{b}` holds nothing the review did not see (its tip is in {c}, the commit PR-ready passed for)"),
            format!("the commit PR-ready passed for ({c}) is in the merged tip"),
        ],
        (Some(b), None) => vec![format!("`{b}` is in the merged tip")],
        (None, _) => vec![],
    };
    claims.push(format!("the merged tip is on `{}`", m.target));
    failed.extend(
        m.runs
            .iter()
            .zip(claims)
            .filter_map(|(run, claim)| shown(run, claim)),
    );
    r.all(failed)?;
    Ok(vec![Event::UnitMerged {
        unit: m.unit.to_owned(),
        merged_tip: m.merged_tip.clone(),
        runs: m.runs.to_vec(),
    }])
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
