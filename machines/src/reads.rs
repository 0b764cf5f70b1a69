//! Reads across lifecycles: what a decision saw of *other* streams, recorded with it.
//!
//! A guard that depends on another lifecycle (a lease that fences an act, a
//! verified commit a ship must carry) cannot read the journal: `decide` is pure.
//! The engine reads the other streams for it, puts what it read into the
//! [`Context`] as [`Read`]s — the stream, the version read, the
//! state's name and the [`Fact`] its machine states about it — and appends the
//! transition only if none of those streams has moved since (a multi-stream
//! optimistic-concurrency check inside the append's transaction). The audit folds
//! each read stream again to the recorded version and requires the same state and
//! fact, so a forged read fails the audit as a forged command does.
//!
//! Fencing is the first user: an act on stream `S` reads `claim/S`, and
//! [`fence`] decides whether the caller's token may act under the lease found there.

use serde::{Deserialize, Serialize};

pub use crate::stream_names::{
    build_loop_thread, is_saga_id, is_saga_stream, is_ship_stream, is_short_id, is_work_node_stream,
};

pub use crate::scan::{Scan, Sieve};

use crate::evidence::FullCommit;
use crate::{Context, Rejection, Timestamp, Violation};

/// The machine whose streams hold leases ([`claim_stream`]).
pub const CLAIM_MACHINE: &str = "claim";

/// The machine whose streams are work nodes (`work-node/<spec>:<address>`,
/// [`Fact::WorkNode`]).
pub const WORK_NODE_MACHINE: &str = "work-node";

/// The machine whose streams are ship runs (`ship/<SHORT_ID>`, [`Fact::Ship`]).
pub const SHIP_MACHINE: &str = "ship";

/// The machine whose streams are a unit's build loop (`build-loop/<saga id>:<unit>`).
pub const BUILD_LOOP_MACHINE: &str = "build-loop";

/// The machine whose streams are saga threads (`saga/<saga id>`).
pub const SAGA_MACHINE: &str = "saga";

/// The predicate of a caller's value (or claim) that a stream the decision read
/// contradicts: where the journal knows better, the journal wins.
pub const JOURNAL_AGREES: &str = "journal-agrees";

/// The work-node stages in which a node's verification still stands: verified and
/// not rejected since, merged, or done.
pub const VOUCHING_STAGES: [&str; 3] = ["verified", "merged", "done"];

/// What a decision relied on that the stream's machine has withdrawn since: `then`
/// is the fact read into the decision, `now` the stream's fact today. A work node
/// that no longer vouches for a commit it vouched for (a later verification of it
/// failed) or whose verification no longer stands (rejected since); a ship run or
/// PR loop that no longer states the merge it stated; a build loop that has handed
/// another revision to code review since. `None`: nothing relied on
/// was withdrawn (a fact that only grew, or one that never spoke for anything).
pub fn withdrawn(then: &Fact, now: Option<&Fact>) -> Option<String> {
    match (then, now?) {
        (
            Fact::WorkNode {
                stage: was,
                verified: vouched,
                ..
            },
            Fact::WorkNode {
                stage, verified, ..
            },
        ) => {
            let lost: Vec<&str> = vouched
                .iter()
                .filter(|c| !verified.contains(c))
                .map(|c| c.as_str())
                .collect();
            if !lost.is_empty() {
                Some(format!("it no longer vouches for {}", lost.join(", ")))
            } else if VOUCHING_STAGES.contains(&was.as_str())
                && !VOUCHING_STAGES.contains(&stage.as_str())
            {
                Some(format!(
                    "it is at `{stage}`: its verification no longer stands"
                ))
            } else {
                None
            }
        }
        (
            Fact::Ship {
                merged: Some(c), ..
            },
            Fact::Ship { merged, .. },
        ) if merged.as_ref() != Some(c) => Some(format!("it no longer states the merge of {c}")),
        (Fact::PrLoop { merged: true, .. }, Fact::PrLoop { merged: false, .. }) => {
            Some("it no longer states the PR merged".to_owned())
        }
        // A review of what the loop handed is of an older revision once the loop
        // has handed another.
        (Fact::BuildLoop { handed: Some(was) }, Fact::BuildLoop { handed })
            if handed.as_ref() != Some(was) =>
        {
            Some(match handed {
                Some(now) => format!("it has handed {now} to code review since, not {was}"),
                None => format!("it no longer hands {was} to code review"),
            })
        }
        _ => None,
    }
}

/// The lease stream for a resource: `claim/<resource stream>`.
pub fn claim_stream(resource: &str) -> String {
    format!("{CLAIM_MACHINE}/{resource}")
}

/// One other stream as a decision read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    /// The stream read.
    pub stream: String,
    /// Its version when read (0: the stream did not exist). The append commits only
    /// if the stream is still at this version.
    pub version: u64,
    /// The name of its state at that version.
    pub state: String,
    /// What its machine states about that state, when it states anything
    /// ([`Machine::fact`](crate::Machine::fact)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<Fact>,
}

/// What a machine states about one of its streams for other lifecycles to rely on.
/// Machines never read each other's types: they read facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fact {
    /// A resource's lease: who holds it (if anyone ever did and has not released)
    /// and the greatest fencing token ever granted for it.
    Lease {
        /// The grant in force or last in force; `None` once released (or never granted).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        holder: Option<Lease>,
        /// The greatest token granted so far (0: none).
        last_token: u64,
    },
    /// A PR continuation loop's word on its PR's merge (`pr-loop/<PR>`).
    PrLoop {
        /// The loop saw the PR merged (`complete`: its own merge, or one it observed).
        merged: bool,
        /// The loop still speaks for the PR (not `abandoned`).
        live: bool,
    },
    /// A unit's build loop's word (`build-loop/<saga id>:<unit>`): the revision it
    /// last handed to code review (its last green iteration's), if any.
    BuildLoop {
        /// The handed revision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handed: Option<FullCommit>,
    },
    /// A work node's word on what it verified (`work-node/<spec>:<address>`).
    WorkNode {
        /// The node's stage (`verified`, `rejected`, `done`, …).
        stage: String,
        /// Every commit whose latest verification passed, in the order first
        /// verified: the commits the node vouches for.
        verified: Vec<FullCommit>,
        /// While dispatched: the worker tree and the repository cairn saw it in
        /// at dispatch (none for a dispatch cairn did not observe).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<Worker>,
    },
    /// A saga thread's word (`saga/<saga id>`): its merge authority — the unit
    /// holding the merge turn, if one does, and its branch (exactly one worker
    /// merges at a time; a ship run acting for the thread merges only under it)
    /// — and what it records of what landed, for the audit's invariants.
    Saga {
        /// The thread's lifecycle phase (`work`, `qa`, …).
        phase: String,
        /// The turn held (`merging`), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<Turn>,
        /// The merged tip of every unit recorded merged.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        merged: Vec<FullCommit>,
        /// A release is recorded (a landed commit, or an absence with its reason).
        released: bool,
        /// PR-ready stands for the thread's current code review.
        ready: bool,
        /// The SHA the thread's recorded code review reviewed, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reviewed: Option<FullCommit>,
        /// The thread's `rounds_seen`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rounds_seen: Vec<u32>,
    },
    /// A ship run's word on what it merged (`ship/<SHORT_ID>`): the repository,
    /// branch and target it was opened for, and the commit cairn saw TARGET_BRANCH
    /// hold after its own `merge --ff-only` (none until then).
    Ship {
        /// `REPO_ROOT`, as git showed it at open.
        repo: String,
        /// The worktree branch.
        branch: String,
        /// `TARGET_BRANCH`.
        target: String,
        /// The merged commit, once cairn observed the merge.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        merged: Option<FullCommit>,
        /// The saga thread the run acts for (`saga/<saga id>`), named at open.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acts_for: Option<String>,
        /// A merge is announced and its result not yet recorded: git may be
        /// merging now.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        merging: bool,
    },
}

/// A saga thread's merge turn ([`Fact::Saga`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The unit holding it.
    pub unit: String,
    /// The unit's branch.
    pub branch: String,
    /// Who holds it.
    pub holder: String,
}

/// Where a dispatched work node's worker writes ([`Fact::WorkNode`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Worker {
    /// The persistent worker tree.
    pub tree: String,
    /// Its repository: the git common dir cairn read at dispatch
    /// (`git -C TREE rev-parse --path-format=absolute --git-common-dir`).
    pub repository: String,
}

/// One grant of a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lease {
    /// The caller-stable claim id.
    pub claim_id: String,
    /// Who holds it.
    pub owner: String,
    /// The fencing token of this grant.
    pub token: u64,
    /// When it lapses unless renewed (judged against the journal's clock).
    pub expires_at: Timestamp,
}

impl Lease {
    /// True while the grant is in force at `now`.
    pub fn live_at(&self, now: &Timestamp) -> bool {
        now < &self.expires_at
    }
}

/// The predicate of an act refused because a live lease is held and the act
/// presented no token (also: an acquire refused while another claim holds it).
pub const HELD_BY_ANOTHER: &str = "held-by-another";
/// The predicate of an act (or a renew or release) presenting a token that is not
/// the current grant's: an older one, a guess, or one never granted.
pub const CURRENT_TOKEN: &str = "current-token";
/// The predicate of an act (or a renew) under a grant that has expired.
pub const LEASE_LIVE: &str = "lease-live";
/// The predicate of an act (or a renew or release) under a grant that was
/// released: nothing is held.
pub const HELD: &str = "held";
/// The field every fence refusal names: the token the act presented.
pub const FENCING_TOKEN: &str = "fencing_token";

/// Whether an act presenting `token` (or none) may go ahead on a resource whose lease
/// stream was read as `lease` (`None`: the resource was never claimed), at `now`.
///
/// * A live lease admits only its own token: no token, or any other, is refused,
///   naming who holds it and until when.
/// * A token presented where no lease is live is stale (the holder paused past its
///   expiry, released, or was taken over): refused, so a late act cannot land on a
///   lost lease.
/// * No token where no lease is live: the resource is not claimed; the act goes on.
pub fn fence(
    lease: Option<&Fact>,
    token: Option<u64>,
    now: &Timestamp,
) -> Result<(), FenceRefusal> {
    let (last, last_token) = match lease {
        Some(Fact::Lease { holder, last_token }) => (holder.as_ref(), *last_token),
        // Not a lease: nothing holds the resource.
        Some(
            Fact::PrLoop { .. }
            | Fact::Ship { .. }
            | Fact::WorkNode { .. }
            | Fact::BuildLoop { .. }
            | Fact::Saga { .. },
        )
        | None => (None, 0),
    };
    match (last.filter(|h| h.live_at(now)), token) {
        (Some(h), Some(t)) if t == h.token => Ok(()),
        (Some(h), presented) => Err(FenceRefusal::HeldByAnother {
            holder: h.clone(),
            presented,
        }),
        (None, Some(t)) => Err(FenceRefusal::Stale {
            presented: t,
            last: last.cloned(),
            last_token,
        }),
        (None, None) => Ok(()),
    }
}

/// The fence of a decision on `stream` of `machine`: the lease read from
/// `claim/<stream>` (if the engine read one into `context`) against the token
/// the context presents. Lease streams themselves are not fenced: their machine
/// judges tokens itself.
pub fn check_fence(
    machine: &str,
    stream: &str,
    command: &str,
    state: &str,
    context: &Context,
) -> Result<(), Rejection> {
    if machine == CLAIM_MACHINE {
        return Ok(());
    }
    let lease = context
        .read(&claim_stream(stream))
        .and_then(|r| r.fact.as_ref());
    fence(lease, context.fencing_token, &context.now)
        .map_err(|refusal| refusal.rejection(machine, command, state))
}

/// True when `rejection` is a fence's ([`check_fence`]): an act refused for the
/// lease on its resource, not for anything in the command.
pub fn is_fence_refusal(rejection: &Rejection) -> bool {
    rejection.machine != CLAIM_MACHINE
        && !rejection.violations.is_empty()
        && rejection.violations.iter().all(|v| {
            v.field.as_deref() == Some(FENCING_TOKEN)
                && [HELD_BY_ANOTHER, CURRENT_TOKEN, LEASE_LIVE, HELD]
                    .contains(&v.predicate.as_str())
        })
}

/// Why [`fence`] refused an act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceRefusal {
    /// A live lease is held under another token (or the act presented none).
    HeldByAnother {
        /// The live grant.
        holder: Lease,
        /// The token the act presented.
        presented: Option<u64>,
    },
    /// The token presented belongs to no live lease.
    Stale {
        /// The token the act presented.
        presented: u64,
        /// The last grant, expired, when it was not released.
        last: Option<Lease>,
        /// The greatest token granted for the resource (0: none).
        last_token: u64,
    },
}

impl FenceRefusal {
    /// The predicate it breaks and a sentence naming who holds (or held) the
    /// lease and until when.
    pub fn violation(&self) -> Violation {
        let field = Some(FENCING_TOKEN);
        match self {
            FenceRefusal::HeldByAnother {
                holder: h,
                presented: None,
            } => Violation::new(
                HELD_BY_ANOTHER,
                field,
                format!(
                    "`{}` holds a live lease on the resource (claim `{}`, token {}) until {}: an act on it must present the holder's fencing token",
                    h.owner, h.claim_id, h.token, h.expires_at
                ),
            ),
            FenceRefusal::HeldByAnother {
                holder: h,
                presented: Some(t),
            } => Violation::new(
                CURRENT_TOKEN,
                field,
                format!(
                    "token {t} is stale: the live lease is `{}`'s (claim `{}`, token {}) until {}",
                    h.owner, h.claim_id, h.token, h.expires_at
                ),
            ),
            FenceRefusal::Stale {
                presented: t,
                last: Some(h),
                ..
            } if h.token == *t => Violation::new(
                LEASE_LIVE,
                field,
                format!(
                    "the lease of token {t} (`{}`, claim `{}`) expired at {}: acquire again for a new token",
                    h.owner, h.claim_id, h.expires_at
                ),
            ),
            FenceRefusal::Stale {
                presented: t,
                last: None,
                last_token,
            } if last_token == t => Violation::new(
                HELD,
                field,
                format!("the lease of token {t} was released: nothing is held"),
            ),
            FenceRefusal::Stale {
                presented: t,
                last,
                last_token,
            } => Violation::new(
                CURRENT_TOKEN,
                field,
                format!(
                    "token {t} is not the last one granted ({}); no lease is live",
                    match (last, last_token) {
                        (_, 0) => "none was".to_owned(),
                        (Some(h), _) => format!(
                            "token {}, `{}`'s, which expired at {}",
                            h.token, h.owner, h.expires_at
                        ),
                        (None, l) => format!("token {l}, since released"),
                    }
                ),
            ),
        }
    }

    /// The refusal as a [`Rejection`] of `command` on `machine` in `state`.
    pub fn rejection(&self, machine: &str, command: &str, state: &str) -> Rejection {
        Rejection::single(machine, command, state, self.violation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        Timestamp::parse(s).expect("test timestamps are valid RFC 3339")
    }

    fn lease(token: u64, until: &str) -> Fact {
        Fact::Lease {
            holder: Some(Lease {
                claim_id: "c1".into(),
                owner: "agent-a".into(),
                token,
                expires_at: at(until),
            }),
            last_token: token,
        }
    }

    type Case<'a> = (Option<&'a Fact>, Option<u64>, &'a str, Option<&'a str>);

    /// The predicate `fence` refuses with (`None`: admitted), for a lease read as
    /// `lease`, a token and an instant.
    fn check(lease: Option<&Fact>, token: Option<u64>, now: &str) -> Option<String> {
        fence(lease, token, &at(now))
            .err()
            .map(|r| r.violation().predicate)
    }

    #[test]
    fn the_fence_admits_only_the_live_leases_token_and_names_why_not() {
        let live = lease(7, "2026-01-01T00:00:30Z");
        let released = Fact::Lease {
            holder: None,
            last_token: 7,
        };
        let (before, at_expiry) = ("2026-01-01T00:00:00Z", "2026-01-01T00:00:30Z");
        // (the lease read, the token presented, the instant, the refusal's predicate)
        let cases: [Case<'_>; 11] = [
            // A live lease: its token only.
            (Some(&live), Some(7), before, None),
            (Some(&live), Some(6), before, Some(CURRENT_TOKEN)),
            (Some(&live), Some(8), before, Some(CURRENT_TOKEN)),
            (Some(&live), None, before, Some(HELD_BY_ANOTHER)),
            // The instant of expiry: the holder's own token is stale, no token is free.
            (Some(&live), Some(7), at_expiry, Some(LEASE_LIVE)),
            (Some(&live), Some(6), at_expiry, Some(CURRENT_TOKEN)),
            (Some(&live), None, at_expiry, None),
            // Released: nothing holds, any token is stale.
            (Some(&released), Some(7), before, Some(HELD)),
            (Some(&released), Some(3), before, Some(CURRENT_TOKEN)),
            (Some(&released), None, before, None),
            // Never claimed: a token is one no lease ever had.
            (None, Some(1), before, Some(CURRENT_TOKEN)),
        ];
        for (lease, token, now, want) in cases {
            assert_eq!(
                check(lease, token, now).as_deref(),
                want,
                "{lease:?} {token:?} at {now}"
            );
        }
        assert_eq!(check(None, None, before), None);
    }

    #[test]
    fn a_refusal_names_the_holder_and_the_expiry_and_is_recognised() {
        let live = lease(7, "2026-01-01T00:00:30Z");
        for (token, now) in [
            (None, "2026-01-01T00:00:00Z"),
            (Some(6), "2026-01-01T00:00:00Z"),
            (Some(7), "2026-01-01T00:00:31Z"),
            (Some(5), "2026-01-01T00:00:31Z"),
        ] {
            let refusal = fence(Some(&live), token, &at(now)).expect_err("refused");
            let v = refusal.violation();
            assert!(
                v.message.contains("`agent-a`") && v.message.contains("2026-01-01T00:00:30Z"),
                "{v:?}"
            );
            assert_eq!(v.field.as_deref(), Some(FENCING_TOKEN));
            assert!(is_fence_refusal(&refusal.rejection(
                "ship",
                "merge",
                "merge-ready"
            )));
            // A claim's own refusal with the same predicates is the claim's, not a fence's.
            assert!(!is_fence_refusal(&refusal.rejection(
                CLAIM_MACHINE,
                "renew",
                "held"
            )));
        }
        let other = Rejection::single(
            "ship",
            "merge",
            "phase-2",
            Violation::new("merge-ready", None, "not yet"),
        );
        assert!(!is_fence_refusal(&other));
    }

    #[test]
    fn a_work_node_withdraws_what_it_no_longer_vouches_for() {
        let c = |ch: char| FullCommit::parse(&ch.to_string().repeat(40)).expect("40 hex digits");
        let node = |stage: &str, verified: &[char]| Fact::WorkNode {
            stage: stage.into(),
            verified: verified.iter().map(|ch| c(*ch)).collect(),
            worker: None,
        };
        let then = node("verified", &['a']);
        // Grown or moved on in a standing stage: nothing withdrawn.
        assert_eq!(withdrawn(&then, Some(&node("verified", &['a', 'b']))), None);
        assert_eq!(withdrawn(&then, Some(&node("done", &['a']))), None);
        // A later failure on the commit, or a rejection since: withdrawn.
        assert!(withdrawn(&then, Some(&node("rejected", &[]))).is_some());
        assert!(withdrawn(&then, Some(&node("rejected", &['a']))).is_some());
        // A build loop that handed another revision since.
        let handed = |ch: Option<char>| Fact::BuildLoop { handed: ch.map(c) };
        assert_eq!(
            withdrawn(&handed(Some('a')), Some(&handed(Some('a')))),
            None
        );
        assert!(withdrawn(&handed(Some('a')), Some(&handed(Some('b')))).is_some());
        assert_eq!(withdrawn(&handed(None), Some(&handed(Some('b')))), None);
        // A node that vouched for nothing in a non-standing stage withdrew nothing.
        assert_eq!(
            withdrawn(&node("dispatched", &[]), Some(&node("rejected", &[]))),
            None
        );
    }

    #[test]
    fn reads_serialise_without_an_absent_fact() {
        let r = Read {
            stream: "ship/x".into(),
            version: 3,
            state: "open".into(),
            fact: None,
        };
        assert_eq!(
            serde_json::to_string(&r).expect("plain struct serialises"),
            r#"{"stream":"ship/x","version":3,"state":"open"}"#
        );
    }
}
