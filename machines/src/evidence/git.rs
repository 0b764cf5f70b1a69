//! The one git argv builder and the observer's environment, as data.
//!
//! Every git command cairn runs is planned here (`git -C <absolute dir> …`, never
//! the caller's cwd) and run by the facade's one runner (`cairn::observe::run`),
//! which clears the caller's environment and sets exactly [`observer_env`]. So an
//! observation means the same on every machine and in every shell: the caller's
//! `GIT_DIR`, `GIT_INDEX_FILE`, `GIT_CONFIG_*`, … never reach git, and no user,
//! system or repository setting changes what cairn parses or runs a program during
//! a reading.

use super::CommandRun;

/// `git -C <dir> <rest…>`.
pub fn git(dir: &str, rest: &[&str]) -> Vec<String> {
    let mut v = vec!["git".to_owned(), "-C".to_owned(), dir.to_owned()];
    v.extend(rest.iter().map(|s| (*s).to_owned()));
    v
}

/// `git -C <dir> worktree list --porcelain -z`: one NUL-terminated field per line
/// of the porcelain form, so a worktree path holding a newline stays one field.
pub fn worktree_list(dir: &str) -> Vec<String> {
    git(dir, &["worktree", "list", "--porcelain", "-z"])
}

/// A repository's identity on disk: `stat -L --format=%d:%i GIT_DIR GIT_DIR/refs`,
/// the device and inode of its git directory and of its refs. A path names
/// whatever is there now; these name the directories that were read (helper-78:
/// another clone's `.git` moved into place, or its refs made a link to a copy,
/// kept every path).
pub fn identity_argv(git_dir: &str) -> Vec<String> {
    vec![
        "stat".to_owned(),
        "-L".to_owned(),
        "--format=%d:%i".to_owned(),
        git_dir.to_owned(),
        format!("{git_dir}/refs"),
    ]
}

/// The identity an [`identity_argv`] run read (its output, trimmed), when it ran
/// as planned for `git_dir` and exited 0.
pub fn identity_of(git_dir: &str, run: &CommandRun) -> Option<String> {
    (run.argv == identity_argv(git_dir) && run.ok())
        .then(|| run.stdout.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// `git -C DIR rev-parse --path-format=absolute --git-common-dir`: the repository
/// a checkout belongs to (the same for every worktree of it), by path.
pub fn common_dir_argv(dir: &str) -> Vec<String> {
    git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
}

/// The reading that follows a [`common_dir_argv`] run: [`identity_argv`] of the
/// common dir it printed, when it printed one absolute path.
pub fn repository_identity_plan(common: &CommandRun) -> Option<Vec<String>> {
    let mut lines = common.stdout.lines();
    match (common.ok(), lines.next(), lines.next()) {
        (true, Some(dir), None) if dir.starts_with('/') => Some(identity_argv(dir)),
        _ => None,
    }
}

/// Which repository `dir` belongs to, as the runs of [`common_dir_argv`] and
/// [`repository_identity_plan`] read it: its common dir and that directory's
/// identity on disk (`<common dir> <dev:ino> <dev:ino>`), or `None` when either was
/// not read as planned. Two checkouts of one repository read the same; a clone,
/// or another clone's `.git` moved into the path, reads another.
pub fn repository_of(dir: &str, runs: &[CommandRun]) -> Option<String> {
    let [common, identity] = runs else {
        return None;
    };
    if common.argv != common_dir_argv(dir) {
        return None;
    }
    // Planned only for one absolute path printed: that common dir.
    repository_identity_plan(common)?;
    let path = common.stdout.lines().next()?;
    let id = identity_of(path, identity)?;
    Some(format!(
        "{path} {}",
        id.split_whitespace().collect::<Vec<_>>().join(" ")
    ))
}

/// The three readings of a tree, in order: top level, HEAD, and a status of every
/// path, untracked files listed one by one (taken against HEAD by the observer).
/// A work node's verification and a build loop's iteration read their tree so.
pub fn tree_plan(tree: &str) -> [Vec<String>; 3] {
    [
        git(tree, &["rev-parse", "--show-toplevel"]),
        git(tree, &["rev-parse", "HEAD"]),
        git(tree, &["status", "--porcelain", "--untracked-files=all"]),
    ]
}

/// git's empty tree: attributes read from it are none.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Whether a `status` run was taken against HEAD itself, as cairn's observer
/// takes every one: its recorded environment names an index of the observer's
/// own (`GIT_INDEX_FILE`, HEAD read into it, so no mark or cached file time of
/// the repository's index hides an edit) and attributes from the empty tree
/// (`GIT_ATTR_SOURCE`, so no `.gitattributes` converts a file before it is
/// compared). A status on the repository's own index skips an entry marked
/// skip-worktree or assume-unchanged and trusts its cached stats (found by
/// hostile passes: a failing check script edited to pass under
/// `--skip-worktree` was verified; a leaked edit in the primary passed every
/// primary-clean reading).
pub fn against_head(run: &CommandRun) -> bool {
    run.env.as_ref().is_some_and(|env| {
        env.contains_key("GIT_INDEX_FILE")
            && env.get("GIT_ATTR_SOURCE").map(String::as_str) == Some(EMPTY_TREE)
    })
}

/// A checkout's cleanliness from its `status --porcelain` run (`None` when it
/// was not recorded): not clean when status printed anything; clean when it
/// printed nothing and was taken [`against_head`]; `None` (unknown) when it did
/// not exit 0, or a silent status was not taken against HEAD.
pub fn clean(status: Option<&CommandRun>) -> Option<bool> {
    let run = status.filter(|r| r.ok())?;
    if !run.stdout.trim().is_empty() {
        return Some(false);
    }
    against_head(run).then_some(true)
}

/// `test -e <path>`: whether a path exists, as a recorded run.
pub fn exists(path: &str) -> Vec<String> {
    vec!["test".to_owned(), "-e".to_owned(), path.to_owned()]
}

/// Settings pinned for every observation, at command-line precedence (above the
/// repository's own config): what git prints stays what cairn parses, and no
/// configured program runs.
pub const PINNED_CONFIG: &[(&str, &str)] = &[
    // Paths are printed as they are (`docs/café.md`, never `"docs/caf\303\251.md"`).
    ("core.quotePath", "false"),
    // No fsmonitor hook or daemon runs during a reading.
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    // Untracked files are always listed: a tree with one is never clean; no
    // per-user ignore or attributes file hides one or changes how a file reads
    // (found: `$HOME/.config/git/ignore`, git's default, hid a helper script).
    ("status.showUntrackedFiles", "all"),
    ("core.excludesFile", "/dev/null"),
    ("core.attributesFile", "/dev/null"),
    // A file's content, mode and bytes as they are: no setting makes an edit
    // read clean (found: `core.fileMode=false` hid an executable bit the
    // criterion needed; `core.checkStat=minimal` a same-size edit).
    ("core.fileMode", "true"),
    ("core.checkStat", "default"),
    ("core.trustctime", "true"),
    ("core.autocrlf", "false"),
    // A symlink is a symlink, a name's case is its own, a submodule's state
    // counts (found: `core.symlinks=false` read a regular file as the committed
    // dangling link, `core.ignoreCase` hid an untracked `makefile` beside
    // `Makefile`, `diff.ignoreSubmodules=all` a dirty submodule).
    ("core.symlinks", "true"),
    ("core.ignoreCase", "false"),
    ("diff.ignoreSubmodules", "none"),
    ("status.relativePaths", "false"),
    // No colour codes in anything parsed.
    ("color.ui", "never"),
    ("color.diff", "never"),
    ("color.status", "never"),
    ("color.branch", "never"),
    // Diffs are git's own, with full paths. No external diff or textconv program
    // runs: the one argv that prints a patch says `--no-ext-diff --no-textconv`
    // (pinning `diff.external` empty would make git try to run "" and every
    // patch reading fail: found, a squash that changed the tree read `unknown`).
    ("diff.noprefix", "false"),
    ("diff.relative", "false"),
    ("log.showSignature", "false"),
    // Full object ids wherever git would abbreviate.
    ("core.abbrev", "no"),
    // No hint about the grafts file cairn points at /dev/null in every recorded
    // stderr (found by a hostile pass: noise in every run's evidence).
    ("advice.graftFileDeprecated", "false"),
    // No pager, no credential or askpass program.
    ("core.pager", "cat"),
    ("core.askPass", ""),
    // History from the commit objects themselves, never from the commit-graph
    // file, a cache any worktree can write (found by a hostile pass: a forged
    // graph entry gave a commit another parent, and a failed commit vanished
    // from the history a merge carried).
    ("core.commitGraph", "false"),
    // No repository hook runs in cairn's git (found: a `reference-transaction`
    // hook recorded a failed verification while `ship merge` held the ref), and
    // no automatic maintenance rewrites the object store behind a reading.
    ("core.hooksPath", "/dev/null"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// Inherited from cairn's own process (git's and gh's home); every other variable
/// of the caller is dropped. `PATH` is not among them: it is [`OBSERVER_PATH`].
pub const INHERITED: &[&str] = &["HOME"];

/// Where an observation finds its program (`git`, `gh`, `ps`, `test`) and git the
/// programs it runs: the system's own directories, never the caller's `PATH`
/// (found by a hostile pass: a `git` first on the caller's `PATH` answered the
/// merge and the containment check, and cairn recorded `shipped` while the target
/// never got the commit). A program found nowhere here is a run that could not
/// start: its reading is `unknown`.
pub const OBSERVER_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Also inherited by `gh` (cairn reads a PR with it): its host, config and token.
/// A token's text is never recorded; the run's `env` says `<inherited>`.
pub const GH_INHERITED: &[&str] = &[
    "GH_HOST",
    "GH_CONFIG_DIR",
    "XDG_CONFIG_HOME",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
];

/// The extra variables `program` (an argv's first word) inherits beyond
/// [`INHERITED`]: only `gh` has any.
pub fn extra_inherited(program: &str) -> &'static [&'static str] {
    let name = program.rsplit('/').next().unwrap_or(program);
    if name == "gh" {
        GH_INHERITED
    } else {
        &[]
    }
}

/// The fixed part of every observation's environment: [`OBSERVER_PATH`], a C locale, no optional
/// locks, no system or global config file, no prompt, git's own object graph (no
/// replace refs, no grafts file: found, `git replace --graft` made a commit that
/// never reached the target read as merged), and [`PINNED_CONFIG`] given as
/// `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` (so the argv stays
/// the seed's own).
pub fn observer_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("PATH", OBSERVER_PATH),
        ("LC_ALL", "C"),
        ("GIT_OPTIONAL_LOCKS", "0"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_NO_REPLACE_OBJECTS", "1"),
        ("GIT_GRAFT_FILE", "/dev/null"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    env.push((
        "GIT_CONFIG_COUNT".to_owned(),
        PINNED_CONFIG.len().to_string(),
    ));
    for (i, (k, v)) in PINNED_CONFIG.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), (*k).to_owned()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), (*v).to_owned()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(exit: Option<i32>, stdout: &str, env: &[(&str, &str)]) -> CommandRun {
        CommandRun {
            argv: git("/r", &["status", "--porcelain"]),
            env: Some(
                env.iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            exit_status: exit,
            stdout: stdout.to_owned(),
            stderr: String::new(),
            started_at: crate::Timestamp::parse("2026-12-05T09:00:00Z").expect("a fixed time"),
            finished_at: crate::Timestamp::parse("2026-12-05T09:00:00Z").expect("a fixed time"),
        }
    }

    /// Clean only on a silent status taken against HEAD; a status on the
    /// repository's own index (marks, cached stats) or with the repository's
    /// attributes is unknown even when silent.
    #[test]
    fn a_checkout_is_clean_only_on_a_silent_status_against_head() {
        let head = [
            ("GIT_INDEX_FILE", "/tmp/cairn-index-1"),
            ("GIT_ATTR_SOURCE", EMPTY_TREE),
        ];
        assert_eq!(clean(Some(&status(Some(0), "", &head))), Some(true));
        assert_eq!(clean(Some(&status(Some(0), "\n", &head))), Some(true));
        assert_eq!(
            clean(Some(&status(Some(0), " M a.txt\n", &head))),
            Some(false)
        );
        assert_eq!(clean(Some(&status(Some(0), "?? b\n", &[]))), Some(false));
        for env in [
            &[][..],
            &[("GIT_INDEX_FILE", "/tmp/i")][..],
            &[("GIT_ATTR_SOURCE", EMPTY_TREE)][..],
            &[("GIT_INDEX_FILE", "/tmp/i"), ("GIT_ATTR_SOURCE", "HEAD")][..],
        ] {
            assert_eq!(clean(Some(&status(Some(0), "", env))), None, "{env:?}");
        }
        let mut unrecorded = status(Some(0), "", &head);
        unrecorded.env = None;
        assert_eq!(clean(Some(&unrecorded)), None, "no environment recorded");
        assert_eq!(clean(Some(&status(Some(128), "", &head))), None);
        assert_eq!(clean(Some(&status(None, "", &head))), None);
        assert_eq!(clean(None), None, "status unread: unknown");
    }

    #[test]
    fn the_environment_pins_every_setting() {
        let env = observer_env();
        let count: usize = env
            .iter()
            .find(|(k, _)| k == "GIT_CONFIG_COUNT")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap();
        assert_eq!(count, PINNED_CONFIG.len());
        assert!(env
            .iter()
            .any(|(k, v)| k == "GIT_CONFIG_KEY_0" && v == "core.quotePath"));
        assert!(!env
            .iter()
            .any(|(k, _)| k == "GIT_DIR" || k == "GIT_WORK_TREE"));
        assert!(env
            .iter()
            .any(|(k, v)| k == "GIT_NO_REPLACE_OBJECTS" && v == "1"));
    }
}
