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

use crate::{Context, Rejection, Timestamp, Violation};

/// The machine whose streams hold leases ([`claim_stream`]).
pub const CLAIM_MACHINE: &str = "claim";

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

/// Whether an act presenting `token` (or none) may go ahead on a resource whose lease
/// stream was read as `lease` (`None`: the resource was never claimed), at `now`.
///
/// * A live lease admits only its own token: no token, or any other, is refused,
///   naming who holds it and until when.
/// * A token presented where no lease is live is stale (the holder paused past its
///   expiry, or released): refused, so a late act cannot land on a lost lease.
/// * No token where no lease is live: the resource is not claimed; the act goes on.
pub fn fence(
    lease: Option<&Fact>,
    token: Option<u64>,
    now: &Timestamp,
) -> Result<(), FenceRefusal> {
    let (holder, last) = match lease {
        Some(Fact::Lease { holder, last_token }) => (holder.as_ref(), *last_token),
        None => (None, 0),
    };
    let live = holder.filter(|h| h.live_at(now));
    match (live, token) {
        (Some(h), Some(t)) if t == h.token => Ok(()),
        (Some(h), presented) => Err(FenceRefusal::HeldByAnother {
            owner: h.owner.clone(),
            claim_id: h.claim_id.clone(),
            token: h.token,
            expires_at: h.expires_at.clone(),
            presented,
        }),
        (None, Some(t)) => Err(FenceRefusal::Stale {
            presented: t,
            last_token: last,
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

/// Why [`fence`] refused an act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceRefusal {
    /// A live lease is held under another token (or the act presented none).
    HeldByAnother {
        /// The holder.
        owner: String,
        /// The holder's claim id.
        claim_id: String,
        /// The holder's token.
        token: u64,
        /// When the holder's lease lapses.
        expires_at: Timestamp,
        /// The token the act presented.
        presented: Option<u64>,
    },
    /// The token presented belongs to no live lease.
    Stale {
        /// The token the act presented.
        presented: u64,
        /// The greatest token granted for the resource.
        last_token: u64,
    },
}

impl FenceRefusal {
    /// The refusal as a [`Rejection`] of `command` on `machine` in `state`.
    pub fn rejection(&self, machine: &str, command: &str, state: &str) -> Rejection {
        let message = match self {
            FenceRefusal::HeldByAnother {
                owner,
                claim_id,
                token,
                expires_at,
                presented,
            } => format!(
                "the resource is claimed by `{owner}` (claim `{claim_id}`, token {token}) until {expires_at}; {}",
                match presented {
                    Some(t) => format!("token {t} is not the current one"),
                    None => "an act on it must present the holder's --fencing-token".to_owned(),
                }
            ),
            FenceRefusal::Stale {
                presented,
                last_token,
            } => format!(
                "fencing token {presented} holds no live lease (the last token granted is {last_token}; the lease expired or was released)"
            ),
        };
        Rejection::single(
            machine,
            command,
            state,
            Violation::new("fencing-token-current", Some("fencing_token"), message),
        )
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

    #[test]
    fn a_live_lease_admits_only_its_token() {
        let now = at("2026-01-01T00:00:00Z");
        let f = lease(7, "2026-01-01T00:00:30Z");
        assert_eq!(fence(Some(&f), Some(7), &now), Ok(()));
        assert!(matches!(
            fence(Some(&f), Some(6), &now),
            Err(FenceRefusal::HeldByAnother { token: 7, .. })
        ));
        assert!(matches!(
            fence(Some(&f), None, &now),
            Err(FenceRefusal::HeldByAnother {
                presented: None,
                ..
            })
        ));
    }

    #[test]
    fn a_token_past_expiry_is_stale_even_if_it_was_the_holders() {
        let f = lease(7, "2026-01-01T00:00:30Z");
        let late = at("2026-01-01T00:00:30Z");
        assert!(matches!(
            fence(Some(&f), Some(7), &late),
            Err(FenceRefusal::Stale { presented: 7, .. })
        ));
        assert_eq!(fence(Some(&f), None, &late), Ok(()));
    }

    #[test]
    fn a_token_on_a_never_claimed_resource_is_refused() {
        let now = at("2026-01-01T00:00:00Z");
        assert!(fence(None, Some(1), &now).is_err());
        assert_eq!(fence(None, None, &now), Ok(()));
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
