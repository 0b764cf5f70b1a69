//! `evolve`: every iteration counts; a green one records the revision handed to
//! code review. Total: it validates nothing.

use super::event::Event;
use super::state::LoopState;

/// The state after `event`.
pub(super) fn evolve(mut state: LoopState, event: &Event) -> LoopState {
    state.iterations += 1;
    match event {
        Event::IterationGreen {
            handed_to_code_review,
            repository,
            ..
        } => {
            state.green = true;
            state.handed_to_code_review = Some(handed_to_code_review.clone());
            state.handed_repository = repository.clone();
        }
        Event::IterationNotGreen { .. } => state.green = false,
    }
    state
}
