//! The build loop's one command: an iteration, carrying the criterion and every
//! check as cairn ran it.

use serde::{Deserialize, Serialize};

use super::criterion::ExitCriterion;
use super::iteration::CheckRun;
use super::tree::TreeHeld;
use crate::evidence::FullCommit;
use crate::{Names, Timestamp};

/// Commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
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
        /// The tree the checks ran in, read before and after them (rules 3;
        /// absent in iterations recorded before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<Box<TreeHeld>>,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    command.variant_name()
}
