//! Evidence for the work-node machine that cairn collects itself: the tree
//! reading (toplevel, HEAD, cleanliness, by git) and each command criterion run
//! in that tree, contained in its own process group and killed as a group at its
//! timeout (and when it exits, so nothing it started outlives it).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_machines::park::observation::CommandRun;
use cairn_machines::work::node::{contract_hash, Containment, CriterionRun, TreeReading};
use cairn_machines::work::spec::{Criterion, Evidence};
use cairn_machines::Timestamp;

/// The most output kept per stream of a criterion run (the rest is cut, and said so).
pub const OUTPUT_CAP: usize = 1 << 20;

fn now() -> Timestamp {
    Timestamp::from_instant(chrono::Utc::now().fixed_offset())
}

fn git(dir: &str, rest: &[&str]) -> Vec<String> {
    let mut v = vec!["git".to_owned(), "-C".to_owned(), dir.to_owned()];
    v.extend(rest.iter().map(|s| (*s).to_owned()));
    v
}

/// Reads the tree a verification targets.
pub fn tree_reading(worktree: &str, expected_commit: &str) -> TreeReading {
    TreeReading {
        worktree_path: worktree.to_owned(),
        expected_commit: expected_commit.to_owned(),
        toplevel: crate::observe::run(&git(worktree, &["rev-parse", "--show-toplevel"])),
        head: crate::observe::run(&git(worktree, &["rev-parse", "HEAD"])),
        status: crate::observe::run(&git(
            worktree,
            &["status", "--porcelain", "--untracked-files=all"],
        )),
    }
}

fn capped(mut bytes: Vec<u8>) -> String {
    if bytes.len() > OUTPUT_CAP {
        bytes.truncate(OUTPUT_CAP);
        let mut s = String::from_utf8_lossy(&bytes).into_owned();
        s.push_str("\n[cairn: output cut at 1 MiB]");
        return s;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    // SAFETY: killpg is a plain syscall on a process-group id we created; it touches
    // no memory of ours. ESRCH (the group is already gone) is the expected success.
    unsafe {
        libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
    }
}

/// Runs `sh -c run` in `dir` in a new process group with a clean environment
/// (`PATH`, `LC_ALL=C` and the names in `inherit_env`); at `timeout` the whole group
/// is killed. Returns the run and whether it timed out.
pub fn run_contained(
    dir: &str,
    script: &str,
    timeout: Duration,
    inherit_env: &[String],
) -> (CommandRun, bool) {
    let argv = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
    let started_at = now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for name in inherit_env {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return (
                CommandRun {
                    argv,
                    exit_status: None,
                    stdout: String::new(),
                    stderr: format!("cannot run `sh`: {e}"),
                    started_at,
                    finished_at: now(),
                },
                false,
            )
        }
    };
    let pgid = child.id();
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = true;
                #[cfg(unix)]
                kill_group(pgid);
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    // Whatever the criterion left running in its group goes with it (this also
    // closes the pipes a straggler would otherwise hold open).
    #[cfg(unix)]
    kill_group(pgid);
    let stdout = capped(out.join().unwrap_or_default());
    let stderr = capped(err.join().unwrap_or_default());
    (
        CommandRun {
            argv,
            exit_status: status.and_then(|s| s.code()),
            stdout,
            stderr,
            started_at,
            finished_at: now(),
        },
        timed_out,
    )
}

/// Runs one criterion in `dir` (command criteria only run; a user criterion takes
/// the host's confirmation; an agent criterion is recorded as not run).
pub fn run_criterion(dir: &str, c: &Criterion, confirmation: Option<&str>) -> CriterionRun {
    let hash = contract_hash(c);
    match &c.evidence {
        Evidence::Command {
            run,
            timeout_ms,
            inherit_env,
            ..
        } => {
            let (r, timed_out) =
                run_contained(dir, run, Duration::from_millis(*timeout_ms), inherit_env);
            CriterionRun {
                criterion_id: c.id.clone(),
                contract_hash: hash,
                run: Some(r),
                timed_out,
                containment: Some(Containment::ProcessGroup),
                confirmation: None,
            }
        }
        Evidence::User { .. } => CriterionRun {
            criterion_id: c.id.clone(),
            contract_hash: hash,
            run: None,
            timed_out: false,
            containment: None,
            confirmation: confirmation.map(str::to_owned),
        },
        Evidence::Agent { .. } => CriterionRun {
            criterion_id: c.id.clone(),
            contract_hash: hash,
            run: None,
            timed_out: false,
            containment: None,
            confirmation: None,
        },
    }
}
