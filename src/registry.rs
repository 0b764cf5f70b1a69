//! The registry of machines one binary serves.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_machines::{DynMachine, Erased, Machine};

use crate::any::{Face, Typed};
use crate::Error;

/// Machines by name. The CLI serves every registered machine: `machines`,
/// `graph`, `state` and `journal audit` work for each.
#[derive(Clone, Default)]
pub struct Registry {
    machines: BTreeMap<&'static str, Arc<dyn DynMachine>>,
    /// Each machine's typed face, for commands given as JSON (`Engine::decide_any`).
    faces: BTreeMap<&'static str, Arc<dyn Face>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The machines shipped with cairn.
    pub fn builtin() -> Self {
        let mut r = Self::new();
        r.register::<cairn_machines::park::Park>();
        r.register::<cairn_machines::pr_loop::PrLoop>();
        r.register::<cairn_machines::ship::Ship>();
        r.register::<cairn_machines::work::node::WorkNode>();
        r.register::<cairn_machines::saga::Saga>();
        r.register::<cairn_machines::build_loop::BuildLoop>();
        r.register::<cairn_machines::claim::Claim>();
        r
    }

    /// Registers `M` (replacing a machine of the same name).
    pub fn register<M: Machine>(&mut self) -> &mut Self {
        self.machines.insert(M::NAME, Arc::new(Erased::<M>::new()));
        self.faces.insert(M::NAME, Arc::new(Typed::<M>::new()));
        self
    }

    /// Every machine registered.
    pub fn machines(&self) -> impl Iterator<Item = &dyn DynMachine> {
        self.machines.values().map(|m| m.as_ref())
    }

    /// The machine named `name`.
    pub fn get(&self, name: &str) -> Option<&dyn DynMachine> {
        self.machines.get(name).map(|m| m.as_ref())
    }

    /// The typed face of the machine named `name`.
    pub(crate) fn face(&self, name: &str) -> Result<&dyn Face, Error> {
        self.faces
            .get(name)
            .map(|f| f.as_ref())
            .ok_or_else(|| Error::UnknownMachine {
                name: name.to_owned(),
            })
    }

    /// Every machine, by name.
    pub fn iter(&self) -> impl Iterator<Item = &dyn DynMachine> {
        self.machines.values().map(|m| m.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::Registry;

    /// A rules version a machine no longer decides by must be declared retired,
    /// or the audit fails every transition recorded under it as undeclared
    /// (found: park v3, work-node v2 and pr-loop v2 were bumped past and never
    /// retired).
    #[test]
    fn every_earlier_rules_version_is_declared_retired() {
        let r = Registry::builtin();
        let mut seen = 0;
        for m in r.machines() {
            let earlier: Vec<u32> = (1..m.rules_version()).collect();
            assert_eq!(m.retired_rules(), earlier.as_slice(), "{}", m.name());
            seen += 1;
        }
        assert_eq!(seen, 7);
    }
}
