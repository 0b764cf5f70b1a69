//! Findings: a stable code, a severity and a path into the document
//! (`$.work[0].depends_on`), and the path helpers every check uses.

use serde::{Deserialize, Serialize};

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// `error` stops; `warning` is a decision to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec is invalid.
    Error,
    /// A lint.
    Warning,
}

/// A validation finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The stable code.
    pub code: String,
    /// error | warning.
    pub severity: Severity,
    /// The path into the document.
    pub path: Vec<Seg>,
    /// What is wrong.
    pub message: String,
    /// The authority's acceptance of this warning (`advisory_dispositions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disposition: Option<super::root::Disposition>,
}

impl Finding {
    /// An error.
    pub fn error(code: &str, path: Vec<Seg>, message: impl Into<String>) -> Self {
        Finding {
            code: code.into(),
            severity: Severity::Error,
            path,
            message: message.into(),
            disposition: None,
        }
    }
    /// A warning.
    pub fn warning(code: &str, path: Vec<Seg>, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(code, path, message)
        }
    }
    /// `error dependency-cycle at $.work[0].depends_on`.
    pub fn render(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{sev} {} at {}", self.code, render_path(&self.path))
    }
}

/// `$.work[0].depends_on`.
pub fn render_path(path: &[Seg]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// `path` extended by one step.
pub(super) fn with(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

/// `path` extended by the object key `k`.
pub(super) fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    with(path, Seg::Key(k.into()))
}
