//! A tree watched while commands ran (a work node's command criterion, a build
//! loop's checks): what an inotify watch saw change, and which of those paths git
//! ignores. The watch itself is IO (`cairn::work::Watch`); this is its record and
//! the one reading of it both machines share.

use serde::{Deserialize, Serialize};

use super::git::git;
use super::CommandRun;

/// The tree watched while one command criterion ran: every path (relative to the
/// tree) an inotify watch on the tree's directories saw created, written, removed,
/// renamed or re-attributed, and cairn's `git check-ignore` of those paths (the
/// ignored ones, e.g. a build directory, do not count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeWatch {
    /// How the tree was watched (`inotify`).
    pub method: String,
    /// The paths seen changing, sorted, without duplicates.
    pub changed: Vec<String>,
    /// The watch lost events (its queue overflowed): the tree counts as changed.
    pub overflow: bool,
    /// `git -C <tree> check-ignore -- <changed…>` (none when nothing changed).
    pub ignored: Option<CommandRun>,
}

/// Whether `git check-ignore` prints `path` as it is (one line, unquoted): git
/// quotes a name with a control character, `"` or `\\` (core.quotePath is off,
/// so other bytes print as they are). Such a path is not asked about, and counts.
fn prints_plainly(path: &str) -> bool {
    !path.contains(['"', '\\']) && !path.chars().any(char::is_control)
}

/// `git -C <tree> check-ignore -- <paths…>`: which changed paths are ignored (one
/// per line). `-z` needs `--stdin`, which cairn's observer closes, so only paths
/// git prints plainly are asked about (and the check runs only when there is one).
pub fn ignore_plan(tree: &str, paths: &[String]) -> Option<Vec<String>> {
    let mut argv = git(tree, &["check-ignore", "--"]);
    argv.extend(paths.iter().filter(|p| prints_plainly(p)).cloned());
    (argv.len() > 5).then_some(argv)
}

/// The paths a watch saw change that count (not ignored, not git's own), or why
/// the watch proves nothing. Empty: the criterion left the tree alone.
pub fn watched_changes(tree: &str, watch: &TreeWatch) -> Result<Vec<String>, String> {
    if watch.method != "inotify" {
        return Err(format!("an unknown watch method `{}`", watch.method));
    }
    if watch.overflow {
        return Err("the watch lost events: the tree may have changed".into());
    }
    let askable = watch.changed.iter().any(|p| prints_plainly(p));
    let ignored: Vec<&str> = match (&watch.ignored, askable) {
        (None, false) => vec![],
        (None, true) => return Err("the changed paths were not checked against .gitignore".into()),
        (Some(run), _) => {
            if Some(&run.argv) != ignore_plan(tree, &watch.changed).as_ref() {
                return Err("the ignore check was not cairn's planned git argv".into());
            }
            match run.exit_status {
                Some(0 | 1) => run.stdout.lines().collect(),
                _ => return Err(format!("git check-ignore failed: {}", run.stderr.trim())),
            }
        }
    };
    Ok(watch
        .changed
        .iter()
        .filter(|p| !(prints_plainly(p) && ignored.contains(&p.as_str())))
        .filter(|p| *p != ".git" && !p.starts_with(".git/"))
        .cloned()
        .collect())
}
