//! Policy: which commands may run and which changes may land. What tests must look like
//! (deleted and skipped tests), what decides how tests run and production code that games
//! them are `integrity`'s.
//!
//! Violations are data ([`Issue`]), never errors: they go into the evidence and back to the
//! engine as feedback. This module does not run anything and does not touch files.

pub mod command;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One blocking problem found by a contract rule, a check or a proof step.
///
/// This is the shape handed back to the engine (`{"rule","message","path","line"}`), so the
/// message must say what is wrong and how to correct it, in one or two sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Issue {
    /// Stable rule id, e.g. `contract.prose`, `apply.context-mismatch`, `check.syntax`.
    pub rule: String,
    /// What is wrong and what to do instead.
    pub message: String,
    /// Repository-relative path the issue is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based line number in `path`, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl Issue {
    /// An issue with no location.
    pub fn new(rule: impl Into<String>, message: impl Into<String>) -> Self {
        Issue {
            rule: rule.into(),
            message: message.into(),
            path: None,
            line: None,
        }
    }

    /// Attach a path.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Attach a 1-based line.
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }
}
