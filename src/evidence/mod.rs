//! The evidence model: everything efix ran and recorded during a run, versioned, with a JSON
//! Schema. The PR body, `evidence.md` and `efix verify` are rendered or derived from it alone;
//! nothing the model says is stored as a result, only as its explanation.
//!
//! This module records and renders; it runs nothing.

mod candidate;
mod check;
mod model;
mod render;
mod render_candidates;
mod render_engine;
mod render_scope;
mod sandbox;
mod text;

pub use candidate::{CandidateRecord, CandidateVerdict};
pub use check::{CheckRecord, Weakness};
pub use model::*;
pub use render::{render_evidence_md, render_pr_body, render_pr_title};
pub use text::duration as duration_text;

/// Pretty JSON of a generated schema, with a trailing newline (the committed form).
pub fn pretty_schema(schema: schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON Schema of `evidence.json`.
pub fn schema_json() -> String {
    pretty_schema(schemars::schema_for!(Evidence))
}
