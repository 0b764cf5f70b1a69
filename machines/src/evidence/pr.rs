//! One PR, one identity: every spelling of a PR's URL that names the same PR
//! (`GitHub.com/o/r/pull/07`, `…/pull/7/files`, `…/pull/7#discussion_r1`) maps to one
//! canonical form, `https://<host>/<owner>/<repo>/pull/<number>` — scheme `https`,
//! host, owner and repository lower-cased (GitHub names are case-insensitive), the
//! number without leading zeros, no trailing path, query or fragment. The stream is
//! that form without its scheme, so an offer made on one spelling is withdrawn by an
//! observation made on any other.

use crate::evidence::wire::InputError;

/// The form a PR's URL must reduce to.
pub const FORM: &str = "https://<host>/<owner>/<repo>/pull/<number>";

/// A PR's identity, parsed from its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrId {
    host: String,
    owner: String,
    repo: String,
    number: u64,
}

impl PrId {
    /// Parses any spelling of a PR's URL; the error names the field `field`.
    pub fn parse(url: &str, field: &str) -> Result<Self, InputError> {
        let bad = |why: &str| {
            InputError::new(
                field,
                "pr-url",
                format!("`{url}` is not a pull request's URL ({why}): expected {FORM}"),
            )
        };
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("whitespace or a control character"));
        }
        let lower = url.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"))
            .ok_or_else(|| bad("not http(s)"))?;
        // What follows `#` or `?` points inside the PR's page; it does not name another PR.
        let rest = rest.split(['#', '?']).next().unwrap_or("");
        let mut segments = rest.split('/');
        let host = segments.next().unwrap_or("");
        if host.is_empty() || host.contains('@') || host.starts_with(':') || host.ends_with(':') {
            return Err(bad("no host, or a user name in it"));
        }
        let host = canonical_host(host).ok_or_else(|| bad("a host that is not a name[:port]"))?;
        let segs: Vec<&str> = segments.collect();
        let name_ok = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        };
        let (owner, repo, pull, number) = match segs.as_slice() {
            [owner, repo, pull, number, tail @ ..]
                if tail.iter().all(|t| name_ok(t) || t.is_empty()) =>
            {
                (*owner, *repo, *pull, *number)
            }
            _ => return Err(bad("no `/<owner>/<repo>/pull/<number>` path")),
        };
        if !name_ok(owner) || !name_ok(repo) || pull != "pull" {
            return Err(bad("no `/<owner>/<repo>/pull/<number>` path"));
        }
        // `widgets.git` is a clone URL's spelling of `widgets`, not a second
        // repository: refused rather than guessed (found by a hostile pass: a
        // bead's `…/widgets.git/pull/7` read no loop and opened park's gate).
        if repo
            .trim_end_matches('.')
            .to_ascii_lowercase()
            .ends_with(".git")
        {
            return Err(bad(
                "the repository is named with `.git`: name it as its page does",
            ));
        }
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the number is not digits"));
        }
        let number: u64 = number
            .trim_start_matches('0')
            .parse()
            .map_err(|_| bad("the number is 0 or too large"))?;
        Ok(Self {
            host,
            owner: owner.to_owned(),
            repo: repo.to_owned(),
            number,
        })
    }

    /// `https://<host>/<owner>/<repo>/pull/<number>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.instance())
    }

    /// The stream instance: the canonical URL without its scheme.
    pub fn instance(&self) -> String {
        format!(
            "{}/{}/{}/pull/{}",
            self.host, self.owner, self.repo, self.number
        )
    }

    /// The PR's number.
    pub fn number(&self) -> u64 {
        self.number
    }
}

/// A (lower-cased) `host[:port]` in the one spelling every form of it reduces to:
/// the port as a number without leading zeros, dropped when it is https's or
/// http's default (443, 80: the identity is https's), and the host without the
/// trailing dot of a fully qualified name (`github.com.` is `github.com`) or a
/// leading `www.` (as gh reads it). `None`
/// for anything else: an empty label, characters a host name does not have, a port
/// that is not 1–65535 in digits.
fn canonical_host(host: &str) -> Option<String> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    // gh reads `www.github.com` as `github.com` (one host, one PR).
    let name = name.strip_prefix("www.").unwrap_or(name);
    let label_ok = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if name.is_empty() || !name.split('.').all(label_ok) {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            match p.parse::<u16>().ok()? {
                0 => return None,
                80 | 443 => None,
                n => Some(n),
            }
        }
        Some(_) => return None,
    };
    Some(match port {
        Some(n) => format!("{name}:{n}"),
        None => name.to_owned(),
    })
}

/// The canonical URL of the PR `url` names (the error names the field `pr`).
pub fn canonical_pr(url: &str) -> Result<String, InputError> {
    PrId::parse(url, "pr").map(|id| id.url())
}

/// The stream instance of a PR URL: its canonical form without the scheme.
pub fn stream_instance(pr: &str) -> Option<String> {
    PrId::parse(pr, "pr").ok().map(|id| id.instance())
}

/// The PR continuation loop's machine name.
pub const LOOP_MACHINE: &str = "pr-loop";

/// The PR loop's stream of a PR URL (`pr-loop/<instance>`), read by the lifecycles
/// that rely on its word on the PR (park's `pr_merged`).
pub fn loop_stream(pr: &str) -> Option<String> {
    stream_instance(pr).map(|i| format!("{LOOP_MACHINE}/{i}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_pr_is_one_identity() {
        let want = "https://github.com/example/project/pull/7";
        for url in [
            want,
            "https://GitHub.com/example/project/pull/07",
            "http://github.com/Example/Project/pull/7/",
            "https://github.com/example/project/pull/7/files",
            "https://github.com/example/project/pull/007#discussion_r1",
            "https://github.com/example/project/pull/7?w=1",
            // A default port, spelled any way, and a fully qualified host name.
            "https://github.com:443/example/project/pull/7",
            "https://github.com:0443/example/project/pull/7",
            "http://github.com:80/example/project/pull/7",
            "https://github.com./example/project/pull/7",
            "https://github.com.:443/example/project/pull/7",
            "https://www.github.com/example/project/pull/7",
        ] {
            assert_eq!(canonical_pr(url).as_deref(), Ok(want), "{url}");
        }
        for ghe in [
            "https://ghe.corp:8443/a/b/pull/12",
            "https://ghe.corp:08443/a/b/pull/12",
            "https://GHE.corp.:8443/a/b/pull/12",
        ] {
            assert_eq!(
                stream_instance(ghe).as_deref(),
                Some("ghe.corp:8443/a/b/pull/12"),
                "{ghe}"
            );
        }
        for bad in [
            "",
            "https://github.com:0/o/r/pull/7",
            "https://github.com:65536/o/r/pull/7",
            "https://github.com:+443/o/r/pull/7",
            "https://github..com/o/r/pull/7",
            "https://github.com../o/r/pull/7",
            "https://-github.com/o/r/pull/7",
            "https://git_hub.com/o/r/pull/7",
            "https://[::1]/o/r/pull/7",
            "github.com/o/r/pull/7",
            "ftp://github.com/o/r/pull/7",
            "https://github.com/o/r/issues/7",
            "https://github.com/o/r/pull/0",
            "https://github.com/o/r/pull/",
            "https://github.com/o/r/pull/7x",
            "https://github.com/o/r/pull/-7",
            "https://u@github.com/o/r/pull/7",
            "https://github.com/o/../pull/7",
            "https://github.com/o/r/pull/7/../8",
            "https://github.com/o/r%2f/pull/7",
            "https://github.com/o/r/pull/7 ",
            "https:///o/r/pull/7",
            "https://github.com/o/r.git/pull/7",
            "https://github.com/o/r.GIT/pull/7",
            "https://github.com/o/r.git./pull/7",
        ] {
            let e = canonical_pr(bad).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule), ("pr", "pr-url"), "{bad}");
            assert!(e.message.contains(FORM), "{bad}: {}", e.message);
        }
    }
}
