//! The guard helpers every command's decision shares: naming a rejection after
//! the command and the state, the open-node guard, and reading the node from the
//! spec text the command carries.

use super::super::{State, NAME};
use crate::work::spec::{validate, Node, Spec};
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

    /// Every command is refused once the node is done or escalated.
    pub(super) fn node_open(&self) -> Result<(), Rejection> {
        match self.state {
            State::Done { .. } => self.no("node-open", None, "the node is done"),
            State::Escalated { .. } => self.no(
                "node-open",
                None,
                "the remediation budget is spent and the node is escalated: the user holds it",
            ),
            _ => Ok(()),
        }
    }

    /// The valid spec in `text` and its node at `address`.
    pub(super) fn spec_node(
        &self,
        text: &str,
        address: &[String],
    ) -> Result<(Spec, Node), Rejection> {
        let v = validate(text);
        if !v.valid() {
            let first = v.findings.first().map(|f| f.render()).unwrap_or_default();
            return self.no(
                "spec-valid",
                Some("spec"),
                &format!("the workspec has errors ({first})"),
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
