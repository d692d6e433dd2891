//! Asking the engine for a fix: the fix request (failure, hypothesis, numbered excerpts,
//! feedback from earlier rounds) and the call itself, or the answer a resumed run already
//! paid for. Every call is recorded.

use std::collections::BTreeMap;

use crate::engine::{Engine, FixRequest, FixResponse};
use crate::evidence::{CallKind, EngineCall};
use crate::policy::Issue;

use super::ctx::Ctx;
use super::localize;

/// Issues of earlier rounds sent back at most (the newest are kept).
const MAX_FEEDBACK_ISSUES: usize = 20;

/// The engine's answer for this call: from the checkpoint when a resumed run already paid
/// for it, else from the engine. Records the call.
pub(crate) fn answer(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: usize,
    contract_feedback: &[Issue],
) -> Result<FixResponse, String> {
    let request = fix_request(ctx, number, call_index, contract_feedback);
    let prompt_bytes = request.prompt.len() as u64;
    if let Some(recorded) = ctx.checkpoint.fix_answers.get(call_index).cloned() {
        ctx.evidence.engine.calls.push(EngineCall {
            kind: CallKind::Fix,
            round: Some(number),
            prompt_bytes,
            usage: None,
            reused: true,
            error: None,
        });
        return Ok(recorded);
    }
    match engine.fix(&request) {
        Ok(reply) => {
            ctx.evidence.engine.calls.push(EngineCall {
                kind: CallKind::Fix,
                round: Some(number),
                prompt_bytes,
                usage: reply.usage,
                reused: false,
                error: None,
            });
            ctx.checkpoint.fix_answers.push(reply.response.clone());
            Ok(reply.response)
        }
        Err(err) => {
            ctx.evidence.engine.calls.push(EngineCall {
                kind: CallKind::Fix,
                round: Some(number),
                prompt_bytes,
                usage: None,
                reused: false,
                error: Some(err.to_string()),
            });
            Err(err.to_string())
        }
    }
}

fn fix_request(ctx: &Ctx<'_>, number: u32, call_index: usize, contract: &[Issue]) -> FixRequest {
    let localization = ctx.evidence.localization.clone();
    let excerpts = localization
        .as_ref()
        .map(|l| localize::excerpts(ctx, l))
        .unwrap_or_default();
    let hypothesis = localization
        .as_ref()
        .and_then(|l| l.hypothesis.clone())
        .unwrap_or_default();
    let mut feedback: Vec<Issue> = ctx
        .evidence
        .rounds
        .iter()
        .flat_map(|r| r.issues.iter().cloned())
        .collect();
    feedback.extend(contract.iter().cloned());
    let skip = feedback.len().saturating_sub(MAX_FEEDBACK_ISSUES);
    let feedback: Vec<Issue> = feedback.into_iter().skip(skip).collect();
    let failure = localize::failure_text(ctx);
    let feedback_text = if feedback.is_empty() {
        String::new()
    } else {
        let items: Vec<String> = feedback
            .iter()
            .map(|i| {
                let at = match (&i.path, i.line) {
                    (Some(p), Some(l)) => format!(" ({p}:{l})"),
                    (Some(p), None) => format!(" ({p})"),
                    _ => String::new(),
                };
                format!("- [{}]{at} {}", i.rule, i.message)
            })
            .collect();
        format!(
            "Earlier answers were not accepted. Fix these problems:\n{}",
            items.join("\n")
        )
    };
    let excerpt_text: String = excerpts
        .iter()
        .map(|e| {
            format!(
                "--- {}{}\n{}\n",
                e.path,
                if e.truncated { " (cut)" } else { "" },
                e.numbered
            )
        })
        .collect();
    let prompt = crate::prompt::render(
        &ctx.template(false),
        &BTreeMap::from([
            ("round", number.to_string()),
            ("command", ctx.command.clone()),
            ("failure", failure.clone()),
            (
                "hypothesis",
                if hypothesis.is_empty() {
                    "(none)".to_owned()
                } else {
                    hypothesis.clone()
                },
            ),
            ("excerpts", excerpt_text),
            ("feedback", feedback_text),
        ]),
    );
    FixRequest {
        round: number,
        call_index,
        command: ctx.command.clone(),
        failure,
        hypothesis,
        excerpts,
        feedback,
        prompt,
    }
}
