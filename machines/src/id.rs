//! Prefixed UUID identifiers (`ep-<uuid>`, `attempt-<uuid>`, …) that reject any other form.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

use crate::Error;

/// The kind of an [`Id`]: a zero-sized marker naming the prefix.
pub trait IdKind {
    /// The literal prefix, including its dash, e.g. `"ep-"`.
    const PREFIX: &'static str;
}

/// An id of the form `<prefix><canonical UUID>`.
///
/// Canonical means the 36-character lower-case hyphenated form; braces, URNs,
/// upper case and the simple form are refused, so one id has exactly one spelling.
pub struct Id<K: IdKind> {
    uuid: Uuid,
    kind: PhantomData<K>,
}

impl<K: IdKind> Id<K> {
    /// Parses `<prefix><uuid>`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = || Error::Id {
            value: text.to_owned(),
            prefix: K::PREFIX,
        };
        let rest = text.strip_prefix(K::PREFIX).ok_or_else(bad)?;
        let uuid = Uuid::try_parse(rest).map_err(|_| bad())?;
        // The canonical spelling, written to the stack: no allocation on the replay path.
        let mut canonical = [0u8; uuid::fmt::Hyphenated::LENGTH];
        if uuid.hyphenated().encode_lower(&mut canonical) != rest {
            return Err(bad());
        }
        Ok(Self::from_uuid(uuid))
    }

    /// Wraps a UUID minted outside this crate (for example a fresh id from a [`crate::Context`]).
    pub fn from_uuid(uuid: Uuid) -> Self {
        Self {
            uuid,
            kind: PhantomData,
        }
    }

    /// The UUID part.
    pub fn uuid(&self) -> Uuid {
        self.uuid
    }
}

impl<K: IdKind> fmt::Display for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", K::PREFIX, self.uuid.hyphenated())
    }
}
impl<K: IdKind> fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl<K: IdKind> Clone for Id<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: IdKind> Copy for Id<K> {}
impl<K: IdKind> PartialEq for Id<K> {
    fn eq(&self, other: &Self) -> bool {
        self.uuid == other.uuid
    }
}
impl<K: IdKind> Eq for Id<K> {}
impl<K: IdKind> Hash for Id<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.uuid.hash(state)
    }
}
impl<K: IdKind> PartialOrd for Id<K> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: IdKind> Ord for Id<K> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.uuid.cmp(&other.uuid)
    }
}

impl<K: IdKind> Serialize for Id<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de, K: IdKind> Deserialize<'de> for Id<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Id::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ep;
    impl IdKind for Ep {
        const PREFIX: &'static str = "ep-";
    }

    #[test]
    fn only_the_canonical_spelling_parses() {
        let ok = "ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b";
        assert_eq!(Id::<Ep>::parse(ok).unwrap().to_string(), ok);
        for bad in [
            "0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "ep-0B1E6F5E-3C1A-4B7E-9D2A-5F1C2E3D4A5B",
            "ep-0b1e6f5e3c1a4b7e9d2a5f1c2e3d4a5b",
            "ep-{0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b}",
            "ep-urn:uuid:0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "park-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b ",
            "ep-",
        ] {
            assert!(Id::<Ep>::parse(bad).is_err(), "{bad}");
        }
    }
}
