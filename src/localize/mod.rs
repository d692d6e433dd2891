//! Deterministic localization: paths and line numbers in failure output, failing test names
//! mapped to files, identifiers searched in tracked files, ranked into candidates.
//!
//! The engine's hypothesis is merged later by the pipeline; this module never asks a model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A ranked candidate file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Repository-relative path of a tracked file.
    pub path: String,
    pub score: f64,
    /// Lines named in the failure output, 1-based.
    pub lines: Vec<u64>,
    /// Why the file is a candidate, e.g. `rust-panic at src/lib.rs:12`.
    pub reasons: Vec<String>,
}

/// Rank tracked files from a failure's output.
pub fn localize(
    repo_root: &std::path::Path,
    tracked_files: &[String],
    output: &str,
    failing_tests: &[String],
) -> Vec<Candidate> {
    let _ = (repo_root, tracked_files, output, failing_tests);
    todo!("localize helper implements this")
}
