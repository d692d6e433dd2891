//! The engine seam: the [`Engine`] trait, what a call sends ([`PlanRequest`], [`FixRequest`])
//! and gets back ([`Reply`] with its [`CallMeta`]), and [`EngineError`].
//!
//! It defines shapes only; the transports live in their own modules.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire::{FixResponse, PlanResponse};

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
    /// The variable that should hold the API key is unset or empty; the user sets it, or sets
    /// `openai.api-key-env: ""` for a server that needs no key.
    #[error(
        "read the API key: the environment variable {variable} is not set; set it, or set \
         `openai.api-key-env: \"\"` for a server that needs no key (Ollama, vLLM, llama.cpp)"
    )]
    MissingKey { variable: String },
    /// The engine could not be set up (HTTP client, runtime); the message says why.
    #[error("set up the {engine} engine: {message}")]
    Setup { engine: String, message: String },
    /// The server refused the request for good (400, 401, 403, 404); retrying cannot help.
    /// The message is the server's (redacted) and `hint` says what to check.
    #[error("the server answered HTTP {status}: {message}; {hint}")]
    Rejected {
        status: u16,
        message: String,
        hint: String,
    },
    /// The server stayed unreachable or overloaded through every retry the budget allowed.
    #[error("reach the server after {attempts} attempt{}: {message}", plural(*.attempts))]
    Unreachable { attempts: u32, message: String },
    /// The server's answer is not a chat completion efix can read.
    #[error("read the server's answer: {message}")]
    BadResponse { message: String },
    /// The agent failed: it could not start, broke the protocol, exited or timed out. The
    /// message ends with the (redacted) tail of its stderr when it wrote any.
    #[error("talk to the ACP agent: {message}")]
    Agent { message: String },
}

fn plural(count: u32) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Token usage of one engine call, when the transport reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the server served from its cache (part of `prompt-tokens`).
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// The kind of an engine call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CallKind {
    Plan,
    Fix,
}

/// How an engine call ended, as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CallOutcome {
    /// The engine answered.
    #[default]
    Answered,
    /// The model refused (a `refusal`, or an agent's `refusal` stop reason).
    Refused,
    /// The answer was empty (no choice, no content, no text).
    Empty,
    /// The answer was cut off at the token limit (`finish_reason: length`, `max_tokens`).
    Truncated,
    /// The engine failed; `error` says why.
    Failed,
    /// Not sent: a budget (`budget.*`) was spent.
    SkippedBudget,
    /// Not sent: the prompt held secrets and `security.secrets-in-prompt` is `deny`.
    SkippedSecrets,
}

/// The answer efix gave to an ACP agent's permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionAnswer {
    /// Allowed once (edit mode, a tool call that only edits files inside the repository).
    Allowed,
    /// Rejected with the agent's reject option.
    Rejected,
    /// The agent offered no reject option, so the request was cancelled.
    Cancelled,
}

/// One permission request of an ACP agent and efix's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Permission {
    /// The tool call's title, as the agent wrote it.
    pub title: String,
    /// The tool call's kind (`edit`, `execute`, `fetch`, ...; `other` when not given).
    pub kind: String,
    /// Paths the tool call names (locations, diffs, path arguments).
    pub paths: Vec<String>,
    pub answer: PermissionAnswer,
    /// Why efix answered so.
    pub reason: String,
}

/// One tool call an ACP agent reported (`tool_call` and its updates), whether or not it
/// asked permission for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ToolCall {
    /// The tool call's title, as the agent wrote it.
    pub title: String,
    /// Its kind (`edit`, `execute`, `fetch`, ...; `other` when not given).
    pub kind: String,
    /// Its last reported status (`pending`, `in_progress`, `completed`, `failed`).
    pub status: String,
    /// Paths it names, repository-relative, or absolute when outside the repository.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Whether the agent asked efix's permission for it (`session/request_permission`).
    pub asked: bool,
    /// It ran (its status went past `pending`) without asking: the agent's own settings
    /// allowed it.
    pub unasked_run: bool,
}

/// What a call cost and how it went, besides the answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallMeta {
    pub usage: Option<Usage>,
    /// The model the server says answered.
    pub model: Option<String>,
    /// Requests repeated after a transient failure.
    pub retries: u32,
    /// Why the engine dropped structured output and asked for plain text, when it did.
    pub fallback: Option<String>,
    pub outcome: CallOutcome,
    /// The refusal text or the reason an answer is empty or cut, when there is one.
    pub detail: Option<String>,
    /// Permission requests of an ACP agent, in order.
    pub permissions: Vec<Permission>,
    /// The agent edited files itself (ACP edit mode): the proposal is the working tree's
    /// change, limited to `allowed_paths`.
    pub edited_tree: bool,
    /// Repository-relative files the agent was allowed to edit.
    pub allowed_paths: Vec<String>,
    /// What confined an agent process the engine started for this call (ACP).
    pub sandbox: Option<Box<crate::runner::SandboxReport>>,
    /// The tool calls an ACP agent reported, in order.
    pub tool_calls: Vec<ToolCall>,
    /// What the engine itself says the call cost in US dollars (an ACP agent's
    /// `usage_update`), which takes precedence over `budget.prices`.
    pub cost_usd: Option<f64>,
    /// Facts about the call a reader needs (the agent's mode, missing usage reports).
    pub notes: Vec<String>,
    /// The call failed after the engine had already collected the rest of this record (an
    /// ACP agent that timed out or broke off): the error, as `EngineError` would say it.
    pub error: Option<String>,
    /// With `error`: no later call can succeed either (a missing key), so the run ends.
    pub fatal: bool,
}

/// An answer plus what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply<T> {
    pub response: T,
    pub meta: CallMeta,
}

impl<T> Reply<T> {
    /// An answer with no metadata (replay).
    pub fn plain(response: T) -> Reply<T> {
        Reply {
            response,
            meta: CallMeta::default(),
        }
    }
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

/// How an engine wants the answer asked for; the pipeline renders the prompt's answer format
/// to match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerStyle {
    /// A JSON object the transport enforces with a schema (structured output).
    Structured,
    /// Text: a JSON object, or for a fix a bare answer under the patch contract.
    Text,
    /// The agent edits the files itself and answers with its explanation only.
    EditFiles,
}

/// One prompt as sent: the system part and the user part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompt {
    pub system: String,
    pub user: String,
}

impl Prompt {
    /// Bytes sent.
    pub fn len(&self) -> usize {
        self.system.len() + self.user.len()
    }

    /// Whether both parts are empty.
    pub fn is_empty(&self) -> bool {
        self.system.is_empty() && self.user.is_empty()
    }
}

/// A request for a root-cause hypothesis and focus files.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// The prompt in the engine's [`AnswerStyle`].
    pub prompt: Prompt,
    /// The same request asking for a text answer, for an engine whose structured output the
    /// server refuses.
    pub text_prompt: Option<Prompt>,
    /// When the run's time budget ends; retries and waits stop there.
    pub deadline: Instant,
}

/// A request for a fix under the patch contract.
#[derive(Debug, Clone, PartialEq)]
pub struct FixRequest {
    /// 1-based round number.
    pub round: u32,
    /// 0-based index of this fix call over the whole run (contract retries included).
    pub call_index: usize,
    /// The prompt in the engine's [`AnswerStyle`].
    pub prompt: Prompt,
    /// The same request asking for a text answer (see [`PlanRequest::text_prompt`]).
    pub text_prompt: Option<Prompt>,
    /// When the run's time budget ends.
    pub deadline: Instant,
}

/// The seam every engine implements. Calls are blocking; network engines run their own
/// runtime inside.
pub trait Engine {
    /// What this engine is, recorded in the evidence.
    fn info(&self) -> EngineInfo;
    /// How this engine wants the next call of `kind` asked (it may change during a run: an
    /// OpenAI engine whose server refused structured output asks for text from then on).
    fn style(&self, _kind: CallKind) -> AnswerStyle {
        AnswerStyle::Text
    }
    /// Whether the engine runs something that can write to the working tree (an ACP agent),
    /// so the pipeline must look for changes after every call.
    fn writes_tree(&self) -> bool {
        false
    }
    /// Ask for a root-cause hypothesis and focus files.
    fn plan(&mut self, request: &PlanRequest) -> Result<Reply<PlanResponse>, EngineError>;
    /// Ask for a fix under the patch contract.
    fn fix(&mut self, request: &FixRequest) -> Result<Reply<FixResponse>, EngineError>;
}
