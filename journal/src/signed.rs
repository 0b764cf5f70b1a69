//! The signature half of `verify`: each transition's signature checked as the walk
//! closes it, against its recorded key and (when given) the trusted key.

use serde::Serialize;

use crate::verify::{ChainHead, Collector, OpenTransition, ProblemKind};

/// The signature part of a verify report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SigningReport {
    /// `signed` (every transition), `unsigned` (none: a journal written before
    /// signing, or without a key), or `partly-signed` (an unsigned prefix, then
    /// signed: a journal that began signing later).
    pub status: &'static str,
    /// Transitions with a valid signature.
    pub signed: u64,
    /// Transitions with no signature.
    pub unsigned: u64,
    /// The public keys that signed, in first-use order (hex).
    pub keys: Vec<String>,
    /// The key every transition had to be signed by, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_key: Option<String>,
}

/// What [`Journal::verify_with`](crate::Journal::verify_with) checks beyond the journal itself.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// A head kept from an earlier verify: it must still be in the journal.
    pub expect: Option<ChainHead>,
    /// A signed anchor kept outside the journal: its signature must hold, and its
    /// head must still be in the journal.
    pub anchor: Option<crate::Anchor>,
    /// Every transition (and the anchor) must be signed by this public key (hex).
    pub trusted_key: Option<String>,
}

/// The signature walk: one lookup per transition as it closes.
pub(crate) struct Signatures {
    pub(crate) trusted: Option<String>,
    pub(crate) signed: u64,
    pub(crate) unsigned: u64,
    pub(crate) any_signed: bool,
    pub(crate) keys: Vec<String>,
}

impl Signatures {
    /// Checks a closing transition's signature, as read when it opened and
    /// verified off the walk's thread.
    pub(crate) fn check(&mut self, t: &OpenTransition, problems: &mut Collector) {
        let id = t.record.id;
        let stream = Some(t.record.stream.as_str());
        let Some(found) = &t.signature else {
            self.unsigned += 1;
            if self.trusted.is_some() {
                problems.push(ProblemKind::Unsigned, t.last.as_ref().map(|l| l.0), stream, Some(id),
                    format!("transition {id} is unsigned; every transition must be signed by the trusted key"));
            } else if self.any_signed {
                problems.push(ProblemKind::Unsigned, t.last.as_ref().map(|l| l.0), stream, Some(id),
                    format!("transition {id} is unsigned after signed transitions: a signed journal never goes back to unsigned"));
            }
            return;
        };
        self.any_signed = true;
        let (seq, hash) = (found.row.head_seq, &found.row.head_hash);
        let Some(key) = found.key.clone() else {
            problems.push(
                ProblemKind::BadSignature,
                Some(seq),
                stream,
                Some(id),
                format!("transition {id}'s signature names no recorded key"),
            );
            return;
        };
        if t.last.as_ref().map(|(s, h)| (*s, h)) != Some((seq, hash)) {
            problems.push(
                ProblemKind::BadSignature,
                Some(seq),
                stream,
                Some(id),
                format!("transition {id}'s signature is for event {seq}, not its last event"),
            );
            return;
        }
        if !found.holds {
            problems.push(
                ProblemKind::BadSignature,
                Some(seq),
                stream,
                Some(id),
                format!("transition {id}'s signature does not verify under key {key}"),
            );
            return;
        }
        if let Some(trusted) = &self.trusted {
            if &key != trusted {
                problems.push(
                    ProblemKind::UntrustedKey,
                    Some(seq),
                    stream,
                    Some(id),
                    format!("transition {id} is signed by {key}, not the trusted key"),
                );
            }
        }
        if !self.keys.contains(&key) {
            self.keys.push(key);
        }
        self.signed += 1;
    }

    pub(crate) fn report(self) -> SigningReport {
        SigningReport {
            status: match (self.signed, self.unsigned) {
                (0, _) => "unsigned",
                (_, 0) => "signed",
                _ => "partly-signed",
            },
            signed: self.signed,
            unsigned: self.unsigned,
            keys: self.keys,
            trusted_key: self.trusted,
        }
    }
}
