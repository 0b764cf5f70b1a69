//! Progress on stderr for the long journal walks (`journal verify`, `journal
//! audit`): an indicatif bar drawn only when stderr is a terminal, cleared before
//! the verb prints its line. A pipe or a file gets nothing.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How the bar reads.
const TEMPLATE: &str = "cairn: {msg} {bar:30} {pos}/{len} events ({eta})";

/// A bar over `total` events, or nothing when stderr is not a terminal.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// `what` is the verb (`verify`, `audit`).
    pub fn new(what: &str, total: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        // A literal template (the unit test below parses it).
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        Self(Some(bar))
    }

    /// `done` events so far.
    pub fn set(&self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }

    /// Erases the bar.
    pub fn clear(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_template_parses() {
        assert!(indicatif::ProgressStyle::with_template(super::TEMPLATE).is_ok());
    }
}
