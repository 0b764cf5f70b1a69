//! pr-loop through the graph-driven harness: observations of every PR state on the
//! loop's own tier (proposing or clamped), cairn's gh reading of a merge, the
//! operator's answers (the escalation applied with the token cairn minted, the
//! review request confirmed), pause and abandon. Seeds:
//! proptest-regressions/pr-loop-harness.txt.

use cairn::machines::pr_loop::{
    Command, Decision, Disposition, Mode, ObserveInput, Observed, Offer, PrLoop, State,
};
use cairn::testing::{Config, Harness};
use serde_json::json;

use crate::pr_properties::pr_command;
use crate::support::pr::{doc, freshness_runs, gh_run, STATES};

#[derive(Debug, Clone)]
pub enum Step {
    /// An observation of `state` for a merge destination (else a PR), at the loop's
    /// tier with room to escalate (else clamped at the session ceiling).
    Observe {
        state: &'static str,
        merge: bool,
        room: bool,
    },
    /// cairn's own gh reading of the merged PR.
    ObserveMergedByGh,
    /// The property tests' other kinds: confirmations, the merge record, the
    /// review-request offer, unattended answers, a pause.
    Kind(u8),
    ApplyEscalation,
    ConfirmReviewRequest,
    Abandon,
}

fn tier(state: &State) -> String {
    state
        .looped()
        .and_then(|l| l.current_tier())
        .unwrap_or("a")
        .to_owned()
}

pub fn command(state: &State, step: &Step) -> Command {
    match step {
        Step::Observe {
            state: pr_state,
            merge,
            room,
        } => {
            let mut d = doc(pr_state, if *merge { "merge" } else { "pr" });
            d["failure_shape"] = json!("depth");
            let current = tier(state);
            let ceiling = if *room {
                "c".to_owned()
            } else {
                current.clone()
            };
            d["tiers"] = json!({"ladder": ["a", "b", "c"], "current": current, "ceiling": ceiling});
            let observed = if *pr_state == "approved-fresh" {
                d.as_object_mut()
                    .expect("a document")
                    .remove("commits_since_review");
                freshness_runs(0, 0)
            } else {
                Observed::default()
            };
            Command::Observe {
                input: Box::new(
                    serde_json::from_value::<ObserveInput>(d).expect("the fixture parses"),
                ),
                observed: Box::new(observed),
                from: None,
            }
        }
        Step::ObserveMergedByGh => {
            let d = doc("merged", "merge");
            let run = gh_run(&d["reading"]);
            Command::Observe {
                input: Box::new(
                    serde_json::from_value::<ObserveInput>(d).expect("the fixture parses"),
                ),
                observed: Box::new(Observed {
                    gh: Some(run),
                    freshness: None,
                }),
                from: None,
            }
        }
        Step::Kind(k) => pr_command(*k, "approved-fresh"),
        Step::ApplyEscalation => Command::ResolveEscalation {
            mode: Mode::Attended,
            decision: Decision::Apply,
            approval_token: match state {
                State::EscalationProposed { proposal, .. } => proposal.token.clone(),
                _ => Some("esc-none".into()),
            },
        },
        Step::ConfirmReviewRequest => Command::Confirm {
            what: Offer::ReviewRequest,
            operator: "op".into(),
        },
        Step::Abandon => Command::Dispose {
            disposition: Disposition::Abandoned,
            reason: "superseded".into(),
            operator: "op".into(),
        },
    }
}

fn alphabet() -> Vec<Step> {
    let mut out = vec![];
    for state in STATES {
        for merge in [true, false] {
            for room in [true, false] {
                out.push(Step::Observe { state, merge, room });
            }
        }
    }
    out.push(Step::ObserveMergedByGh);
    out.extend((5u8..12).map(Step::Kind));
    out.extend([
        Step::ApplyEscalation,
        Step::ConfirmReviewRequest,
        Step::Abandon,
    ]);
    out
}

#[test]
fn pr_loop_covers_its_graph() {
    let all = alphabet();
    Harness::<PrLoop, Step>::new(&Config {
        cases: 32,
        regressions: Some(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../proptest-regressions/pr-loop-harness.txt"
        )),
        session: None,
    })
    .alphabet(all.clone())
    .property(
        "a confirmed merge was offered on cairn's own fresh reading",
        |s| match s {
            State::MergeConfirmed { l, .. } if l.merge_head().is_none() => {
                Err("merge confirmed with no fresh reading of cairn's".into())
            }
            _ => Ok(()),
        },
    )
    .run(
        proptest::collection::vec(proptest::sample::select(all), 0..16),
        command,
    );
}
