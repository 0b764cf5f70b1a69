//! Evidence cairn observes itself: bound git readings of a workspace, recorded
//! with argv, exit status, output and time. This is IO, so it lives here and not
//! in `cairn-machines`; its output is the machines' typed evidence.

use std::collections::BTreeMap;

use std::process::Command;

use cairn_machines::evidence::git::{extra_inherited, observer_env, INHERITED};
use cairn_machines::evidence::CommandRun;
use cairn_machines::Timestamp;
use serde_json::Value;

/// The time now, as cairn records it.
pub fn now() -> Timestamp {
    Timestamp::from_instant(chrono::Utc::now().fixed_offset())
}

/// The environment an observation runs with: [`INHERITED`] from cairn's own
/// process, then the fixed [`observer_env`] (its `PATH` is
/// [`OBSERVER_PATH`](cairn_machines::evidence::git::OBSERVER_PATH)). Nothing else of
/// the caller's environment (`PATH`, `GIT_DIR`, `GIT_INDEX_FILE`, `GIT_CONFIG_*`, …)
/// reaches the process or chooses the program that runs.
pub fn observation_env() -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for name in INHERITED {
        if let Some(v) = std::env::var_os(name) {
            env.insert((*name).to_owned(), v.to_string_lossy().into_owned());
        }
    }
    env.extend(observer_env());
    #[cfg(feature = "testing")]
    if let Some(path) = testing_observer_path() {
        env.insert("PATH".to_owned(), path);
    }
    env
}

/// Only in a build with the `testing` feature (the binary `cargo test` builds for
/// the integration tests, never `cargo build` or `cargo install`): the observer's
/// `PATH` from `CAIRN_TESTING_OBSERVER_PATH`, so a test can put a spy or a
/// stand-in `gh` before the system's programs. The run's recorded `env` shows it.
#[cfg(feature = "testing")]
fn testing_observer_path() -> Option<String> {
    std::env::var("CAIRN_TESTING_OBSERVER_PATH").ok()
}

/// The variables `program` inherits beyond [`observation_env`] (only `gh`'s host,
/// config and token), and how each is recorded: `<inherited>`, never its text.
fn extra_env(program: &str) -> (Vec<(String, std::ffi::OsString)>, BTreeMap<String, String>) {
    let mut set = Vec::new();
    let mut recorded = BTreeMap::new();
    for name in extra_inherited(program) {
        if let Some(v) = std::env::var_os(name) {
            set.push(((*name).to_owned(), v));
            recorded.insert((*name).to_owned(), "<inherited>".to_owned());
        }
    }
    (set, recorded)
}

/// Runs one argv (no shell) as an observation: the caller's environment cleared
/// and replaced by [`observation_env`] (recorded with the run), stdin closed. A
/// program that cannot start is a run with no exit status and the error on stderr.
pub fn run(argv: &[String]) -> CommandRun {
    match status_dir(argv) {
        Some(dir) => against_head(dir, argv),
        None => run_in(argv, observation_env()),
    }
}

/// The directory of a `git -C DIR status …` reading.
fn status_dir(argv: &[String]) -> Option<&str> {
    match argv {
        [git, c, dir, status, ..] if git == "git" && c == "-C" && status == "status" => Some(dir),
        _ => None,
    }
}

/// A `status` reading taken against HEAD itself: git reads the tree into an
/// index of cairn's own (`read-tree HEAD` into a file nobody else writes, whose
/// entries carry no marks and no cached file times) and `status` compares every
/// tracked file's content with it. The repository's index cannot make an edit
/// look clean (found by a hostile pass: an entry marked skip-worktree, a stat
/// laundered with `update-index --really-refresh` through a one-off filter, an
/// edit of the same size with its time put back under `core.checkStat=minimal`
/// — each passed `status` on the real index). The run records the index it
/// read (`GIT_INDEX_FILE`) and where its attributes came from
/// (`GIT_ATTR_SOURCE`, the empty tree: git 2.40 or later honours it). A HEAD
/// that cannot be read into that index, or a repository [`steered`] names, is a
/// run that did not start: `unknown`, never clean.
fn against_head(dir: &str, argv: &[String]) -> CommandRun {
    if let Some(why) = steered(dir) {
        return not_read(argv, &why);
    }
    // An absolute place: git resolves a relative `GIT_INDEX_FILE` inside the
    // tree it reads, where cairn would neither find nor remove it (helper-73:
    // `TMPDIR=.work/.cache` left index files in the worker tree).
    let tmp = std::env::temp_dir();
    let tmp = if tmp.is_absolute() {
        tmp
    } else {
        std::path::PathBuf::from("/tmp")
    };
    let index = tmp.join(format!(
        "cairn-index-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let mut env = observation_env();
    env.insert(
        "GIT_INDEX_FILE".to_owned(),
        index.to_string_lossy().into_owned(),
    );
    // Attributes from the empty tree: no `.gitattributes` — committed, or an
    // untracked one git ignores — converts a file before it is compared, so its
    // bytes are compared with the committed blob's (helper-74: an ignored
    // `.gitattributes` with `ident`, and a committed one, each hid an edit).
    env.insert(
        "GIT_ATTR_SOURCE".to_owned(),
        cairn_machines::evidence::git::EMPTY_TREE.to_owned(),
    );
    let read_tree = crate::observe::git(dir, &["read-tree", "HEAD"]);
    let read = run_in(&read_tree, env.clone());
    if !read.ok() {
        let _ = std::fs::remove_file(&index);
        return not_read(
            argv,
            &format!(
                "HEAD could not be read into cairn's index: {}",
                read.stderr.trim()
            ),
        );
    }
    // A gitlink is a nested repository whose files git reads against that
    // repository's own index, which cairn's index of HEAD does not replace; with
    // no `.gitmodules` naming it, [`steered`] does not see it (helper-74 left it).
    let modes = run_in(
        &crate::observe::git(dir, &["ls-files", "-z", "--format=%(objectmode)"]),
        env.clone(),
    );
    let nested = match (modes.ok(), modes.stdout.split('\0').any(|m| m == "160000")) {
        (true, false) => None,
        (true, true) => Some("HEAD holds a gitlink (a nested repository), whose files git reads against its own index".to_owned()),
        (false, _) => Some(format!("cairn's index of HEAD could not be listed: {}", modes.stderr.trim())),
    };
    if let Some(why) = nested {
        let _ = std::fs::remove_file(&index);
        return not_read(argv, &why);
    }
    let run = run_in(argv, env);
    let _ = std::fs::remove_file(&index);
    let _ = std::fs::remove_file(index.with_extension("lock"));
    run
}

/// A status reading that was not made, and why: a run that did not start, so
/// `unknown`, never clean.
fn not_read(argv: &[String], why: &str) -> CommandRun {
    let at = now();
    CommandRun {
        argv: argv.to_vec(),
        env: Some(observation_env()),
        exit_status: None,
        stdout: String::new(),
        stderr: format!("cairn did not read this tree: {why}"),
        started_at: at.clone(),
        finished_at: at,
    }
}

/// Why git's reading of the tree at `dir` would be the repository's to decide,
/// if it would: the repository's own `info/attributes` (a clean filter, `text`,
/// `eol` or `ident` conversions change what a file reads as, and git has no
/// setting that turns them off: helper-71, helper-73) or a filter driver in its
/// config (whose program git would run during the reading). A reading that
/// cannot be made is `unknown`, never clean.
fn steered(dir: &str) -> Option<String> {
    let env = observation_env();
    let common = run_in(
        &crate::observe::git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ),
        env.clone(),
    );
    if !common.ok() {
        return Some(format!(
            "its repository could not be read: {}",
            common.stderr.trim()
        ));
    }
    let common = common.stdout.trim().to_owned();
    let attributes = std::path::Path::new(&common)
        .join("info")
        .join("attributes");
    // Only a regular file is read, by cairn and by git: a fifo there made every
    // clean reading wait forever (helper-77), a device would be read without end.
    match std::fs::metadata(&attributes) {
        Ok(m) if !m.is_file() => {
            return Some(format!("`{}` is not a regular file", attributes.display()))
        }
        _ => {}
    }
    // Read as bytes, as git reads it (helper-74: one byte that is not UTF-8
    // made the file read as absent).
    match std::fs::read(&attributes) {
        Ok(bytes)
            if bytes.split(|b| *b == b'\n').any(|l| {
                let l = l.trim_ascii();
                !l.is_empty() && !l.starts_with(b"#")
            }) =>
        {
            return Some(format!(
                "`{}` changes how its files read (attributes outside the commit)",
                attributes.display()
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        // Fails closed: a file git may read and cairn cannot.
        Err(e) => return Some(format!("`{}` could not be read: {e}", attributes.display())),
    }
    let filters = run_in(
        &crate::observe::git(dir, &["config", "--get-regexp", r"^filter\."]),
        env.clone(),
    );
    // Exit 1 is "no such key"; any other answer but none is a driver or an
    // unreadable config (fails closed).
    match (filters.exit_status, filters.stdout.trim().is_empty()) {
        (Some(1), true) => {}
        (Some(0), false) => {
            return Some("the repository's config sets a filter driver, whose program would run while git reads the files".to_owned())
        }
        _ => {
            return Some(format!(
                "the repository's config could not be read: {}",
                filters.stderr.trim()
            ))
        }
    }
    // A submodule's files are read against its own index, which cairn's index
    // of HEAD does not replace (helper-74: a mark in a submodule's index hid an
    // edit the criterion ran).
    let gitmodules = run_in(
        &crate::observe::git(dir, &["cat-file", "-e", "HEAD:.gitmodules"]),
        env,
    );
    gitmodules
        .ok()
        .then(|| "HEAD has submodules, whose files git reads against their own index".to_owned())
}

/// [`run`] with `env` as the process's whole environment.
fn run_in(argv: &[String], mut env: BTreeMap<String, String>) -> CommandRun {
    let started_at = now();
    let out = match argv.split_first() {
        Some((program, rest)) => {
            let (extra, recorded) = extra_env(program);
            let out = Command::new(program)
                .args(rest)
                .env_clear()
                .envs(&env)
                .envs(extra)
                .stdin(std::process::Stdio::null())
                .output();
            env.extend(recorded);
            out
        }
        None => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an empty argv",
        )),
    };
    let finished_at = now();
    match out {
        Ok(o) => CommandRun {
            argv: argv.to_vec(),
            env: Some(env),
            exit_status: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            started_at,
            finished_at,
        },
        Err(e) => CommandRun {
            argv: argv.to_vec(),
            env: Some(env),
            exit_status: None,
            stdout: String::new(),
            stderr: format!(
                "cannot run `{}`: {e}",
                argv.first().map_or("", String::as_str)
            ),
            started_at,
            finished_at,
        },
    }
}

/// `git -C <dir> <rest…>`: the one way cairn builds a bound git argv.
pub use cairn_machines::evidence::git::git;

/// The three bound VCS checks of the park machine for the workspace at `root`
/// (`cairn park observe-vcs`), each reading run by this observer and recorded.
pub fn park_vcs_checks(root: &str) -> Vec<Value> {
    cairn_machines::park::vcs::checks(root, &now(), &mut |argv| run(argv))
}

/// Reads which repository `dir` belongs to: its common dir, then that directory's
/// identity on disk (`evidence::git::repository_of` reads the two runs back; the
/// second is not made when the first named no directory).
pub fn repository(dir: &str) -> Vec<CommandRun> {
    use cairn_machines::evidence::git::{common_dir_argv, repository_identity_plan};
    let common = run(&common_dir_argv(dir));
    let identity = repository_identity_plan(&common).map(|argv| run(&argv));
    std::iter::once(common).chain(identity).collect()
}

/// Runs every argv of a plan, in order, recording each.
pub fn run_all(plan: &[Vec<String>]) -> Vec<CommandRun> {
    plan.iter().map(|argv| run(argv)).collect()
}

/// The parameters of a read-only ship preflight.
#[derive(Debug, Clone)]
pub struct ShipParams {
    /// `REPO_ROOT` (absolute).
    pub repo_root: String,
    /// `EXPECTED_REPO_BASENAME`.
    pub expected_basename: String,
    /// `BRANCH`.
    pub branch: String,
    /// `WORKTREE_PATH` (absolute).
    pub worktree_path: String,
    /// `TARGET_BRANCH`.
    pub target_branch: String,
}

/// Reads the §preflight-classifier facts with the bound git commands of the ship
/// machine's plan (argv, exit status, output and time recorded) and classifies them.
pub fn ship_preflight(
    p: &ShipParams,
) -> (cairn_machines::ship::preflight::Preflight, Vec<CommandRun>) {
    use cairn_machines::ship::{gates, preflight::classify, Params};
    // Only the preflight's parameters are read by its plan and facts.
    let params = Params {
        short_id: "classify".into(),
        expected_basename: p.expected_basename.clone(),
        branch: p.branch.clone(),
        worktree_path: p.worktree_path.clone(),
        target_branch: p.target_branch.clone(),
        intent_field: "intent_excerpt".into(),
        files_max: 0,
        deletions_max: 0,
        tiebreaker_4: "n/a".into(),
        tiebreaker_5: false,
        close_step: "n/a".into(),
        consumer_fields: vec![],
    };
    let runs = run_all(&gates::preflight_plan(&params, &p.repo_root));
    let facts = gates::preflight_facts(&params, &p.repo_root, &runs);
    (classify(&facts), runs)
}

#[cfg(test)]
mod tests {
    /// The observer's PATH is the system's, whatever the caller's is: it is not
    /// read from cairn's own environment.
    #[test]
    fn the_observers_path_is_the_systems() {
        if std::env::var_os("CAIRN_TESTING_OBSERVER_PATH").is_some() {
            return; // a test harness chose it (testing builds only)
        }
        let env = super::observation_env();
        assert_eq!(
            env.get("PATH").map(String::as_str),
            Some(cairn_machines::evidence::git::OBSERVER_PATH)
        );
        assert!(!cairn_machines::evidence::git::INHERITED.contains(&"PATH"));
    }
}
