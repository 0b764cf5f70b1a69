//! RFC3339 timestamps that must carry an explicit offset, and the one function
//! that spells an instant cairn writes ([`spell`]).
//!
//! cairn's own spelling is RFC3339 in UTC with microseconds and `Z`
//! ([`Spelling::Cairn`]): every clock reading in a command, every journal column
//! (`cairn_journal::now_rfc3339` — the journal crate depends on nothing of
//! cairn's, so it holds its own call; a test in the CLI pins the two to one
//! spelling). The saga run record (`run_record.v1`) is a contract that existing
//! helpers already write and read, and its sheet fixes two more spellings, at
//! whole seconds: `…Z` for an iteration's times and a hand-off
//! ([`Spelling::RecordZ`]), `…+00:00` for `created_at`/`updated_at`
//! ([`Spelling::RecordOffset`]). Nothing else writes a timestamp (a ship step's
//! owner keeps `ps -o lstart` bytes verbatim: a process identity compared as text,
//! not a time cairn reads or writes).

use std::fmt;

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Error;

/// How an instant is written: cairn's own form, or one the run-record contract fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `2026-05-01T09:21:02.123456Z`: UTC, microseconds, `Z`.
    Cairn,
    /// `2026-05-01T09:21:02Z`: the run record's iteration and hand-off times.
    RecordZ,
    /// `2026-05-01T09:21:02+00:00`: the run record's `created_at` / `updated_at`.
    RecordOffset,
}

/// The instant, in UTC, written in `spelling` (sub-second digits beyond the
/// spelling's precision are dropped, never rounded up into the next second).
pub fn spell<Tz: chrono::TimeZone>(instant: &DateTime<Tz>, spelling: Spelling) -> String {
    use chrono::SecondsFormat;
    let utc = instant.with_timezone(&chrono::Utc);
    match spelling {
        Spelling::Cairn => utc.to_rfc3339_opts(SecondsFormat::Micros, true),
        Spelling::RecordZ => utc.to_rfc3339_opts(SecondsFormat::Secs, true),
        Spelling::RecordOffset => utc.to_rfc3339_opts(SecondsFormat::Secs, false),
    }
}

/// An instant written as RFC3339 with an explicit offset (`Z` or `±hh:mm`).
///
/// The original text is kept verbatim (it is what the evidence said, and what
/// the journal hashes); comparisons use the parsed instant.
#[derive(Debug, Clone)]
pub struct Timestamp {
    text: String,
    instant: DateTime<FixedOffset>,
}

impl Timestamp {
    /// Parses RFC3339 text; a missing offset, a bare date or any other form is refused.
    pub fn parse(text: &str) -> Result<Self, Error> {
        // chrono accepts a space instead of `T` and lower-case `t`/`z`; RFC3339's
        // grammar allows them too, but the seeds' examples and every producer we
        // talk to use the canonical form, so insist on it.
        let shape_ok = text.len() >= 20
            && text.as_bytes().get(10) == Some(&b'T')
            && (text.ends_with('Z') || has_numeric_offset(text));
        let instant = DateTime::parse_from_rfc3339(text).map_err(|e| Error::Timestamp {
            value: text.to_owned(),
            reason: e.to_string(),
        })?;
        if !shape_ok {
            return Err(Error::Timestamp {
                value: text.to_owned(),
                reason: "expected YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)".into(),
            });
        }
        Ok(Self {
            text: text.to_owned(),
            instant,
        })
    }

    /// Wraps an instant produced by a clock outside this crate, at microsecond
    /// precision: the instant is truncated to exactly what its text says, so a value
    /// read back from the journal equals the one that was written.
    pub fn from_instant(instant: DateTime<FixedOffset>) -> Self {
        use chrono::SubsecRound;
        let instant = instant.trunc_subsecs(6);
        Self {
            text: spell(&instant, Spelling::Cairn),
            instant,
        }
    }

    /// The instant.
    pub fn instant(&self) -> DateTime<FixedOffset> {
        self.instant
    }

    /// The text exactly as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn has_numeric_offset(text: &str) -> bool {
    let b = text.as_bytes();
    let n = b.len();
    n >= 6
        && (b[n - 6] == b'+' || b[n - 6] == b'-')
        && b[n - 5].is_ascii_digit()
        && b[n - 4].is_ascii_digit()
        && b[n - 3] == b':'
        && b[n - 2].is_ascii_digit()
        && b[n - 1].is_ascii_digit()
}

/// On the wire a timestamp is RFC3339 text with an explicit offset.
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})$",
            "description": "RFC3339 with an explicit offset: YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)"
        })
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.instant == other.instant
    }
}
impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.instant.cmp(&other.instant)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_rfc3339_with_offset() {
        for ok in [
            "2026-11-30T03:54:38Z",
            "2026-11-30T03:54:38.123456Z",
            "2026-11-30T03:54:38+02:00",
            "2026-11-30T03:54:38-07:30",
        ] {
            assert!(Timestamp::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T03:54:38",
            "2026-11-30 03:54:38Z",
            "2026-11-30t03:54:38z",
            "2026-11-30T03:54:38+0200",
            "yesterday",
            "2026-13-30T03:54:38Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn from_instant_round_trips_through_its_text() {
        let t = DateTime::parse_from_rfc3339("2026-11-30T04:45:15.602375557Z").unwrap();
        let ts = Timestamp::from_instant(t);
        assert_eq!(ts.as_str(), "2026-11-30T04:45:15.602375Z");
        assert_eq!(
            Timestamp::parse(ts.as_str()).unwrap().instant(),
            ts.instant()
        );
    }

    #[test]
    fn the_three_spellings() {
        let t = DateTime::parse_from_rfc3339("2026-05-01T11:21:02.999999999+02:00").unwrap();
        assert_eq!(spell(&t, Spelling::Cairn), "2026-05-01T09:21:02.999999Z");
        assert_eq!(spell(&t, Spelling::RecordZ), "2026-05-01T09:21:02Z");
        assert_eq!(
            spell(&t, Spelling::RecordOffset),
            "2026-05-01T09:21:02+00:00"
        );
        for s in [Spelling::Cairn, Spelling::RecordZ, Spelling::RecordOffset] {
            assert!(Timestamp::parse(&spell(&t, s)).is_ok(), "{s:?}");
        }
    }

    #[test]
    fn keeps_text_compares_instants() {
        let a = Timestamp::parse("2026-11-30T03:00:00Z").unwrap();
        let b = Timestamp::parse("2026-11-30T05:00:00+02:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(b.as_str(), "2026-11-30T05:00:00+02:00");
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            "\"2026-11-30T05:00:00+02:00\""
        );
    }
}
