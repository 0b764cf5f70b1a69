//! `claim`: an embedded lease with fencing tokens (issue #24; the atomic claim
//! the park seed names `rosary-04faf5`). One stream per claimed resource,
//! `claim/<resource>`, where the resource is the claimed thing's own stream id
//! (`claim/park/ep-…`). A grant is an append at the version the acquirer read, so
//! of two racing acquirers one conflicts; each grant's fencing token is one more
//! than the last token the stream granted, so tokens strictly increase per
//! resource. Renew and release need the current claim id and token. Expiry is
//! judged against the context's `now`: the engine's one clock reading per
//! transition.
//!
//! Layout: `names` (the checked owner, claim id, time to live and token), `state`,
//! `command`, `event`, `decide/` (one function per command, and which refusals are
//! contention), `evolve`, `graph`. The claim states its lease as a
//! [`Fact::Lease`](crate::reads::Fact) (`Machine::fact`): the engine reads it into
//! every act on the claimed resource, and `reads::fence` (the one fence rule)
//! admits the act only with the live grant's token.

pub mod names;

mod command;
mod decide;
mod event;
mod evolve;
mod graph;
mod state;

#[cfg(test)]
mod tests;

pub use command::Command;
pub use decide::{
    contention, Contention, CURRENT_CLAIM, CURRENT_TOKEN, HELD, HELD_BY_ANOTHER, LEASE_LIVE,
};
pub use event::Event;
pub use names::{ClaimId, Owner, Token, Ttl, NAME_MAX, TTL_MAX, TTL_MIN};
pub use state::{ClaimState, Grant};

use crate::reads::{Fact, Lease};
use crate::{Context, GraphSpec, Machine, Rejection};

/// The `claim` machine's name: the first segment of its streams.
pub const NAME: &str = "claim";

/// The machine.
pub struct Claim;

impl Machine for Claim {
    const NAME: &'static str = NAME;
    // 2: a new grant's owner and claim id are in NFC and start with a base
    // character (helper-76).
    const RULES_VERSION: u32 = 2;
    const RETIRED_RULES: &'static [u32] = &[1];
    type State = ClaimState;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> ClaimState {
        ClaimState::Unclaimed
    }

    fn decide(
        state: &ClaimState,
        command: &Command,
        ctx: &Context,
    ) -> Result<Vec<Event>, Rejection> {
        decide::decide(state, command, ctx)
    }

    fn evolve(state: ClaimState, event: &Event) -> ClaimState {
        evolve::evolve(state, event)
    }

    fn state_name(state: &ClaimState) -> &'static str {
        state::state_name(state)
    }

    fn event_name(event: &Event) -> &'static str {
        event::event_name(event)
    }

    fn command_name(command: &Command) -> &'static str {
        command::command_name(command)
    }

    fn graph() -> GraphSpec {
        graph::graph()
    }

    /// Every claim command is the claim verbs' alone: they check the resource is
    /// a stream some verb acts on, in its canonical spelling, and answer contention
    /// with the authoritative readback (exit 3), which a JSON command through
    /// `cairn exec` would bypass.
    fn recorded_by(command: &Command) -> Option<&'static str> {
        Some(match command {
            Command::Acquire { .. } => "claim acquire",
            Command::Renew { .. } => "claim renew",
            Command::Release { .. } => "claim release",
        })
    }

    /// The lease: the grant not released (live or expired: judged at the act's
    /// instant by the fence), and the greatest token ever granted.
    fn fact(state: &ClaimState) -> Option<Fact> {
        let holder = match state {
            ClaimState::Held { grant } => Some(Lease {
                claim_id: grant.claim_id.as_str().to_owned(),
                owner: grant.owner.as_str().to_owned(),
                token: grant.token.get(),
                expires_at: grant.expires_at.clone(),
            }),
            ClaimState::Unclaimed | ClaimState::Released { .. } => None,
        };
        Some(Fact::Lease {
            holder,
            last_token: state.last_token().map_or(0, Token::get),
        })
    }
}
