//! Evidence for the work-node machine that cairn collects itself: the tree
//! reading (toplevel, HEAD, cleanliness, by git) and each command criterion run
//! in that tree, contained in its own process group and killed as a group at its
//! timeout (and when it exits, so nothing it started outlives it), with the tree
//! watched while it runs (`watch`).

mod watch;

pub use watch::Watch;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_machines::evidence::CommandRun;
use cairn_machines::work::node::{
    contract_hash, tree_plan, Containment, CriterionRun, TreeReading, CONTROLLING_TERMINAL,
};
use cairn_machines::work::spec::{Criterion, Evidence};

/// The most output kept per stream of a criterion run (the rest is cut, and said so).
pub const OUTPUT_CAP: usize = 1 << 20;

use crate::observe::now;

/// Reads the tree a verification targets (the machine's `tree_plan`, in order),
/// its repository, and — given the common dir its dispatch read — that
/// repository's identity on disk.
pub fn tree_reading(
    worktree: &str,
    expected_commit: &str,
    dispatched: Option<&str>,
) -> TreeReading {
    let [toplevel, head, status] = tree_plan(worktree).map(|argv| crate::observe::run(&argv));
    let repository = crate::observe::run(&cairn_machines::work::node::dispatch_plan(worktree));
    let identity = dispatched
        .map(|common| crate::observe::run(&cairn_machines::evidence::git::identity_argv(common)));
    TreeReading {
        worktree_path: worktree.to_owned(),
        expected_commit: expected_commit.to_owned(),
        toplevel,
        head,
        status,
        flags: None,
        repository: Some(repository),
        identity,
        branch: Some(crate::observe::run(
            &cairn_machines::work::node::branch_plan(worktree),
        )),
    }
}

/// The host's answer to a user criterion: the one-time challenge cairn minted,
/// the channel it was read from (`None` when no channel the agent's shell does
/// not control could be opened) and the words read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// 32 hex digits, minted for this run.
    pub challenge: String,
    /// [`CONTROLLING_TERMINAL`] when read from the controlling terminal.
    pub channel: Option<String>,
    /// The line read.
    pub words: Option<String>,
}

impl Confirmation {
    /// A confirmation read from the controlling terminal.
    pub fn from_terminal(challenge: String, words: String) -> Self {
        Confirmation {
            challenge,
            channel: Some(CONTROLLING_TERMINAL.to_owned()),
            words: Some(words),
        }
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

/// The environment a contained run gets.
#[derive(Debug, Clone)]
pub enum Env<'a> {
    /// Only `PATH`, `LC_ALL=C` and these names (work criteria).
    Clean(&'a [String]),
    /// The caller's environment (the build loop runs the repository's own tools).
    Inherit,
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
    run_argv_contained(dir, &argv, timeout, Env::Clean(inherit_env))
}

/// Runs `argv` (no shell) in `dir`, in a new process group killed as a group at
/// `timeout` and after it exits. A program that cannot start is a run with no exit
/// status and the error on stderr.
pub fn run_argv_contained(
    dir: &str,
    argv: &[String],
    timeout: Duration,
    env: Env<'_>,
) -> (CommandRun, bool) {
    let (run, timed_out, _) = run_argv_signalled(dir, argv, timeout, env);
    (run, timed_out)
}

/// [`run_argv_contained`], also returning the signal that ended the process, if one
/// did (`None` when it exited or never started).
pub fn run_argv_signalled(
    dir: &str,
    argv: &[String],
    timeout: Duration,
    env: Env<'_>,
) -> (CommandRun, bool, Option<i32>) {
    let argv = argv.to_vec();
    let started_at = now();
    let Some(program) = argv.first().cloned() else {
        return (
            CommandRun {
                argv,
                env: None,
                exit_status: None,
                stdout: String::new(),
                stderr: "an empty command".into(),
                started_at: started_at.clone(),
                finished_at: started_at,
            },
            false,
            None,
        );
    };
    let mut cmd = Command::new(&program);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // What the run's environment was, as recorded: a clean one in full (a named
    // inherited value is recorded as `<inherited>`, never its text, which may be a
    // secret); the caller's whole environment is not recorded.
    let recorded_env = match env {
        Env::Clean(inherit_env) => {
            let mut rec = std::collections::BTreeMap::new();
            cmd.env_clear().env("LC_ALL", "C");
            rec.insert("LC_ALL".to_owned(), "C".to_owned());
            if let Some(path) = std::env::var_os("PATH") {
                rec.insert("PATH".to_owned(), path.to_string_lossy().into_owned());
                cmd.env("PATH", path);
            }
            for name in inherit_env {
                if let Some(v) = std::env::var_os(name) {
                    rec.insert(name.clone(), "<inherited>".to_owned());
                    cmd.env(name, v);
                }
            }
            Some(rec)
        }
        Env::Inherit => None,
    };
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return (
                CommandRun {
                    argv,
                    env: recorded_env,
                    exit_status: None,
                    stdout: String::new(),
                    stderr: format!("cannot run `{program}`: {e}"),
                    started_at,
                    finished_at: now(),
                },
                false,
                None,
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
    #[cfg(unix)]
    let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    #[cfg(not(unix))]
    let signal = None;
    (
        CommandRun {
            argv,
            env: recorded_env,
            exit_status: status.and_then(|s| s.code()),
            stdout,
            stderr,
            started_at,
            finished_at: now(),
        },
        timed_out,
        signal,
    )
}

/// Runs one criterion in `dir`: a command criterion runs contained, with the
/// tree watched (no watch when one cannot start: the machine fails it as
/// unwatched); a user criterion takes the host's confirmation; an agent
/// criterion is recorded as not run.
pub fn run_criterion(
    dir: &str,
    c: &Criterion,
    confirmation: Option<&Confirmation>,
) -> CriterionRun {
    let mut out = CriterionRun {
        criterion_id: c.id.clone(),
        contract_hash: contract_hash(c),
        run: None,
        timed_out: false,
        containment: None,
        confirmation: None,
        challenge: None,
        channel: None,
        watch: None,
    };
    match &c.evidence {
        Evidence::Command {
            run,
            timeout_ms,
            inherit_env,
            ..
        } => {
            let watch = Watch::start(dir).ok();
            let (r, timed_out) =
                run_contained(dir, run, Duration::from_millis(*timeout_ms), inherit_env);
            out.run = Some(r);
            out.timed_out = timed_out;
            out.containment = Some(Containment::ProcessGroup);
            out.watch = watch.map(Watch::finish);
        }
        Evidence::User { .. } => {
            if let Some(k) = confirmation {
                out.challenge = Some(k.challenge.clone());
                out.channel = k.channel.clone();
                out.confirmation = k.words.clone();
            }
        }
        Evidence::Agent { .. } => {}
    }
    out
}

/// Expands the tokens of `argv` that hold `*`, `?` or `[` as globs from `root`
/// (matches sorted, relative to `root`, a pattern's trailing `/` kept on each); a
/// token that matches nothing is kept.
pub fn expand_globs(root: &str, argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    for (i, t) in argv.iter().enumerate() {
        if i == 0 || !t.contains(['*', '?', '[']) {
            out.push(t.clone());
            continue;
        }
        let pattern = if t.starts_with('/') {
            t.clone()
        } else {
            format!("{}/{t}", root.trim_end_matches('/'))
        };
        let mut hits: Vec<String> = glob::glob(&pattern)
            .map(|paths| {
                paths
                    .filter_map(Result::ok)
                    .map(|p| {
                        let s = p.to_string_lossy().into_owned();
                        if t.starts_with('/') {
                            s
                        } else {
                            s.strip_prefix(&format!("{}/", root.trim_end_matches('/')))
                                .map_or(s.clone(), str::to_owned)
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        hits.sort();
        // A pattern that ends in `/` matches directories, and a shell keeps the `/`.
        if t.ends_with('/') {
            for h in &mut hits {
                if !h.ends_with('/') {
                    h.push('/');
                }
            }
        }
        if hits.is_empty() {
            out.push(t.clone());
        } else {
            out.extend(hits);
        }
    }
    out
}

/// Runs one build-loop check: split into words (no shell), globs expanded from the
/// repo root, the caller's environment, its own process group and a timeout.
pub fn run_check(
    root: &str,
    part: cairn_machines::build_loop::Part,
    name: &str,
    command: &str,
    timeout: Duration,
) -> cairn_machines::build_loop::CheckRun {
    use cairn_machines::build_loop::{split_words, CheckRun};
    match split_words(command) {
        Err(_) => CheckRun {
            part,
            name: name.to_owned(),
            command: command.to_owned(),
            argv: None,
            run: None,
            timed_out: false,
            signal: None,
        },
        Ok(words) => {
            let argv = expand_globs(root, &words);
            let (run, timed_out, signal) = run_argv_signalled(root, &argv, timeout, Env::Inherit);
            CheckRun {
                part,
                name: name.to_owned(),
                command: command.to_owned(),
                argv: Some(argv),
                run: Some(run),
                timed_out,
                signal,
            }
        }
    }
}
