//! The journal's clock: the one clock a journal's transitions are decided at (and
//! a lease's expiry judged by) — the host's for a SQLite file, the server's
//! `clock_timestamp()` on PostgreSQL (see [`Journal::now`]).

use cairn_journal::{Journal, Location, Options};
use cairn_machines::Timestamp;

use crate::{Engine, Error};

impl Engine {
    /// The journal's clock now ([`Journal::now`]): the instant a transition is
    /// decided at, so a lease's expiry is judged by one clock per journal — the
    /// host's for a SQLite file, the server's on PostgreSQL.
    pub fn now(&self) -> Result<Timestamp, Error> {
        parse(&self.journal().now()?)
    }

    /// [`Engine::now`] of the journal at `location`, whether or not one exists
    /// there yet ([`Journal::clock`]: nothing is created).
    pub fn clock(location: impl Into<Location>, options: &Options) -> Result<Timestamp, Error> {
        parse(&Journal::clock(location, options)?)
    }
}

/// A clock reading as a [`Timestamp`].
fn parse(text: &str) -> Result<Timestamp, Error> {
    Timestamp::parse(text)
        .map_err(|e| Error::Stored(format!("the journal's clock read `{text}`: {e}")))
}
