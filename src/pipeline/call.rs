//! The gate every engine call passes, and its record. Before a call: the budgets
//! (`budget`), then the secrets in the exact prompt (`secrets`). The call itself, with the
//! run's deadline. After it: the tree check for engines that can write (`tree`), the
//! placeholders put back into the change, and one [`EngineCall`] in the evidence with usage,
//! cost, latency, retries, model and fallback. A resumed run gets the answers it already paid
//! for from its checkpoint instead.
//!
//! Logs carry sizes, counts and durations only, never prompt or answer text.

use std::time::Instant;

use crate::config::SecretsInPrompt;
use crate::engine::{
    CallKind, CallMeta, CallOutcome, Engine, EngineError, FixRequest, FixResponse, PlanRequest,
    PlanResponse, Prompt,
};
use crate::evidence::{EngineCall, SecretsFound};
use crate::policy::Issue;
use crate::prompt::CutRecord;

use super::PipelineError;
use super::budget::{self, Spent};
use super::ctx::Ctx;
use super::secrets::{self, Tokens};
use super::tree;

/// A request's prompts, rendered and fitted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Built {
    /// In the engine's answer style.
    pub prompt: Prompt,
    /// The text-answer variant, for an engine that falls back from structured output.
    pub text_prompt: Option<Prompt>,
    /// What fitting `budget.max-input-bytes` cut.
    pub cuts: Vec<CutRecord>,
}

/// Why a call gave no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The engine failed, refused or answered nothing; the round ends.
    Engine(String),
    /// The server refused the request for good (a wrong key, model or URL): no later call
    /// can succeed, so the run ends.
    Fatal(String),
    /// The answer cannot be used as it came (cut off, empty); it is fed back like an answer
    /// that broke the contract.
    Contract(Issue),
    /// A budget is spent; the run stops.
    Budget(Spent),
    /// The prompt holds secrets and `security.secrets-in-prompt` is `deny`; the run stops.
    Secrets(String),
}

/// Ask for the plan (or take it from the checkpoint).
pub(crate) fn plan(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    mut built: Built,
) -> Result<Result<PlanResponse, Failure>, PipelineError> {
    let mut call = EngineCall::new(CallKind::Plan, None, built.prompt.len() as u64);
    call.cut = std::mem::take(&mut built.cuts);
    if let Some(plan) = ctx.checkpoint.plan.clone() {
        call.reused = true;
        ctx.evidence.engine.calls.push(call);
        return Ok(Ok(plan));
    }
    if let Err(failure) = gate(ctx, &mut built, &mut call) {
        ctx.evidence.engine.calls.push(call);
        return Ok(Err(failure));
    }
    let request = PlanRequest {
        prompt: built.prompt,
        text_prompt: built.text_prompt,
        deadline: ctx.deadline,
    };
    let started = Instant::now();
    let result = engine.plan(&request);
    let unrequested = if engine.writes_tree() {
        tree::after_call(ctx, &[])?.unrequested
    } else {
        Vec::new()
    };
    call.unrequested_writes = unrequested;
    let answer = match result {
        Ok(reply) => {
            record(ctx, &mut call, &reply.meta, started);
            usable(&reply.meta).map(|()| reply.response)
        }
        Err(err) => Err(failed(&mut call, started, &err)),
    };
    log(&call);
    if let Ok(plan) = &answer {
        ctx.checkpoint.plan = Some(plan.clone());
    }
    ctx.evidence.engine.calls.push(call);
    Ok(answer)
}

/// Ask for a fix (or take it from the checkpoint); the returned answer has its placeholders
/// put back and, for an agent that edited files, its change in `output`.
pub(crate) fn fix(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    round: u32,
    call_index: usize,
    mut built: Built,
) -> Result<Result<FixResponse, Failure>, PipelineError> {
    let mut call = EngineCall::new(CallKind::Fix, Some(round), built.prompt.len() as u64);
    call.cut = std::mem::take(&mut built.cuts);
    if let Some(recorded) = ctx.checkpoint.fix_answers.get(call_index).cloned() {
        call.reused = true;
        // The same prompt gets the same placeholders, so the recorded answer's come back.
        let tokens = match ctx.config.secrets_in_prompt {
            SecretsInPrompt::Tokenize => tokenize(ctx, &mut built).unwrap_or_default(),
            _ => Tokens::default(),
        };
        ctx.evidence.engine.calls.push(call);
        let mut response = recorded;
        tokens.restore(&mut response);
        return Ok(Ok(response));
    }
    let tokens = match gate(ctx, &mut built, &mut call) {
        Ok(tokens) => tokens,
        Err(failure) => {
            ctx.evidence.engine.calls.push(call);
            return Ok(Err(failure));
        }
    };
    let request = FixRequest {
        round,
        call_index,
        prompt: built.prompt,
        text_prompt: built.text_prompt,
        deadline: ctx.deadline,
    };
    let started = Instant::now();
    let result = engine.fix(&request);
    let allowed: &[String] = match &result {
        Ok(reply) if reply.meta.edited_tree => &reply.meta.allowed_paths,
        _ => &[],
    };
    let change = if engine.writes_tree() {
        tree::after_call(ctx, allowed)?
    } else {
        tree::TreeChange::default()
    };
    call.unrequested_writes = change.unrequested;
    let answer = match result {
        Ok(mut reply) => {
            record(ctx, &mut call, &reply.meta, started);
            call.edited_tree = reply.meta.edited_tree;
            if reply.meta.edited_tree && !change.proposal.is_empty() {
                // The agent's change is the answer; its text only explains it.
                reply.response.output = change.proposal;
                reply.response.edits.clear();
            }
            usable(&reply.meta).map(|()| reply.response)
        }
        Err(err) => Err(failed(&mut call, started, &err)),
    };
    log(&call);
    ctx.evidence.engine.calls.push(call);
    Ok(answer.map(|response| {
        ctx.checkpoint.fix_answers.push(response.clone());
        let mut response = response;
        tokens.restore(&mut response);
        response
    }))
}

/// The budgets, then the secrets; on refusal the call is recorded as skipped.
fn gate(ctx: &Ctx<'_>, built: &mut Built, call: &mut EngineCall) -> Result<Tokens, Failure> {
    if let Err(spent) = budget::check(&ctx.config.engine_budget, &ctx.evidence.engine) {
        call.outcome = CallOutcome::SkippedBudget;
        call.error = Some(spent.reason.clone());
        return Err(Failure::Budget(spent));
    }
    let prompts: Vec<&Prompt> = std::iter::once(&built.prompt)
        .chain(built.text_prompt.as_ref())
        .collect();
    let fixtures = fixtures(ctx);
    let found = secrets::scan(&ctx.config.runner.secrets, &fixtures, &prompts).map_err(|err| {
        let message = format!("the prompt could not be scanned for secrets: {err}");
        call.outcome = CallOutcome::Failed;
        call.error = Some(message.clone());
        Failure::Engine(message)
    })?;
    if found.detections.is_empty() {
        return Ok(Tokens::default());
    }
    let action = ctx.config.secrets_in_prompt;
    call.secrets = Some(SecretsFound {
        count: found.count,
        rules: found.rules.clone(),
        action,
        detections: found.detections.clone(),
    });
    // Only placeholders (test data): recorded, and sent as they are.
    if found.count == 0 {
        return Ok(Tokens::default());
    }
    match action {
        SecretsInPrompt::Allow => Ok(Tokens::default()),
        SecretsInPrompt::Deny => {
            let reason = format!(
                "the {} prompt holds {} secret{} ({}); the call was not made because \
                 security.secrets-in-prompt is deny (use tokenize to send placeholders instead)",
                kind_name(call.kind),
                found.count,
                if found.count == 1 { "" } else { "s" },
                found.rules.join(", ")
            );
            call.outcome = CallOutcome::SkippedSecrets;
            call.error = Some(reason.clone());
            Err(Failure::Secrets(reason))
        }
        SecretsInPrompt::Tokenize => tokenize(ctx, built).map_err(|err| {
            let message = format!("the prompt's secrets could not be replaced: {err}");
            call.outcome = CallOutcome::Failed;
            call.error = Some(message.clone());
            Failure::Engine(message)
        }),
    }
}

fn tokenize(ctx: &Ctx<'_>, built: &mut Built) -> Result<Tokens, crate::runner::RunnerError> {
    let mut prompts: Vec<&mut Prompt> = std::iter::once(&mut built.prompt)
        .chain(built.text_prompt.as_mut())
        .collect();
    secrets::tokenize(&ctx.config.runner.secrets, &fixtures(ctx), &mut prompts)
}

/// The repository's tracked test files, whose credential-shaped data is test data in every
/// round's prompt (read only when a prompt holds such a match).
fn fixtures(ctx: &Ctx<'_>) -> secrets::Fixtures {
    secrets::Fixtures::new(&ctx.root, &ctx.snapshot.tracked_paths())
}

/// Copy what the engine reported into the record, with the cost.
fn record(ctx: &Ctx<'_>, call: &mut EngineCall, meta: &CallMeta, started: Instant) {
    call.latency_ms = millis(started);
    call.usage = meta.usage;
    call.model = meta.model.clone();
    call.retries = meta.retries;
    call.fallback = meta.fallback.clone();
    call.outcome = meta.outcome;
    call.detail = meta.detail.clone();
    call.permissions = meta.permissions.clone();
    call.sandbox = meta.sandbox.as_deref().cloned();
    call.tool_calls = meta.tool_calls.clone();
    call.notes = meta.notes.clone();
    if meta.error.is_some() {
        call.error = meta.error.clone();
    }
    // What the engine says it cost comes first; the configured prices only fill in.
    call.cost_usd = meta.cost_usd.or_else(|| {
        budget::cost(
            &ctx.config.engine_budget,
            &ctx.evidence.engine.info.model,
            meta.model.as_deref(),
            meta.usage,
        )
    });
}

fn failed(call: &mut EngineCall, started: Instant, err: &EngineError) -> Failure {
    let message = err.to_string();
    call.latency_ms = millis(started);
    call.outcome = CallOutcome::Failed;
    call.error = Some(message.clone());
    match err {
        EngineError::Rejected { .. }
        | EngineError::MissingKey { .. }
        | EngineError::Setup { .. } => Failure::Fatal(message),
        _ => Failure::Engine(message),
    }
}

/// Whether an answer with this outcome can be used.
fn usable(meta: &CallMeta) -> Result<(), Failure> {
    let detail = meta
        .detail
        .as_deref()
        .map(|d| format!(": {d}"))
        .unwrap_or_default();
    match meta.outcome {
        CallOutcome::Answered => Ok(()),
        CallOutcome::Refused => Err(Failure::Engine(format!("the model refused{detail}"))),
        CallOutcome::Empty => Err(Failure::Contract(Issue::new(
            "contract.empty",
            "the answer was empty; answer with the JSON object the format describes",
        ))),
        CallOutcome::Truncated => Err(Failure::Contract(Issue::new(
            "contract.truncated",
            "the answer was cut off at the model's output limit; send a smaller change with a \
             shorter explanation",
        ))),
        CallOutcome::Failed => Err(match (&meta.error, meta.fatal) {
            // An engine that failed but kept its record says why in `error`.
            (Some(error), true) => Failure::Fatal(error.clone()),
            (Some(error), false) => Failure::Engine(error.clone()),
            (None, _) => Failure::Engine(format!("the engine gave no answer{detail}")),
        }),
        CallOutcome::SkippedBudget | CallOutcome::SkippedSecrets => Err(Failure::Engine(format!(
            "the engine gave no answer{detail}"
        ))),
    }
}

fn log(call: &EngineCall) {
    let usage = call.usage.unwrap_or_default();
    tracing::info!(
        kind = kind_name(call.kind),
        prompt_bytes = call.prompt_bytes,
        latency_ms = call.latency_ms,
        retries = call.retries,
        prompt_tokens = usage.prompt_tokens,
        completion_tokens = usage.completion_tokens,
        outcome = ?call.outcome,
        "engine call"
    );
}

fn kind_name(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Plan => "plan",
        CallKind::Fix => "fix",
    }
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
