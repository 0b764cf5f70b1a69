//! The build loop's one command: an iteration, carrying the criterion and every
//! check as cairn ran it.

use serde::{Deserialize, Serialize};

use super::criterion::ExitCriterion;
use super::iteration::CheckRun;
use crate::evidence::FullCommit;
use crate::Timestamp;

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(missing_docs)]
pub enum Command {
    /// One iteration: the criterion and every check as run.
    Iterate {
        unit: String,
        /// The HEAD the checks ran at (`decide` holds it to 40 hex digits).
        revision: FullCommit,
        criterion: ExitCriterion,
        checks: Vec<CheckRun>,
        started_at: Timestamp,
        finished_at: Timestamp,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Iterate { .. } => "iterate",
    }
}
