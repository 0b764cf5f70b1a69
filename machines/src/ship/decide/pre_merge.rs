//! `pre-merge` (§phase-3-ship-agent steps 1–4): the ship leaf's report, the squash
//! evidence, and the pre-merge checks on the worktree.

use serde_json::Value;

use super::super::event::Event;
use super::super::gates::{self, Gate, Squash};
use super::super::history;
use super::super::recovery::Failure;
use super::super::report::{PreMergeReport, ReRebase};
use super::guards::Guard;
use crate::evidence::{CommandRun, FullCommit};
use crate::reads::{Fact, Sieve};
use crate::{Context, Outcome, Rejection};

/// `pre-merge`: a squash (or its fall-back) names the full pre-squash commit and a
/// squash lists its roll-ups; a re-rebase conflict asks the operator (nothing
/// verified); else the plan ran, and tests, lint, the gates (the changed paths
/// inside the accepted scope among them) and the review jobs decide; a pass binds
/// the tip it read, the one commit `merge` may merge.
pub(super) fn decide_pre_merge(
    guard: Guard<'_>,
    report: &Value,
    runs: &[CommandRun],
    work_nodes: &[String],
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    for (i, node) in work_nodes.iter().enumerate() {
        if !crate::reads::is_work_node_stream(node) {
            return Err(guard.bad(
                &format!("work_nodes[{i}]"),
                "work-node-stream",
                "a work node's stream: `work-node/<spec>:<address>`",
            ));
        }
    }
    let p = &run.params;
    let r: PreMergeReport = guard.parse(report)?;
    // A phase-3 packet may carry the leaf's `verdict` (the wire format's, not
    // read otherwise): a leaf that says it stopped is not merged on (helper-56).
    if let Some(v) = r.extra.get("verdict") {
        if v.as_str().map_or(true, |v| v.starts_with("stopped")) {
            return Err(guard.bad(
                "report.verdict",
                "consistent-evidence",
                "the leaf reports it stopped (or a verdict that is not text): cairn does not \
                 check a stopped leaf's work for the merge",
            ));
        }
    }
    let pre = r.pre_squash_sha.as_deref();
    match (r.squash, pre) {
        (Squash::NotApplicable, None) => {}
        (Squash::NotApplicable, Some(_)) => {
            return Err(guard.bad(
                "report.pre_squash_sha",
                "consistent-evidence",
                "no squash: no pre-squash commit",
            ))
        }
        // The report is the caller's document: its field stays text, checked here.
        (_, Some(s)) if FullCommit::parse(s).is_ok() => {}
        _ => {
            return Err(guard.bad(
                "report.pre_squash_sha",
                "full-head",
                "a squash (or its fall-back) names the full pre-squash commit",
            ))
        }
    }
    if r.squash == Squash::Squashed && r.rollups.is_empty() {
        return Err(guard.bad("report.rollups", "required", "a squash lists its roll-ups"));
    }
    if r.rebase_outcome_3_2 == ReRebase::Conflict {
        if !runs.is_empty() {
            return Err(guard.bad(
                "runs",
                "not-verified",
                "a conflicted rebase is not verified",
            ));
        }
        return Ok(vec![Event::TiebreakerRaised {
            number: 3,
            context: "the phase-3 re-rebase hit a conflict rerere could not clear".into(),
            proposed: "ask the operator".into(),
            phase: 3,
        }]);
    }
    let shipped = if r.squash == Squash::NotApplicable {
        gates::premerge_tip(p, runs)
    } else {
        pre.and_then(|s| FullCommit::parse(s).ok())
    };
    // Once named, a node the journal holds is checked by every later pre-merge of
    // the run: a retry that leaves it out cannot drop the guard. (A name the journal
    // does not hold vouches for nothing and stops this one; it is not kept.)
    // The nodes that worked in this run's worktree ship with it, named or not
    // (found: a node whose criterion failed at the shipped commit, left unnamed,
    // stopped nothing).
    let work_nodes = &history::ship_nodes(run, work_nodes, ctx.scanned(Sieve::PlacedNodes));
    // The plan, then (once the commits it merges are read) the ancestries
    // `failed-work-absent` needs of the nodes outside the run.
    let mut plan = gates::premerge_plan(
        p,
        &run.repo_root,
        if r.squash == Squash::NotApplicable {
            None
        } else {
            pre
        },
    );
    let worktree = p.worktree_path.as_str();
    let placed = || ctx.scanned(Sieve::PlacedNodes);
    let targets = shipped
        .as_ref()
        .map(|s| history::targets(s, gates::premerge_tip(p, runs).as_ref()));
    if let Some(t) = &targets {
        plan.extend(history::plan(worktree, t, work_nodes, placed()));
    }
    guard.exact("runs", runs, &plan)?;
    let history = targets
        .as_ref()
        .map(|t| history::read(worktree, t, work_nodes, placed(), runs));
    let in_scope = run.in_scope_paths.clone().unwrap_or_default();
    let mut g = gates::premerge_gates(p, &run.repo_root, runs, (r.squash, pre), &in_scope);
    g.push(Gate {
        name: "review-jobs-closed".into(),
        outcome: if r.open_review_jobs == 0 {
            Outcome::Pass
        } else {
            Outcome::Fail
        },
        detail: format!("{} open review jobs", r.open_review_jobs),
    });
    if !work_nodes.is_empty() {
        g.push(nodes_vouch(work_nodes, shipped.as_ref(), ctx));
    }
    if let Some(gate) = history
        .as_ref()
        .and_then(|h| history::gate(h, work_nodes, placed()))
    {
        g.push(gate);
    }
    let kept: Vec<String> = work_nodes
        .iter()
        .filter(|n| run.work_nodes.contains(n) || ctx.read(n).is_some_and(|r| r.version > 0))
        .cloned()
        .collect();
    let (failure, code) = if !r.tests_pass || !r.lint_clean {
        (Some(Failure::TestLint), "stopped:test_lint_fail".to_owned())
    } else if let Some(f) = g.iter().find(|g| g.outcome != Outcome::Pass) {
        (
            Some(Failure::PreMerge),
            format!("stopped:pre-merge:{}", f.name),
        )
    } else {
        (None, String::new())
    };
    let tip = gates::premerge_tip(p, runs);
    Ok(vec![match (failure, tip) {
        (None, Some(tip)) => Event::PreMergeChecked {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            tip: Some(tip),
            shipped: shipped.clone(),
            vouched: shipped.filter(|_| !work_nodes.is_empty()),
            work_nodes: kept.clone(),
            // The merge re-applies the rule on these readings.
            history,
        },
        // Not reached: a passing `tip-read` gate read a full commit id.
        (None, None) => Event::PreMergeStopped {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            failure: Failure::PreMerge,
            code: "stopped:pre-merge:tip-read".into(),
            work_nodes: kept.clone(),
        },
        (Some(failure), _) => Event::PreMergeStopped {
            report: r,
            runs: runs.to_vec(),
            gates: g,
            failure,
            code,
            work_nodes: kept.clone(),
        },
    }])
}

/// `work-nodes-verified`: every named node (read by the engine) vouches for the
/// commit this run ships — the pre-squash commit a squash kept the tree of, else
/// the tip — by a passing latest verification of exactly that commit, in a stage
/// where it stands. A node the journal does not hold, or a commit that could not
/// be read, is `unknown`; a node that verified another commit (a fix landed after
/// it, a rebase moved it) or was rejected since is `fail`. Either stops the run.
pub(super) fn nodes_vouch(
    work_nodes: &[String],
    shipped: Option<&FullCommit>,
    ctx: &Context,
) -> Gate {
    const NAME: &str = "work-nodes-verified";
    let Some(shipped) = shipped else {
        return Gate::new(
            NAME,
            Outcome::Unknown,
            "the shipped commit could not be read",
        );
    };
    let mut unknown = vec![];
    let mut failed = vec![];
    for node in work_nodes {
        match ctx.read(node) {
            Some(read) if read.version > 0 => match &read.fact {
                Some(Fact::WorkNode {
                    stage, verified, ..
                }) => {
                    if !crate::reads::VOUCHING_STAGES.contains(&stage.as_str()) {
                        failed.push(format!("`{node}` is at `{stage}`"));
                    } else if !verified.contains(shipped) {
                        failed.push(format!(
                            "`{node}` verified {}, not {shipped}",
                            if verified.is_empty() {
                                "nothing".to_owned()
                            } else {
                                verified
                                    .iter()
                                    .map(|c| c.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }
                        ));
                    }
                }
                _ => unknown.push(format!("`{node}` states no work node's verification")),
            },
            _ => unknown.push(format!("the journal holds no work node `{node}`")),
        }
    }
    Gate::judged(
        NAME,
        failed,
        unknown,
        match work_nodes.len() {
            1 => format!("the work node verified {shipped}"),
            n => format!("{n} work nodes verified {shipped}"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::Read;

    fn sha(c: char) -> FullCommit {
        FullCommit::parse(&c.to_string().repeat(40)).expect("40 hex digits")
    }

    /// A context that read each `(stream, version, stage, verified)`.
    fn ctx(reads: &[(&str, u64, &str, &[char])]) -> Context {
        let at = crate::Timestamp::parse("2026-12-03T09:00:00Z").expect("a fixed time parses");
        let mut ctx = Context::new(at, vec![]);
        ctx.reads = reads
            .iter()
            .map(|(stream, version, stage, verified)| Read {
                stream: (*stream).into(),
                version: *version,
                state: (*stage).into(),
                fact: (*version > 0).then(|| Fact::WorkNode {
                    stage: (*stage).into(),
                    verified: verified.iter().map(|c| sha(*c)).collect(),
                    worker: None,
                    tree: None,
                    repository: None,
                    failed: vec![],
                    latest: None,
                }),
                rules: None,
            })
            .collect();
        ctx
    }

    fn outcome(nodes: &[&str], shipped: Option<char>, c: &Context) -> Outcome {
        let nodes: Vec<String> = nodes.iter().map(|s| (*s).into()).collect();
        nodes_vouch(&nodes, shipped.map(sha).as_ref(), c).outcome
    }

    #[test]
    fn every_node_must_vouch_for_exactly_the_shipped_commit_in_a_standing_stage() {
        let (a, b) = ("work-node/k:a", "work-node/k:b");
        let both = ctx(&[(a, 3, "verified", &['1']), (b, 5, "done", &['0', '1'])]);
        assert_eq!(outcome(&[a, b], Some('1'), &both), Outcome::Pass);
        // Another commit (a fix after the verification), or no readable commit.
        assert_eq!(outcome(&[a, b], Some('2'), &both), Outcome::Fail);
        assert_eq!(outcome(&[a, b], None, &both), Outcome::Unknown);
        // Rejected since it verified: its verification no longer stands.
        let rejected = ctx(&[(a, 4, "rejected", &['1'])]);
        assert_eq!(outcome(&[a], Some('1'), &rejected), Outcome::Fail);
        // Not in the journal (version 0, or not read at all): unknown, never a pass.
        let absent = ctx(&[(a, 0, "unplanned", &[])]);
        assert_eq!(outcome(&[a], Some('1'), &absent), Outcome::Unknown);
        assert_eq!(outcome(&[b], Some('1'), &absent), Outcome::Unknown);
        // A failure outranks an unknown.
        let mixed = ctx(&[(a, 3, "verified", &['2'])]);
        assert_eq!(outcome(&[a, b], Some('1'), &mixed), Outcome::Fail);
    }
}
