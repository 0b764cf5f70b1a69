//! Where a journal lives: a SQLite file, or a PostgreSQL database named by URL.
//! The one rule that selects the backend: `postgres://…` or `postgresql://…` is
//! PostgreSQL; anything else is the path of a SQLite file.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// A journal's location (see the module docs for the rule).
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database: a `postgres://` or `postgresql://` URL.
    Postgres(PostgresUrl),
}

/// A PostgreSQL connection URL. Its `Display` and `Debug` never show a password.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// The URL as given (with its password, if it has one): for connecting only.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact_url(&self.0))
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", redact_url(&self.0))
    }
}

/// `scheme://user:password@host…` without the password (`user:***@host`), and a
/// `password=` query parameter masked the same way. Any text is taken, a
/// mistyped URL included (what a refusal echoes): without `://`, where a user
/// name ends and a password starts cannot be told, so all before the last `@`
/// is masked (`***@host`).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let (head, query) = match rest.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = head.split_at(match scheme.is_empty() {
        true => head.rfind('@').map_or(0, |at| at + 1),
        false => head.find('/').unwrap_or(head.len()),
    });
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) if scheme.is_empty() => format!("***@{host}"),
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let query = query.map_or(String::new(), |query| {
        let kept: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_owned(),
            })
            .collect();
        format!("?{}", kept.join("&"))
    });
    format!("{scheme}{authority}{path}{query}")
}

impl Location {
    /// Applies the selection rule to a location as the user gave it.
    pub fn parse(text: &OsStr) -> Self {
        match text.to_str() {
            Some(s) if is_postgres_url(s) => Location::Postgres(PostgresUrl(s.to_owned())),
            _ => Location::Sqlite(PathBuf::from(text)),
        }
    }

    /// The SQLite file's path, or the URL without its password, as a path-like
    /// name for messages.
    pub fn display_path(&self) -> PathBuf {
        match self {
            Location::Sqlite(p) => p.clone(),
            Location::Postgres(u) => PathBuf::from(u.to_string()),
        }
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self {
            Location::Sqlite(_) => "sqlite",
            Location::Postgres(_) => "postgres",
        }
    }
}

fn is_postgres_url(s: &str) -> bool {
    ["postgres://", "postgresql://"].iter().any(|p| {
        s.get(..p.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(p))
    })
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => write!(f, "{u}"),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "Sqlite({p:?})"),
            Location::Postgres(u) => write!(f, "{u:?}"),
        }
    }
}

/// A path is a location by the same rule: a path whose text is a `postgres://`
/// URL names a PostgreSQL database, so `Engine::open(path)` serves both backends.
impl<P: AsRef<Path> + ?Sized> From<&P> for Location {
    fn from(p: &P) -> Self {
        Location::parse(p.as_ref().as_os_str())
    }
}

impl From<&Location> for Location {
    fn from(l: &Location) -> Self {
        l.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_selects_the_backend() {
        for (text, backend) in [
            ("postgres://u@h/db", "postgres"),
            ("postgresql://u@h/db", "postgres"),
            ("PostgreSQL://u@h/db", "postgres"),
            ("./journal.db", "sqlite"),
            ("/var/lib/postgres://x", "sqlite"),
            ("postgres:/x", "sqlite"),
            ("postgres", "sqlite"),
        ] {
            assert_eq!(
                Location::parse(OsStr::new(text)).backend(),
                backend,
                "{text}"
            );
        }
    }

    #[test]
    fn a_password_is_never_shown() {
        let l = Location::parse(OsStr::new(
            "postgresql://cairn:s3cret@db.example:5432/j?password=s3cret&sslmode=disable",
        ));
        let shown = format!("{l} {l:?} {}", l.display_path().display());
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("postgresql://cairn:***@db.example:5432/j?password=***&sslmode=disable")
        );
        let plain = Location::parse(OsStr::new("postgres://cairn@%2Ftmp%2Fpg:5432/j"));
        assert_eq!(plain.to_string(), "postgres://cairn@%2Ftmp%2Fpg:5432/j");
    }

    /// What a refusal echoes of a mistyped location hides its password too
    /// (helper-63: `postgress://u:pw@h/db` was echoed whole).
    #[test]
    fn a_mistyped_url_is_shown_without_its_password() {
        for (typed, shown) in [
            ("postgress://u:s3cret@h/db", "postgress://u:***@h/db"),
            (
                " postgresql://u:s3cret@h:5/db?sslmode=x",
                " postgresql://u:***@h:5/db?sslmode=x",
            ),
            ("postgresql:/u:s3cret@h/db", "***@h/db"),
            ("postgres:u:s3cret@h", "***@h"),
            ("postgres:/x?password=s3cret", "postgres:/x?password=***"),
            ("sqlite:x.db", "sqlite:x.db"),
            ("postgress://u@h/db", "postgress://u@h/db"),
        ] {
            assert_eq!(redact_url(typed), shown, "{typed}");
        }
    }
}
