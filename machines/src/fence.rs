//! Fencing: whether an act may go ahead under the lease read for its stream
//! (`claim/<stream>`, [`Fact::Lease`]). Every act on a claimed stream presents
//! the live grant's token or is refused, naming who holds it and until when.

use crate::reads::{claim_stream, Fact, Lease, CLAIM_MACHINE};
use crate::{Context, Rejection, Timestamp, Violation};

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
}
