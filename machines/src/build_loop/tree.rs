//! The tree an iteration's checks ran in, read by cairn before and after them
//! (build-loop rules 3). The seed hands "the exact revision" the criterion passed
//! at to code review; checks that ran on uncommitted edits, or on a tree whose
//! HEAD moved while they ran, did not pass at that revision (helper-79: an edit
//! left uncommitted, and a `git checkout` during the checks, had a commit whose
//! own check fails recorded green and reviewed, merged and released after it).
//!
//! Each reading's argv is planned here and run by the facade's one observer (a
//! `status` is taken against HEAD itself); the machine reads the recorded runs
//! back, so `journal audit` re-derives whether the tree held.

use serde::{Deserialize, Serialize};

use crate::evidence::git::{against_head, tree_plan};
use crate::evidence::watch::{watched_changes, TreeWatch};
use crate::evidence::CommandRun;

/// The tree's readings: before the first check and after the last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeHeld {
    /// The repo root the checks ran in (absolute, as the CLI resolved it).
    pub repo: String,
    /// The run record's path relative to the repo root, when the record lies in
    /// it: the one path (with its lock beside it) the status and the watch may show
    /// untracked or changed (the loop writes it while other units' iterations run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// [`tree_plan`], run before the checks.
    pub before: Vec<CommandRun>,
    /// [`tree_plan`], run after the last check.
    pub after: Vec<CommandRun>,
    /// Which repository the repo root is (`evidence::git::repository_of`), read
    /// before the checks: a green iteration hands its revision on with it, and
    /// PR-ready reads the review fresh in that repository (saga rules 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repository: Vec<CommandRun>,
    /// What a watch of the tree saw while the checks ran (build-loop rules 6;
    /// the work node's inotify watch): a file changed and put back between the
    /// readings (helper-80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<TreeWatch>,
}

impl TreeHeld {
    /// The repository the checks ran in, as read: its common dir and identity.
    pub fn repository(&self) -> Option<String> {
        crate::evidence::git::repository_of(&self.repo, &self.repository)
    }
}

/// The first line of `status` (the third reading of `evidence::git::tree_plan`)
/// that is not the untracked run record or its lock. The run record may show only
/// as untracked: a record the repository tracks is a file a check may read
/// (helper-80: `--record settings.json` left an edit to a tracked config the check
/// read out of the status, and the iteration went green).
fn changed<'a>(status: &'a str, record: Option<&str>) -> Option<&'a str> {
    status.lines().find(|l| {
        let untracked = l.strip_prefix("?? ");
        !l.trim().is_empty()
            && !record.is_some_and(|rel| {
                untracked == Some(rel) || untracked == Some(&format!("{rel}.lock"))
            })
    })
}

impl TreeHeld {
    /// `None` when both readings were made by the planned argv and show the repo
    /// root at its own top level, HEAD at `revision` and nothing uncommitted or
    /// untracked; else what is wrong (the iteration is then not green).
    pub fn problem(&self, revision: &str) -> Option<String> {
        if let Some(rel) = &self.record {
            // Only a run record is left out: never a path a check reads as code.
            let plain = !rel.is_empty()
                && !rel.starts_with('/')
                && rel.ends_with(".json")
                && rel
                    .split('/')
                    .all(|s| !s.is_empty() && s != "." && s != "..");
            if !plain {
                return Some(format!(
                    "the path left out of the status, `{rel}`, is not a run record in the repo"
                ));
            }
        }
        let plan = tree_plan(&self.repo);
        for (when, runs) in [("before", &self.before), ("after", &self.after)] {
            if runs.len() != plan.len() || runs.iter().zip(&plan).any(|(r, a)| &r.argv != a) {
                return Some(format!(
                    "the tree was not read {when} the checks by cairn's planned git argv"
                ));
            }
            match runs[0].first_line() {
                Some(t) if t == self.repo => {}
                Some(t) => {
                    return Some(format!(
                        "{when} the checks, the repo root's top level is `{t}`"
                    ))
                }
                None => {
                    return Some(format!(
                        "{when} the checks, the repo root was not a readable git tree"
                    ))
                }
            }
            match runs[1].first_line() {
                Some(h) if h == revision => {}
                Some(h) => {
                    return Some(format!(
                        "{when} the checks, HEAD was {h}, not the revision {revision}"
                    ))
                }
                None => return Some(format!("{when} the checks, HEAD could not be read")),
            }
            let status = &runs[2];
            if !(status.ok() && against_head(status)) {
                // Why, as the reading says (helper-81: a repository with a
                // submodule, whose status cairn does not take, read only as
                // "could not be read").
                let why = status.stderr.lines().next().unwrap_or("").trim();
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                };
                return Some(format!(
                    "{when} the checks, the tree's status against HEAD could not be read{why}"
                ));
            }
            if let Some(l) = changed(&status.stdout, self.record.as_deref()) {
                return Some(format!(
                    "{when} the checks, the tree had uncommitted or untracked changes (`{l}`): they ran on no commit"
                ));
            }
        }
        // Nothing changed between the readings either, but the run record.
        let Some(watch) = &self.watch else {
            return Some("the tree was not watched while the checks ran".into());
        };
        let record = self.record.as_deref();
        match watched_changes(&self.repo, watch) {
            Err(why) => Some(format!("while the checks ran, {why}")),
            Ok(paths) => paths
                .iter()
                .find(|p| !record.is_some_and(|r| *p == r || **p == format!("{r}.lock")))
                .map(|p| {
                    format!("while the checks ran, `{p}` changed: they did not run on one commit")
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::git::EMPTY_TREE;
    use crate::Timestamp;

    const REV: &str = "0123456789abcdef0123456789abcdef01234567";

    fn run(argv: &[String], stdout: &str) -> CommandRun {
        let at = Timestamp::parse("2026-12-05T09:00:00Z").expect("a fixed time");
        CommandRun {
            argv: argv.to_vec(),
            env: Some(
                [
                    ("GIT_INDEX_FILE", "/tmp/cairn-index-1"),
                    ("GIT_ATTR_SOURCE", EMPTY_TREE),
                ]
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ),
            exit_status: Some(0),
            stdout: stdout.to_owned(),
            stderr: String::new(),
            started_at: at.clone(),
            finished_at: at,
        }
    }

    fn quiet() -> TreeWatch {
        TreeWatch {
            method: "inotify".into(),
            changed: vec![],
            overflow: false,
            ignored: None,
        }
    }

    fn held(record: Option<&str>, after_head: &str, after_status: &str) -> TreeHeld {
        let p = tree_plan("/r");
        TreeHeld {
            repo: "/r".into(),
            record: record.map(str::to_owned),
            repository: vec![],
            watch: Some(quiet()),
            before: vec![
                run(&p[0], "/r\n"),
                run(&p[1], &format!("{REV}\n")),
                run(&p[2], ""),
            ],
            after: vec![
                run(&p[0], "/r\n"),
                run(&p[1], &format!("{after_head}\n")),
                run(&p[2], after_status),
            ],
        }
    }

    /// Held only when both readings show the revision, clean; a moved HEAD, an
    /// edit, a status on the repository's own index, a reading of another argv,
    /// or a "record" that is not a JSON file in the repo is a problem.
    #[test]
    fn the_tree_holds_only_at_the_revision_and_clean() {
        assert_eq!(held(None, REV, "").problem(REV), None);
        assert_eq!(
            held(Some(".claude/saga/runs/issue-1.json"), REV, "").problem(REV),
            None
        );
        let other = "1123456789abcdef0123456789abcdef01234567";
        assert!(held(None, other, "")
            .problem(REV)
            .unwrap()
            .contains("after the checks, HEAD"));
        assert!(held(None, REV, " M check.sh\n")
            .problem(REV)
            .unwrap()
            .contains("uncommitted"));
        assert!(held(None, REV, "")
            .problem(other)
            .unwrap()
            .contains("before the checks, HEAD"));
        // The run record shows only as untracked; tracked and edited, it counts.
        let rec = ".claude/saga/runs/issue-1.json";
        let lock = format!("?? {rec}.lock\n?? {rec}\n");
        assert_eq!(held(Some(rec), REV, &lock).problem(REV), None);
        let edited = format!(" M {rec}\n");
        assert!(held(Some(rec), REV, &edited)
            .problem(REV)
            .unwrap()
            .contains(edited.trim_end()));
        assert!(held(None, REV, &lock)
            .problem(REV)
            .unwrap()
            .contains("untracked"));
        // A change seen while the checks ran, but the record's, is a problem;
        // so is no watch, or one that lost events.
        let watched = |changed: &[&str], overflow: bool, record: Option<&str>| {
            let mut h = held(record, REV, "");
            let changed: Vec<String> = changed.iter().map(|p| (*p).to_owned()).collect();
            // git's check-ignore: none of them ignored (exit 1).
            let ignored =
                crate::evidence::watch::ignore_plan("/r", &changed).map(|argv| CommandRun {
                    exit_status: Some(1),
                    ..run(&argv, "")
                });
            h.watch = Some(TreeWatch {
                changed,
                overflow,
                ignored,
                ..quiet()
            });
            h.problem(REV)
        };
        assert!(watched(&["src"], false, None)
            .unwrap()
            .contains("`src` changed"));
        assert_eq!(
            watched(&[".git/HEAD"], false, None),
            None,
            "git's own files"
        );
        assert_eq!(
            watched(&["r.json", "r.json.lock"], false, Some("r.json")),
            None
        );
        assert!(watched(&[], true, None).unwrap().contains("lost events"));
        let mut unwatched = held(None, REV, "");
        unwatched.watch = None;
        assert!(unwatched.problem(REV).unwrap().contains("not watched"));
        let mut unpinned = held(None, REV, "");
        unpinned.before[2].env = None;
        assert!(unpinned.problem(REV).unwrap().contains("could not be read"));
        let mut moved = held(None, REV, "");
        moved.after.pop();
        assert!(moved.problem(REV).unwrap().contains("planned git argv"));
        for rel in [
            "check.sh",
            "../x.json",
            "/abs.json",
            "a/./b.json",
            "",
            "a//b.json",
        ] {
            let mut h = held(None, REV, "");
            h.record = Some(rel.into());
            assert!(
                h.problem(REV).unwrap().contains("not a run record"),
                "{rel}"
            );
        }
    }
}
