//! What a tick is made of, as pure rules: the saga id derived from `--kind` and
//! `--id` (task ids slugified), the git snapshot a save captures (the branch and
//! `HEAD`, planned here and read back from cairn's own runs), and the orchestration
//! backend recorded recommended-and-chosen.

use super::state::Kind;
use crate::evidence::git::git;
use crate::evidence::{CommandRun, FullCommit};

/// `issue-<N>` or `task-<slug>` with `[a-z0-9-]` slugs.
pub fn valid_saga_id(id: &str) -> bool {
    crate::reads::is_saga_id(id)
}

/// Lower-case, the ASCII letter and digit runs joined by `-` (`Cache Warm-up!` →
/// `cache-warm-up`).
pub fn slugify(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The kind an id's prefix names.
pub fn kind_of(saga_id: &str) -> Kind {
    if saga_id.starts_with("task-") {
        Kind::Task
    } else {
        Kind::Issue
    }
}

/// The saga id a save names: `--id` as given when it already is a saga id of the
/// kind (`issue-42`, `task-cache`); otherwise derived from `--kind` (default
/// `issue`) as the seed's `saga.py` derives it — an issue keeps its number
/// (`42` → `issue-42`), a task id is slugified (`Cache Warm-up` →
/// `task-cache-warm-up`).
pub fn derive_saga_id(kind: Option<Kind>, id: &str) -> Result<String, String> {
    // An id is named exactly (found by a hostile pass: `issue-42 ` was trimmed
    // and written where every other verb refuses it); a task's free-text title
    // is slugified whole.
    if id.trim() != id && kind != Some(Kind::Task) {
        return Err(format!(
            "`{id}` has whitespace around it: name the id exactly"
        ));
    }
    let id = id.trim();
    if valid_saga_id(id) && kind.map_or(true, |k| k == kind_of(id)) {
        return Ok(id.to_owned());
    }
    match kind.unwrap_or(Kind::Issue) {
        Kind::Issue if !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()) => {
            Ok(format!("issue-{id}"))
        }
        Kind::Issue => Err(format!(
            "`{id}`: an issue id is its number (`--kind issue --id 42`), or a saga id `issue-<N>` / `task-<slug>`"
        )),
        Kind::Task => match slugify(id) {
            slug if slug.is_empty() => Err(format!("`{id}`: a task id needs a letter or a digit")),
            slug => Ok(format!("task-{slug}")),
        },
    }
}

/// The git snapshot a save takes in `repo`: the current branch, then `HEAD`.
pub fn capture_plan(repo: &str) -> Vec<Vec<String>> {
    vec![
        git(repo, &["branch", "--show-current"]),
        git(repo, &["rev-parse", "--verify", "--end-of-options", "HEAD"]),
    ]
}

/// What the capture runs show: the branch (none when detached or unreadable) and
/// the full `HEAD` (none when unreadable). A failed reading clears nothing.
pub fn captured(runs: &[CommandRun]) -> (Option<String>, Option<FullCommit>) {
    let line = |r: Option<&CommandRun>| {
        r.filter(|r| r.ok())
            .map(|r| r.stdout.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let branch = line(runs.first());
    let head = line(runs.get(1)).and_then(|h| FullCommit::parse(&h).ok());
    (branch, head)
}

/// Default branch names: a save made back on one never overwrites a recorded work
/// branch (`saga.py`'s guard, issue #480).
pub const DEFAULT_BRANCHES: [&str; 2] = ["main", "master"];

/// The branch a save leaves: the caller's `--branch`, else what git shows (unless it
/// is a default branch and a work branch is recorded), else the recorded one.
pub fn branch_after(
    explicit: Option<&str>,
    captured: Option<&str>,
    recorded: Option<&str>,
) -> Option<String> {
    if let Some(b) = explicit {
        return (!b.is_empty()).then(|| b.to_owned());
    }
    let downgrade = |c: &str| {
        DEFAULT_BRANCHES.contains(&c) && recorded.is_some_and(|r| !DEFAULT_BRANCHES.contains(&r))
    };
    match captured {
        Some(c) if !downgrade(c) => Some(c.to_owned()),
        _ => recorded.map(str::to_owned),
    }
}

/// The orchestration backends a save may record: since #1030 only `inline`.
pub const ORCHESTRATION_MODES: [&str; 1] = ["inline"];

/// Backends that were archived: a recorded tick holding one reads back, a new
/// choice cannot name it (`cc-workflows-ultracode` is never a default either).
pub const ARCHIVED_MODES: [&str; 2] = ["team-execution", "cc-workflows-ultracode"];

/// What cairn's recommender returns (the seed's `recommend_execution_backend()`):
/// `inline`, the only backend there is.
pub const RECOMMENDED_MODE: &str = "inline";

/// Checks one orchestration value a save names.
pub fn check_mode(value: &str) -> Result<(), String> {
    if ORCHESTRATION_MODES.contains(&value) {
        Ok(())
    } else if ARCHIVED_MODES.contains(&value) {
        Err(format!("`{value}` was archived (#1030): a recorded tick holding it reads back, a new choice records `inline`"))
    } else {
        Err(format!(
            "`{value}` is not an orchestration backend ({})",
            ORCHESTRATION_MODES.join(" | ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_derived_as_the_seed_derives_them() {
        assert_eq!(derive_saga_id(Some(Kind::Issue), "42").unwrap(), "issue-42");
        assert_eq!(derive_saga_id(None, "42").unwrap(), "issue-42");
        assert_eq!(derive_saga_id(None, "issue-42").unwrap(), "issue-42");
        assert_eq!(derive_saga_id(None, "task-cache").unwrap(), "task-cache");
        assert_eq!(
            derive_saga_id(Some(Kind::Task), "task-cache").unwrap(),
            "task-cache"
        );
        assert_eq!(
            derive_saga_id(Some(Kind::Task), "Cache Warm-up!").unwrap(),
            "task-cache-warm-up"
        );
        assert_eq!(
            derive_saga_id(Some(Kind::Task), "issue-42").unwrap(),
            "task-issue-42"
        );
        assert!(derive_saga_id(Some(Kind::Issue), "task-x").is_err());
        assert!(derive_saga_id(Some(Kind::Issue), "cache").is_err());
        assert!(derive_saga_id(Some(Kind::Task), "!!").is_err());
        assert!(derive_saga_id(None, "").is_err());
        for spaced in ["issue-42 ", " issue-42", "42\n", "\tissue-42"] {
            assert!(derive_saga_id(None, spaced).is_err(), "{spaced:?}");
            assert!(
                derive_saga_id(Some(Kind::Issue), spaced).is_err(),
                "{spaced:?}"
            );
        }
        assert_eq!(
            derive_saga_id(Some(Kind::Task), " Cache warm-up ").unwrap(),
            "task-cache-warm-up"
        );
    }

    #[test]
    fn a_default_branch_never_overwrites_a_work_branch() {
        assert_eq!(
            branch_after(None, Some("main"), Some("work/1")).as_deref(),
            Some("work/1")
        );
        assert_eq!(
            branch_after(None, Some("work/2"), Some("work/1")).as_deref(),
            Some("work/2")
        );
        assert_eq!(
            branch_after(None, Some("main"), None).as_deref(),
            Some("main")
        );
        assert_eq!(
            branch_after(None, None, Some("work/1")).as_deref(),
            Some("work/1")
        );
        assert_eq!(
            branch_after(Some("x"), Some("work/2"), None).as_deref(),
            Some("x")
        );
        assert_eq!(branch_after(Some(""), Some("work/2"), Some("w")), None);
    }
}
