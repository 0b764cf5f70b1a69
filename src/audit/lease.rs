//! `lease-over-act`: an act on a claimed stream recorded at an instant a lease
//! of another token (or any lease, for an act without one) was live, as the
//! lease's stream records it in the end.
//!
//! Each act is re-decided against the lease as it read it; this holds it
//! against every grant and renewal recorded since. A grant or renewal decided
//! before an act and appended after it (the claim verbs refuse it now:
//! `decided-before`) shows the lease live over an act it never fenced.

use cairn_journal::Journal;
use cairn_machines::claim::{Claim, Event};
use cairn_machines::{Context, Machine, Timestamp};

use crate::Error;

/// A stretch of time one grant was live: from its grant or a renewal to the
/// expiry that set, cut at its release.
struct Span {
    token: u64,
    from: Timestamp,
    until: Timestamp,
}

/// Every stretch a lease stream records its lease live, a renewal merged into
/// the stretch it renews (so a grant renewed a thousand times is one).
pub(super) struct Spans(Vec<Span>);

impl Spans {
    /// The stretches `lease` records; `None` when one of its events cannot be
    /// read (the lease stream's own audit reports that).
    pub(super) fn of(journal: &Journal, lease: &str) -> Result<Option<Spans>, Error> {
        let mut spans: Vec<Span> = Vec::new();
        let mut readable = true;
        journal.replay_stream(lease, i64::MAX, &mut |r| {
            let Ok(event) = Claim::decode_stored(r.event_type, r.schema_version, r.payload) else {
                readable = false;
                return Ok(());
            };
            let (token, from, until) = match event {
                Event::Acquired { grant } | Event::TakenOver { grant, .. } => {
                    (grant.token.get(), grant.acquired_at, grant.expires_at)
                }
                Event::Renewed {
                    token,
                    renewed_at,
                    expires_at,
                    ..
                } => (token.get(), renewed_at, expires_at),
                Event::Released {
                    token, released_at, ..
                } => {
                    for s in spans.iter_mut().filter(|s| s.token == token.get()) {
                        if released_at < s.until {
                            s.until = released_at.clone();
                        }
                    }
                    return Ok(());
                }
            };
            match spans.last_mut() {
                // A renewal of the live grant sets its expiry, later or
                // earlier (a shorter TTL shortens it): the grant is live from
                // its start to the renewal, and on to the new expiry.
                Some(last) if last.token == token && from <= last.until => {
                    if from < last.from {
                        last.from = from;
                    }
                    last.until = until;
                }
                _ => spans.push(Span { token, from, until }),
            }
            Ok(())
        })?;
        Ok(readable.then_some(Spans(spans)))
    }

    /// What is wrong with an act decided in `context`: the lease it was live
    /// under at the act's instant, when the act did not carry that lease's token.
    /// An act at the very instant a stretch starts is not under it: the claim
    /// verbs grant at the instant of the resource's last act (`decided-before`
    /// refuses only an earlier one), and the append order tells which came first.
    pub(super) fn over(&self, context: &Context) -> Option<String> {
        let now = &context.now;
        let span = self
            .0
            .iter()
            .find(|s| s.from < *now && *now < s.until && Some(s.token) != context.fencing_token)?;
        Some(format!(
            "decided at {now} {}, but the lease's stream records token {} live from {} until {}: a grant or renewal decided before this act was appended after it",
            match context.fencing_token {
                None => "without a fencing token".to_owned(),
                Some(t) => format!("with token {t}"),
            },
            span.token,
            span.from,
            span.until
        ))
    }
}
