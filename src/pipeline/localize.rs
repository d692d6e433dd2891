//! Localize: deterministic candidates from the failure output first, then the engine's plan
//! (hypothesis and focus files) merged in; the numbered contents of the top files go to the
//! fix request within a byte budget.

use crate::engine::{AnswerStyle, CallKind, Engine, Prompt};
use crate::evidence::{ExcerptRecord, Localization, Status};
use crate::exit::ExitStatus;
use crate::prompt::{Cut, Section};

use super::PipelineError;
use super::call::{Built, Failure};
use super::ctx::Ctx;

/// Bytes of failure output shown to the engine.
const FAILURE_BYTES: usize = 12 * 1024;
/// Total bytes of numbered file contents sent with a fix request.
const EXCERPT_BUDGET_BYTES: usize = 64 * 1024;
/// Largest share of the budget one file may take.
const EXCERPT_FILE_BYTES: usize = 24 * 1024;
/// Lines shown around a line named in the failure when a file must be cut.
const EXCERPT_WINDOW_LINES: usize = 40;
/// Deterministic candidates and engine focus files considered, each.
const TOP_FILES: usize = 4;
/// Files whose contents are sent at most.
const MAX_EXCERPTS: usize = 6;
/// Tracked file names listed in the plan prompt at most.
const MAX_LISTED_FILES: usize = 400;

/// A file's numbered contents shown to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileExcerpt {
    pub path: String,
    /// `N| line` numbered text, possibly cut to the byte budget.
    pub numbered: String,
    pub truncated: bool,
}

/// Run the Localize phase. Returns an exit status when the run ends here.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
) -> Result<Option<ExitStatus>, PipelineError> {
    ctx.reporter.phase("localize");
    let result = localize(ctx, engine);
    ctx.reporter.end_phase();
    result
}

fn localize(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
) -> Result<Option<ExitStatus>, PipelineError> {
    // The snapshot listed the tracked files already; the index is not read again.
    let tracked = ctx.snapshot.tracked_paths();
    let failing = ctx
        .evidence
        .reproduction
        .as_ref()
        .map(|r| r.failing_tests.clone())
        .unwrap_or_default();
    let output = failure_output(ctx);
    let candidates = crate::localize::localize(&ctx.root, &tracked, &output, &failing);
    for candidate in candidates.iter().take(TOP_FILES) {
        ctx.reporter.info(&format!(
            "candidate {} ({})",
            candidate.path,
            candidate.reasons.join("; ")
        ));
    }
    let candidate_lines: Vec<String> = candidates
        .iter()
        .take(10)
        .map(|c| format!("- {} ({})", c.path, c.reasons.join("; ")))
        .collect();
    let listed: Vec<String> = tracked.iter().take(MAX_LISTED_FILES).cloned().collect();
    let built = plan_prompt(ctx, engine, &candidate_lines.join("\n"), &listed.join("\n"))?;
    let answer = super::call::plan(ctx, engine, built)?;
    // A call that failed because the run was stopped meanwhile (SIGINT, SIGTERM, the run's
    // time budget) ends the run as stopped, whatever the engine made of it.
    if answer.is_err()
        && let Some(status) = ctx.stop_reason()
    {
        ctx.conclude_stop(status);
        return Ok(Some(ExitStatus::NoProvenFix));
    }
    let plan = match answer {
        Ok(plan) => Some(plan),
        Err(Failure::Budget(spent)) => {
            ctx.reporter.warn(&spent.reason);
            ctx.conclude(
                Status::BudgetExhausted,
                ExitStatus::NoProvenFix,
                spent.reason,
            );
            return Ok(Some(ExitStatus::NoProvenFix));
        }
        Err(Failure::Secrets(reason)) => {
            ctx.reporter.warn(&reason);
            ctx.conclude(Status::NoProvenFix, ExitStatus::NoProvenFix, reason);
            return Ok(Some(ExitStatus::NoProvenFix));
        }
        Err(Failure::Fatal(message)) => {
            ctx.reporter.warn(&message);
            ctx.conclude(
                Status::NoProvenFix,
                ExitStatus::NoProvenFix,
                format!("the engine could not be used: {message}"),
            );
            return Ok(Some(ExitStatus::NoProvenFix));
        }
        Err(Failure::Engine(message)) => {
            ctx.reporter
                .warn(&format!("the engine gave no plan: {message}"));
            None
        }
        Err(Failure::Contract(issue)) => {
            ctx.reporter
                .warn(&format!("the engine gave no plan: {}", issue.message));
            None
        }
    };
    if let Some(status) = ctx.stop_reason() {
        ctx.conclude_stop(status);
        return Ok(Some(ExitStatus::NoProvenFix));
    }
    let (engine_focus, engine_focus_unknown): (Vec<String>, Vec<String>) = plan
        .as_ref()
        .map(|p| {
            p.focus_files
                .iter()
                .map(|f| normalize(f))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .partition(|f| tracked.contains(f));
    let mut order: Vec<String> = Vec::new();
    for path in candidates
        .iter()
        .take(TOP_FILES)
        .map(|c| c.path.clone())
        .chain(engine_focus.iter().take(TOP_FILES).cloned())
    {
        if !order.contains(&path) && order.len() < MAX_EXCERPTS {
            order.push(path);
        }
    }
    let mut localization = Localization {
        candidates,
        hypothesis: plan.map(|p| p.hypothesis),
        engine_focus,
        engine_focus_unknown,
        excerpts: order
            .iter()
            .map(|path| ExcerptRecord {
                path: path.clone(),
                bytes: 0,
                truncated: false,
            })
            .collect(),
    };
    let excerpts = excerpts(ctx, &localization);
    localization.excerpts = excerpts
        .iter()
        .map(|e| ExcerptRecord {
            path: e.path.clone(),
            bytes: e.numbered.len() as u64,
            truncated: e.truncated,
        })
        .collect();
    ctx.evidence.localization = Some(localization);
    if ctx.evidence.result.status == Status::InProgress {
        ctx.reporter.info("localized");
    }
    Ok(None)
}

/// The plan prompt in the engine's answer style (and in text, for a fallback), fitted to
/// `budget.max-input-bytes`: the tracked-file list is cut first, then the failure output.
fn plan_prompt(
    ctx: &Ctx<'_>,
    engine: &dyn Engine,
    candidates: &str,
    files: &str,
) -> Result<Built, PipelineError> {
    let templates = crate::prompt::Templates::load(&ctx.config.prompt_overrides)?;
    let style = engine.style(CallKind::Plan);
    let render = |style: AnswerStyle| {
        let sections = vec![
            Section::fixed("command", ctx.command.clone()),
            Section::fixed(
                "answer_format",
                crate::prompt::answer_format(CallKind::Plan, style, ctx.config.fix_format),
            ),
            Section::data(
                "files",
                "files tracked in the repository",
                files.to_owned(),
                Cut::Head,
            ),
            Section::data(
                "candidates",
                "files the failure output names",
                candidates.to_owned(),
                Cut::Head,
            ),
            Section::data(
                "failure",
                "the failing command's output",
                failure_text(ctx),
                Cut::Tail,
            ),
        ];
        let fitted = crate::prompt::fit(
            &templates.plan,
            sections,
            templates.system.len(),
            ctx.config.engine_budget.max_input_bytes,
        );
        (
            Prompt {
                system: templates.system.clone(),
                user: fitted.text,
            },
            fitted.cuts,
        )
    };
    let (prompt, cuts) = render(style);
    let text_prompt = (style == AnswerStyle::Structured).then(|| render(AnswerStyle::Text).0);
    Ok(Built {
        prompt,
        text_prompt,
        cuts,
    })
}

/// The focus set: deterministic candidates and engine focus files (repository-relative).
///
/// Every candidate counts, not only the top ones whose contents were sent: a file the failure
/// output names is localized, and a fix may rightly touch a frame further down the stack.
pub(crate) fn focus_set(localization: &Localization) -> Vec<String> {
    let mut set: Vec<String> = localization
        .candidates
        .iter()
        .map(|c| c.path.clone())
        .collect();
    for path in localization
        .engine_focus
        .iter()
        .chain(localization.excerpts.iter().map(|e| &e.path))
    {
        if !set.contains(path) {
            set.push(path.clone());
        }
    }
    set
}

/// Numbered contents of the localized files, read from the (restored) working tree, within
/// the byte budget. Deterministic, so a resumed run sends the same text.
pub(crate) fn excerpts(ctx: &Ctx<'_>, localization: &Localization) -> Vec<FileExcerpt> {
    let mut budget = EXCERPT_BUDGET_BYTES;
    let mut out = Vec::new();
    for record in &localization.excerpts {
        let Ok(bytes) = std::fs::read(ctx.root.join(&record.path)) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<u64> = localization
            .candidates
            .iter()
            .find(|c| c.path == record.path)
            .map(|c| c.lines.clone())
            .unwrap_or_default();
        let (numbered, truncated) = number(&text, &lines, budget.min(EXCERPT_FILE_BYTES));
        if numbered.is_empty() {
            break;
        }
        budget = budget.saturating_sub(numbered.len());
        out.push(FileExcerpt {
            path: record.path.clone(),
            numbered,
            truncated,
        });
    }
    out
}

/// `N| line` text of a file; when it does not fit, windows around `focus` lines (or the start).
fn number(text: &str, focus: &[u64], limit: usize) -> (String, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let whole: String = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}| {l}\n", i + 1))
        .collect();
    if whole.len() <= limit {
        return (whole, false);
    }
    let mut keep = vec![false; lines.len()];
    let anchors: Vec<usize> = if focus.is_empty() {
        vec![0]
    } else {
        focus
            .iter()
            .map(|l| (*l as usize).saturating_sub(1))
            .collect()
    };
    for anchor in anchors {
        let start = anchor.saturating_sub(EXCERPT_WINDOW_LINES);
        let end = (anchor + EXCERPT_WINDOW_LINES + 1).min(lines.len());
        for flag in keep.iter_mut().take(end).skip(start) {
            *flag = true;
        }
    }
    let mut out = String::new();
    let mut gap = false;
    for (i, line) in lines.iter().enumerate() {
        if !keep[i] {
            gap = true;
            continue;
        }
        if gap {
            out.push_str("…\n");
            gap = false;
        }
        let entry = format!("{}| {line}\n", i + 1);
        if out.len() + entry.len() > limit {
            break;
        }
        out.push_str(&entry);
    }
    (out, true)
}

/// The failure output of the first reproduction run (stdout then stderr).
fn failure_output(ctx: &Ctx<'_>) -> String {
    first_run(ctx)
        .and_then(|r| r.outcome.as_ref())
        .map(|o| format!("{}\n{}", o.stdout, o.stderr))
        .unwrap_or_default()
}

fn first_run<'c>(ctx: &'c Ctx<'_>) -> Option<&'c crate::evidence::CommandRecord> {
    ctx.evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first())
        .and_then(|id| ctx.evidence.command(*id))
}

/// Exit status and the tail of the output, bounded, for prompts.
pub(crate) fn failure_text(ctx: &Ctx<'_>) -> String {
    let Some(outcome) = first_run(ctx).and_then(|r| r.outcome.as_ref()) else {
        return String::new();
    };
    let status = match (outcome.exit_code, outcome.timed_out) {
        (_, true) => "timed out".to_owned(),
        (Some(code), _) => format!("exit code {code}"),
        (None, _) => format!(
            "killed by {}",
            outcome.signal.as_deref().unwrap_or("a signal")
        ),
    };
    format!(
        "{status}\n\nstdout (end):\n{}\n\nstderr (end):\n{}",
        tail(&outcome.stdout, FAILURE_BYTES / 2),
        tail(&outcome.stderr, FAILURE_BYTES / 2)
    )
}

fn tail(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut start = text.len() - bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn normalize(path: &str) -> String {
    let trimmed = path.trim().trim_start_matches("./");
    trimmed
        .strip_prefix("a/")
        .or_else(|| trimmed.strip_prefix("b/"))
        .unwrap_or(trimmed)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_whole_files_that_fit() {
        assert_eq!(
            number("a\nb\n", &[], 100),
            ("1| a\n2| b\n".to_owned(), false)
        );
    }

    #[test]
    fn cuts_large_files_to_windows_around_named_lines() {
        let text: String = (1..=500).map(|i| format!("line {i}\n")).collect();
        let (numbered, truncated) = number(&text, &[250], 5_000);
        assert!(truncated);
        assert!(numbered.starts_with("…\n210| line 210\n"));
        assert!(numbered.contains("250| line 250\n"));
        assert!(numbered.ends_with("290| line 290\n"));
    }
}
