//! The verbs a ship run admits next (what `cairn ship status` lists): each verb
//! [`super::admits`] now, or whose announced git mutation (`begin`) it admits.

use super::decide::check;
use super::{Mutation, State, Verb};

/// The verbs, in pipeline order, with the names the CLI gives them.
const VERBS: [(Verb, &str); 12] = [
    (Verb::Open, "open"),
    (Verb::Preflight, "preflight"),
    (Verb::Create, "create"),
    (Verb::Verify, "verify"),
    (Verb::AnswerScope, "answer-scope"),
    (Verb::Refine, "refine"),
    (Verb::PreMerge, "pre-merge"),
    (Verb::Merge, "merge"),
    (Verb::Teardown, "teardown"),
    (Verb::Resume, "resume"),
    (Verb::AnswerTiebreaker, "answer-tiebreaker"),
    (Verb::Abandon, "abandon"),
];

/// The verbs `state` admits now. A mutating verb counts when its announcement is
/// admitted (the CLI announces it with `begin` before git runs).
pub fn verbs(state: &State) -> Vec<&'static str> {
    VERBS
        .into_iter()
        .filter(|(v, _)| {
            let begun = match v {
                Verb::Create => Some(Mutation::Create),
                Verb::Merge => Some(Mutation::Merge),
                Verb::Teardown => Some(Mutation::Teardown),
                Verb::Resume => Some(Mutation::Resume),
                Verb::Begin(_)
                | Verb::Open
                | Verb::Preflight
                | Verb::Verify
                | Verb::AnswerScope
                | Verb::Refine
                | Verb::PreMerge
                | Verb::AnswerTiebreaker
                | Verb::ExternalOp
                | Verb::Abandon => None,
            };
            check(state, *v).is_ok() || begun.is_some_and(|m| check(state, Verb::Begin(m)).is_ok())
        })
        .map(|(_, n)| n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_stream_admits_only_open() {
        assert_eq!(verbs(&State::Idle), ["open"]);
    }
}
