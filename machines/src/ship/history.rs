//! `failed-work-absent` (ship rules 8): the commit a run ships, and the tip it
//! merges, hold no work a node outside the run failed on or stands unvouched on.
//!
//! The nodes placed in the run's worktree ship with it and must vouch for exactly
//! the commit shipped (`work-nodes-verified`). A node placed elsewhere vouches for
//! nothing the run ships, but its work can still reach the run: a branch reset to
//! an escalated node's commit, a merge of a sibling worktree, a commit fetched from
//! the clone a node worked in (found by hostile passes). So pre-merge reads, in the
//! run's worktree, whether the shipped commit — and the tip, when a squash makes
//! them two — holds each such commit, and stops when one does:
//!
//! * a node that does not vouch — outside a vouching stage, or whose latest
//!   verification failed (a `merged` or `done` node re-verified to a failure stays
//!   in its stage): any commit it verified or failed on;
//! * a node that vouches (its latest verification passed) but failed on a commit
//!   before: that commit, unless the shipped commit also holds the node's latest
//!   verified commit, and that commit holds the failed one (the fix came after
//!   the failure and ships with it).
//!
//! Commits are read by id, in the run's repository, whatever repository the node
//! was placed in: a commit the repository does not have (`git cat-file -e`) is
//! held by nothing in it. A shallow repository hides ancestry (a `shallow` file
//! any worktree can write), so there every reading is `unknown`; so is a reading
//! git could not answer, and `unknown` stops the run as a failure does. The merge
//! re-applies the rule to the nodes as they stand then, on the readings pre-merge
//! recorded: a pair it never read refuses the merge.
//!
//! Out of reach, by design: work cairn never saw (a node dispatched and never
//! verified has no commit on record) and the same change under another id (a
//! cherry-pick).

use serde::{Deserialize, Serialize};

use crate::evidence::{git, CommandRun, FullCommit};
use crate::reads::{Fact, Read, VOUCHING_STAGES};
use crate::Outcome;

use super::gates::{Gate, Runs};

/// The gate's name.
pub const GATE: &str = "failed-work-absent";

/// What a passing pre-merge read of the history of the commits it merges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The commits read: the shipped commit, then the tip when it differs (a
    /// squash).
    pub targets: Vec<FullCommit>,
    /// The ancestries read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<Holds>,
}

/// One ancestry reading: whether `descendant` holds `ancestor` (`pass`: it does;
/// `fail`: it does not, or the repository has no such commit; `unknown`: git
/// could not tell, or the repository is shallow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holds {
    pub ancestor: FullCommit,
    pub descendant: FullCommit,
    pub outcome: Outcome,
}

/// A node outside the run whose work the commits merged must not hold.
struct Suspect<'a> {
    node: &'a str,
    stage: &'a str,
    verified: &'a [FullCommit],
    failed: &'a [FullCommit],
    latest: Option<&'a FullCommit>,
}

impl Suspect<'_> {
    /// In a vouching stage, on a latest verification that passed.
    fn vouches(&self) -> bool {
        VOUCHING_STAGES.contains(&self.stage)
            && self.latest.is_some_and(|l| self.verified.contains(l))
    }
}

/// The placed nodes (`Sieve::PlacedNodes`) outside `linked` that failed on a
/// commit or do not vouch for one they verified.
fn suspects<'a>(linked: &[String], placed: impl Iterator<Item = &'a Read>) -> Vec<Suspect<'a>> {
    placed
        .filter(|r| !linked.contains(&r.stream))
        .filter_map(|r| match &r.fact {
            Some(Fact::WorkNode {
                stage,
                verified,
                failed,
                latest,
                ..
            }) => {
                let s = Suspect {
                    node: &r.stream,
                    stage,
                    verified,
                    failed,
                    latest: latest.as_ref(),
                };
                (!s.failed.is_empty() || (!s.vouches() && !s.verified.is_empty())).then_some(s)
            }
            _ => None,
        })
        .collect()
}

/// The ancestries to read, `(ancestor, descendant)`, each once, in order.
fn pairs(targets: &[FullCommit], suspects: &[Suspect<'_>]) -> Vec<(FullCommit, FullCommit)> {
    let mut out: Vec<(FullCommit, FullCommit)> = vec![];
    let mut add = |a: &FullCommit, d: &FullCommit| {
        if !out.iter().any(|(x, y)| x == a && y == d) {
            out.push((a.clone(), d.clone()));
        }
    };
    for s in suspects {
        if s.vouches() {
            for f in s.failed {
                if let Some(l) = s.latest {
                    add(f, l);
                }
                for t in targets {
                    add(f, t);
                    if let Some(l) = s.latest {
                        add(l, t);
                    }
                }
            }
        } else {
            for c in s.verified.iter().chain(s.failed) {
                for t in targets {
                    add(c, t);
                }
            }
        }
    }
    out
}

/// The commits a pre-merge reads the history of: the shipped commit, and the tip
/// when it differs.
pub fn targets(shipped: &FullCommit, tip: Option<&FullCommit>) -> Vec<FullCommit> {
    let mut out = vec![shipped.clone()];
    if let Some(t) = tip.filter(|t| *t != shipped) {
        out.push(t.clone());
    }
    out
}

/// `git -C WORKTREE rev-parse --is-shallow-repository`.
fn shallow_argv(worktree: &str) -> Vec<String> {
    git::git(worktree, &["rev-parse", "--is-shallow-repository"])
}

/// `git -C WORKTREE rev-list --count --end-of-options TARGET`: exits 0 only when
/// every commit of TARGET's history is in the repository (cairn's git reads
/// parents from the objects, never the commit-graph file), so a commit the
/// repository lacks is in none of it (found: a failed commit's object moved
/// away during pre-merge read as not held, and was merged once put back).
fn whole_argv(worktree: &str, target: &FullCommit) -> Vec<String> {
    git::git(
        worktree,
        &["rev-list", "--count", "--end-of-options", target.as_str()],
    )
}

/// `git -C WORKTREE cat-file -e --end-of-options COMMIT`: 0 the repository has
/// it, 1 it does not.
fn present_argv(worktree: &str, commit: &FullCommit) -> Vec<String> {
    git::git(
        worktree,
        &["cat-file", "-e", "--end-of-options", commit.as_str()],
    )
}

/// `git -C WORKTREE merge-base --is-ancestor --end-of-options ANCESTOR DESCENDANT`.
fn holds_argv(worktree: &str, ancestor: &FullCommit, descendant: &FullCommit) -> Vec<String> {
    git::git(
        worktree,
        &[
            "merge-base",
            "--is-ancestor",
            "--end-of-options",
            ancestor.as_str(),
            descendant.as_str(),
        ],
    )
}

/// The nodes a pre-merge checks: every node an earlier pre-merge of the run named,
/// then the new ones this one names (each once).
pub fn kept_nodes(kept: &[String], named: &[String]) -> Vec<String> {
    let mut out = kept.to_vec();
    for n in named {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// The work nodes whose last dispatch was to `worktree` (the engine scanned every
/// node ever dispatched, `Sieve::PlacedNodes`): their work is in the tree a run
/// ships. An escalated one among them too: it vouches for nothing, so it stops
/// the run as it does named (found by a hostile pass: an agent could spend the
/// remediation budget on purpose, escalate, and ship the failed work unnamed).
pub fn linked_nodes<'a>(worktree: &str, placed: impl Iterator<Item = &'a Read>) -> Vec<String> {
    placed
        .filter(|r| {
            matches!(&r.fact, Some(Fact::WorkNode { tree: Some(t), .. })
                if t.trim_end_matches('/') == worktree.trim_end_matches('/'))
        })
        .map(|r| r.stream.clone())
        .collect()
}

/// The nodes whose work a run ships and that must vouch for it: those an
/// earlier pre-merge of the run named, those this one names, and those placed in
/// the run's worktree (each once).
pub fn ship_nodes<'a>(
    run: &super::Run,
    named: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Vec<String> {
    kept_nodes(
        &kept_nodes(&run.work_nodes, named),
        &linked_nodes(&run.params.worktree_path, placed),
    )
}

/// The runs a pre-merge makes after its plan, once it has read the commits it
/// merges: whether the repository is shallow, then for each commit to look for
/// whether the repository has it, then each ancestry the rule needs.
pub fn plan<'a>(
    worktree: &str,
    targets: &[FullCommit],
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Vec<Vec<String>> {
    let pairs = pairs(targets, &suspects(linked, placed));
    if pairs.is_empty() {
        return vec![];
    }
    let mut plan = vec![shallow_argv(worktree)];
    plan.extend(targets.iter().map(|t| whole_argv(worktree, t)));
    for (a, _) in &pairs {
        let argv = present_argv(worktree, a);
        if !plan.contains(&argv) {
            plan.push(argv);
        }
    }
    plan.extend(pairs.iter().map(|(a, d)| holds_argv(worktree, a, d)));
    plan
}

/// The readings `runs` hold for the pairs the rule needs (a pair not run is
/// `unknown`).
pub fn read<'a>(
    worktree: &str,
    targets: &[FullCommit],
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
    runs: &[CommandRun],
) -> History {
    let r = Runs(runs);
    let deep = r.line(&shallow_argv(worktree)).as_deref() == Some("false");
    let read = pairs(targets, &suspects(linked, placed))
        .into_iter()
        .map(|(ancestor, descendant)| {
            // An absent commit is held by nothing only where the descendant's
            // whole history was read (it is not one of the targets when the
            // pair is a node's own: failed under its latest verified commit).
            let whole =
                targets.contains(&descendant) && r.ok(&whole_argv(worktree, &descendant)).is_some();
            let outcome = match (deep, r.yes_no(&present_argv(worktree, &ancestor))) {
                (false, _) | (_, None) => Outcome::Unknown,
                (true, Some(false)) if whole => Outcome::Fail,
                (true, Some(false)) => Outcome::Unknown,
                (true, Some(true)) => match r.yes_no(&holds_argv(worktree, &ancestor, &descendant))
                {
                    Some(true) => Outcome::Pass,
                    Some(false) => Outcome::Fail,
                    None => Outcome::Unknown,
                },
            };
            Holds {
                ancestor,
                descendant,
                outcome,
            }
        })
        .collect();
    History {
        targets: targets.to_vec(),
        read,
    }
}

/// The gate: none when no node outside the run has work to look for.
pub fn gate<'a>(
    history: &History,
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Option<Gate> {
    let suspects = suspects(linked, placed);
    if suspects.is_empty() {
        return None;
    }
    let holds = |a: &FullCommit, d: &FullCommit| {
        history
            .read
            .iter()
            .find(|h| h.ancestor == *a && h.descendant == *d)
            .map_or(Outcome::Unknown, |h| h.outcome)
    };
    let (mut failed, mut unknown) = (vec![], vec![]);
    for target in &history.targets {
        for s in &suspects {
            if s.vouches() {
                for f in s.failed {
                    match holds(f, target) {
                        Outcome::Fail => {}
                        Outcome::Unknown => unknown.push(format!(
                            "whether {target} holds {f}, where `{}` failed, could not be read",
                            s.node
                        )),
                        Outcome::Pass => {
                            let fixed = s.latest.map(|l| (l, holds(l, target), holds(f, l)));
                            match fixed {
                                Some((_, Outcome::Pass, Outcome::Pass)) => {}
                                Some((l, Outcome::Fail, _) | (l, _, Outcome::Fail)) => failed.push(format!(
                                    "{target} holds {f}, where `{}` failed, without its later verified commit {l} on top",
                                    s.node
                                )),
                                _ => unknown.push(format!(
                                    "{target} holds {f}, where `{}` failed, and whether it holds the node's later verified work could not be read",
                                    s.node
                                )),
                            }
                        }
                    }
                }
            } else {
                for c in s.verified.iter().chain(s.failed) {
                    match holds(c, target) {
                        Outcome::Fail => {}
                        Outcome::Pass => failed.push(format!(
                            "{target} holds {c}, work of `{}`, which does not vouch for it (at `{}`)",
                            s.node, s.stage
                        )),
                        Outcome::Unknown => unknown.push(format!(
                            "whether {target} holds {c}, work of `{}` (at `{}`), could not be read",
                            s.node, s.stage
                        )),
                    }
                }
            }
        }
    }
    Some(Gate::judged(
        GATE,
        failed,
        unknown,
        format!(
            "the commits merged hold no failed or unvouched work of {} node(s) outside the run",
            suspects.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(ch: char) -> FullCommit {
        // A 40-digit hex string is a full commit.
        FullCommit::parse(&ch.to_string().repeat(40)).expect("40 hex digits")
    }

    fn node(
        stream: &str,
        stage: &str,
        verified: &[char],
        failed: &[char],
        latest: Option<char>,
    ) -> Read {
        Read {
            stream: stream.into(),
            version: 3,
            state: stage.into(),
            fact: Some(Fact::WorkNode {
                stage: stage.into(),
                verified: verified.iter().map(|x| c(*x)).collect(),
                worker: None,
                tree: Some("/elsewhere".into()),
                repository: None,
                failed: failed.iter().map(|x| c(*x)).collect(),
                latest: latest.map(c),
            }),
            rules: None,
        }
    }

    /// The gate over `placed`, with `held` the pairs git answered "holds" for
    /// (every other pair read answered "does not").
    fn outcome(placed: &[Read], held: &[(char, char)], unread: &[(char, char)]) -> Option<Outcome> {
        outcome_of(&[c('e')], placed, held, unread)
    }

    /// [`outcome`] for the commits `targets`.
    fn outcome_of(
        targets: &[FullCommit],
        placed: &[Read],
        held: &[(char, char)],
        unread: &[(char, char)],
    ) -> Option<Outcome> {
        let pairs = pairs(targets, &suspects(&[], placed.iter()));
        let history = History {
            targets: targets.to_vec(),
            read: pairs
                .into_iter()
                .filter(|(a, d)| !unread.iter().any(|(x, y)| c(*x) == *a && c(*y) == *d))
                .map(|(a, d)| Holds {
                    outcome: if held.iter().any(|(x, y)| c(*x) == a && c(*y) == d) {
                        Outcome::Pass
                    } else {
                        Outcome::Fail
                    },
                    ancestor: a,
                    descendant: d,
                })
                .collect(),
        };
        gate(&history, &[], placed.iter()).map(|g| g.outcome)
    }

    #[test]
    fn an_escalated_nodes_failed_commit_in_the_shipped_commit_stops_the_run() {
        let escalated = [node("work-node/k:a", "escalated", &[], &['f'], Some('f'))];
        assert_eq!(outcome(&escalated, &[('f', 'e')], &[]), Some(Outcome::Fail));
        assert_eq!(outcome(&escalated, &[], &[]), Some(Outcome::Pass));
        // Unread (or unreadable) is never a pass.
        assert_eq!(
            outcome(&escalated, &[], &[('f', 'e')]),
            Some(Outcome::Unknown)
        );
        // A rejected node's verified work too: it vouches for nothing now.
        let rejected = [node("work-node/k:b", "rejected", &['b'], &[], Some('b'))];
        assert_eq!(outcome(&rejected, &[('b', 'e')], &[]), Some(Outcome::Fail));
    }

    #[test]
    fn a_failure_fixed_by_later_verified_work_ships_only_with_the_fix() {
        let fixed = [node("work-node/k:a", "verified", &['b'], &['f'], Some('b'))];
        // The fix on top of the failure, both shipped: a pass.
        assert_eq!(
            outcome(&fixed, &[('f', 'e'), ('b', 'e'), ('f', 'b')], &[]),
            Some(Outcome::Pass)
        );
        // The failure shipped without the fix, or a "fix" that does not hold it.
        assert_eq!(
            outcome(&fixed, &[('f', 'e'), ('f', 'b')], &[]),
            Some(Outcome::Fail)
        );
        assert_eq!(
            outcome(&fixed, &[('f', 'e'), ('b', 'e')], &[]),
            Some(Outcome::Fail)
        );
        assert_eq!(
            outcome(&fixed, &[('f', 'e'), ('b', 'e')], &[('f', 'b')]),
            Some(Outcome::Unknown)
        );
        // The failure not shipped: nothing to look for past it.
        assert_eq!(outcome(&fixed, &[], &[]), Some(Outcome::Pass));
    }

    #[test]
    fn a_node_that_vouches_is_read_only_for_its_failures() {
        let clean = [node("work-node/k:a", "verified", &['b'], &[], Some('b'))];
        assert_eq!(outcome(&clean, &[], &[]), None);
        // A linked node is the run's own: `work-nodes-verified` checks it.
        let placed = [node("work-node/k:a", "escalated", &[], &['f'], Some('f'))];
        let linked = vec!["work-node/k:a".to_owned()];
        assert!(suspects(&linked, placed.iter()).is_empty());
    }

    #[test]
    fn a_stage_that_vouches_on_a_failed_latest_verification_does_not() {
        // Found: a `merged` node re-verified to a failure stays `merged`; its
        // failed commit is its latest, and shipping it stops the run.
        let merged = [node("work-node/k:a", "merged", &['b'], &['f'], Some('f'))];
        assert_eq!(
            outcome(&merged, &[('f', 'e'), ('b', 'e'), ('b', 'f')], &[]),
            Some(Outcome::Fail)
        );
        assert_eq!(outcome(&merged, &[('b', 'e')], &[]), Some(Outcome::Fail));
        assert_eq!(outcome(&merged, &[], &[]), Some(Outcome::Pass));
    }

    #[test]
    fn every_commit_merged_is_read_the_tip_as_well_as_the_shipped() {
        // Found: a squash report naming a made-up pre-squash commit (same tree,
        // clean history) while the tip merged holds the failed commit.
        let escalated = [node("work-node/k:a", "escalated", &[], &['f'], Some('f'))];
        let (shipped, tip) = (c('e'), c('d'));
        let both = targets(&shipped, Some(&tip));
        assert_eq!(both, vec![shipped.clone(), tip.clone()]);
        assert_eq!(
            outcome_of(&both, &escalated, &[('f', 'd')], &[]),
            Some(Outcome::Fail)
        );
        assert_eq!(
            outcome_of(&both, &escalated, &[], &[('f', 'd')]),
            Some(Outcome::Unknown)
        );
        assert_eq!(outcome_of(&both, &escalated, &[], &[]), Some(Outcome::Pass));
        assert_eq!(targets(&shipped, Some(&shipped)), vec![shipped]);
    }
}
