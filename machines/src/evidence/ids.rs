//! The checked values every machine shares, newtypes that can only be built valid:
//! a full commit id, an absolute normalised path, a name git will not read as an
//! option, an http(s) URL, a full jj change id. The checks behind them are private
//! to this module (`tests/tidy.rs` pins it): a caller holds a checked value, or an
//! [`Invalid`] naming the rule its text broke.

/// True for `http://` or `https://` URLs with a host and no whitespace.
fn is_http_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("https://") {
        r
    } else if let Some(r) = lower.strip_prefix("http://") {
        r
    } else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or("");
    !host.is_empty()
        && !host.starts_with(':')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// 40 or 64 lower-case hex digits: a full git object id.
fn is_full_git_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A full jj change id: 32 characters of jj's `k`–`z` alphabet.
fn is_full_jj_change(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| (b'k'..=b'z').contains(&b))
}

/// An absolute, normalised path: starts with `/`, no `.`/`..`/empty segments, no trailing `/`.
fn is_normal_abs_path(s: &str) -> bool {
    if s == "/" {
        return true;
    }
    s.starts_with('/')
        && !s.ends_with('/')
        && s[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && !s.chars().any(|c| c.is_control())
}

/// A value git could read as an option (`-x`, `--all`) when it stands where a ref,
/// revision or path is expected. Refused at input by every verb that hands a
/// caller's name to git; argvs also end options (`--end-of-options`) before it.
fn is_option_like(s: &str) -> bool {
    s.starts_with('-')
}

/// Refuses a caller's name (`what`: "owner", "claim id") that would read as an
/// option, under rule `option-like`: for names that are not refs but still must
/// never look like a flag.
pub fn refuse_option_like(s: &str, what: &str) -> Result<(), Invalid> {
    if is_option_like(s) {
        return Err(Invalid {
            rule: "option-like",
            message: format!("the {what} `{s}` starts with `-` and would read as an option"),
        });
    }
    Ok(())
}

/// Why a string is not a valid newtype value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The stable rule name (`full-commit`, `absolute-path`).
    pub rule: &'static str,
    /// A lower-case human sentence.
    pub message: String,
}

impl Invalid {
    /// As the input error at `field` (a JSON path or a flag's field name), under
    /// this value's rule.
    pub fn at(self, field: impl Into<String>) -> super::InputError {
        super::InputError::new(field, self.rule, self.message)
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

macro_rules! checked_string {
    ($(#[$doc:meta])* $name:ident, $check:path, $rule:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
        )]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Checks `s`; the only constructor.
            pub fn parse(s: &str) -> ::core::result::Result<Self, $crate::evidence::Invalid> {
                if $check(s) {
                    Ok(Self(s.to_owned()))
                } else {
                    Err($crate::evidence::Invalid {
                        rule: $rule,
                        message: format!(concat!("`{}` is not ", $what), s),
                    })
                }
            }

            /// The checked text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::evidence::Invalid;
            fn try_from(s: String) -> ::core::result::Result<Self, $crate::evidence::Invalid> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

/// A machine's own checked string (a rule only it has) is declared the same way.
pub(crate) use checked_string;

checked_string!(
    /// A full git object id: 40 or 64 lower-case hex digits (never a short or
    /// symbolic name, which could move).
    FullCommit,
    is_full_git_id,
    "full-commit",
    "a full commit id (40 or 64 lower-case hex digits)"
);

checked_string!(
    /// An absolute, normalised path: `/`-rooted, no `.`, `..` or empty segment, no
    /// trailing `/`, no control character.
    AbsPath,
    is_normal_abs_path,
    "absolute-path",
    "an absolute, normalised path"
);

checked_string!(
    /// A name a caller hands to git where a ref, revision or path stands (a branch,
    /// a merge target), which git cannot read as an option: it does not start with
    /// `-`. That is all it guarantees: a blank name is refused by each verb under its
    /// own rule (`nonempty-string`), before this one.
    RefName,
    is_not_option_like,
    "option-like",
    "a name git reads as a name (it must not start with `-`)"
);

checked_string!(
    /// An `http://` or `https://` URL with a host and no whitespace.
    HttpUrl,
    is_http_url,
    "http-url",
    "an http(s) URL with a host"
);

checked_string!(
    /// A full jj change id: 32 characters of jj's `k`–`z` alphabet (never a short
    /// prefix, which could come to name another change).
    JjChange,
    is_full_jj_change,
    "full-change",
    "a full jj change id (32 characters of k–z)"
);

fn is_not_option_like(s: &str) -> bool {
    !is_option_like(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_ids_paths() {
        assert!(is_http_url("https://github.com/o/r/pull/1"));
        assert!(is_http_url("HTTP://example.com"));
        for bad in [
            "",
            "github.com/o/r",
            "ftp://x",
            "https://",
            "https:///x",
            "https://a b",
            "https://:80/x",
        ] {
            assert!(!is_http_url(bad), "{bad}");
        }
        assert!(is_full_git_id(&"a".repeat(40)) && is_full_git_id(&"0".repeat(64)));
        assert!(!is_full_git_id(&"A".repeat(40)) && !is_full_git_id("abc123"));
        assert!(is_full_jj_change(&"k".repeat(32)) && !is_full_jj_change(&"a".repeat(32)));
        assert!(is_normal_abs_path("/work/repo") && is_normal_abs_path("/"));
        for bad in ["work", "/work/", "/a/../b", "/a//b", "/a/./b"] {
            assert!(!is_normal_abs_path(bad), "{bad}");
        }
    }

    #[test]
    fn newtypes_are_built_valid_only() {
        let sha = "a".repeat(40);
        assert_eq!(FullCommit::parse(&sha).unwrap().as_str(), sha);
        assert_eq!(FullCommit::parse("abc123").unwrap_err().rule, "full-commit");
        let c: FullCommit = serde_json::from_value(serde_json::json!(sha)).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!(sha));
        assert!(serde_json::from_value::<FullCommit>(serde_json::json!("HEAD")).is_err());
        assert!(AbsPath::parse("/a/b").is_ok() && AbsPath::parse("a/b").is_err());
        assert!(serde_json::from_value::<AbsPath>(serde_json::json!("/a/../b")).is_err());
        assert!(is_option_like("--all") && is_option_like("-x") && !is_option_like("main"));
    }

    #[test]
    fn names_urls_and_changes_are_built_valid_only() {
        assert_eq!(RefName::parse("--all").unwrap_err().rule, "option-like");
        assert_eq!(RefName::parse("main").unwrap().as_str(), "main");
        assert!(serde_json::from_value::<RefName>(serde_json::json!("-x")).is_err());
        assert_eq!(
            HttpUrl::parse("github.com/o/r").unwrap_err().rule,
            "http-url"
        );
        assert!(HttpUrl::parse("https://github.com/o/r/pull/1").is_ok());
        assert_eq!(
            JjChange::parse(&"a".repeat(32)).unwrap_err().rule,
            "full-change"
        );
        assert!(JjChange::parse(&"k".repeat(32)).is_ok());
        let e = AbsPath::parse("rel").unwrap_err().at("repo");
        assert_eq!((e.field.as_str(), e.rule), ("repo", "absolute-path"));
    }
}
