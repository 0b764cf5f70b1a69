//! §phase-1d-verify-shared as a reader: isolation, the reported head, commits
//! ahead, the `FILES_MAX`/`DELETIONS_MAX` floor (with a commit body when it trips)
//! and the in-scope set, concluding verified, scope-tripped or failed.

use serde::{Deserialize, Serialize};

use super::super::Params;
use super::plans::phase1d_plan;
use super::readers::{head_gate, in_scope_gate, isolation_gates};
use super::{Gate, Runs};
use crate::evidence::CommandRun;
use crate::Outcome;

/// What phase-1d concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Phase1d {
    /// Every gate passed.
    Verified,
    /// The scope gate tripped (the floor, with a commit body; or paths outside
    /// `in_scope_paths`): the user answers `proceed` or `abort`.
    ScopeTripped {
        /// `files`, `deletions` from `--shortstat`.
        files: u64,
        /// Deletions.
        deletions: u64,
        /// Whether the count floor tripped.
        floor_tripped: bool,
        /// Changed paths not in `in_scope_paths`.
        out_of_scope: Vec<String>,
    },
    /// A gate failed or could not be read: stop intact for `--resume`.
    Failed {
        /// The gates that did not pass.
        failed: Vec<String>,
    },
}

/// Runs the phase-1d gates over `runs`. `head` is the reported head (or the tip
/// itself on resume); `in_scope` is the reported set (missing = empty).
pub fn phase1d(
    p: &Params,
    root: &str,
    runs: &[CommandRun],
    head: Option<&str>,
    in_scope: &[String],
) -> (Phase1d, Vec<Gate>) {
    let r = Runs(runs);
    let plan = phase1d_plan(p, root);
    let mut gates = isolation_gates(p, root, r);
    if let Some(h) = head {
        gates.push(head_gate("head-matches-report", r, p, h));
    }
    let ahead = r.line(&plan[9]).and_then(|s| s.parse::<u64>().ok());
    gates.push(match ahead {
        None => Gate::new("commits-ahead", Outcome::Unknown, "rev-list failed"),
        Some(0) => Gate::new(
            "commits-ahead",
            Outcome::Fail,
            "0 commits ahead of the target",
        ),
        Some(n) => Gate::new("commits-ahead", Outcome::Pass, format!("{n} commits ahead")),
    });
    let stat = r.ok(&plan[10]).and_then(parse_shortstat);
    let body = r.ok(&plan[11]).and_then(has_body);
    let floor = stat.map(|(f, d)| f > p.files_max || d > p.deletions_max);
    gates.push(match stat {
        None => Gate::new(
            "scope-floor",
            Outcome::Unknown,
            "--shortstat was unreadable",
        ),
        Some((f, d)) => Gate::new(
            "scope-floor",
            if floor == Some(true) {
                Outcome::Fail
            } else {
                Outcome::Pass
            },
            format!(
                "{f} files (max {}), {d} deletions (max {})",
                p.files_max, p.deletions_max
            ),
        ),
    });
    if floor != Some(false) {
        gates.push(Gate::holds(
            "body-when-floor-trips",
            body,
            "the commit has a body",
            "the floor tripped and the commit has no body",
        ));
    }
    let (out_of_scope, gate) = in_scope_gate(r.ok(&plan[12]), in_scope);
    gates.push(gate);
    let hard: Vec<String> = gates
        .iter()
        .filter(|g| {
            g.name != "scope-floor" && g.name != "in-scope-paths" && g.outcome != Outcome::Pass
        })
        .map(|g| g.name.clone())
        .chain(
            gates
                .iter()
                .filter(|g| {
                    (g.name == "scope-floor" || g.name == "in-scope-paths")
                        && g.outcome == Outcome::Unknown
                })
                .map(|g| g.name.clone()),
        )
        .collect();
    let result = if !hard.is_empty() {
        Phase1d::Failed { failed: hard }
    } else {
        let (files, deletions) = stat.unwrap_or((0, 0));
        let out = out_of_scope.unwrap_or_default();
        if floor == Some(true) || !out.is_empty() {
            Phase1d::ScopeTripped {
                files,
                deletions,
                floor_tripped: floor == Some(true),
                out_of_scope: out,
            }
        } else {
            Phase1d::Verified
        }
    };
    (result, gates)
}

/// `--shortstat` read into (files, deletions); empty output is (0, 0).
pub fn parse_shortstat(s: &str) -> Option<(u64, u64)> {
    let s = s.trim();
    if s.is_empty() {
        return Some((0, 0));
    }
    let (mut files, mut deletions) = (None, 0);
    for part in s.split(',') {
        let mut words = part.split_whitespace();
        let n: u64 = words.next()?.parse().ok()?;
        let what = words.next()?;
        if what.starts_with("file") {
            files = Some(n);
        } else if what.starts_with("deletion") {
            deletions = n;
        } else if !what.starts_with("insertion") {
            return None;
        }
    }
    Some((files?, deletions))
}

/// Whether `git log -1 --format=%b%x00%(trailers)` shows a body beyond the trailers.
/// git's trailer block is the body's last paragraph (`Signed-off-by:`, `Squashed-from:`
/// … are not a body); any other non-blank paragraph is, whatever its first word
/// (`Why: …` included). `None` when the output is not that format.
pub(super) fn has_body(out: &str) -> Option<bool> {
    let (body, trailers) = out.split_once('\0')?;
    // Paragraphs: runs of non-blank lines (a line of spaces is blank, as in git).
    let mut paragraphs = 0;
    let mut in_paragraph = false;
    for line in body.lines() {
        let blank = line.trim().is_empty();
        if !blank && !in_paragraph {
            paragraphs += 1;
        }
        in_paragraph = !blank;
    }
    Some(if trailers.trim().is_empty() {
        paragraphs >= 1
    } else {
        paragraphs >= 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    const TIP: &str = "2222222222222222222222222222222222222222";

    /// The phase-1d runs of a worktree one commit ahead, its changed paths `names`
    /// as `git diff --name-only -z` prints them.
    fn runs(names: &str) -> Vec<CommandRun> {
        let wt_list = "worktree /srv/repo\0HEAD 1111111111111111111111111111111111111111\0\
                       branch refs/heads/trunk\0\0worktree /srv/repo/.claude/worktrees/abc\0\
                       HEAD 2222222222222222222222222222222222222222\0branch refs/heads/wt-branch\0\0";
        let out = [
            "/srv/repo/.git\n",
            "/srv/repo/.git\n",
            "/srv/repo/.git/worktrees/abc\n",
            "/srv/repo/.git\n",
            "trunk\n",
            "wt-branch\n",
            "",
            wt_list,
            "2222222222222222222222222222222222222222\n",
            "1\n",
            " 2 files changed, 2 insertions(+)\n",
            "why\n\0\n",
            names,
        ];
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
        phase1d_plan(&Params::sample(), "/srv/repo")
            .into_iter()
            .zip(out)
            .map(|(argv, stdout)| {
                crate::testing::as_observed(CommandRun {
                    argv,
                    env: None,
                    exit_status: Some(0),
                    stdout: stdout.into(),
                    stderr: String::new(),
                    started_at: at.clone(),
                    finished_at: at.clone(),
                })
            })
            .collect()
    }

    #[test]
    fn changed_paths_are_nul_separated_so_odd_names_are_one_path_each() {
        let p = Params::sample();
        let names = "docs/café.md\0odd\nname.txt\0";
        let both = ["docs/café.md".to_owned(), "odd\nname.txt".to_owned()];
        let (result, gates) = phase1d(&p, "/srv/repo", &runs(names), Some(&TIP[..7]), &both);
        assert_eq!(result, Phase1d::Verified, "{gates:?}");
        let (result, _) = phase1d(&p, "/srv/repo", &runs(names), Some(TIP), &both[..1]);
        assert_eq!(
            result,
            Phase1d::ScopeTripped {
                files: 2,
                deletions: 0,
                floor_tripped: false,
                out_of_scope: vec!["odd\nname.txt".into()],
            }
        );
        // The newline-separated form is not read as a list of paths: one odd path.
        let (result, _) = phase1d(&p, "/srv/repo", &runs("a.txt\nb.txt\n"), Some(TIP), &[]);
        assert!(
            matches!(&result, Phase1d::ScopeTripped { out_of_scope, .. } if out_of_scope == &["a.txt\nb.txt\n".to_owned()]),
            "{result:?}"
        );
    }

    #[test]
    fn shortstat_reads_every_form() {
        assert_eq!(parse_shortstat(""), Some((0, 0)));
        assert_eq!(
            parse_shortstat(" 1 file changed, 1 insertion(+)\n"),
            Some((1, 0))
        );
        assert_eq!(
            parse_shortstat(" 3 files changed, 10 insertions(+), 2 deletions(-)"),
            Some((3, 2))
        );
        assert_eq!(
            parse_shortstat(" 2 files changed, 5 deletions(-)"),
            Some((2, 5))
        );
        assert_eq!(parse_shortstat("garbage"), None);
        assert_eq!(parse_shortstat(" 2 bananas changed"), None);
    }

    #[test]
    fn trailers_are_not_a_body_and_a_why_paragraph_is() {
        let sob = "Signed-off-by: a <a@b>\n";
        assert_eq!(has_body(&format!("{sob}\0{sob}\n")), Some(false));
        assert_eq!(
            has_body(&format!("Why: both.\n\n{sob}\0{sob}\n")),
            Some(true)
        );
        assert_eq!(has_body("Squashed-from:\n- abc fix\n\0\n"), Some(true));
        assert_eq!(has_body("\0\n"), Some(false));
        assert_eq!(
            has_body(&format!("Why: both.\n  \n{sob}\0{sob}\n")),
            Some(true)
        );
        assert_eq!(has_body("no separator"), None);
    }
}
