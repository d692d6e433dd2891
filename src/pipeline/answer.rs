//! Asking the engine for a fix: the fix prompt (the failure, the hypothesis, numbered
//! excerpts, and the feedback on the last attempt), fitted to `budget.max-input-bytes` in the
//! answer style the engine wants, then the call through the gate in `call`.

use std::collections::BTreeMap;

use crate::engine::{AnswerStyle, CallKind, Engine, FixResponse, Prompt};
use crate::policy::Issue;
use crate::prompt::{self, Cut, Section, Templates};

use super::PipelineError;
use super::call::{self, Built, Failure};
use super::ctx::Ctx;
use super::localize;

/// Issues of the last attempt sent back at most.
const MAX_FEEDBACK_ISSUES: usize = 20;
/// Bytes of the previous attempt's diff shown with the feedback at most.
const PREVIOUS_DIFF_BYTES: usize = 16 * 1024;

/// The engine's answer for this call (from the checkpoint when a resumed run already paid
/// for it). `contract_feedback` holds the issues of an answer of this round that broke the
/// contract; without it, the feedback is the last round's blocking issues.
pub(crate) fn answer(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: usize,
    contract_feedback: &[Issue],
) -> Result<Result<FixResponse, Failure>, PipelineError> {
    let templates = Templates::load(&ctx.config.prompt_overrides)?;
    let style = engine.style(CallKind::Fix);
    let prompt = fix_prompt(ctx, &templates, style, number, contract_feedback);
    let text_prompt = (style == AnswerStyle::Structured).then(|| {
        fix_prompt(
            ctx,
            &templates,
            AnswerStyle::Text,
            number,
            contract_feedback,
        )
    });
    let built = Built {
        cuts: prompt.1,
        prompt: prompt.0,
        text_prompt: text_prompt.map(|(p, _)| p),
    };
    call::fix(ctx, engine, number, call_index, built)
}

/// The fix prompt in `style` and what fitting it cut.
fn fix_prompt(
    ctx: &Ctx<'_>,
    templates: &Templates,
    style: AnswerStyle,
    number: u32,
    contract: &[Issue],
) -> (Prompt, Vec<prompt::CutRecord>) {
    let localization = ctx.evidence.localization.clone();
    let excerpts = localization
        .as_ref()
        .map(|l| localize::excerpts(ctx, l))
        .unwrap_or_default();
    let hypothesis = localization
        .as_ref()
        .and_then(|l| l.hypothesis.clone())
        .unwrap_or_default();
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
    let sections = vec![
        Section::fixed("round", number.to_string()),
        Section::fixed("command", ctx.command.clone()),
        Section::fixed("feedback", feedback(ctx, templates, contract)),
        Section::fixed(
            "answer_format",
            prompt::answer_format(CallKind::Fix, style, ctx.config.fix_format),
        ),
        Section::data(
            "hypothesis",
            "hypothesis (a model's words)",
            hypothesis,
            Cut::Head,
        ),
        Section::data(
            "excerpts",
            "numbered file contents from the repository",
            excerpt_text,
            Cut::Head,
        ),
        Section::data(
            "failure",
            "the failing command's output",
            localize::failure_text(ctx),
            Cut::Tail,
        ),
    ];
    let system = templates.system.clone();
    let fitted = prompt::fit(
        &templates.fix,
        sections,
        system.len(),
        ctx.config.engine_budget.max_input_bytes,
    );
    (
        Prompt {
            system,
            user: fitted.text,
        },
        fitted.cuts,
    )
}

/// The feedback section: the contract issues of this round's last answer (malformed-retry),
/// or the blocking issues of the last round with its change (feedback); empty in round one.
fn feedback(ctx: &Ctx<'_>, templates: &Templates, contract: &[Issue]) -> String {
    if !contract.is_empty() {
        return prompt::render(
            &templates.malformed_retry,
            &BTreeMap::from([("issues", findings(contract))]),
        );
    }
    let Some(last) = ctx.evidence.rounds.last() else {
        return String::new();
    };
    if last.issues.is_empty() {
        return String::new();
    }
    let previous = last
        .attempts
        .iter()
        .rev()
        .map(|a| a.patch.diff.as_str())
        .find(|diff| !diff.is_empty())
        .map(|diff| {
            let mut cut = diff.len().min(PREVIOUS_DIFF_BYTES);
            while !diff.is_char_boundary(cut) {
                cut -= 1;
            }
            prompt::data_block("your previous change, as a diff", &diff[..cut])
        })
        .unwrap_or_else(|| "(it could not be applied)".to_owned());
    prompt::render(
        &templates.feedback,
        &BTreeMap::from([("issues", findings(&last.issues)), ("previous", previous)]),
    )
}

/// The issues as a data block: their messages quote command output, which is data.
fn findings(issues: &[Issue]) -> String {
    let list = issues
        .iter()
        .take(MAX_FEEDBACK_ISSUES)
        .map(|i| {
            let at = match (&i.path, i.line) {
                (Some(p), Some(l)) => format!(" ({p}:{l})"),
                (Some(p), None) => format!(" ({p})"),
                _ => String::new(),
            };
            format!("- [{}]{at} {}", i.rule, i.message)
        })
        .collect::<Vec<_>>()
        .join("\n");
    prompt::data_block("efix's findings", &list)
}
