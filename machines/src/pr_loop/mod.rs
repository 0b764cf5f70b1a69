//! `pr-loop`: the PR continuation loop (seed `002_5521956d0644431d`, Phase 0.4 and
//! the round-N loop after PR-ready) as a total, ordered transition table.
//!
//! One stream per PR (`pr-loop/<host>/<owner>/<repo>/pull/<n>`). Each observation
//! records its classification; rows that re-execute units start a round (rounds are
//! `rounds_seen`; `next_round` is derived, never set); rows that merge or pause set
//! status and stop. Merging, marking ready and requesting review are offered and
//! confirmed, never automatic: `merged-by-loop` is reachable only through
//! `merge-confirmed`, which is reachable only through `merge-offered`.

pub mod classify;
pub mod escalation;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::wire::InputError;
use crate::evidence::CommandRun;
use crate::evidence::{is_full_git_id, is_http_url};
use crate::{Context, EdgeSpec, GraphSpec, Machine, Rejection, StateSpec, Timestamp, Violation};
use classify::{Classification, Destination, Freshness, PrState};
use escalation::{Proposal, Tiers};

pub const NAME: &str = "pr-loop";

/// What a failure row's failure looks like (only depth-shaped failures escalate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureShape {
    Depth,
    Breadth,
    Flaky,
    Environmental,
}

/// The `observe` / `classify` input document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveInput {
    /// The PR's URL.
    pub pr: String,
    /// The `gh pr view --json …` reading.
    pub reading: Value,
    #[serde(default)]
    pub reviewed_sha: Option<String>,
    #[serde(default)]
    pub commits_since_review: Option<u64>,
    /// How cairn counted `commits_since_review` itself (`--repo`), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness_observation: Option<CommandRun>,
    #[serde(default)]
    pub unresolved_threads: Option<u64>,
    pub destination: Destination,
    #[serde(default)]
    pub failure_shape: Option<FailureShape>,
    #[serde(default)]
    pub tiers: Option<Tiers>,
}

/// The stream instance of a PR URL: the URL without its scheme.
pub fn stream_instance(pr: &str) -> Option<String> {
    if !is_http_url(pr) {
        return None;
    }
    let rest = pr.split_once("://")?.1.trim_end_matches('/');
    Some(rest.to_owned())
}

/// Classifies an observe input (pure).
pub fn classify_input(input: &ObserveInput) -> Result<Classification, InputError> {
    if stream_instance(&input.pr).is_none() {
        return Err(InputError::new(
            "pr",
            "pr-url",
            "expected the PR's http(s) URL",
        ));
    }
    if let Some(sha) = &input.reviewed_sha {
        if !is_full_git_id(sha) {
            return Err(InputError::new(
                "reviewed_sha",
                "full-head",
                "expected a full 40/64-hex commit id",
            ));
        }
    }
    if input.commits_since_review.is_some() && input.reviewed_sha.is_none() {
        return Err(InputError::new(
            "reviewed_sha",
            "required",
            "commits_since_review counts commits since a reviewed_sha: name it",
        ));
    }
    let reading = classify::parse_reading(&input.reading, "reading")?;
    let freshness = Freshness {
        commits_since_review: input.commits_since_review,
        unresolved_threads: input.unresolved_threads.unwrap_or(0),
    };
    classify::classify(&reading, &freshness, input.destination, &input.pr)
}

/// Something offered to the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Offer {
    Ready,
    Merge,
    ReviewRequest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Attended,
    Unattended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    Apply,
    Decline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    Paused,
    Abandoned,
}

/// The loop's data, carried by every state but `idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loop {
    pub pr: String,
    pub rounds_seen: Vec<u32>,
    pub last: Classification,
    pub tier: Option<String>,
}

impl Loop {
    /// `max(rounds_seen) + 1`, or 1: derived, never stored or set.
    pub fn next_round(&self) -> u32 {
        next_round(&self.rounds_seen)
    }
}

pub use crate::evidence::next_round;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum State {
    Idle,
    Observing { l: Loop },
    ReadyOffered { l: Loop },
    ReviewRequestOffered { l: Loop },
    MergeOffered { l: Loop },
    MergeConfirmed { l: Loop, operator: String },
    EscalationProposed { l: Loop, proposal: Proposal },
    AwaitingOperator { l: Loop },
    Paused { l: Loop, reason: String },
    Abandoned { l: Loop, reason: String },
    Complete { l: Loop },
}

impl State {
    pub fn looped(&self) -> Option<&Loop> {
        match self {
            State::Idle => None,
            State::Observing { l }
            | State::ReadyOffered { l }
            | State::ReviewRequestOffered { l }
            | State::MergeOffered { l }
            | State::MergeConfirmed { l, .. }
            | State::EscalationProposed { l, .. }
            | State::AwaitingOperator { l }
            | State::Paused { l, .. }
            | State::Abandoned { l, .. }
            | State::Complete { l } => Some(l),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    Observe {
        input: Box<ObserveInput>,
    },
    OfferReviewRequest,
    Confirm {
        what: Offer,
        operator: String,
    },
    ResolveEscalation {
        mode: Mode,
        decision: Decision,
        approval_token: Option<String>,
    },
    RecordMerge {
        merged_at: Timestamp,
    },
    Dispose {
        disposition: Disposition,
        reason: String,
        operator: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    /// A classification was recorded (its reading is in the transition record).
    Observed {
        pr: String,
        classification: Classification,
        at: Timestamp,
    },
    /// A round began: `round` joins `rounds_seen`.
    RoundStarted {
        round: u32,
    },
    EscalationProposed {
        proposal: Proposal,
    },
    /// Attended, with the operator's approval token.
    EscalationApplied {
        to: String,
        approval_token: String,
    },
    /// Held at the default: declined, or unattended (recorded in the round summary).
    EscalationHeld {
        reason: String,
    },
    ReadyOffered,
    ReadyConfirmed {
        operator: String,
    },
    ReviewRequestOffered,
    ReviewRequestConfirmed {
        operator: String,
    },
    MergeOffered,
    MergeConfirmed {
        operator: String,
    },
    /// The skill merged after the confirmation.
    MergedByLoop {
        merged_at: Timestamp,
    },
    /// An observation found the PR merged (by anyone).
    MergeObserved {
        merged_at: Option<Timestamp>,
    },
    ClosedObserved,
    Paused {
        reason: String,
        operator: String,
    },
    Abandoned {
        reason: String,
        operator: String,
    },
}

pub struct PrLoop;

fn reject(
    state: &State,
    command: &str,
    predicate: &str,
    field: Option<&str>,
    message: &str,
) -> Rejection {
    Rejection::single(
        NAME,
        command,
        PrLoop::state_name(state),
        Violation::new(predicate, field, message),
    )
}

impl Machine for PrLoop {
    const NAME: &'static str = NAME;
    const RULES_VERSION: u32 = 1;
    type State = State;
    type Command = Command;
    type Event = Event;

    fn initial_state() -> State {
        State::Idle
    }

    fn decide(state: &State, command: &Command, ctx: &Context) -> Result<Vec<Event>, Rejection> {
        let name = Self::command_name(command);
        let terminal = matches!(state, State::Abandoned { .. } | State::Complete { .. });
        if terminal {
            return Err(reject(
                state,
                name,
                "loop-open",
                None,
                "the loop has ended (merged or abandoned)",
            ));
        }
        match command {
            Command::Observe { input } => {
                let c = classify_input(input)
                    .map_err(|e| e.into_rejection(NAME, name, Self::state_name(state)))?;
                if let Some(l) = state.looped() {
                    if l.pr != input.pr {
                        return Err(reject(
                            state,
                            name,
                            "same-pr",
                            Some("pr"),
                            "this stream follows another PR",
                        ));
                    }
                }
                let rounds_seen = state
                    .looped()
                    .map(|l| l.rounds_seen.clone())
                    .unwrap_or_default();
                let merged_at = classify::parse_reading(&input.reading, "reading")
                    .ok()
                    .and_then(|r| r.merged_at);
                let mut events = vec![Event::Observed {
                    pr: input.pr.clone(),
                    classification: c.clone(),
                    at: ctx.now.clone(),
                }];
                if c.state.starts_round(c.checks) {
                    events.push(Event::RoundStarted {
                        round: next_round(&rounds_seen),
                    });
                    if input.failure_shape == Some(FailureShape::Depth)
                        && c.state == PrState::PendingOrFailingChecks
                    {
                        if let Some(t) = &input.tiers {
                            match escalation::propose(t).map_err(|e| {
                                e.into_rejection(NAME, name, Self::state_name(state))
                            })? {
                                Ok(proposal) => events.push(Event::EscalationProposed { proposal }),
                                Err(_clamped) => {}
                            }
                        }
                    }
                }
                match c.state {
                    PrState::Draft => events.push(Event::ReadyOffered),
                    PrState::ApprovedFresh if c.merge_offer => events.push(Event::MergeOffered),
                    PrState::Merged => events.push(Event::MergeObserved { merged_at }),
                    PrState::Closed => events.push(Event::ClosedObserved),
                    _ => {}
                }
                Ok(events)
            }
            Command::OfferReviewRequest => match state {
                State::Observing { l } if l.last.state != PrState::Draft => {
                    Ok(vec![Event::ReviewRequestOffered])
                }
                State::Observing { .. } => Err(reject(
                    state,
                    name,
                    "not-draft",
                    None,
                    "never request review on a draft",
                )),
                _ => Err(reject(
                    state,
                    name,
                    "observing",
                    None,
                    "offer a review request only while observing",
                )),
            },
            Command::Confirm { what, operator } => {
                if operator.trim().is_empty() {
                    return Err(reject(
                        state,
                        name,
                        "operator-named",
                        Some("operator"),
                        "a confirmation names the operator who gave it",
                    ));
                }
                match (state, what) {
                    (State::ReadyOffered { .. }, Offer::Ready) => Ok(vec![Event::ReadyConfirmed {
                        operator: operator.clone(),
                    }]),
                    (State::ReviewRequestOffered { .. }, Offer::ReviewRequest) => {
                        Ok(vec![Event::ReviewRequestConfirmed {
                            operator: operator.clone(),
                        }])
                    }
                    (State::MergeOffered { .. }, Offer::Merge) => Ok(vec![Event::MergeConfirmed {
                        operator: operator.clone(),
                    }]),
                    _ => Err(reject(
                        state,
                        name,
                        "offer-pending",
                        Some("what"),
                        "nothing of that kind is offered now",
                    )),
                }
            }
            Command::ResolveEscalation {
                mode,
                decision,
                approval_token,
            } => {
                let State::EscalationProposed { proposal, .. } = state else {
                    return Err(reject(
                        state,
                        name,
                        "escalation-proposed",
                        None,
                        "no escalation is proposed",
                    ));
                };
                match (mode, decision) {
                    (Mode::Unattended, _) => Ok(vec![Event::EscalationHeld { reason: format!("unattended: held at `{}`; the proposal to `{}` is recorded in the round summary", proposal.from, proposal.to) }]),
                    (Mode::Attended, Decision::Decline) => Ok(vec![Event::EscalationHeld { reason: "declined by the operator".into() }]),
                    (Mode::Attended, Decision::Apply) => match approval_token.as_deref().map(str::trim) {
                        Some(t) if !t.is_empty() => Ok(vec![Event::EscalationApplied { to: proposal.to.clone(), approval_token: t.to_owned() }]),
                        _ => Err(reject(state, name, "approval-token", Some("approval_token"), "an attended spend increase needs the operator's approval token")),
                    },
                }
            }
            Command::RecordMerge { merged_at } => match state {
                State::MergeConfirmed { .. } => Ok(vec![Event::MergedByLoop {
                    merged_at: merged_at.clone(),
                }]),
                _ => Err(reject(
                    state,
                    name,
                    "merge-confirmed",
                    None,
                    "cairn records a merge only after the operator confirmed the offered merge",
                )),
            },
            Command::Dispose {
                disposition,
                reason,
                operator,
            } => {
                if !matches!(state, State::AwaitingOperator { .. }) {
                    return Err(reject(
                        state,
                        name,
                        "closed-observed",
                        None,
                        "pause or abandon is the operator's answer to a closed PR",
                    ));
                }
                if reason.trim().is_empty() || operator.trim().is_empty() {
                    return Err(reject(
                        state,
                        name,
                        "reason-and-operator",
                        Some("reason"),
                        "record the operator and the reason",
                    ));
                }
                Ok(vec![match disposition {
                    Disposition::Paused => Event::Paused {
                        reason: reason.clone(),
                        operator: operator.clone(),
                    },
                    Disposition::Abandoned => Event::Abandoned {
                        reason: reason.clone(),
                        operator: operator.clone(),
                    },
                }])
            }
        }
    }

    fn evolve(state: State, event: &Event) -> State {
        let l = state.looped().cloned();
        match (event, l) {
            (
                Event::Observed {
                    pr, classification, ..
                },
                l,
            ) => State::Observing {
                l: Loop {
                    pr: pr.clone(),
                    rounds_seen: l
                        .as_ref()
                        .map(|l| l.rounds_seen.clone())
                        .unwrap_or_default(),
                    last: classification.clone(),
                    tier: l.and_then(|l| l.tier),
                },
            },
            (Event::RoundStarted { round }, Some(mut l)) => {
                if !l.rounds_seen.contains(round) {
                    l.rounds_seen.push(*round);
                }
                State::Observing { l }
            }
            (Event::EscalationProposed { proposal }, Some(l)) => State::EscalationProposed {
                l,
                proposal: proposal.clone(),
            },
            (Event::EscalationApplied { to, .. }, Some(mut l)) => {
                l.tier = Some(to.clone());
                State::Observing { l }
            }
            (Event::EscalationHeld { .. }, Some(l)) => State::Observing { l },
            (Event::ReadyOffered, Some(l)) => State::ReadyOffered { l },
            (Event::ReadyConfirmed { .. }, Some(l)) => State::Observing { l },
            (Event::ReviewRequestOffered, Some(l)) => State::ReviewRequestOffered { l },
            (Event::ReviewRequestConfirmed { .. }, Some(l)) => State::Observing { l },
            (Event::MergeOffered, Some(l)) => State::MergeOffered { l },
            (Event::MergeConfirmed { operator }, Some(l)) => State::MergeConfirmed {
                l,
                operator: operator.clone(),
            },
            (Event::MergedByLoop { .. } | Event::MergeObserved { .. }, Some(l)) => {
                State::Complete { l }
            }
            (Event::ClosedObserved, Some(l)) => State::AwaitingOperator { l },
            (Event::Paused { reason, .. }, Some(l)) => State::Paused {
                l,
                reason: reason.clone(),
            },
            (Event::Abandoned { reason, .. }, Some(l)) => State::Abandoned {
                l,
                reason: reason.clone(),
            },
            // Total: an event that needs a loop, applied before any observation, changes nothing.
            (
                Event::RoundStarted { .. }
                | Event::EscalationProposed { .. }
                | Event::EscalationApplied { .. }
                | Event::EscalationHeld { .. }
                | Event::ReadyOffered
                | Event::ReadyConfirmed { .. }
                | Event::ReviewRequestOffered
                | Event::ReviewRequestConfirmed { .. }
                | Event::MergeOffered
                | Event::MergeConfirmed { .. }
                | Event::MergedByLoop { .. }
                | Event::MergeObserved { .. }
                | Event::ClosedObserved
                | Event::Paused { .. }
                | Event::Abandoned { .. },
                None,
            ) => state,
        }
    }

    fn state_name(state: &State) -> &'static str {
        match state {
            State::Idle => "idle",
            State::Observing { .. } => "observing",
            State::ReadyOffered { .. } => "ready-offered",
            State::ReviewRequestOffered { .. } => "review-request-offered",
            State::MergeOffered { .. } => "merge-offered",
            State::MergeConfirmed { .. } => "merge-confirmed",
            State::EscalationProposed { .. } => "escalation-proposed",
            State::AwaitingOperator { .. } => "awaiting-operator",
            State::Paused { .. } => "paused",
            State::Abandoned { .. } => "abandoned",
            State::Complete { .. } => "complete",
        }
    }

    fn event_name(event: &Event) -> &'static str {
        match event {
            Event::Observed { .. } => "observed",
            Event::RoundStarted { .. } => "round-started",
            Event::EscalationProposed { .. } => "escalation-proposed",
            Event::EscalationApplied { .. } => "escalation-applied",
            Event::EscalationHeld { .. } => "escalation-held",
            Event::ReadyOffered => "ready-offered",
            Event::ReadyConfirmed { .. } => "ready-confirmed",
            Event::ReviewRequestOffered => "review-request-offered",
            Event::ReviewRequestConfirmed { .. } => "review-request-confirmed",
            Event::MergeOffered => "merge-offered",
            Event::MergeConfirmed { .. } => "merge-confirmed",
            Event::MergedByLoop { .. } => "merged-by-loop",
            Event::MergeObserved { .. } => "merge-observed",
            Event::ClosedObserved => "closed-observed",
            Event::Paused { .. } => "paused",
            Event::Abandoned { .. } => "abandoned",
        }
    }

    fn command_name(command: &Command) -> &'static str {
        match command {
            Command::Observe { .. } => "observe",
            Command::OfferReviewRequest => "offer-review-request",
            Command::Confirm { .. } => "confirm",
            Command::ResolveEscalation { .. } => "resolve-escalation",
            Command::RecordMerge { .. } => "record-merge",
            Command::Dispose { .. } => "dispose",
        }
    }

    fn graph() -> GraphSpec {
        let e = |from, event, to| EdgeSpec { from, event, to };
        let s = |name, terminal| StateSpec { name, terminal };
        let mut edges = Vec::new();
        for from in [
            "idle",
            "observing",
            "ready-offered",
            "review-request-offered",
            "merge-offered",
            "merge-confirmed",
            "escalation-proposed",
            "awaiting-operator",
            "paused",
        ] {
            edges.push(e(from, "observed", "observing"));
        }
        edges.extend([
            e("observing", "round-started", "observing"),
            e("observing", "escalation-proposed", "escalation-proposed"),
            e("escalation-proposed", "escalation-applied", "observing"),
            e("escalation-proposed", "escalation-held", "observing"),
            e("observing", "ready-offered", "ready-offered"),
            e("ready-offered", "ready-confirmed", "observing"),
            e(
                "observing",
                "review-request-offered",
                "review-request-offered",
            ),
            e(
                "review-request-offered",
                "review-request-confirmed",
                "observing",
            ),
            e("observing", "merge-offered", "merge-offered"),
            e("merge-offered", "merge-confirmed", "merge-confirmed"),
            e("merge-confirmed", "merged-by-loop", "complete"),
            e("observing", "merge-observed", "complete"),
            e("observing", "closed-observed", "awaiting-operator"),
            e("awaiting-operator", "paused", "paused"),
            e("awaiting-operator", "abandoned", "abandoned"),
        ]);
        GraphSpec {
            machine: NAME,
            initial: "idle",
            states: vec![
                s("idle", false),
                s("observing", false),
                s("ready-offered", false),
                s("review-request-offered", false),
                s("merge-offered", false),
                s("merge-confirmed", false),
                s("escalation-proposed", false),
                s("awaiting-operator", false),
                s("paused", false),
                s("abandoned", true),
                s("complete", true),
            ],
            edges,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pr_loop_graph_is_sound() {
        assert_eq!(PrLoop::graph().defects(), vec![]);
    }
}
