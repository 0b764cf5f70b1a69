//! The guard helpers every command's decision shares: naming a rejection after
//! the command and the state, the open-node guard, and reading the node from the
//! spec text the command carries.

use super::super::{State, NAME};
use crate::work::amend::declared_draft;
use crate::work::spec::{validate_with_draft, Draft, Node, Spec};
use crate::{Rejection, Violation};

/// The command being decided and the state it meets: what every rejection names.
#[derive(Debug, Clone, Copy)]
pub(super) struct Guard<'a> {
    /// The state before the command.
    pub(super) state: &'a State,
    /// The command's name (as `Machine::command_name` gives it).
    pub(super) command: &'static str,
}

impl Guard<'_> {
    /// A rejection naming one failed predicate.
    pub(super) fn reject(&self, predicate: &str, field: Option<&str>, message: &str) -> Rejection {
        Rejection::single(
            NAME,
            self.command,
            self.state.name(),
            Violation::new(predicate, field, message),
        )
    }

    /// Refuses with one failed predicate.
    pub(super) fn no<T>(
        &self,
        predicate: &str,
        field: Option<&str>,
        message: &str,
    ) -> Result<T, Rejection> {
        Err(self.reject(predicate, field, message))
    }

    /// What a node admits at the end of the line: an escalated node nothing (the
    /// user holds it); a done node only a re-verification (its provenance changes,
    /// its lifecycle does not) and a criterion amendment (which the next
    /// re-verification must prove); a rejected node whose remediation budget is
    /// spent only its escalation.
    pub(super) fn node_open(&self) -> Result<(), Rejection> {
        match (self.state, self.command) {
            (State::Done { .. }, "verify" | "amend-criterion") => Ok(()),
            (State::Done { .. }, _) => self.no(
                "node-open",
                None,
                "the node is done: only a re-verification (or a criterion amendment) is recorded for it",
            ),
            (State::Escalated { .. }, _) => self.no(
                "node-open",
                None,
                "the remediation budget is spent and the node is escalated: the user holds it",
            ),
            (State::Rejected { run }, command)
                if run.remediation_rounds >= run.budget && command != "escalate" =>
            {
                self.no(
                    "budget",
                    None,
                    "the remediation budget is spent: the only transition is an escalation to the user",
                )
            }
            _ => Ok(()),
        }
    }

    /// The spec in `text` fully valid — schema, ids, dependencies and the
    /// criteria's lineage against the draft it declares (`draft`: its text as
    /// read, `None` when absent or unreadable) — and its node at `address`.
    pub(super) fn spec_node(
        &self,
        text: &str,
        draft: Option<&str>,
        address: &[String],
    ) -> Result<(Spec, Node), Rejection> {
        let draft = match (declared_draft(text), draft) {
            (None, _) => Draft::NotDeclared,
            (Some(_), None) => Draft::Unavailable,
            (Some(_), Some(d)) => Draft::Text(d.to_owned()),
        };
        let v = validate_with_draft(text, &draft);
        if let Some(first) = v
            .findings
            .iter()
            .find(|f| f.severity == crate::work::spec::Severity::Error)
        {
            return self.no(
                "spec-valid",
                Some("spec"),
                &format!("the workspec has errors ({})", first.render()),
            );
        }
        let spec = v.spec.ok_or_else(|| {
            self.reject("spec-valid", Some("spec"), "the workspec could not be read")
        })?;
        let node = spec.node(address).cloned().ok_or_else(|| {
            self.reject(
                "node-address",
                Some("node"),
                "no node at this address in the spec",
            )
        })?;
        Ok((spec, node))
    }
}
