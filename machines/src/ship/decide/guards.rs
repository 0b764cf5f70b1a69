//! The guard helpers every `decide_*` shares: a rejection naming the verb and the
//! state, the evidence checks (exactly the planned argv ran, a run is the bound
//! argv), the anchor re-assertion, and the report parsing.

use serde_json::Value;

use super::super::event::Event;
use super::super::gates::{self, Runs};
use super::super::graph::state_name;
use super::super::report::{consumer_fields, Fields};
use super::super::state::{Run, State};
use super::super::NAME;
use crate::evidence::wire::typed;
use crate::evidence::CommandRun;
use crate::{Outcome, Rejection, Violation};

/// The command being decided: the state it meets and its verb, which every
/// rejection names.
#[derive(Clone, Copy)]
pub(super) struct Guard<'a> {
    /// The state before the command.
    pub(super) state: &'a State,
    /// The verb's name.
    pub(super) verb: &'static str,
}

impl<'a> Guard<'a> {
    /// A rejection with one violation.
    pub(super) fn reject(self, predicate: &str, field: Option<&str>, message: &str) -> Rejection {
        Rejection::single(
            NAME,
            self.verb,
            state_name(self.state),
            Violation::new(predicate, field, message),
        )
    }

    /// An input at fault: `field` broke `rule`.
    pub(super) fn bad(self, field: &str, rule: &str, message: &str) -> Rejection {
        self.reject(rule, Some(field), &format!("{field}: {message}"))
    }

    /// The run an admitted verb acts on (`admits` refuses idle streams first).
    pub(super) fn opened(self) -> Result<&'a Run, Rejection> {
        self.state
            .run()
            .ok_or_else(|| self.bad("state", "opened", "no run"))
    }

    /// Every planned argv ran, and nothing else did.
    pub(super) fn exact(
        self,
        field: &str,
        runs: &[CommandRun],
        plan: &[Vec<String>],
    ) -> Result<(), Rejection> {
        if let Err(missing) = Runs(runs).covers(plan) {
            return Err(self.bad(
                field,
                "evidence-complete",
                &format!("no recorded run of `{}`", missing.join(" ")),
            ));
        }
        if let Some(extra) = runs.iter().find(|r| !plan.contains(&r.argv)) {
            return Err(self.bad(
                field,
                "evidence-bound",
                &format!(
                    "`{}` is not a bound reading of this step",
                    extra.argv.join(" ")
                ),
            ));
        }
        Ok(())
    }

    /// `run` is a run of exactly `want`.
    pub(super) fn argv_is(
        self,
        field: &str,
        run: &CommandRun,
        want: &[String],
    ) -> Result<(), Rejection> {
        if run.argv != want {
            return Err(self.bad(
                field,
                "evidence-bound",
                &format!("expected a run of `{}`", want.join(" ")),
            ));
        }
        Ok(())
    }

    /// The anchor re-assertion every parent-side mutation starts with: `Some(events)`
    /// when the anchor drifted (and then nothing may have run after it).
    pub(super) fn anchor_drift(
        self,
        anchor: &CommandRun,
        root: &str,
        ran_after: bool,
        field: &str,
    ) -> Result<Option<Vec<Event>>, Rejection> {
        self.argv_is("anchor", anchor, &gates::anchor_argv(root))?;
        if gates::anchor_gate(anchor, root).outcome == Outcome::Pass {
            return Ok(None);
        }
        if ran_after {
            return Err(self.bad(
                field,
                "anchor-first",
                "nothing may run after the anchor drifted",
            ));
        }
        Ok(Some(vec![Event::AnchorDrifted {
            step: self.verb.into(),
            anchor: anchor.clone(),
        }]))
    }

    /// `v` is not blank.
    pub(super) fn nonempty(self, field: &str, v: &str) -> Result<(), Rejection> {
        if v.trim().is_empty() {
            return Err(self.bad(field, "nonempty-string", "is empty"));
        }
        Ok(())
    }

    /// A leaf's report, typed (the error names the report's field), with no
    /// consumer field a person could take for one of its own.
    pub(super) fn parse<T: serde::de::DeserializeOwned + serde::Serialize + Fields>(
        self,
        v: &Value,
    ) -> Result<T, Rejection> {
        let bad = |e: crate::evidence::wire::InputError| self.bad(&e.field, e.rule, &e.message);
        let report: T = typed(v.clone(), "report").map_err(bad)?;
        consumer_fields(&report, &self.opened()?.params).map_err(bad)?;
        Ok(report)
    }
}
