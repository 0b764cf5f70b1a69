//! Ship commands for property tests: each step carries the facts git would report,
//! and the runs are built for the exact argv the machine's plans bind, so `decide`
//! reads them the way it reads real runs. (The real-git behaviour of every gate is
//! tested end to end in `tests/ship.rs`; these feed the machine's rules with every
//! combination of facts.)

use cairn::machines::evidence::CommandRun;
use cairn::machines::ship::{
    gates, owner, Command, Mutation, Params, ReviewStatus, ScopeAnswer, Stage, State,
};
use cairn::machines::testing::as_observed;
use cairn::{Outcome, Timestamp};
use proptest::prelude::*;
use serde_json::json;

pub const ROOT: &str = "/srv/consumer-repo";
pub const WT: &str = "/srv/consumer-repo/.claude/worktrees/abc";
const BASE: &str = "1111111111111111111111111111111111111111";
const TIP: &str = "2222222222222222222222222222222222222222";

pub fn params() -> Params {
    Params {
        short_id: "abc".into(),
        expected_basename: "consumer-repo".into(),
        branch: "worktree-abc".into(),
        worktree_path: WT.into(),
        target_branch: "main".into(),
        intent_field: "intent_excerpt".into(),
        files_max: 10,
        deletions_max: 300,
        tiebreaker_4: "ask-user".into(),
        tiebreaker_5: false,
        close_step: "echo".into(),
        consumer_fields: vec![],
    }
}

/// What git would say, for one step.
#[derive(Debug, Clone)]
pub struct World {
    pub anchor_ok: bool,
    pub dirty: bool,
    pub on_target: bool,
    pub branch_exists: bool,
    pub listed: bool,
    pub path_exists: bool,
    pub op_ok: bool,
    pub ahead: u64,
    pub out_of_scope: bool,
}

impl World {
    pub fn happy() -> Self {
        World {
            anchor_ok: true,
            dirty: false,
            on_target: true,
            branch_exists: true,
            listed: true,
            path_exists: true,
            op_ok: true,
            ahead: 1,
            out_of_scope: false,
        }
    }
    /// Answers one argv.
    pub fn answer(&self, argv: &[String]) -> (Option<i32>, String) {
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        let dir = a.get(2).copied().unwrap_or("");
        let at_wt = dir == WT;
        let ok = |s: &str| (Some(0), format!("{s}\n"));
        let yes_no = |b: bool| (Some(if b { 0 } else { 1 }), String::new());
        match &a[..] {
            ["test", "-e", _] => yes_no(self.path_exists),
            [_, _, _, "rev-parse", "--show-toplevel"] if self.anchor_ok => ok(ROOT),
            [_, _, _, "rev-parse", "--show-toplevel"] => (Some(128), String::new()),
            [_, _, _, "status", "--porcelain"] if at_wt => ok(""),
            [_, _, _, "status", "--porcelain"] => (
                Some(0),
                if self.dirty {
                    " M a.txt\n".into()
                } else {
                    String::new()
                },
            ),
            // Plain index entries; a dirty primary also shows its edit in status.
            [_, _, _, "branch", "--show-current"] if at_wt => ok("worktree-abc"),
            [_, _, _, "branch", "--show-current"] => {
                ok(if self.on_target { "main" } else { "other" })
            }
            [_, _, _, "show-ref", ..] => yes_no(self.branch_exists),
            [_, _, _, "worktree", "list", "--porcelain", "-z"] => {
                let mut s = format!("worktree {ROOT}\0HEAD {BASE}\0branch refs/heads/main\0\0");
                if self.listed {
                    s.push_str(&format!(
                        "worktree {WT}\0HEAD {TIP}\0branch refs/heads/worktree-abc\0\0"
                    ));
                }
                (Some(0), s)
            }
            [_, _, _, "worktree", "add", ..]
            | [_, _, _, "merge", ..]
            | [_, _, _, "worktree", "remove", ..]
            | [_, _, _, "branch", "-d" | "-D", "--end-of-options", _] => {
                (Some(if self.op_ok { 0 } else { 128 }), String::new())
            }
            [_, _, _, "rev-parse", "--git-dir"] if at_wt => {
                ok(&format!("{ROOT}/.git/worktrees/abc"))
            }
            [_, _, _, "rev-parse", "--git-dir"] => ok(".git"),
            [_, _, _, "rev-parse", "--git-common-dir"] => ok(&format!("{ROOT}/.git")),
            [_, _, _, "rev-parse", "--path-format=absolute", "--git-common-dir"] => {
                ok(&format!("{ROOT}/.git"))
            }
            ["stat", "-L", "--format=%d:%i", _, _] => ok("2049:1\n2049:2"),
            [_, _, _, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"] => {
                ok(&format!("{ROOT}/.git\n{ROOT}/.git"))
            }
            [_, _, _, "rev-parse", "HEAD"] => ok(TIP),
            [_, _, _, "rev-parse", "--verify", "--end-of-options", r] if r.ends_with("/main") => {
                ok(if self.op_ok { TIP } else { BASE })
            }
            [_, _, _, "rev-parse", "--verify", "--end-of-options", _] => ok(TIP),
            [_, _, _, "rev-list", "--count", "--end-of-options", _, "--"] => {
                ok(&self.ahead.to_string())
            }
            [_, _, _, "diff", "--shortstat", "--end-of-options", _, "--"] => {
                ok(" 1 file changed, 1 insertion(+)")
            }
            [_, _, _, "log", ..] => ok("why\n\0"),
            [_, _, _, "diff", "--name-only", "-z", "--end-of-options", _, "--"] => (
                Some(0),
                if self.out_of_scope {
                    "src.txt\0other.txt\0"
                } else {
                    "src.txt\0"
                }
                .into(),
            ),
            [_, _, _, "diff", "--end-of-options", _, "--"] => ok(""),
            [_, _, _, "merge-base", "--is-ancestor", "--end-of-options", _, _] => {
                yes_no(self.op_ok)
            }
            _ => (Some(2), format!("unexpected argv {a:?}")),
        }
    }
    pub fn run(&self, argv: Vec<String>) -> CommandRun {
        let (exit_status, stdout) = self.answer(&argv);
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
        as_observed(CommandRun {
            argv,
            env: None,
            exit_status,
            stdout,
            stderr: String::new(),
            started_at: at.clone(),
            finished_at: at,
        })
    }
    pub fn runs(&self, plan: &[Vec<String>]) -> Vec<CommandRun> {
        plan.iter().map(|a| self.run(a.clone())).collect()
    }
}

const OWNER_PID: u32 = 4242;
const OWNER_STARTED: &str = "Thu Jan  1 00:00:00 2026";

/// A `ps -o stat= -o lstart= -p PID` reading of a sleeping process.
fn ps(pid: u32, exit_status: Option<i32>, started: &str) -> CommandRun {
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
    CommandRun {
        argv: owner::ps_argv(pid),
        env: None,
        exit_status,
        stdout: if started.is_empty() {
            String::new()
        } else {
            format!("S    {started}\n")
        },
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at,
    }
}

/// One generated step.
#[derive(Debug, Clone)]
pub enum Step {
    Begin(Mutation),
    Open(bool),
    Preflight(bool),
    Create,
    Verify(u8),
    AnswerScope(bool),
    Refine(u8),
    PreMerge(bool),
    Merge,
    Teardown,
    Resume,
    AnswerTiebreaker,
    ExternalOp(bool),
    Abandon,
}

pub fn world() -> impl Strategy<Value = World> {
    (
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.9),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.7),
        0u64..3,
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(
                anchor_ok,
                dirty,
                on_target,
                branch_exists,
                listed,
                path_exists,
                op_ok,
                ahead,
                out_of_scope,
            )| World {
                anchor_ok,
                dirty,
                on_target,
                branch_exists,
                listed,
                path_exists,
                op_ok,
                ahead,
                out_of_scope,
            },
        )
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => prop_oneof![Just(Mutation::Create), Just(Mutation::Merge), Just(Mutation::Teardown), Just(Mutation::Resume)].prop_map(Step::Begin),
        1 => any::<bool>().prop_map(Step::Open),
        1 => any::<bool>().prop_map(Step::Preflight),
        1 => Just(Step::Create),
        1 => (0u8..4).prop_map(Step::Verify),
        1 => any::<bool>().prop_map(Step::AnswerScope),
        1 => (0u8..6).prop_map(Step::Refine),
        1 => any::<bool>().prop_map(Step::PreMerge),
        1 => Just(Step::Merge),
        1 => Just(Step::Merge),
        1 => Just(Step::Teardown),
        1 => Just(Step::Resume),
        1 => Just(Step::AnswerTiebreaker),
        1 => any::<bool>().prop_map(Step::ExternalOp),
        1 => Just(Step::Abandon),
    ]
}

/// The happy path's steps, in order (with a clean world at each).
pub fn happy() -> Vec<(Step, World)> {
    let clean = World {
        branch_exists: false,
        listed: false,
        path_exists: false,
        ..World::happy()
    };
    vec![
        (Step::Open(true), clean.clone()),
        (Step::Begin(Mutation::Create), World::happy()),
        (
            Step::Create,
            World {
                branch_exists: false,
                listed: true,
                path_exists: false,
                ..World::happy()
            },
        ),
        (Step::Verify(0), World::happy()),
        (Step::Refine(0), World::happy()),
        (Step::PreMerge(true), World::happy()),
        (Step::Begin(Mutation::Merge), World::happy()),
        (Step::Merge, World::happy()),
        (Step::Begin(Mutation::Teardown), World::happy()),
        (Step::Teardown, World::happy()),
    ]
}

fn review(ok: bool) -> ReviewStatus {
    ReviewStatus {
        outcome: if ok { Outcome::Pass } else { Outcome::Unknown },
        detail: String::new(),
    }
}

/// The command a step makes in `state`, with runs for exactly the argv the plans bind
/// (as the CLI makes them: only what the facts let it run).
pub fn command(state: &State, step: &Step, w: &World) -> Command {
    let p = params();
    let p = state.run().map_or(p, |r| r.params.clone());
    let root = ROOT;
    let anchor = w.run(gates::anchor_argv(root));
    match step {
        Step::Begin(m) => {
            // This process is alive; a step in flight's owner is gone when the
            // world's operation would succeed, and alive (so refused) when not.
            let me = ps(OWNER_PID, Some(0), OWNER_STARTED);
            let previous = state
                .run()
                .and_then(|r| r.begun.as_ref())
                .and_then(|f| f.owner.as_ref())
                .map(|o| {
                    if w.op_ok {
                        ps(o.pid, Some(1), "")
                    } else {
                        ps(o.pid, Some(0), &o.started)
                    }
                });
            Command::Begin {
                step: *m,
                claim: Some(owner::Claim {
                    pid: OWNER_PID,
                    me,
                    previous,
                }),
            }
        }
        Step::Open(ok) => Command::Open {
            params: p.clone(),
            anchor,
            runs: w.runs(&gates::preflight_plan(&p, root)),
            review_status: review(*ok),
            advisory: w.runs(&[gates::upstream_argv(&p, root)]),
            acts_for: None,
        },
        Step::Preflight(ok) => Command::Preflight {
            runs: w.runs(&gates::preflight_plan(&p, root)),
            review_status: review(*ok),
            advisory: w.runs(&[gates::upstream_argv(&p, root)]),
        },
        Step::Create => {
            if !w.anchor_ok {
                return Command::Create {
                    anchor,
                    before: vec![],
                    add: None,
                    verify: vec![],
                    cleanup: vec![],
                };
            }
            let before = w.runs(&gates::create_before_plan(&p, root));
            let add = w.run(gates::create_argv(&p, root));
            if add.exit_status != Some(0) {
                let verify = w.runs(&gates::create_failed_plan(&p, root));
                let cleanup = if gates::add_made_branch(&p, root, &before, &verify) {
                    w.runs(&gates::create_failed_cleanup_plan(&p, root))
                } else {
                    vec![]
                };
                return Command::Create {
                    anchor,
                    before,
                    add: Some(add),
                    verify,
                    cleanup,
                };
            }
            let verify = w.runs(&gates::create_verify_plan(&p, root));
            let opened = state.run().and_then(|r| r.repository.as_deref());
            let ok = gates::create_gates(&p, root, &verify, opened)
                .iter()
                .all(|g| g.outcome == Outcome::Pass);
            let cleanup = if ok {
                vec![]
            } else {
                w.runs(&gates::create_cleanup_plan(&p, root))
            };
            Command::Create {
                anchor,
                before,
                add: Some(add),
                verify,
                cleanup,
            }
        }
        Step::Verify(k) => {
            let mut report = json!({"verdict": "ok", "worktree_path": WT, "branch": "worktree-abc", "head_sha": &TIP[..7], "in_scope_paths": ["src.txt"], "intent_excerpt": "Fix it."});
            match k {
                1 => report["verdict"] = json!("stopped:empty-result"),
                2 => report["verdict"] = json!("stopped:needs-triage:x"),
                _ => {}
            }
            let runs = if *k == 1 || *k == 2 {
                vec![]
            } else {
                w.runs(&gates::phase1d_plan(&p, root))
            };
            Command::Verify { report, runs }
        }
        Step::AnswerScope(proceed) => Command::AnswerScope {
            answer: if *proceed {
                ScopeAnswer::Proceed
            } else {
                ScopeAnswer::Abort
            },
            operator: "ana".into(),
        },
        Step::Refine(k) => {
            let verdict = [
                "passed",
                "flapping",
                "daemon_unhealthy",
                "stopped:crash",
                "passed",
                "passed",
            ][*k as usize];
            let mut report = json!({"verdict": verdict, "rebase_outcome": "clean", "iterations_run": 1, "tip_sha": &TIP[..7], "lint_clean": true});
            if *k == 4 {
                report["verdict"] = json!("stopped:tiebreaker-3");
                report["rebase_outcome"] = json!("conflict");
            }
            if *k == 5
                || matches!(
                    state.stage(),
                    Some(cairn::machines::ship::Stage::Stopped { .. })
                )
            {
                report["rebase_already_done"] = json!(true);
            }
            let runs = if verdict == "passed" && *k != 4 {
                w.runs(&gates::refine_plan(&p, root))
            } else {
                vec![]
            };
            Command::Refine { report, runs }
        }
        Step::PreMerge(tests) => Command::PreMerge {
            report: json!({"rebase_outcome_3_2": "unchanged", "tests_pass": tests, "lint_clean": true, "squash": "n/a", "open_review_jobs": 0}),
            runs: w.runs(&gates::premerge_plan(&p, root, None)),
            work_nodes: vec![],
        },
        Step::Merge => {
            if !w.anchor_ok {
                return Command::Merge {
                    anchor,
                    before: vec![],
                    merge: None,
                    after: vec![],
                };
            }
            let tip = match state.stage() {
                Some(
                    Stage::MergeReady { tip: Some(t) } | Stage::MergeRejected { tip: Some(t) },
                ) => t.to_string(),
                _ => TIP.to_owned(),
            };
            let before = w.runs(&gates::merge_before_plan(&p, root));
            let opened = state.run().and_then(|r| r.repository.as_deref());
            if !gates::merge_before(&p, root, &before, opened).admits("main", &tip) {
                return Command::Merge {
                    anchor,
                    before,
                    merge: None,
                    after: vec![],
                };
            }
            let m = w.run(gates::merge_argv(root, &tip));
            let after = if m.exit_status == Some(0) {
                w.runs(&gates::merge_after_plan(&p, root, &tip))
            } else {
                vec![]
            };
            Command::Merge {
                anchor,
                before,
                merge: Some(m),
                after,
            }
        }
        Step::Teardown => {
            if !w.anchor_ok {
                return Command::Teardown {
                    anchor,
                    before: vec![],
                    remove: None,
                    delete: None,
                };
            }
            let force = matches!(state.stage(), Some(Stage::TeardownPending { .. }));
            let merged = state
                .run()
                .and_then(|r| r.merged_sha.clone())
                .filter(|_| !force);
            let before = w.runs(&gates::teardown_before_plan(&p, root, merged.as_deref()));
            if let Some(sha) = &merged {
                if gates::Runs(&before).yes_no(&gates::contains_argv(&p, root, sha)) != Some(true) {
                    return Command::Teardown {
                        anchor,
                        before,
                        remove: None,
                        delete: None,
                    };
                }
            }
            let (listed, branch) = gates::teardown_present(&p, root, &before);
            Command::Teardown {
                anchor,
                before,
                remove: (listed == Some(true))
                    .then(|| w.run(gates::teardown_remove_argv(&p, root, force))),
                delete: (branch == Some(true))
                    .then(|| w.run(gates::teardown_delete_argv(&p, root, force))),
            }
        }
        Step::Resume => {
            if !w.anchor_ok {
                return Command::Resume {
                    anchor,
                    runs: vec![],
                    reattach: None,
                    ahead: None,
                    phase1d: vec![],
                };
            }
            let runs = w.runs(&gates::resume_plan(&p, root));
            let blocked = w.dirty || !w.on_target || (!w.listed && !w.branch_exists);
            if blocked {
                return Command::Resume {
                    anchor,
                    runs,
                    reattach: None,
                    ahead: None,
                    phase1d: vec![],
                };
            }
            let reattach = (!w.listed).then(|| w.run(gates::reattach_argv(&p, root)));
            if reattach.as_ref().is_some_and(|r| r.exit_status != Some(0)) {
                return Command::Resume {
                    anchor,
                    runs,
                    reattach,
                    ahead: None,
                    phase1d: vec![],
                };
            }
            let ahead = w.run(gates::ahead_argv(&p));
            let phase = state
                .run()
                .map_or(1, |r| cairn::machines::ship::resume_phase(r, w.ahead));
            let phase1d = if phase == 2 {
                w.runs(&gates::phase1d_plan(&p, root))
            } else {
                vec![]
            };
            Command::Resume {
                anchor,
                runs,
                reattach,
                ahead: Some(ahead),
                phase1d,
            }
        }
        Step::AnswerTiebreaker => Command::AnswerTiebreaker {
            number: 3,
            disposition: "keep ours".into(),
            operator: "ana".into(),
        },
        Step::ExternalOp(_) if w.dirty => Command::ExternalOp {
            class: cairn::machines::ship::recovery::OpClass::DaemonManagement,
            op: "kata daemon start".into(),
            denied: false,
        },
        Step::ExternalOp(denied) => Command::ExternalOp {
            class: cairn::machines::ship::recovery::OpClass::TrackerWrite,
            op: "kata close abc".into(),
            denied: *denied,
        },
        Step::Abandon => Command::Abandon {
            reason: "skip".into(),
            operator: "ana".into(),
        },
    }
}
