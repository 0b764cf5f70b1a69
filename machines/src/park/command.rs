//! The park machine's commands, each carrying the exact input document it is
//! decided on, so `journal audit` re-runs the whole evaluation.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::observation::{self, Observation};
use super::state::{AttemptId, EpisodeId, IntentId};
use crate::evidence::wire::InputError;
use crate::Names;

/// A park command, carrying the exact input document it was decided on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Names)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Command {
    /// `prepare-attempt` (recorded only when it hands out a fresh attempt).
    PrepareAttempt { input: Value },
    /// `evaluate` with journal identity.
    Evaluate {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        observation: Observed,
    },
    /// `validate-receipt` with journal identity, on the exact receipt bytes.
    ValidateReceipt {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        receipt_bytes: String,
    },
    /// `confirm-readback` with journal identity.
    ConfirmReadback {
        episode_id: EpisodeId,
        intent_id: IntentId,
        attempt_id: AttemptId,
        input: Value,
    },
}

/// The command's name as rejections and the journal spell it.
pub(super) fn command_name(command: &Command) -> &'static str {
    command.variant_name()
}

/// An `evaluate` command's observation document, and what it parses to when
/// the caller parsed it already: the CLI parses the document to answer and to
/// refuse bad input before it opens the journal, and `decide` then uses that
/// parse instead of making a second (a tenth of a durable transition's
/// instructions). The two cannot disagree: the parse is made here, from this
/// document, and neither half can be replaced. Serialized (recorded, hashed,
/// re-decided) it is the document alone, byte for byte as before; read back
/// (`journal audit`, `cairn exec`) it is unparsed, and `decide` parses it.
#[derive(Debug, Clone)]
pub struct Observed {
    document: Value,
    parsed: Option<Arc<Observation>>,
}

impl Observed {
    /// `document`, parsed.
    pub fn parse(document: Value) -> Result<Self, InputError> {
        let parsed = observation::parse(&document)?;
        Ok(Observed {
            document,
            parsed: Some(Arc::new(parsed)),
        })
    }

    /// `document` as given; `decide` parses it.
    pub fn unparsed(document: Value) -> Self {
        Observed {
            document,
            parsed: None,
        }
    }

    /// The document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// What the document parses to, when [`Observed::parse`] made it.
    pub fn parsed(&self) -> Option<Arc<Observation>> {
        self.parsed.clone()
    }

    /// What the document parses to: the parse made already, or one made now.
    pub(crate) fn observation(&self) -> Result<Arc<Observation>, InputError> {
        match &self.parsed {
            Some(p) => Ok(Arc::clone(p)),
            None => observation::parse(&self.document).map(Arc::new),
        }
    }
}

/// Equal when the documents are: the parse follows from the document.
impl PartialEq for Observed {
    fn eq(&self, other: &Self) -> bool {
        self.document == other.document
    }
}

impl Serialize for Observed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Observed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Observed::unparsed)
    }
}
