//! A recorded process run: what cairn (or, in park's documents, the caller) ran
//! and what it returned — argv, the environment it ran with, exit status, output
//! and times. The IO that produces one lives in the facade (`cairn::observe`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// One command run, with what it returned. Optional in every park VCS evidence
/// object as `observations`; the evidence of every ship, saga, work and pr gate
/// that cairn observes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandRun {
    /// The exact argv (no shell).
    pub argv: Vec<String>,
    /// The whole environment the process ran with (cairn's observer clears the
    /// caller's and sets only these). Absent in runs recorded before cairn
    /// recorded it, and in runs a caller reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// The exit status; `None` when the process could not start or was killed.
    pub exit_status: Option<i32>,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// When it started.
    pub started_at: Timestamp,
    /// When it finished.
    pub finished_at: Timestamp,
}

impl CommandRun {
    /// True when the run started and exited 0.
    pub fn ok(&self) -> bool {
        self.exit_status == Some(0)
    }

    /// The first line a run that exited 0 printed, trimmed (empty when it printed
    /// nothing); `None` when it did not exit 0.
    pub fn first_line(&self) -> Option<&str> {
        self.ok()
            .then(|| self.stdout.lines().next().unwrap_or("").trim())
    }
}
