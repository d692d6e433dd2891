//! The engine section of the PR body: totals, one table row per engine call (outcome, the
//! model the server reports, usage, latency, retries, prompt size) and the notes under it
//! (fallbacks, prompt cuts, secrets, an agent's permission requests, the files it wrote
//! outside the protocol and the sandbox it ran in, errors).

use std::fmt::Write as _;

use super::model::{CallKind, EngineCall, Evidence};
use super::text::{cell, code_list, duration, one_line};

/// Write the engine section.
pub(super) fn engine(out: &mut String, evidence: &Evidence) {
    let record = &evidence.engine;
    let fix_calls = record
        .calls
        .iter()
        .filter(|c| c.kind == CallKind::Fix)
        .count();
    let tokens = if record.reports_tokens() {
        let t = record.tokens();
        format!(
            "{} prompt ({} cached) + {} completion tokens",
            t.prompt_tokens, t.cached_tokens, t.completion_tokens
        )
    } else {
        "tokens not reported by this engine".to_owned()
    };
    let cost = if record.calls.iter().any(|c| c.cost_usd.is_some()) {
        format!(", ${:.4}", record.cost_usd())
    } else {
        String::new()
    };
    let totals = format!(
        "Engine: {} ({}): {} round{}, {} fix answer{}, {}{cost}",
        record.info.kind,
        record.info.model,
        evidence.rounds.len(),
        if evidence.rounds.len() == 1 { "" } else { "s" },
        fix_calls,
        if fix_calls == 1 { "" } else { "s" },
        tokens
    );
    if record.calls.is_empty() {
        let _ = writeln!(out, "{totals}.\n");
        return;
    }
    let rows: Vec<Vec<String>> = record
        .calls
        .iter()
        .enumerate()
        .map(|(number, call)| {
            let tokens = call.usage.map_or("–".to_owned(), |u| {
                format!(
                    "{} / {} / {}",
                    u.prompt_tokens, u.cached_tokens, u.completion_tokens
                )
            });
            vec![
                format!(
                    "{} {}",
                    number + 1,
                    match call.kind {
                        CallKind::Plan => "plan",
                        CallKind::Fix => "fix",
                    }
                ),
                call.round.map_or("–".to_owned(), |r| r.to_string()),
                call_outcome(call),
                call.model.as_deref().map_or("–".to_owned(), cell),
                tokens,
                if call.reused {
                    "–".to_owned()
                } else {
                    duration(call.latency_ms)
                },
                call.retries.to_string(),
                format!(
                    "{} bytes{}",
                    call.prompt_bytes,
                    if call.cut.is_empty() { "" } else { ", cut" }
                ),
            ]
        })
        .collect();
    let mut body = String::new();
    super::text::table(
        &mut body,
        &[
            "call",
            "round",
            "outcome",
            "model",
            "prompt / cached / completion tokens",
            "latency",
            "retries",
            "prompt",
        ],
        &rows,
    );
    body.push('\n');
    for (number, call) in record.calls.iter().enumerate() {
        call_notes(&mut body, number + 1, call);
    }
    super::text::collapsed(out, &totals, &body);
}

/// How a call ended, for the table.
fn call_outcome(call: &EngineCall) -> String {
    if call.reused {
        return "answer reused from the checkpoint".to_owned();
    }
    let text = match call.outcome {
        crate::engine::CallOutcome::Answered if call.edited_tree => "answered (edited files)",
        crate::engine::CallOutcome::Answered => "answered",
        crate::engine::CallOutcome::Refused => "refused",
        crate::engine::CallOutcome::Empty => "empty answer",
        crate::engine::CallOutcome::Truncated => "cut off at the output limit",
        crate::engine::CallOutcome::Failed => "failed",
        crate::engine::CallOutcome::SkippedBudget => "not sent: budget spent",
        crate::engine::CallOutcome::SkippedSecrets => "not sent: secrets in the prompt",
    };
    text.to_owned()
}

/// The lines under the calls table: fallbacks, cuts, secrets, permissions, writes outside
/// the protocol, the agent's sandbox, errors.
fn call_notes(out: &mut String, number: usize, call: &EngineCall) {
    let mut notes: Vec<String> = Vec::new();
    if let Some(fallback) = &call.fallback {
        notes.push(format!(
            "fell back to a plain-text answer: {}",
            one_line(fallback)
        ));
    }
    if let Some(error) = &call.error {
        notes.push(format!("error: {}", one_line(error)));
    } else if let Some(detail) = &call.detail {
        notes.push(one_line(detail));
    }
    for cut in &call.cut {
        notes.push(format!(
            "prompt section `{}` cut from {} to {} bytes (budget.max-input-bytes)",
            cut.section, cut.bytes, cut.kept
        ));
    }
    if let Some(secrets) = &call.secrets
        && secrets.count > 0
    {
        notes.push(format!(
            "{} secret{} in the prompt ({}): {}",
            secrets.count,
            if secrets.count == 1 { "" } else { "s" },
            secrets.rules.join(", "),
            match secrets.action {
                crate::config::SecretsInPrompt::Deny => "not sent",
                crate::config::SecretsInPrompt::Allow => "sent as they were (allow)",
                crate::config::SecretsInPrompt::Tokenize => "replaced by placeholders",
            }
        ));
    }
    if let Some(secrets) = &call.secrets {
        let test_data: Vec<String> = secrets
            .detections
            .iter()
            .filter_map(|d| {
                let why = d.placeholder.as_ref()?;
                let place = match (&d.file, d.line) {
                    (Some(file), Some(line)) => format!("`{file}:{line}`"),
                    (Some(file), None) => format!("`{file}`"),
                    _ => "the failure output".to_owned(),
                };
                Some(format!("{} at {place} ({why})", d.rule))
            })
            .collect();
        if !test_data.is_empty() {
            notes.push(format!(
                "sent as test data, not secrets: {}",
                one_line(&test_data.join("; "))
            ));
        }
    }
    for permission in &call.permissions {
        notes.push(format!(
            "the agent asked to run `{}` ({}{}): {} — {}",
            cell(&permission.title),
            permission.kind,
            if permission.paths.is_empty() {
                String::new()
            } else {
                format!(" on {}", code_list(&permission.paths))
            },
            match permission.answer {
                crate::engine::PermissionAnswer::Allowed => "allowed once",
                crate::engine::PermissionAnswer::Rejected => "rejected",
                crate::engine::PermissionAnswer::Cancelled => "cancelled",
            },
            one_line(&permission.reason)
        ));
    }
    if !call.unrequested_writes.is_empty() {
        notes.push(format!(
            "the agent wrote files outside the protocol (restored, not used): {}",
            code_list(&call.unrequested_writes)
        ));
    }
    if !call.tool_calls.is_empty() {
        notes.push(tool_calls(&call.tool_calls));
    }
    for note in &call.notes {
        notes.push(one_line(note));
    }
    if let Some(sandbox) = &call.sandbox {
        notes.push(agent_sandbox(sandbox));
    }
    for note in notes {
        let _ = writeln!(out, "- call {number}: {note}");
    }
}

/// Distinct tool calls shown in one note (20); the rest are counted.
const SHOWN_TOOL_CALLS: usize = 20;

/// The note listing an agent's tool calls, those it ran without asking marked.
fn tool_calls(calls: &[crate::engine::ToolCall]) -> String {
    // Identical calls (a file read again and again) are written once, with their count.
    let mut counted: Vec<(String, usize)> = Vec::new();
    for call in calls {
        let text = format!(
            "`{}` ({}, {}{})",
            cell(&call.title),
            call.kind,
            call.status,
            if call.unasked_run { ", not asked" } else { "" }
        );
        match counted.iter_mut().find(|(seen, _)| *seen == text) {
            Some((_, n)) => *n += 1,
            None => counted.push((text, 1)),
        }
    }
    let shown: Vec<String> = counted
        .iter()
        .take(SHOWN_TOOL_CALLS)
        .map(|(text, n)| {
            if *n > 1 {
                format!("{text} ×{n}")
            } else {
                text.clone()
            }
        })
        .collect();
    let more: usize = counted.iter().skip(SHOWN_TOOL_CALLS).map(|(_, n)| n).sum();
    format!(
        "the agent reported {} tool call{}: {}{}",
        calls.len(),
        if calls.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// The note on an agent's sandbox: its tier, what was missing for a stronger one, and the
/// processes it left outside its group.
fn agent_sandbox(sandbox: &crate::runner::SandboxReport) -> String {
    let mut note = format!("the agent ran in sandbox tier `{}`", sandbox.tier);
    if sandbox.landlock_abi.is_none() {
        note.push_str(" (its writes were not confined: landlock was not enforced)");
    }
    if sandbox.leaked_processes > 0 {
        let _ = write!(
            note,
            "; {} process{} it left running outside its group {} killed",
            sandbox.leaked_processes,
            if sandbox.leaked_processes == 1 {
                ""
            } else {
                "es"
            },
            if sandbox.leaked_processes == 1 {
                "was"
            } else {
                "were"
            },
        );
    }
    note
}
