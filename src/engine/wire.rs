//! The engine wire format of ARCHITECTURE §4: what an engine returns, whatever the transport.
//! Field names are the wire names (snake_case), shared by replay files and structured output.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A plan response (`efix_plan`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanResponse {
    /// The model's root-cause hypothesis, in its own words.
    pub hypothesis: String,
    /// Repository-relative files the model wants to look at or change.
    #[serde(default)]
    pub focus_files: Vec<String>,
}

/// Why one changed file is part of the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileJustification {
    pub file: String,
    pub reason: String,
}

/// A fix response (`efix_fix`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixResponse {
    /// The raw text exactly as a model would emit it under the patch contract.
    pub output: String,
    #[serde(default)]
    pub root_cause: String,
    #[serde(default)]
    pub fix_summary: String,
    #[serde(default)]
    pub tests_summary: String,
    #[serde(default)]
    pub risk_rollback: String,
    #[serde(default)]
    pub file_justifications: Vec<FileJustification>,
}
