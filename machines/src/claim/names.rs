//! The values a claim is made of, each built valid only: an owner and a claim id
//! (visible text a person can read, never option-like), a time to live (whole
//! seconds, bounded) and a fencing token (a positive integer).

use serde::{Deserialize, Serialize};

use crate::evidence::Invalid;

/// The longest owner or claim id, in bytes.
pub const NAME_MAX: usize = 256;
/// The shortest time to live, in seconds.
pub const TTL_MIN: u32 = 1;
/// The longest time to live, in seconds (24 hours).
pub const TTL_MAX: u32 = 86_400;

fn invalid(rule: &'static str, message: String) -> Invalid {
    Invalid { rule, message }
}

/// What an owner or a claim id must be: non-empty, at most [`NAME_MAX`] bytes,
/// no character a person cannot see (controls, zero-width, bidirectional
/// controls, …), no space at either end, and not option-like.
fn check_name(what: &str, s: &str) -> Result<(), Invalid> {
    crate::evidence::names::visible_name(what, s, NAME_MAX)
        .map_err(|(rule, message)| invalid(rule, message))
}

macro_rules! name {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Checks `s`; the only constructor.
            pub fn parse(s: &str) -> Result<Self, Invalid> {
                check_name($what, s).map(|()| Self(s.to_owned()))
            }

            /// The checked text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = Invalid;
            fn try_from(s: String) -> Result<Self, Invalid> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name!(
    /// Who holds a claim: the caller's identity (an agent, a session), as it names itself.
    Owner,
    "owner"
);
name!(
    /// The caller-stable id of one claim: the same id again while it holds is a
    /// readback, not a second grant.
    ClaimId,
    "claim id"
);

/// A lease's time to live: whole seconds, [`TTL_MIN`] ..= [`TTL_MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Ttl(u32);

impl Ttl {
    /// `seconds`, if within the bounds.
    pub fn from_seconds(seconds: u64) -> Result<Self, Invalid> {
        match u32::try_from(seconds) {
            Ok(s) if (TTL_MIN..=TTL_MAX).contains(&s) => Ok(Self(s)),
            _ => Err(invalid(
                "ttl-range",
                format!("a ttl of {seconds} s is outside {TTL_MIN} ..= {TTL_MAX} s (1 second to 24 hours)"),
            )),
        }
    }

    /// The command line's one duration syntax: whole seconds, an optional `s`
    /// after them (`30`, `30s`); nothing else (no sign, no fraction, no other unit).
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let digits = text.strip_suffix('s').unwrap_or(text);
        if digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return Err(invalid(
                "ttl-syntax",
                format!("`{text}` is not a whole number of seconds (e.g. `30` or `30s`)"),
            ));
        }
        // Digits only: a parse failure is a number past u64, past the bound anyway.
        Self::from_seconds(digits.parse().unwrap_or(u64::MAX))
    }

    /// The seconds.
    pub fn seconds(self) -> u32 {
        self.0
    }
}

impl TryFrom<u64> for Ttl {
    type Error = Invalid;
    fn try_from(seconds: u64) -> Result<Self, Invalid> {
        Self::from_seconds(seconds)
    }
}

impl From<Ttl> for u64 {
    fn from(t: Ttl) -> u64 {
        u64::from(t.0)
    }
}

/// A fencing token: a positive integer, strictly greater than every token granted
/// before it on the same resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Token(u64);

impl Token {
    /// The first token a resource grants.
    pub const FIRST: Token = Token(1);

    /// `n`, if positive.
    pub fn new(n: u64) -> Result<Self, Invalid> {
        if n == 0 {
            Err(invalid(
                "fencing-token",
                "a fencing token is a positive integer; 0 is never granted".into(),
            ))
        } else {
            Ok(Self(n))
        }
    }

    /// A token as the command line gives it: decimal digits in the token's one
    /// spelling (no sign, no leading zero), nothing else.
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        match text.parse::<u64>() {
            Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) && !text.starts_with('0') => {
                Self::new(n)
            }
            Ok(0) => Self::new(0),
            _ => Err(invalid(
                "fencing-token",
                format!("`{text}` is not a fencing token (a positive integer)"),
            )),
        }
    }

    /// The token after this one; `None` past `u64::MAX`.
    pub fn next(self) -> Option<Token> {
        self.0.checked_add(1).map(Token)
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl TryFrom<u64> for Token {
    type Error = Invalid;
    fn try_from(n: u64) -> Result<Self, Invalid> {
        Self::new(n)
    }
}

impl From<Token> for u64 {
    fn from(t: Token) -> u64 {
        t.0
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_visible_bounded_and_not_options() {
        for ok in ["agent-a", "c1", "session 7@host", "épisode", "a/b:c"] {
            assert!(Owner::parse(ok).is_ok(), "{ok}");
            assert!(ClaimId::parse(ok).is_ok(), "{ok}");
        }
        let long = "x".repeat(NAME_MAX + 1);
        for (bad, rule) in [
            ("", "nonempty-string"),
            (long.as_str(), "length"),
            ("a\u{200B}b", "invisible-character"),
            ("a\u{202E}b", "invisible-character"),
            ("a\u{2066}b", "invisible-character"),
            ("a\nb", "invisible-character"),
            ("a\u{7}", "invisible-character"),
            ("\t", "invisible-character"),
            (" a", "surrounding-space"),
            ("a ", "surrounding-space"),
            ("--all", "option-like"),
            ("-x", "option-like"),
        ] {
            assert_eq!(Owner::parse(bad).unwrap_err().rule, rule, "{bad:?}");
            assert_eq!(ClaimId::parse(bad).unwrap_err().rule, rule, "{bad:?}");
        }
        assert!(Owner::parse(&"x".repeat(NAME_MAX)).is_ok());
    }

    #[test]
    fn a_name_read_back_is_checked_again() {
        assert!(serde_json::from_str::<ClaimId>("\"c1\"").is_ok());
        assert!(serde_json::from_str::<ClaimId>("\"-c1\"").is_err());
        assert!(serde_json::from_str::<Owner>("\"a\\u200bb\"").is_err());
    }

    #[test]
    fn ttl_is_whole_seconds_within_bounds() {
        assert_eq!(Ttl::parse("30").unwrap().seconds(), 30);
        assert_eq!(Ttl::parse("30s").unwrap().seconds(), 30);
        assert_eq!(Ttl::parse("1").unwrap().seconds(), TTL_MIN);
        assert_eq!(Ttl::parse("86400s").unwrap().seconds(), TTL_MAX);
        for (bad, rule) in [
            ("0", "ttl-range"),
            ("86401", "ttl-range"),
            ("99999999999999999999999", "ttl-range"),
            ("", "ttl-syntax"),
            ("s", "ttl-syntax"),
            ("30m", "ttl-syntax"),
            ("1.5", "ttl-syntax"),
            ("-1", "ttl-syntax"),
            ("+1", "ttl-syntax"),
            (" 30", "ttl-syntax"),
            ("30ss", "ttl-syntax"),
        ] {
            assert_eq!(Ttl::parse(bad).unwrap_err().rule, rule, "{bad:?}");
        }
        assert!(serde_json::from_str::<Ttl>("0").is_err());
        assert_eq!(
            serde_json::to_string(&Ttl::parse("5").unwrap()).unwrap(),
            "5"
        );
    }

    #[test]
    fn tokens_are_positive_integers() {
        assert_eq!(Token::parse("7").unwrap().get(), 7);
        for bad in ["0", "", "-1", "+1", "1.0", "x", "18446744073709551616"] {
            assert_eq!(
                Token::parse(bad).unwrap_err().rule,
                "fencing-token",
                "{bad:?}"
            );
        }
        assert!(serde_json::from_str::<Token>("0").is_err());
        assert_eq!(Token::FIRST.next(), Some(Token(2)));
        assert_eq!(Token(u64::MAX).next(), None);
    }
}
