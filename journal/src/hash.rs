//! The hash chain: how an event row and a transition record are digested.

use sha2::{Digest, Sha256};

/// The predecessor hash of the first event.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Length-prefixed field hashing, so no two field lists share a byte string.
pub(crate) struct Hasher(Sha256);

impl Hasher {
    pub(crate) fn new(domain: &str) -> Self {
        let mut h = Self(Sha256::new());
        h.str(domain);
        h
    }
    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.0.update((s.len() as u64).to_be_bytes());
        self.0.update(s.as_bytes());
        self
    }
    pub(crate) fn opt(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            None => self.0.update([0u8]),
            Some(s) => {
                self.0.update([1u8]);
                self.str(s);
            }
        }
        self
    }
    pub(crate) fn int(&mut self, n: i64) -> &mut Self {
        self.0.update(n.to_be_bytes());
        self
    }
    pub(crate) fn hex(self) -> String {
        self.hex64().as_str().to_owned()
    }
    /// The digest as lowercase hex in place, allocating nothing.
    pub(crate) fn hex64(self) -> Hex64 {
        Hex64::of(&self.0.finalize().into())
    }
}

/// A SHA-256 digest spelled as 64 lowercase hex digits, as the chain stores it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hex64([u8; 64]);

impl Hex64 {
    /// Lowercase hex, as `hex::encode` spells it, without its char-by-char
    /// collection (a tenth of a verify's time went to that: one hash per event).
    fn of(digest: &[u8; 32]) -> Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(digest) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0x0f)];
        }
        Hex64(out)
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only `hex64` makes one, of hex digits: always ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Debug for Hex64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The columns of a transition record that its digest covers.
pub(crate) struct TransitionFields<'a> {
    pub id: i64,
    pub stream: &'a str,
    pub machine: &'a str,
    pub rules_version: i64,
    pub command_name: &'a str,
    pub command: &'a str,
    pub context: &'a str,
    pub idempotency_key: Option<&'a str>,
    pub fingerprint: Option<&'a str>,
    pub first_version: i64,
    pub last_version: i64,
    pub recorded_at: &'a str,
}

pub(crate) fn transition_digest(t: &TransitionFields<'_>) -> String {
    let mut h = Hasher::new("cairn.transition.v1");
    h.int(t.id)
        .str(t.stream)
        .str(t.machine)
        .int(t.rules_version)
        .str(t.command_name)
        .str(t.command)
        .str(t.context)
        .opt(t.idempotency_key)
        .opt(t.fingerprint)
        .int(t.first_version)
        .int(t.last_version)
        .str(t.recorded_at);
    h.hex()
}

/// The columns of an event row that its hash covers.
pub(crate) struct EventFields<'a> {
    pub seq: i64,
    pub stream: &'a str,
    pub version: i64,
    pub machine: &'a str,
    pub event_type: &'a str,
    pub schema_version: i64,
    pub payload: &'a str,
    pub recorded_at: &'a str,
    pub transition_id: i64,
}

pub(crate) fn event_hash(prev: &str, e: &EventFields<'_>, transition_digest: &str) -> Hex64 {
    let mut h = Hasher::new("cairn.event.v1");
    h.str(prev)
        .int(e.seq)
        .str(e.stream)
        .int(e.version)
        .str(e.machine)
        .str(e.event_type)
        .int(e.schema_version)
        .str(e.payload)
        .str(e.recorded_at)
        .int(e.transition_id)
        .str(transition_digest);
    h.hex64()
}

/// SHA-256 of a byte string, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Hex64::of(&Sha256::digest(bytes).into()).as_str().to_owned()
}

/// The digest of a stored transition record.
pub(crate) fn stored_transition_digest(t: &crate::StoredTransition) -> String {
    transition_digest(&TransitionFields {
        id: t.id,
        stream: &t.stream,
        machine: &t.machine,
        rules_version: i64::from(t.rules_version),
        command_name: &t.command_name,
        command: &t.command,
        context: &t.context,
        idempotency_key: t.idempotency_key.as_deref(),
        fingerprint: t.fingerprint.as_deref(),
        first_version: t.first_version as i64,
        last_version: t.last_version as i64,
        recorded_at: &t.recorded_at,
    })
}

/// The hashed columns of a stored event.
pub(crate) fn stored_event_fields(e: &crate::StoredEvent) -> EventFields<'_> {
    EventFields {
        seq: e.seq,
        stream: &e.stream,
        version: e.version as i64,
        machine: &e.machine,
        event_type: &e.event_type,
        schema_version: i64::from(e.schema_version),
        payload: &e.payload,
        recorded_at: &e.recorded_at,
        transition_id: e.transition_id,
    }
}

/// The chain's definition, for auditors outside cairn: the hash an event must carry,
/// given its predecessor's hash (64 zeros for the first event) and its transition record.
pub fn chain_hash(
    prev_hash: &str,
    event: &crate::StoredEvent,
    transition: &crate::StoredTransition,
) -> String {
    event_hash(
        prev_hash,
        &stored_event_fields(event),
        &stored_transition_digest(transition),
    )
    .as_str()
    .to_owned()
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        #[test]
        fn hex_spells_as_the_hex_crate(digest in proptest::array::uniform32(proptest::num::u8::ANY)) {
            let spelled = super::Hex64::of(&digest);
            proptest::prop_assert_eq!(spelled.as_str(), hex::encode(digest));
        }

        /// Any bytes' SHA-256, spelled as the hex crate spells it.
        #[test]
        fn sha256_hex_is_the_digest_spelled(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80)) {
            use sha2::Digest;
            proptest::prop_assert_eq!(super::sha256_hex(&bytes), hex::encode(sha2::Sha256::digest(&bytes)));
        }

        /// The in-place spelling of a digest is the hex crate's too.
        #[test]
        fn hex64_spells_the_digest_as_the_hex_crate(text in "\\PC{0,200}") {
            let mut h = super::Hasher::new("test");
            h.str(&text);
            let mut d = <sha2::Sha256 as sha2::Digest>::new();
            sha2::Digest::update(&mut d, 4u64.to_be_bytes());
            sha2::Digest::update(&mut d, b"test");
            sha2::Digest::update(&mut d, (text.len() as u64).to_be_bytes());
            sha2::Digest::update(&mut d, text.as_bytes());
            let spelled = h.hex64();
            proptest::prop_assert_eq!(spelled.as_str(), hex::encode(sha2::Digest::finalize(d)));
        }
    }
}
