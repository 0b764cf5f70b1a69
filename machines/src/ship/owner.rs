//! Who holds a git mutation in flight: the process that announced it, named by
//! its pid and its start time as `ps` reports it (so a reused pid is not mistaken
//! for it). A step whose owner is alive belongs to it; one whose owner is gone was
//! interrupted, and exactly one later process may take it over (its announcement
//! is an append at the version it read). Liveness is judged on the host cairn runs
//! on: a journal shared between hosts needs one host per ship run.

use serde::{Deserialize, Serialize};

use crate::evidence::CommandRun;

/// The process that announced a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owner {
    /// Its process id.
    pub pid: u32,
    /// Its start time, as `ps -o lstart=` printed it: with the pid, the process's
    /// identity (a reused pid starts at another time). Compared as text with a later
    /// reading, never read as a time, so kept as `ps` printed it.
    pub started: String,
}

/// The announcing process's evidence: its own `ps` reading and, when it takes over
/// a step in flight, the reading that shows the step's owner gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// This process's pid.
    pub pid: u32,
    /// `ps -o lstart= -p PID` of this process.
    pub me: CommandRun,
    /// `ps -o lstart= -p OWNER` of the step in flight's owner, when there is one.
    #[serde(default)]
    pub previous: Option<CommandRun>,
}

/// `ps -o lstart= -p PID`: the process's start time (exit 1 and no output when no
/// such process exists).
pub fn ps_argv(pid: u32) -> Vec<String> {
    ["ps", "-o", "lstart=", "-p"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([pid.to_string()])
        .collect()
}

/// The start time a `ps` reading of a live process printed.
pub fn started(run: &CommandRun) -> Option<String> {
    let line = run.stdout.lines().next().unwrap_or("").trim();
    (run.exit_status == Some(0) && !line.is_empty()).then(|| line.to_owned())
}

/// Whether `run` (a reading of `ps_argv(owner.pid)`) shows `owner` gone: no such
/// process, or another process (another start time) under its pid. `None` when the
/// reading is not that argv or says neither.
pub fn gone(owner: &Owner, run: &CommandRun) -> Option<bool> {
    if run.argv != ps_argv(owner.pid) {
        return None;
    }
    match (run.exit_status, started(run)) {
        (Some(0), Some(s)) => Some(s != owner.started),
        (Some(1), None) if run.stdout.trim().is_empty() => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    fn ps(pid: u32, exit: i32, stdout: &str) -> CommandRun {
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
        CommandRun {
            argv: ps_argv(pid),
            env: None,
            exit_status: Some(exit),
            stdout: stdout.into(),
            stderr: String::new(),
            started_at: at.clone(),
            finished_at: at,
        }
    }

    #[test]
    fn an_owner_is_gone_when_its_pid_is_free_or_reused() {
        let o = Owner {
            pid: 7,
            started: "Tue Dec  1 00:45:23 2026".into(),
        };
        assert_eq!(
            gone(&o, &ps(7, 0, "Tue Dec  1 00:45:23 2026\n")),
            Some(false)
        );
        assert_eq!(gone(&o, &ps(7, 1, "")), Some(true));
        assert_eq!(
            gone(&o, &ps(7, 0, "Wed Dec  2 09:00:00 2026\n")),
            Some(true)
        );
        assert_eq!(gone(&o, &ps(8, 1, "")), None, "another pid's reading");
        assert_eq!(gone(&o, &ps(7, 2, "")), None, "ps failed");
        assert_eq!(started(&ps(7, 0, "  \n")), None);
    }
}
