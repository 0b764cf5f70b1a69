//! `bind-repository`: resolve exactly one registered repository for a receipt,
//! from exact root-bound git observations.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::observation::Backend;
use crate::evidence::wire::{self, at, InputError, Result};
use crate::evidence::AbsPath;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelectorKind {
    Bead,
    Episode,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub kind: SelectorKind,
    pub value: String,
}

/// A receipt's repository object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repository {
    pub path: String,
    pub vcs: Backend,
    pub branch: String,
    pub head: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiptIdentity {
    pub episode_id: String,
    pub anchor_bead: String,
    pub repository: Repository,
}

/// One exact command and what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reading {
    pub command: Vec<String>,
    pub stdout: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Readings {
    pub root: Reading,
    pub git_dir: Reading,
    pub common_dir: Reading,
    pub remote: Reading,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    pub name: String,
    pub url: String,
}

/// `bind-repository` input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindInput {
    pub selector: Selector,
    pub receipt_identity: ReceiptIdentity,
    pub observations: Readings,
    pub registrations: Vec<Registration>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchedRegistration {
    pub name: String,
    pub url: String,
    pub canonical_remote: String,
}

/// `bind-repository` output; also the `binding` of `repository_resolved` evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindOutput {
    pub schema_version: u32,
    pub selector: Selector,
    pub receipt_identity: ReceiptIdentity,
    pub registration: MatchedRegistration,
    pub backend: Backend,
    pub bound_root: String,
    pub git_dir: String,
    pub common_dir: String,
    pub canonical_remote: String,
    pub observations: Readings,
    pub commands: Vec<Vec<String>>,
}

fn argv(root: &str, rest: &[&str]) -> Vec<String> {
    let mut v = vec!["git".to_owned(), "-C".to_owned(), root.to_owned()];
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

/// The bound git commands a binding names (the helper's `commands`, exactly these
/// five in this order): status, unresolved paths, git dir, common dir, `HEAD`.
/// `observe-vcs` runs more than these; the binding's list is the helper's.
pub fn bound_commands(root: &str) -> Vec<Vec<String>> {
    [
        &["status", "--porcelain=v2", "--branch"][..],
        &["diff", "--name-only", "--diff-filter=U"],
        &["rev-parse", "--path-format=absolute", "--git-dir"],
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        &["rev-parse", "HEAD"],
    ]
    .iter()
    .map(|rest| argv(root, rest))
    .collect()
}

/// The canonical identity of a remote: `host[:port]/path`, host lower-cased,
/// default ports dropped, user info, a trailing `/` and `.git` stripped.
/// Handles `user@host:path`, `ssh://`, `git+ssh://`, `git://`, `http://`, `https://`.
pub fn canonical_remote(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let schemes: [(&str, u16); 5] = [
        ("ssh://", 22),
        ("git+ssh://", 22),
        ("git://", 9418),
        ("https://", 443),
        ("http://", 80),
    ];
    let (authority, path, default_port) = if let Some((scheme, port)) = schemes
        .iter()
        .find(|(s, _)| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s))
    {
        let rest = &url[scheme.len()..];
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        (authority, path, Some(*port))
    } else if url.contains("://") {
        return None;
    } else {
        // scp-like `[user@]host:path`: a colon before any slash.
        let colon = url.find(':')?;
        if url[..colon].contains('/') {
            return None;
        }
        (&url[..colon], &url[colon + 1..], None)
    };
    let hostport = authority.rsplit('@').next()?;
    let (host, port) = match (default_port, hostport.rsplit_once(':')) {
        (Some(default), Some((h, p))) => {
            let p: u16 = p.parse().ok()?;
            (h, if p == default { None } else { Some(p) })
        }
        _ => (hostport, None),
    };
    if host.is_empty() {
        return None;
    }
    let mut path = path.trim_start_matches('/').trim_end_matches('/');
    if let Some(p) = path.strip_suffix(".git") {
        path = p.trim_end_matches('/');
    }
    if path.is_empty() {
        return None;
    }
    let host = host.to_ascii_lowercase();
    Some(match port {
        Some(p) => format!("{host}:{p}/{path}"),
        None => format!("{host}/{path}"),
    })
}

fn line(stdout: &str) -> &str {
    stdout.strip_suffix('\n').unwrap_or(stdout)
}

/// Parses a `bind-repository` input document.
pub fn parse(v: &Value) -> Result<BindInput> {
    wire::object(
        v,
        "",
        &[
            "selector",
            "receipt_identity",
            "observations",
            "registrations",
        ],
        &[],
    )?;
    wire::typed(v.clone(), "$")
}

/// Runs the seed's binding algorithm.
pub fn bind(input: &BindInput) -> Result<BindOutput> {
    let id = &input.receipt_identity;
    super::EpisodeId::parse(&id.episode_id)
        .map_err(|e| InputError::new("receipt_identity.episode_id", "episode-id", e.to_string()))?;
    if id.anchor_bead.trim().is_empty() {
        return Err(InputError::new(
            "receipt_identity.anchor_bead",
            "nonempty-string",
            "the anchor is empty",
        ));
    }
    let want = match input.selector.kind {
        SelectorKind::Episode => &id.episode_id,
        SelectorKind::Bead => &id.anchor_bead,
    };
    if &input.selector.value != want {
        return Err(InputError::new(
            "selector.value",
            "selector-mismatch",
            "the selector does not name the receipt's episode or anchor",
        ));
    }
    if id.repository.vcs != Backend::Git {
        return Err(InputError::new(
            "receipt_identity.repository.vcs",
            "backend-unsupported",
            "bind-repository proves git bindings only: its observations are git's root, git dir and common dir",
        ));
    }
    let root = AbsPath::parse(&id.repository.path).map_err(|e| {
        InputError::new(
            "receipt_identity.repository.path",
            e.rule,
            "expected an absolute, normalised path",
        )
    })?;
    if id.repository.branch.trim().is_empty() {
        return Err(InputError::new(
            "receipt_identity.repository.branch",
            "nonempty-string",
            "the branch is empty",
        ));
    }
    if !id.repository.vcs.is_full_head(&id.repository.head) {
        return Err(InputError::new(
            "receipt_identity.repository.head",
            "full-head",
            "expected a full immutable head: 40 or 64 lower-case hex digits for git",
        ));
    }
    let obs = &input.observations;
    let exact = |reading: &Reading, name: &str, rest: &[&str]| -> Result<String> {
        let want = argv(&root, rest);
        if reading.command != want {
            return Err(InputError::new(
                format!("observations.{name}.command"),
                "bound-command",
                format!("expected exactly `{}`", want.join(" ")),
            ));
        }
        Ok(line(&reading.stdout).to_owned())
    };
    let observed_root = exact(&obs.root, "root", &["rev-parse", "--show-toplevel"])?;
    if root != observed_root {
        return Err(InputError::new(
            "observations.root.stdout",
            "path-root-mismatch",
            "the receipt path is not the canonical observed root",
        ));
    }
    let git_dir = exact(
        &obs.git_dir,
        "git_dir",
        &["rev-parse", "--path-format=absolute", "--git-dir"],
    )?;
    let common_dir = exact(
        &obs.common_dir,
        "common_dir",
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    for (name, p) in [("git_dir", &git_dir), ("common_dir", &common_dir)] {
        if AbsPath::parse(p).is_err() {
            return Err(InputError::new(
                format!("observations.{name}.stdout"),
                "absolute-path",
                "expected an absolute, normalised path",
            ));
        }
    }
    if !git_dir_relationship(root.as_str(), &git_dir, &common_dir) {
        return Err(InputError::new(
            "observations.git_dir.stdout",
            "git-dir-relationship",
            "the git dir and common dir prove neither `<root>/.git` nor a linked worktree `<common>/.git/worktrees/<name>`",
        ));
    }
    let remote_url = exact(&obs.remote, "remote", &["remote", "get-url", "origin"])?;
    let canonical = canonical_remote(&remote_url).ok_or_else(|| {
        InputError::new(
            "observations.remote.stdout",
            "remote-url",
            "the origin is not a recognisable remote URL",
        )
    })?;
    let matches: Vec<&Registration> = input
        .registrations
        .iter()
        .filter(|r| canonical_remote(&r.url).as_deref() == Some(canonical.as_str()))
        .collect();
    let registration = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(InputError::new(
                "registrations",
                "registration-match",
                format!("no registered repository has the origin `{canonical}`"),
            ))
        }
        _ => {
            return Err(InputError::new(
                "registrations",
                "registration-match",
                format!(
                    "{} registrations match the origin `{canonical}`; exactly one must",
                    matches.len()
                ),
            ))
        }
    };
    Ok(BindOutput {
        schema_version: 1,
        selector: input.selector.clone(),
        receipt_identity: id.clone(),
        registration: MatchedRegistration {
            name: registration.name.clone(),
            url: registration.url.clone(),
            canonical_remote: canonical.clone(),
        },
        backend: Backend::Git,
        bound_root: root.to_string(),
        git_dir,
        common_dir,
        canonical_remote: canonical,
        observations: obs.clone(),
        commands: bound_commands(&root),
    })
}

/// Checks a binding embedded as evidence: re-binding its own inputs must give it back.
pub fn check_output(b: &BindOutput, path: &str) -> Result<()> {
    let again = bind(&BindInput {
        selector: b.selector.clone(),
        receipt_identity: b.receipt_identity.clone(),
        observations: b.observations.clone(),
        registrations: vec![Registration {
            name: b.registration.name.clone(),
            url: b.registration.url.clone(),
        }],
    })
    .map_err(|e| InputError::new(at(path, &e.field), e.rule, e.message))?;
    if &again != b {
        return Err(InputError::new(
            path,
            "binding-consistent",
            "the binding does not follow from its own observations",
        ));
    }
    Ok(())
}

/// Whether a git dir and common dir (absolute, as `rev-parse --path-format=absolute`
/// prints them) are those of the checkout at `root`: its own `<root>/.git`, or a
/// linked worktree `<common>/.git/worktrees/<name>`.
pub(crate) fn git_dir_relationship(root: &str, git_dir: &str, common_dir: &str) -> bool {
    let dot_git = format!("{}/.git", root.trim_end_matches('/'));
    let normal = git_dir == dot_git && common_dir == dot_git;
    let linked = common_dir.ends_with("/.git")
        && git_dir
            .strip_prefix(&format!("{common_dir}/worktrees/"))
            .is_some_and(|name| !name.is_empty() && !name.contains('/'));
    normal || linked
}

#[cfg(test)]
mod tests {
    use super::canonical_remote as c;

    #[test]
    fn remotes_normalise_to_one_identity() {
        let want = Some("github.com/example/project".to_owned());
        for url in [
            "git@github.com:example/project.git",
            "git@GitHub.com:example/project",
            "ssh://git@github.com/example/project.git",
            "ssh://git@github.com:22/example/project/",
            "https://github.com/example/project",
            "https://user@GITHUB.com:443/example/project.git/",
            "http://github.com/example/project.git",
            "git+ssh://git@github.com/example/project",
        ] {
            assert_eq!(c(url), want, "{url}");
        }
        assert_eq!(
            c("ssh://git@host.example:2222/team/repo.git").as_deref(),
            Some("host.example:2222/team/repo")
        );
        assert_eq!(
            c("https://host.example:8443/team/repo").as_deref(),
            Some("host.example:8443/team/repo")
        );
        for bad in [
            "",
            "github.com",
            "/local/path",
            "ftp://x/y",
            "https://github.com/",
            "git@github.com:",
            "https://h:notaport/x",
        ] {
            assert_eq!(c(bad), None, "{bad}");
        }
    }
}
