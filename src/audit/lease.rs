//! `lease-over-act`: an act on a claimed stream recorded at an instant a lease
//! of another token (or any lease, for an act without one) was live, as the
//! lease's stream records it in the end.
//!
//! Each act is re-decided against the lease as it read it; this holds it
//! against every grant and renewal recorded since. A grant or renewal decided
//! before an act and appended after it, or an act presenting the next token
//! before that grant was made (the engine refuses both now: `decided-before`),
//! shows a lease live over an act it never fenced.

use std::collections::HashMap;

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
/// the stretch it renews (so a grant renewed a thousand times is one), sorted
/// by start. For each prefix of that order, `reach` keeps the stretch that
/// ends last and the one that ends last among those of another token than it:
/// of the stretches that start before an act, the act is inside one of a token
/// other than its own exactly when one of those two reaches past it. A binary
/// search an act, however the stretches overlap (a forged lease stream's).
pub(super) struct Spans {
    spans: Vec<Span>,
    reach: Vec<(usize, Option<usize>)>,
}

impl Spans {
    /// The stretches `lease` records; `None` when one of its events or rows
    /// cannot be read (the lease stream's own audit reports that; each act of
    /// the stream it fences is then `lease-over-act`: not cleared).
    pub(super) fn of(journal: &Journal, lease: &str) -> Result<Option<Spans>, Error> {
        let mut spans: Vec<Span> = Vec::new();
        // Each token's stretches, for its release to cut (one, honestly).
        let mut of_token: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut readable = true;
        let replayed = journal.replay_stream(lease, i64::MAX, &mut |r| {
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
                    for &i in of_token.get(&token.get()).into_iter().flatten() {
                        if released_at < spans[i].until {
                            spans[i].until = released_at.clone();
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
                _ => {
                    of_token.entry(token).or_default().push(spans.len());
                    spans.push(Span { token, from, until });
                }
            }
            Ok(())
        });
        match replayed {
            // A row out of line or of the wrong type: unreadable, as an event
            // is (the lease stream's own audit names it).
            Err(cairn_journal::Error::Corrupt { .. }) => readable = false,
            other => other?,
        }
        Ok(readable.then(|| Spans::new(spans)))
    }

    fn new(mut spans: Vec<Span>) -> Spans {
        spans.sort_by(|a, b| a.from.cmp(&b.from));
        let mut reach: Vec<(usize, Option<usize>)> = Vec::with_capacity(spans.len());
        for (i, s) in spans.iter().enumerate() {
            let next = match reach.last() {
                None => (i, None),
                Some(&(best, other)) => {
                    let b = &spans[best];
                    if s.until > b.until {
                        // `s` ends last now; the last-ending of another token
                        // than its own is the old best, or (same token) the old
                        // other.
                        (
                            i,
                            if s.token != b.token {
                                Some(best)
                            } else {
                                other
                            },
                        )
                    } else if s.token != b.token
                        && match other {
                            None => true,
                            Some(o) => spans[o].until < s.until,
                        }
                    {
                        (best, Some(i))
                    } else {
                        (best, other)
                    }
                }
            };
            reach.push(next);
        }
        Spans { spans, reach }
    }

    /// What is wrong with an act decided in `context`: the lease it was live
    /// under at the act's instant, when the act did not carry that lease's token.
    /// An act at the very instant a stretch starts is not under it: the claim
    /// verbs grant at the instant of the resource's last act (`decided-before`
    /// refuses only an earlier one), and the append order tells which came first.
    pub(super) fn over(&self, context: &Context) -> Option<String> {
        let now = &context.now;
        let before = self.spans.partition_point(|s| s.from < *now);
        let &(best, other) = self.reach.get(before.checked_sub(1)?)?;
        let span = [Some(best), other]
            .into_iter()
            .flatten()
            .map(|i| &self.spans[i])
            .find(|s| *now < s.until && Some(s.token) != context.fencing_token)?;
        Some(format!(
            "decided at {now} {}, but the lease's stream records token {} live from {} until {}: the journal shows that lease over an act it did not fence (a grant or renewal appended after the act, or a token presented before its grant)",
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    use super::*;

    fn at(second: u32) -> Timestamp {
        Timestamp::parse(&format!(
            "2026-11-30T{:02}:{:02}:{:02}Z",
            second / 3600,
            (second / 60) % 60,
            second % 60
        ))
        .expect("a valid instant")
    }

    fn context(second: u32, token: Option<u64>) -> Context {
        Context {
            now: at(second),
            fencing_token: token,
            fresh_ids: Vec::new(),
            session: None,
            reads: Vec::new(),
            scans: Vec::new(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/proptest-regressions/audit-lease.txt"
            )))),
            ..ProptestConfig::default()
        })]

        /// The walk back over sorted stretches finds a stretch over the act
        /// exactly when one exists: any stretches, overlapping or not, in any
        /// order (a forged lease stream's), against every instant around them.
        #[test]
        fn the_walk_back_finds_what_a_look_at_every_stretch_finds(
            stretches in proptest::collection::vec((1u64..4, 0u32..200, 1u32..60), 0..40),
            second in 0u32..300,
            token in proptest::option::of(1u64..4),
        ) {
            let all: Vec<(u64, u32, u32)> = stretches.iter().map(|&(t, f, l)| (t, f, f + l)).collect();
            let spans = Spans::new(all.iter().map(|&(token, from, until)| Span { token, from: at(from), until: at(until) }).collect());
            let expected = all.iter().any(|&(t, f, u)| f < second && second < u && Some(t) != token);
            prop_assert_eq!(spans.over(&context(second, token)).is_some(), expected);
        }
    }
}
