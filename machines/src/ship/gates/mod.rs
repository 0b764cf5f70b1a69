//! The seed's git gates as data: for each step, the exact argv cairn must run
//! (always `git -C <absolute dir>`, never the caller's cwd), and pure functions
//! that read the recorded runs back into typed gate outcomes.
//!
//! A machine cannot run git, so the CLI runs each planned argv and hands the
//! [`CommandRun`]s to `decide`, which finds every run by its exact argv. A run that
//! is missing, failed, or printed something unreadable is `unknown`, and `unknown`
//! never opens a gate. Because the outcome is derived from the recorded runs (not
//! stated by the caller), the audit re-derives it from the journal.
//!
//! `plans` holds the argv, `readers` the gates read back from the runs, and
//! `scope` §phase-1d-verify-shared (the scope gate).

mod plans;
mod readers;
mod scope;

use serde::{Deserialize, Serialize};

use crate::evidence::CommandRun;
use crate::Outcome;

pub use crate::evidence::git::{exists, git};
pub use plans::{
    advisory_plan, ahead_argv, anchor_argv, contains_argv, create_argv, create_before_plan,
    create_cleanup_plan, create_failed_cleanup_plan, create_failed_plan, create_verify_plan,
    divergence_argv, head_argv, identity_argv, merge_after_plan, merge_argv, merge_before_plan,
    phase1d_plan, preflight_plan, premerge_plan, reattach_argv, refine_plan, repository_argv,
    resume_plan, teardown_before_plan, teardown_delete_argv, teardown_remove_argv, upstream_argv,
};
pub use readers::{
    add_made_branch, anchor_gate, create_gates, divergence_note, identity, merge_after,
    merge_before, merge_held, preflight_facts, premerge_gates, premerge_tip, primary_repository,
    refine_gates, resume_facts, teardown_present, MergeAfter, MergeBefore,
};
pub use scope::{parse_shortstat, phase1d, Phase1d};

/// One gate's typed result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gate {
    /// The gate's stable name.
    pub name: String,
    /// pass | fail | unknown.
    pub outcome: Outcome,
    /// What was seen.
    pub detail: String,
}

impl Gate {
    pub(in crate::ship) fn new(name: &str, outcome: Outcome, detail: impl Into<String>) -> Self {
        Gate {
            name: name.to_owned(),
            outcome,
            detail: detail.into(),
        }
    }
    /// A gate judged from its findings, failing closed: any failure fails it
    /// (the unreadable ones listed after), else anything unreadable leaves it
    /// `unknown`; only no finding at all passes, with `pass` as its detail.
    pub(in crate::ship) fn judged(
        name: &str,
        mut failed: Vec<String>,
        unknown: Vec<String>,
        pass: impl Into<String>,
    ) -> Self {
        if !failed.is_empty() {
            failed.extend(unknown);
            Gate::new(name, Outcome::Fail, failed.join("; "))
        } else if !unknown.is_empty() {
            Gate::new(name, Outcome::Unknown, unknown.join("; "))
        } else {
            Gate::new(name, Outcome::Pass, pass)
        }
    }
    fn eq(name: &str, seen: Option<String>, want: &str) -> Self {
        match seen {
            None => Gate::new(name, Outcome::Unknown, "the reading failed"),
            Some(s) if s == want => Gate::new(name, Outcome::Pass, format!("`{s}`")),
            Some(s) => Gate::new(name, Outcome::Fail, format!("`{s}`, expected `{want}`")),
        }
    }
    fn holds(name: &str, seen: Option<bool>, pass: &str, fail: &str) -> Self {
        match seen {
            None => Gate::new(name, Outcome::Unknown, "the reading failed"),
            Some(true) => Gate::new(name, Outcome::Pass, pass),
            Some(false) => Gate::new(name, Outcome::Fail, fail),
        }
    }
}

/// The recorded runs of one step, looked up by exact argv.
#[derive(Clone, Copy)]
pub struct Runs<'a>(pub &'a [CommandRun]);

impl<'a> Runs<'a> {
    /// The (last) run of exactly `argv`.
    pub fn get(&self, argv: &[String]) -> Option<&'a CommandRun> {
        self.0.iter().rev().find(|r| r.argv == argv)
    }
    /// Its stdout when it exited 0.
    pub fn ok(&self, argv: &[String]) -> Option<&'a str> {
        self.get(argv)
            .filter(|r| r.exit_status == Some(0))
            .map(|r| r.stdout.as_str())
    }
    /// Its first line when it exited 0.
    pub fn line(&self, argv: &[String]) -> Option<String> {
        self.ok(argv)
            .map(|s| s.lines().next().unwrap_or("").trim_end().to_owned())
    }
    /// Exit 0 → true, exit 1 → false, anything else → unknown.
    pub fn yes_no(&self, argv: &[String]) -> Option<bool> {
        match self.get(argv)?.exit_status {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        }
    }
    /// Whether every planned argv has a recorded run.
    pub fn covers(&self, plan: &[Vec<String>]) -> Result<(), Vec<String>> {
        match plan.iter().find(|a| self.get(a).is_none()) {
            None => Ok(()),
            Some(missing) => Err(missing.clone()),
        }
    }
}

/// How the ship agent's squash ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Squash {
    /// Nothing to squash (≤ 1 fixup).
    #[serde(rename = "n/a")]
    NotApplicable,
    /// Squashed; `git diff PRE..HEAD` must be empty.
    Squashed,
    /// The squash failed its post-checks and was reset to the pre-squash commit.
    FellBack,
}
