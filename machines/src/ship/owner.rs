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

/// `ps -o stat= -o lstart= -p PID`: the process's state and start time (exit 1
/// and no output when no such process exists).
pub fn ps_argv(pid: u32) -> Vec<String> {
    ["ps", "-o", "stat=", "-o", "lstart=", "-p"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([pid.to_string()])
        .collect()
}

/// The state and start time a `ps` reading of an existing process printed.
fn stat_and_start(run: &CommandRun) -> Option<(&str, String)> {
    let line = run.stdout.lines().next().unwrap_or("").trim();
    let (stat, start) = line.split_once(char::is_whitespace)?;
    let start = start.trim();
    (run.exit_status == Some(0) && !stat.is_empty() && !start.is_empty())
        .then(|| (stat, start.to_owned()))
}

/// The start time a `ps` reading of a live process printed (not of a zombie: a
/// process that exited and is not yet reaped runs nothing).
pub fn started(run: &CommandRun) -> Option<String> {
    stat_and_start(run)
        .filter(|(stat, _)| !dead(stat))
        .map(|(_, s)| s)
}

/// A process that exited: a zombie waiting for its parent to reap it (`Z`), or
/// dead (`X`). Found by a hostile pass (helper-79): a `ship merge` killed at
/// random held its step "in flight" until its parent reaped it, and a parent
/// that never does held it for good.
fn dead(stat: &str) -> bool {
    stat.starts_with(['Z', 'X'])
}

/// Whether `run` (a reading of `ps_argv(owner.pid)`) shows `owner` gone: no such
/// process, a zombie (ship rules 18), or another process (another start time)
/// under its pid. `None` when the reading is not that argv or says neither.
pub fn gone(owner: &Owner, run: &CommandRun) -> Option<bool> {
    if run.argv != ps_argv(owner.pid) {
        return None;
    }
    match (run.exit_status, stat_and_start(run)) {
        (Some(0), Some((stat, s))) => Some(dead(stat) || s != owner.started),
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
            gone(&o, &ps(7, 0, "S    Tue Dec  1 00:45:23 2026\n")),
            Some(false)
        );
        assert_eq!(gone(&o, &ps(7, 1, "")), Some(true));
        assert_eq!(
            gone(&o, &ps(7, 0, "Sl   Wed Dec  2 09:00:00 2026\n")),
            Some(true)
        );
        // Exited and not yet reaped: gone, and no owner of a new step.
        for zombie in [
            "Z    Tue Dec  1 00:45:23 2026\n",
            "Z+ Tue Dec  1 00:45:23 2026\n",
        ] {
            assert_eq!(gone(&o, &ps(7, 0, zombie)), Some(true), "{zombie}");
            assert_eq!(started(&ps(7, 0, zombie)), None, "{zombie}");
        }
        assert_eq!(gone(&o, &ps(8, 1, "")), None, "another pid's reading");
        assert_eq!(gone(&o, &ps(7, 2, "")), None, "ps failed");
        assert_eq!(started(&ps(7, 0, "  \n")), None);
        assert_eq!(started(&ps(7, 0, "S\n")), None, "no start time");
        assert_eq!(
            started(&ps(7, 0, "R+   Tue Dec  1 00:45:23 2026\n")).as_deref(),
            Some("Tue Dec  1 00:45:23 2026")
        );
    }
}
