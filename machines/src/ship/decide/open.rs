//! `open` (capture the anchor, record the parameters and the first preflight) and
//! `preflight` (re-run it): §repo-anchor, §preflight-shared, §preflight-classifier.

use super::super::event::Event;
use super::super::gates::{self, Runs};
use super::super::preflight;
use super::super::state::{Params, ReviewStatus};
use super::guards::Guard;
use crate::evidence::{AbsPath, CommandRun};
use crate::Rejection;

/// `open`: the parameters hold, the anchor is the bound `rev-parse --show-toplevel`
/// naming an absolute repository, `WORKTREE_PATH` is exactly
/// `<REPO_ROOT>/.claude/worktrees/<SHORT_ID>`, then the preflight.
pub(super) fn decide_open(
    guard: Guard<'_>,
    params: &Params,
    anchor: &CommandRun,
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
    acts_for: Option<&str>,
) -> Result<Vec<Event>, Rejection> {
    params.check().map_err(|(f, r, m)| guard.bad(f, r, &m))?;
    // Recorded beside the review outcome and shown to whoever reads the run
    // (helper-75: a detail holding U+202E was recorded).
    crate::evidence::names::text(&review_status.detail)
        .map_err(|(r, m)| guard.bad("review_detail", r, &m))?;
    if acts_for.is_some_and(|s| !crate::reads::is_saga_stream(s)) {
        return Err(guard.bad(
            "acts_for",
            "saga-stream",
            "a saga thread's stream: `saga/issue-<N>` or `saga/task-<slug>`",
        ));
    }
    let bound = matches!(anchor.argv.as_slice(), [g, c, dir, a, b] if g == "git" && c == "-C" && a == "rev-parse" && b == "--show-toplevel" && AbsPath::parse(dir).is_ok());
    if !bound {
        return Err(guard.bad(
            "anchor",
            "evidence-bound",
            "expected a run of `git -C <absolute repo> rev-parse --show-toplevel`",
        ));
    }
    let root = match Runs(std::slice::from_ref(anchor))
        .line(&anchor.argv)
        .map(|r| AbsPath::parse(&r))
    {
        Some(Ok(r)) => r,
        _ => {
            return Err(guard.bad(
                "repo",
                "git-toplevel",
                "`git rev-parse --show-toplevel` did not name a repository",
            ))
        }
    };
    if params.worktree_root() != Some(root.as_str()) {
        return Err(guard.bad(
            "worktree_path",
            "worktree-path",
            &format!(
                "WORKTREE_PATH must be `{root}/.claude/worktrees/{}` (REPO_ROOT is `{root}`)",
                params.short_id
            ),
        ));
    }
    let preflight = preflighted(guard, (params, &root), runs, review_status, advisory)?;
    let repository = gates::identity(&root, runs);
    Ok(vec![
        Event::Opened {
            params: params.clone(),
            repo_root: root,
            anchor: anchor.clone(),
            acts_for: acts_for.map(str::to_owned),
            repository,
        },
        preflight,
    ])
}

/// `preflight`: the classification again, on the recorded parameters and anchor.
pub(super) fn decide_preflight(
    guard: Guard<'_>,
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Vec<Event>, Rejection> {
    let run = guard.opened()?;
    Ok(vec![preflighted(
        guard,
        (&run.params, &run.repo_root),
        runs,
        review_status,
        advisory,
    )?])
}

/// The preflight event: the classification, gate 3, and the divergence advisory.
fn preflighted(
    guard: Guard<'_>,
    (p, root): (&Params, &str),
    runs: &[CommandRun],
    review_status: &ReviewStatus,
    advisory: &[CommandRun],
) -> Result<Event, Rejection> {
    guard.exact("runs", runs, &gates::preflight_plan(p, root))?;
    guard.exact(
        "advisory",
        advisory,
        &gates::advisory_plan(p, root, advisory),
    )?;
    let outcome = preflight::classify(&gates::preflight_facts(p, root, runs))
        .with_review_status(review_status.outcome);
    let note = gates::divergence_note(p, root, advisory);
    let (review_status, runs, advisory) = (review_status.clone(), runs.to_vec(), advisory.to_vec());
    Ok(if outcome.may_create_worktree() {
        Event::PreflightPassed {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    } else {
        Event::PreflightBlocked {
            outcome,
            review_status,
            runs,
            advisory,
            note,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::command::Command;
    use super::super::super::state::State;
    use super::super::decide;
    use super::*;
    use crate::{Outcome, Timestamp};

    fn open(params: Params) -> Command {
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
        Command::Open {
            params,
            anchor: CommandRun {
                argv: gates::anchor_argv("/srv/repo"),
                env: None,
                exit_status: Some(0),
                stdout: "/srv/repo\n".into(),
                stderr: String::new(),
                started_at: at.clone(),
                finished_at: at,
            },
            runs: vec![],
            review_status: ReviewStatus {
                outcome: Outcome::Pass,
                detail: String::new(),
            },
            advisory: vec![],
            acts_for: None,
        }
    }

    fn ctx() -> crate::Context {
        crate::Context::new(
            crate::Timestamp::parse("2026-12-03T09:00:00Z").expect("a fixed time parses"),
            vec![],
        )
    }

    #[test]
    fn open_refuses_an_option_like_branch_target_or_path_naming_the_field() {
        for (field, value) in [
            ("branch", "--orphan"),
            ("target_branch", "-trunk"),
            ("worktree_path", "--end-of-options"),
        ] {
            let p = Params::sample_with(field, value);
            let r = decide(&State::Idle, &open(p), &ctx()).expect_err("refused");
            let v = &r.violations[0];
            assert_eq!(
                (v.predicate.as_str(), v.field.as_deref()),
                ("option-like", Some(field)),
                "{r:?}"
            );
        }
        // The same parameters, not option-like, get as far as the preflight runs.
        let r = decide(&State::Idle, &open(Params::sample()), &ctx()).expect_err("no runs");
        assert_eq!(r.violations[0].field.as_deref(), Some("runs"), "{r:?}");
    }
}
