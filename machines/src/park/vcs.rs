//! Park's bound VCS observation (`cairn park observe-vcs`): the readings planned
//! here, run by the facade's one observer, and read back into the three typed VCS
//! checks. Pure: the runner is passed in, so this module runs nothing itself.

use serde_json::{json, Value};

use crate::evidence::git::git;
use crate::evidence::CommandRun;
use crate::Timestamp;

/// `test -d <path>`: whether a directory exists, as a recorded run.
fn is_dir(path: &str) -> Vec<String> {
    vec!["test".to_owned(), "-d".to_owned(), path.to_owned()]
}

fn line(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

struct Recorder<'r> {
    runner: &'r mut dyn FnMut(&[String]) -> CommandRun,
    runs: Vec<CommandRun>,
}

impl Recorder<'_> {
    fn run(&mut self, argv: Vec<String>) -> CommandRun {
        let r = (self.runner)(&argv);
        self.runs.push(r.clone());
        r
    }
}

fn check(name: &str, category: &str, outcome: &str, evidence: Value, at: &Timestamp) -> Value {
    json!({ "name": name, "category": category, "outcome": outcome, "evidence": evidence, "observed_at": at })
}

/// The three bound VCS checks of the park machine for the workspace at `root`:
/// `no_vcs_operation_or_conflict`, `tree_preserved`,
/// `commits_reachable_or_checkpoint_resolvable`. Unreadable state is `unknown`,
/// never `pass`; a jj workspace is `unknown` (cairn does not run jj in v1).
///
/// Every reading is a command planned here and run by `runner` (the facade's
/// observer: argv, no shell, the caller's environment cleared); `at` is when the
/// observation was made. Paths are read in git's `-z` form, so a conflicted file
/// named with a newline or non-ASCII text is one path.
pub fn checks(
    root: &str,
    at: &Timestamp,
    runner: &mut dyn FnMut(&[String]) -> CommandRun,
) -> Vec<Value> {
    let at = at.clone();
    let unknown_all = |backend: &str, error: &str, runs: &[CommandRun]| -> Vec<Value> {
        let obs = json!(runs);
        vec![
            check(
                "no_vcs_operation_or_conflict",
                "quiescence",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "error": error, "observations": obs}),
                &at,
            ),
            check(
                "tree_preserved",
                "preservation",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "workspace": root, "state": "unknown", "error": error, "observations": obs}),
                &at,
            ),
            check(
                "commits_reachable_or_checkpoint_resolvable",
                "preservation",
                "unknown",
                json!({"source": backend, "detail": "the bound VCS state could not be read", "backend": backend, "bound_root": root, "workspace": root, "state": "unknown", "error": error, "observations": obs}),
                &at,
            ),
        ]
    };
    let jj = runner(&is_dir(&format!("{root}/.jj")));
    if jj.exit_status == Some(0) {
        let probe = runner(&["jj".to_owned(), "--version".to_owned()]);
        let why = if probe.exit_status == Some(0) {
            "a jj workspace: cairn v1 does not run jj's observations itself, so they are unknown"
        } else {
            "a jj workspace, and jj is not installed: its observations are unknown"
        };
        return unknown_all("jj", why, &[jj, probe]);
    }
    let mut rec = Recorder {
        runner: &mut *runner,
        runs: Vec::new(),
    };
    let top = rec.run(git(root, &["rev-parse", "--show-toplevel"]));
    if top.exit_status != Some(0) {
        return unknown_all(
            "git",
            "git rev-parse --show-toplevel failed: not a readable git workspace",
            &rec.runs,
        );
    }
    if line(&top.stdout) != root {
        return unknown_all(
            "git",
            &format!(
                "the bound root is not the workspace top level (`{}`)",
                line(&top.stdout)
            ),
            &rec.runs,
        );
    }
    // The checkout is its own repository's, as bind-repository proved it: a
    // `.git` swapped for a gitfile naming another repository, or a `commondir`
    // file in it, reads another repository's HEAD and upstream (helper-77).
    let dirs = rec.run(git(
        root,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
        ],
    ));
    let mut lines = dirs.stdout.lines();
    let related = match (dirs.exit_status, lines.next(), lines.next()) {
        (Some(0), Some(g), Some(c)) => super::bind::git_dir_relationship(root, g, c),
        _ => false,
    };
    if !related {
        return unknown_all(
            "git",
            "the git dir and common dir prove neither `<root>/.git` nor a linked worktree of it",
            &rec.runs,
        );
    }
    let status = rec.run(git(root, &["status", "--porcelain=v2", "--branch"]));
    let unmerged = rec.run(git(root, &["diff", "--name-only", "--diff-filter=U", "-z"]));
    let mut operations = Vec::new();
    let mut unreadable = status.exit_status != Some(0) || unmerged.exit_status != Some(0);
    for (name, op) in [
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("REBASE_HEAD", "rebase"),
    ] {
        let r = rec.run(git(root, &["rev-parse", "-q", "--verify", name]));
        match r.exit_status {
            Some(0) => operations.push(op.to_owned()),
            Some(1) => {}
            _ => unreadable = true,
        }
    }
    for dir in ["rebase-merge", "rebase-apply"] {
        let r = rec.run(git(
            root,
            &["rev-parse", "--path-format=absolute", "--git-path", dir],
        ));
        if r.exit_status != Some(0) {
            unreadable = true;
            continue;
        }
        let present = rec.run(is_dir(line(&r.stdout)));
        match present.exit_status {
            Some(0) if !operations.contains(&"rebase".to_owned()) => {
                operations.push("rebase".to_owned())
            }
            Some(0 | 1) => {}
            _ => unreadable = true,
        }
    }
    let conflicts: Vec<String> = unmerged
        .stdout
        .split('\0')
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    // The bound git readings; the `test -d` probes are in `observations` only.
    let commands: Vec<Vec<String>> = rec
        .runs
        .iter()
        .filter(|r| r.argv.first().is_some_and(|p| p == "git"))
        .map(|r| r.argv.clone())
        .collect();
    let vcs = if unreadable {
        check(
            "no_vcs_operation_or_conflict",
            "quiescence",
            "unknown",
            json!({"source": "git", "detail": "git could not report the operation state", "backend": "git", "bound_root": root, "error": "a bound git reading failed", "observations": rec.runs}),
            &at,
        )
    } else {
        let clean = conflicts.is_empty() && operations.is_empty();
        check(
            "no_vcs_operation_or_conflict",
            "quiescence",
            if clean { "pass" } else { "fail" },
            json!({"source": "git", "detail": if clean { "no merge, rebase, cherry-pick or revert in progress; no unresolved path" } else { "an operation is in progress or a path is unresolved" }, "backend": "git", "bound_root": root, "commands": commands, "conflicts": conflicts, "operations": operations, "observations": rec.runs}),
            &at,
        )
    };

    let mut prec = Recorder {
        runner: &mut *runner,
        runs: Vec::new(),
    };
    let head = prec.run(git(root, &["rev-parse", "HEAD"]));
    let head_id = line(&head.stdout).to_owned();
    let dirty: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let resolver = git(root, &["cat-file", "-e", &format!("{head_id}^{{commit}}")]);
    let preservation = |name: &str, outcome: &str, mut evidence: Value, runs: &[CommandRun]| {
        evidence["observations"] = json!(runs);
        check(name, "preservation", outcome, evidence, &at)
    };
    let base = |detail: &str| json!({"source": "git", "detail": detail, "backend": "git", "bound_root": root, "workspace": root});
    if head.exit_status != Some(0)
        || status.exit_status != Some(0)
        // A status on the repository's own index: an edit under a
        // skip-worktree or assume-unchanged mark is not in it, and HEAD does
        // not preserve that edit.
        || !crate::evidence::git::against_head(&status)
        || unreadable
    {
        let mut e = base("HEAD or the working tree could not be read");
        e["state"] = json!("unknown");
        e["error"] = json!("a bound git reading failed");
        let tree = preservation("tree_preserved", "unknown", e.clone(), &prec.runs);
        let commits = preservation(
            "commits_reachable_or_checkpoint_resolvable",
            "unknown",
            e,
            &prec.runs,
        );
        return vec![vcs, tree, commits];
    }
    let resolved = prec.run(resolver.clone());
    let durable = |detail: &str| {
        let mut e = base(detail);
        e["state"] = json!("durable");
        e["reference"] = json!(head_id);
        e["resolved_head"] = json!(head_id);
        e["resolver_command"] = json!(resolver);
        e
    };
    let unpreserved = |detail: &str, error: String| {
        let mut e = base(detail);
        e["state"] = json!("unpreserved");
        e["error"] = json!(error);
        e
    };
    let tree = if resolved.exit_status != Some(0) {
        let mut e = base("HEAD does not resolve to a commit");
        e["state"] = json!("unknown");
        e["error"] = json!("git cat-file -e HEAD^{commit} failed");
        preservation("tree_preserved", "unknown", e, &prec.runs)
    } else if dirty.is_empty() {
        preservation(
            "tree_preserved",
            "pass",
            durable("the working tree is clean: HEAD preserves it"),
            &prec.runs,
        )
    } else {
        preservation(
            "tree_preserved",
            "fail",
            unpreserved(
                "the working tree differs from HEAD",
                format!("{} uncommitted or untracked entries", dirty.len()),
            ),
            &prec.runs,
        )
    };
    let upstream = prec.run(git(root, &["rev-parse", "@{upstream}"]));
    let commits = if upstream.exit_status != Some(0) {
        preservation(
            "commits_reachable_or_checkpoint_resolvable",
            "fail",
            unpreserved(
                "no upstream: HEAD is not reachable from a remote-tracking ref",
                "no upstream is configured; a checkpoint is needed".into(),
            ),
            &prec.runs,
        )
    } else {
        let ancestor = prec.run(git(
            root,
            &["merge-base", "--is-ancestor", "HEAD", "@{upstream}"],
        ));
        match ancestor.exit_status {
            Some(0) if resolved.exit_status == Some(0) => preservation(
                "commits_reachable_or_checkpoint_resolvable",
                "pass",
                durable("HEAD is an ancestor of its upstream"),
                &prec.runs,
            ),
            Some(1) => preservation(
                "commits_reachable_or_checkpoint_resolvable",
                "fail",
                unpreserved(
                    "HEAD has commits its upstream does not",
                    "HEAD is not reachable from its upstream; a checkpoint is needed".into(),
                ),
                &prec.runs,
            ),
            _ => {
                let mut e = base("reachability could not be read");
                e["state"] = json!("unknown");
                e["error"] = json!("git merge-base --is-ancestor failed");
                preservation(
                    "commits_reachable_or_checkpoint_resolvable",
                    "unknown",
                    e,
                    &prec.runs,
                )
            }
        }
    };
    vec![vcs, tree, commits]
}
