//! saga through the graph-driven harness: the property tests' saves, QA cycles and
//! merge turn, plus every gate and boundary command (plan and code review, an
//! override, PR-ready on cairn's fresh readings, directives and boundaries, a dead
//! turn released from git's readings, release, the board), so each is recorded in
//! every phase it may be. Seeds: proptest-regressions/saga-harness.txt.

use cairn::machines::evidence::{fresh, AbsPath, CommandRun, FullCommit, RefName};
use cairn::machines::saga::gates::{self, DocReview, Gate, Handed, Release, Review, ReviewOutcome};
use cairn::machines::saga::{Command, Phase, QaLimits, Saga, Scenario, ScenarioResult};
use cairn::testing::{Config, Harness};
use cairn::Timestamp;

use crate::saga_properties::{self as props, Step as Base};

const SHA: &str = "3333333333333333333333333333333333333333";
const REPO: &str = "/srv/repo";

// The constants above are valid by construction (40 hex, an absolute path, a ref).
fn sha() -> FullCommit {
    FullCommit::parse(SHA).expect("a 40-hex constant")
}
fn repo() -> AbsPath {
    AbsPath::parse(REPO).expect("an absolute constant")
}
fn refname(s: &str) -> RefName {
    RefName::parse(s).expect("a plain ref name")
}

#[derive(Debug, Clone)]
pub enum Step {
    Base(Base),
    DocReview(u32),
    Review(bool),
    Override(bool),
    PrReady,
    /// PR-ready for U2's handed revision: the unit PR-ready names takes the turn.
    PrReadyU2,
    Adjust(&'static str),
    Boundary,
    /// `U2` takes the turn; its dead turn is released, or its merge recorded.
    TakeU2,
    ReleaseU2,
    MergedU2,
    /// A failed QA cycle under a run record allowing no standard or escalated
    /// cycle, asking for the one extension.
    QaExtension,
    Release,
    /// A board move at `boundary`, written whole or half.
    Board(&'static str, bool),
}

/// Which repository REPO is, as cairn reads it (`evidence::git::repository_of`).
fn repository() -> Vec<CommandRun> {
    use cairn::machines::evidence::git::{common_dir_argv, identity_argv};
    let common = format!("{REPO}/.git");
    vec![
        run(common_dir_argv(REPO), 0, &format!("{common}\n")),
        run(identity_argv(&common), 0, "2049:11\n2049:12\n"),
    ]
}

fn run(argv: Vec<String>, exit: i32, stdout: &str) -> CommandRun {
    let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("a fixed timestamp parses");
    CommandRun {
        argv,
        env: None,
        exit_status: Some(exit),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        started_at: at.clone(),
        finished_at: at,
    }
}

pub fn command(step: &Step) -> Command {
    match step {
        Step::Base(b) => props::command(b),
        Step::DocReview(open) => Command::DocReview {
            review: DocReview {
                unresolved_p0_p1: *open,
                source: "plan-review.md".into(),
            },
        },
        Step::Review(accepted) => Command::Review {
            review: Review {
                outcome: if *accepted {
                    ReviewOutcome::Accepted
                } else {
                    ReviewOutcome::RepairsRequested
                },
                reviewed_sha: sha(),
            },
            from: None,
        },
        Step::Override(doc) => Command::Override {
            gate: if *doc {
                Gate::DocReview
            } else {
                Gate::ReviewGate
            },
            rationale: "accepted risk".into(),
            operator: "ana".into(),
        },
        Step::PrReady | Step::PrReadyU2 => {
            let plan = fresh::plan(&repo(), &sha());
            let unit = if matches!(step, Step::PrReadyU2) {
                "U2"
            } else {
                "U1"
            };
            Command::PrReady {
                repo: repo(),
                handed: vec![Handed {
                    unit: unit.into(),
                    revision: sha(),
                    repository: None,
                }],
                runs: vec![run(plan[0].clone(), 0, ""), run(plan[1].clone(), 0, "0\n")],
                repository: repository(),
            }
        }
        Step::Adjust(d) => Command::Adjust {
            directive: (*d).into(),
        },
        Step::Boundary => Command::Boundary {
            boundary: "b1".into(),
        },
        Step::TakeU2 => Command::TakeTurn {
            unit: "U2".into(),
            branch: refname("work/U2"),
            merge_worktree: AbsPath::parse("/wt2").expect("absolute"),
            holder: "U2".into(),
        },
        Step::ReleaseU2 => Command::ReleaseTurn {
            unit: "U2".into(),
            repo: repo(),
            target: refname("main"),
            ancestor: Box::new(run(
                gates::ancestor_plan(REPO, &gates::branch_ref("work/U2"), "main"),
                1,
                "",
            )),
            merge_head: Some(Box::new(run(gates::merge_head_plan("/wt2"), 1, ""))),
            repository: repository(),
        },
        Step::MergedU2 => {
            let tip = "4".repeat(40);
            Command::MarkMerged {
                unit: "U2".into(),
                holder: "U2".into(),
                merged_tip: FullCommit::parse(&tip).expect("40 hex"),
                repo: repo(),
                target: refname("main"),
                runs: gates::merged_plan(REPO, Some("work/U2"), Some(SHA), &tip, "main")
                    .into_iter()
                    .map(|argv| run(argv, 0, ""))
                    .collect(),
                from: None,
                repository: repository(),
            }
        }
        Step::QaExtension => Command::Qa {
            scenarios: vec![Scenario {
                name: "s0".into(),
                result: ScenarioResult::Failed,
                cause: None,
                evidence: None,
            }],
            extension: true,
            limits: Some(QaLimits {
                standard: 0,
                escalated: 0,
            }),
        },
        Step::Release => Command::Release {
            release: Release {
                destination: "none".into(),
                reviewed_head: None,
                landed_commit: None,
                absence_reason: Some("nothing to deploy".into()),
            },
            landed: None,
            from: None,
        },
        Step::Board(boundary, whole) => Command::Board {
            boundary: (*boundary).into(),
            written_field: if *whole { "Stage+Status" } else { "Status" }.into(),
            deployment: None,
            retro_trigger_fired: false,
            pair: None,
        },
    }
}

fn save(phase: Phase) -> Step {
    Step::Base(Base::Save {
        phase: Some(phase),
        rounds: Some(vec![1]),
        verdicts: vec![],
        next_round: None,
    })
}

fn alphabet() -> Vec<Step> {
    let mut out = vec![
        save(Phase::Work),
        Step::Base(Base::Take),
        Step::Base(Base::Merged),
    ];
    out.extend([Phase::Plan, Phase::Qa, Phase::Retro].map(save));
    for (results, extension) in [
        (vec![ScenarioResult::Passed], false),
        (vec![ScenarioResult::Failed], false),
        (vec![ScenarioResult::Failed], true),
    ] {
        out.push(Step::Base(Base::Qa { results, extension }));
    }
    out.extend([
        Step::DocReview(0),
        Step::DocReview(1),
        Step::Review(true),
        Step::Review(false),
        Step::Override(true),
        Step::Override(false),
        Step::PrReady,
        Step::PrReadyU2,
        Step::Adjust("drain"),
        Step::Adjust("pause_after:b1"),
        Step::Adjust("continue"),
        Step::Boundary,
        Step::TakeU2,
        Step::ReleaseU2,
        Step::MergedU2,
        Step::QaExtension,
        Step::Release,
        Step::Board("admission-exit", true),
        Step::Board("admission-exit", false),
    ]);
    out
}

#[test]
fn saga_covers_its_graph() {
    let all = alphabet();
    Harness::<Saga, Step>::new(&Config {
        cases: 24,
        regressions: Some(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/saga-harness.txt"
        )),
        session: None,
    })
    .alphabet(all.clone())
    .property("at most one unit holds the merge turn", |s| {
        let merging = s.thread().map_or(0, |t| {
            t.gates
                .units
                .values()
                .filter(|row| row.merge_state == gates::MergeState::Merging)
                .count()
        });
        if merging <= 1 {
            Ok(())
        } else {
            Err(format!("{merging} units merging"))
        }
    })
    .run(
        proptest::collection::vec(proptest::sample::select(all), 0..24),
        |state, step| planned(state, command(step)),
    );
}

/// The readings of a merge as the CLI plans them: from the turn's row (its
/// branch, and the commit PR-ready passed for when it was taken), each showing
/// the merge. Other commands as built.
fn planned(state: &cairn::machines::saga::State, mut command: Command) -> Command {
    if let Command::MarkMerged {
        unit,
        merged_tip,
        repo,
        target,
        from: None,
        runs,
        repository,
        ..
    } = &mut command
    {
        // Read in the repository the thread's PR-ready read (saga rules 9; the
        // base steps name another place, where the merge is refused).
        *repo = self::repo();
        *repository = self::repository();
        if let Some(row) = state
            .thread()
            .and_then(|t| t.gates.units.get(unit.as_str()))
        {
            *runs = gates::merged_plan(
                repo.as_str(),
                Some(&row.branch),
                row.reviewed.as_ref().map(|c| c.as_str()),
                merged_tip.as_str(),
                target.as_str(),
            )
            .into_iter()
            .map(|argv| run(argv, 0, ""))
            .collect();
        }
    }
    command
}
