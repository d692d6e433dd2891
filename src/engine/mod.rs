//! Engines: whatever proposes a root-cause plan and a patch. The [`Engine`] trait is the seam
//! the OpenAI-compatible HTTP engine and the ACP agent engine implement; [`replay`] serves
//! recorded answers for tests, the demo and reproducing a run.
//!
//! An engine only *proposes*: its `output` goes through the same contract, parse, checks and
//! apply path whatever the transport, and nothing it says is ever reported as a result.

pub mod replay;
mod wire;

pub use wire::{FileJustification, FixResponse, PlanResponse};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::policy::Issue;

/// Errors that stop an engine from answering at all.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The replay file could not be read; the user must fix the path.
    #[error("read replay file {path}")]
    ReplayRead {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The replay file is not valid; the message names the line and the key.
    #[error("replay file {path}: {message}")]
    ReplayInvalid { path: String, message: String },
    /// The replay file has no more fix answers; the run stops with what it has.
    #[error("the replay file has no fix answer number {number} (it holds {available})")]
    ReplayExhausted { number: usize, available: usize },
    /// The engine is not available in this build or configuration.
    #[error("engine {0} is not available: {1}")]
    Unavailable(String, String),
}

/// Token usage of one engine call, when the transport reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// An answer plus what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply<T> {
    pub response: T,
    pub usage: Option<Usage>,
}

/// What the engine is, for the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineInfo {
    /// `replay`, `openai` or `acp`.
    pub kind: String,
    /// Model name, replay file or agent command.
    pub model: String,
}

/// A file's numbered contents shown to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileExcerpt {
    pub path: String,
    /// `N| line` numbered text, possibly cut to the byte budget.
    pub numbered: String,
    pub truncated: bool,
}

/// Everything the engine gets to form a hypothesis.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// The reproduction command as the user wrote it.
    pub command: String,
    /// The failure: exit status and the relevant tail of the output (already redacted).
    pub failure: String,
    /// Deterministically localized candidate files, best first, with reasons.
    pub candidates: Vec<String>,
    /// Tracked files of the repository (bounded list).
    pub files: Vec<String>,
    /// The rendered prompt (template plus the fields above).
    pub prompt: String,
}

/// Everything the engine gets to propose a patch.
#[derive(Debug, Clone, PartialEq)]
pub struct FixRequest {
    /// 1-based round number.
    pub round: u32,
    /// 0-based index of this fix call over the whole run (contract retries included).
    pub call_index: usize,
    pub command: String,
    pub failure: String,
    pub hypothesis: String,
    pub excerpts: Vec<FileExcerpt>,
    /// Blocking issues of earlier attempts, oldest first.
    pub feedback: Vec<Issue>,
    /// The rendered prompt.
    pub prompt: String,
}

/// The seam every engine implements. Calls are blocking; network engines run their own
/// runtime inside.
pub trait Engine {
    /// What this engine is, recorded in the evidence.
    fn info(&self) -> EngineInfo;
    /// Ask for a root-cause hypothesis and focus files.
    fn plan(&mut self, request: &PlanRequest) -> Result<Reply<PlanResponse>, EngineError>;
    /// Ask for a fix under the patch contract.
    fn fix(&mut self, request: &FixRequest) -> Result<Reply<FixResponse>, EngineError>;
}
