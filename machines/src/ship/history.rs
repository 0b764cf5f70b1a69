//! `failed-work-absent` (ship rules 8): the commit a run ships holds no work a
//! node outside the run failed on, or stands unvouched on.
//!
//! The nodes placed in the run's worktree ship with it and must vouch for exactly
//! the commit shipped (`work-nodes-verified`). A node placed elsewhere vouches for
//! nothing the run ships, but its work can still reach the run: a branch reset to
//! an escalated node's commit, a merge of a sibling worktree (found by a hostile
//! pass: a node escalated in another worktree, and its failed commit shipped).
//! So pre-merge reads, in the run's worktree, whether the shipped commit holds
//! each such commit (`git merge-base --is-ancestor`), and stops when it does:
//!
//! * a node that stands outside a vouching stage (escalated, rejected, sent back
//!   to its worker): any commit it verified or failed on;
//! * a node that vouches (its latest verification passed) but failed on a commit
//!   before: that commit, unless the shipped commit also holds the node's latest
//!   verified commit, and that commit holds the failed one (the fix came after
//!   the failure and ships with it).
//!
//! A reading git could not answer is `unknown`, and stops the run as a failure
//! does. Nodes whose recorded repository is another one are not read (their
//! commits are another repository's); a node whose repository cairn never read
//! is. The merge re-applies the rule to the nodes as they stand then, on the
//! readings pre-merge recorded: a pair it never read refuses the merge.

use serde::{Deserialize, Serialize};

use crate::evidence::{git, CommandRun, FullCommit};
use crate::reads::{Fact, Read, VOUCHING_STAGES};
use crate::Outcome;

use super::gates::{Gate, Runs};

/// The gate's name.
pub const GATE: &str = "failed-work-absent";

/// What a passing pre-merge read of the shipped commit's history: the run's
/// repository as it read it, and each ancestry it read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The worktree's git common dir, as pre-merge read it (none: unread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// The ancestries read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<Holds>,
}

/// One ancestry reading: whether `descendant` holds `ancestor` (`pass`: it does;
/// `fail`: it does not; `unknown`: git could not tell).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holds {
    pub ancestor: FullCommit,
    pub descendant: FullCommit,
    pub outcome: Outcome,
}

/// A node outside the run whose work the shipped commit must not hold.
struct Suspect<'a> {
    node: &'a str,
    stage: &'a str,
    verified: &'a [FullCommit],
    failed: &'a [FullCommit],
    latest: Option<&'a FullCommit>,
}

impl Suspect<'_> {
    fn vouches(&self) -> bool {
        VOUCHING_STAGES.contains(&self.stage)
    }
}

fn same_path(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The placed nodes (`Sieve::PlacedNodes`) outside `linked`, in `repository` (or
/// in one cairn never read), that failed on a commit or stand unvouched on one.
fn suspects<'a>(
    repository: Option<&str>,
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Vec<Suspect<'a>> {
    placed
        .filter(|r| !linked.contains(&r.stream))
        .filter_map(|r| match &r.fact {
            Some(Fact::WorkNode {
                stage,
                verified,
                failed,
                latest,
                repository: theirs,
                ..
            }) => {
                let elsewhere =
                    matches!((repository, theirs), (Some(a), Some(b)) if !same_path(a, b));
                let s = Suspect {
                    node: &r.stream,
                    stage,
                    verified,
                    failed,
                    latest: latest.as_ref(),
                };
                let suspect = !s.failed.is_empty() || (!s.vouches() && !s.verified.is_empty());
                (suspect && !elsewhere).then_some(s)
            }
            _ => None,
        })
        .collect()
}

/// The ancestries to read, `(ancestor, descendant)`, each once, in order.
fn pairs(shipped: &FullCommit, suspects: &[Suspect<'_>]) -> Vec<(FullCommit, FullCommit)> {
    let mut out: Vec<(FullCommit, FullCommit)> = vec![];
    let mut add = |a: &FullCommit, d: &FullCommit| {
        if !out.iter().any(|(x, y)| x == a && y == d) {
            out.push((a.clone(), d.clone()));
        }
    };
    for s in suspects {
        if s.vouches() {
            for f in s.failed {
                add(f, shipped);
                if let Some(l) = s.latest {
                    add(l, shipped);
                    add(f, l);
                }
            }
        } else {
            for c in s.verified.iter().chain(s.failed) {
                add(c, shipped);
            }
        }
    }
    out
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

/// `git -C WORKTREE merge-base --is-ancestor --end-of-options ANCESTOR DESCENDANT`.
pub fn holds_argv(worktree: &str, ancestor: &FullCommit, descendant: &FullCommit) -> Vec<String> {
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

/// `git -C WORKTREE rev-parse --path-format=absolute --git-common-dir`: the
/// run's repository (the first reading of every isolation check).
pub fn repository_argv(worktree: &str) -> Vec<String> {
    git::git(
        worktree,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
}

/// The repository a step's runs read (`repository_argv`), if they did.
pub fn repository(worktree: &str, runs: &[CommandRun]) -> Option<String> {
    Runs(runs).line(&repository_argv(worktree))
}

/// The runs a pre-merge makes after its plan, once it has read the shipped
/// commit and the repository: one ancestry reading per pair the rule needs.
pub fn plan<'a>(
    worktree: &str,
    shipped: &FullCommit,
    repository: Option<&str>,
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Vec<Vec<String>> {
    pairs(shipped, &suspects(repository, linked, placed))
        .iter()
        .map(|(a, d)| holds_argv(worktree, a, d))
        .collect()
}

/// The readings `runs` hold for the pairs the rule needs (a pair not run is
/// `unknown`).
pub fn read<'a>(
    worktree: &str,
    shipped: &FullCommit,
    repository: Option<&str>,
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
    runs: &[CommandRun],
) -> History {
    let read = pairs(shipped, &suspects(repository, linked, placed))
        .into_iter()
        .map(|(ancestor, descendant)| {
            let outcome = match Runs(runs).yes_no(&holds_argv(worktree, &ancestor, &descendant)) {
                Some(true) => Outcome::Pass,
                Some(false) => Outcome::Fail,
                None => Outcome::Unknown,
            };
            Holds {
                ancestor,
                descendant,
                outcome,
            }
        })
        .collect();
    History {
        repository: repository.map(str::to_owned),
        read,
    }
}

/// The gate: none when no node outside the run has work to look for.
pub fn gate<'a>(
    shipped: &FullCommit,
    history: &History,
    linked: &[String],
    placed: impl Iterator<Item = &'a Read>,
) -> Option<Gate> {
    let suspects = suspects(history.repository.as_deref(), linked, placed);
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
    for s in &suspects {
        if s.vouches() {
            for f in s.failed {
                match holds(f, shipped) {
                    Outcome::Fail => {}
                    Outcome::Unknown => unknown.push(format!(
                        "whether the shipped commit holds {f}, where `{}` failed, could not be read",
                        s.node
                    )),
                    Outcome::Pass => {
                        let fixed = s.latest.map(|l| (l, holds(l, shipped), holds(f, l)));
                        match fixed {
                            Some((_, Outcome::Pass, Outcome::Pass)) => {}
                            Some((l, Outcome::Fail, _) | (l, _, Outcome::Fail)) => failed.push(format!(
                                "the shipped commit holds {f}, where `{}` failed, without its later verified commit {l} on top",
                                s.node
                            )),
                            _ => unknown.push(format!(
                                "the shipped commit holds {f}, where `{}` failed, and whether it holds the node's later verified work could not be read",
                                s.node
                            )),
                        }
                    }
                }
            }
        } else {
            for c in s.verified.iter().chain(s.failed) {
                match holds(c, shipped) {
                    Outcome::Fail => {}
                    Outcome::Pass => failed.push(format!(
                        "the shipped commit holds {c}, work of `{}`, which stands at `{}`",
                        s.node, s.stage
                    )),
                    Outcome::Unknown => unknown.push(format!(
                        "whether the shipped commit holds {c}, work of `{}` (at `{}`), could not be read",
                        s.node, s.stage
                    )),
                }
            }
        }
    }
    Some(if !failed.is_empty() {
        failed.extend(unknown);
        Gate::new(GATE, Outcome::Fail, failed.join("; "))
    } else if !unknown.is_empty() {
        Gate::new(GATE, Outcome::Unknown, unknown.join("; "))
    } else {
        Gate::new(
            GATE,
            Outcome::Pass,
            format!(
                "the shipped commit holds no failed or unvouched work of {} node(s) outside the run",
                suspects.len()
            ),
        )
    })
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
        repo: Option<&str>,
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
                repository: repo.map(str::to_owned),
                failed: failed.iter().map(|x| c(*x)).collect(),
                latest: latest.map(c),
            }),
            rules: None,
        }
    }

    /// The gate over `placed`, with `held` the pairs git answered "holds" for
    /// (every other pair read answered "does not").
    fn outcome(placed: &[Read], held: &[(char, char)], unread: &[(char, char)]) -> Option<Outcome> {
        let shipped = c('e');
        let pairs = pairs(&shipped, &suspects(Some("/r/.git"), &[], placed.iter()));
        let history = History {
            repository: Some("/r/.git".into()),
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
        gate(&shipped, &history, &[], placed.iter()).map(|g| g.outcome)
    }

    #[test]
    fn an_escalated_nodes_failed_commit_in_the_shipped_commit_stops_the_run() {
        let escalated = [node(
            "work-node/k:a",
            "escalated",
            &[],
            &['f'],
            Some('f'),
            None,
        )];
        assert_eq!(outcome(&escalated, &[('f', 'e')], &[]), Some(Outcome::Fail));
        assert_eq!(outcome(&escalated, &[], &[]), Some(Outcome::Pass));
        // Unread (or unreadable) is never a pass.
        assert_eq!(
            outcome(&escalated, &[], &[('f', 'e')]),
            Some(Outcome::Unknown)
        );
        // A rejected node's verified work too: it vouches for nothing now.
        let rejected = [node(
            "work-node/k:b",
            "rejected",
            &['b'],
            &[],
            Some('b'),
            Some("/r/.git/"),
        )];
        assert_eq!(outcome(&rejected, &[('b', 'e')], &[]), Some(Outcome::Fail));
    }

    #[test]
    fn a_failure_fixed_by_later_verified_work_ships_only_with_the_fix() {
        let fixed = [node(
            "work-node/k:a",
            "verified",
            &['b'],
            &['f'],
            Some('b'),
            None,
        )];
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
    fn only_nodes_with_such_work_in_this_repository_are_read() {
        let clean = [node(
            "work-node/k:a",
            "verified",
            &['b'],
            &[],
            Some('b'),
            None,
        )];
        assert_eq!(outcome(&clean, &[], &[]), None);
        let other_repo = [node(
            "work-node/k:a",
            "escalated",
            &[],
            &['f'],
            Some('f'),
            Some("/other/.git"),
        )];
        assert_eq!(outcome(&other_repo, &[('f', 'e')], &[]), None);
        // A linked node is the run's own: `work-nodes-verified` checks it.
        let placed = [node(
            "work-node/k:a",
            "escalated",
            &[],
            &['f'],
            Some('f'),
            None,
        )];
        let linked = vec!["work-node/k:a".to_owned()];
        assert!(suspects(None, &linked, placed.iter()).is_empty());
    }
}
