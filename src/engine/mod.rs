//! Engines: whatever proposes a root-cause plan and a patch. The [`Engine`] trait is the seam
//! the OpenAI-compatible HTTP engine ([`openai`]) and the ACP agent engine ([`acp`])
//! implement; [`replay`] serves recorded answers for tests, the demo and reproducing a run.
//!
//! An engine only *proposes*: its answer goes through the same contract, parse, checks and
//! apply path whatever the transport, and nothing it says is ever reported as a result. The
//! engine does not decide budgets, scan for secrets or cap prompts: the pipeline does that
//! before every call, so every engine is held to the same rules.
//!
//! Layout: `model` (the trait, requests, replies and errors), `wire` (the answer format),
//! `schema` (its strict JSON Schemas for structured output), one folder per transport.

pub mod acp;
mod model;
pub mod openai;
pub mod replay;
mod schema;
mod wire;

pub use model::{
    AnswerStyle, CallKind, CallMeta, CallOutcome, Engine, EngineError, EngineInfo, FixRequest,
    Permission, PermissionAnswer, PlanRequest, Prompt, Reply, ToolCall, Usage,
};
pub use schema::{FIX_SCHEMA_NAME, PLAN_SCHEMA_NAME, fix_schema, plan_schema};
pub use wire::{Edit, FileJustification, FixResponse, PlanResponse};
