//! Markdown rendering of the evidence: the PR title and body, and the fuller `evidence.md`.
//!
//! Every figure here is read from [`Evidence`]; the model's words appear only in fenced blocks
//! folded under a summary that says they are the model's.

use std::fmt::Write as _;

use super::check::{CheckRecord, Weakness};
use super::model::*;
use super::render_engine::engine;
use super::text::{cell, code_list, duration, one_line, purpose_name};
use crate::runner::Outcome;

/// Lines of output shown from the end of a stream.
const OUTPUT_TAIL_LINES: usize = 25;
/// Diffs longer than this are cut in the PR body (the full diff is in `patch.diff`).
const PR_DIFF_MAX_BYTES: usize = 60_000;

/// The PR title.
pub fn render_pr_title(evidence: &Evidence) -> String {
    let command = one_line(&evidence.request.command);
    match evidence.result.status {
        Status::Fixed
        | Status::FixedReproductionOnly
        | Status::FixedNotJudged
        | Status::FixedFlagged => format!(
            "efix: make `{command}` pass{}",
            super::render_scope::title_suffix(evidence).unwrap_or_default()
        ),
        _ => format!("efix: no proven fix for `{command}`"),
    }
}

/// The PR body (or, without a proven fix, the issue comment). What a reviewer decides on comes
/// first: the verdict, the change, the proof table and the guard; the outputs, checks and
/// canaries, sandbox, engine calls and the model's words are folded below it.
pub fn render_pr_body(evidence: &Evidence) -> String {
    let mut out = String::new();
    summary(&mut out, evidence);
    match &evidence.fix {
        Some(fix) => {
            change(&mut out, fix);
            proof(&mut out, evidence);
            guard(&mut out, evidence, fix.round);
            if let Some(round) = round(evidence, fix.round) {
                super::render_candidates::table(&mut out, round);
            }
            checks(&mut out, evidence, fix.round);
        }
        None => {
            proof(&mut out, evidence);
            rounds_summary(&mut out, evidence);
        }
    }
    outputs(&mut out, evidence);
    super::sandbox::section(&mut out, evidence);
    engine(&mut out, evidence);
    explanation(&mut out, evidence);
    footer(&mut out);
    out
}

/// The full record: the PR body plus every command and every round.
pub fn render_evidence_md(evidence: &Evidence) -> String {
    let mut out = String::from("# efix evidence\n\n");
    out.push_str(
        &render_pr_body(evidence)
            .replace("\n## ", "\n### ")
            .replacen("## ", "### ", 1),
    );
    out.push_str("\n## Full record\n\n");
    let _ = writeln!(
        out,
        "- efix {} · schema version {} · started {} · finished {}",
        evidence.efix_version,
        evidence.schema_version,
        evidence.started_at,
        evidence.finished_at.as_deref().unwrap_or("(in progress)")
    );
    let _ = writeln!(
        out,
        "- repository `{}` at `{}`",
        evidence.repo.root,
        evidence
            .repo
            .base_commit
            .as_deref()
            .unwrap_or("(no commit)")
    );
    if let Some(config) = &evidence.request.config {
        let _ = writeln!(out, "- config `{config}`");
    }
    out.push_str("\n### Commands\n\n");
    out.push_str("| # | phase | purpose | round | command | policy | exit | duration | tests |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for record in &evidence.commands {
        let policy = if record.policy.allowed {
            "allowed".to_owned()
        } else {
            format!(
                "refused ({})",
                record.policy.rule.as_deref().unwrap_or("policy")
            )
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | `{}` | {} | {} | {} | {} |",
            record.id,
            phase_name(record.phase),
            purpose_name(record.purpose),
            record
                .round
                .map(|r| r.to_string())
                .unwrap_or_else(|| "–".to_owned()),
            cell(&record.command),
            policy,
            exit_cell(record),
            duration_cell(record),
            tests_text(record),
        );
    }
    if let Some(localization) = &evidence.localization {
        out.push_str("\n### Localization\n\n");
        if localization.candidates.is_empty() {
            out.push_str("No file was named by the failure output.\n");
        }
        for candidate in localization.candidates.iter().take(10) {
            let _ = writeln!(
                out,
                "- `{}` (score {:.1}): {}",
                candidate.path,
                candidate.score,
                candidate.reasons.join("; ")
            );
        }
        list_line(&mut out, "engine focus files", &localization.engine_focus);
        list_line(
            &mut out,
            "engine named files that do not exist (ignored)",
            &localization.engine_focus_unknown,
        );
        let sent: Vec<String> = localization
            .excerpts
            .iter()
            .map(|e| {
                format!(
                    "`{}` ({} bytes{})",
                    e.path,
                    e.bytes,
                    if e.truncated { ", cut" } else { "" }
                )
            })
            .collect();
        if !sent.is_empty() {
            let _ = writeln!(out, "- numbered contents sent: {}", sent.join(", "));
        }
    }
    out.push_str("\n### Rounds\n");
    if evidence.rounds.is_empty() {
        out.push_str("\nNo fix round ran.\n");
    }
    for round in &evidence.rounds {
        let _ = writeln!(
            out,
            "\n#### Round {} — {}\n",
            round.number,
            verdict_name(round.verdict)
        );
        for attempt in &round.attempts {
            let _ = writeln!(
                out,
                "- engine answer #{}{}: patch {}",
                attempt.call_index + 1,
                if attempt.contract_retry {
                    " (contract retry)"
                } else {
                    ""
                },
                patch_outcome_name(attempt.patch.outcome),
            );
            for issue in &attempt.patch.issues {
                let _ = writeln!(out, "  - {}", issue_text(issue));
            }
        }
        for check in &round.checks {
            let _ = writeln!(
                out,
                "- {} `{}`: {}",
                check_result(check),
                check.id,
                check.detail
            );
        }
        if !round.issues.is_empty() {
            out.push_str("- fed back to the engine:\n");
            for issue in &round.issues {
                let _ = writeln!(out, "  - {}", issue_text(issue));
            }
        }
    }
    out
}

fn summary(out: &mut String, evidence: &Evidence) {
    let headline = match evidence.result.status {
        Status::Fixed => "Fixed and proven",
        Status::FixedReproductionOnly => "Fixed; proven by the reproduction only",
        Status::FixedNotJudged => "Fixed, not fully proven: a check could not be judged",
        Status::FixedFlagged => "Fixed, flagged for review",
        Status::NoProvenFix => "No proven fix",
        Status::NoChange => "No change proposed",
        Status::NotReproduced => "The failure did not reproduce",
        Status::Flaky => "The failure is flaky",
        Status::PolicyRefused => "Refused by policy",
        Status::BudgetExhausted => "Stopped: budget exhausted",
        Status::Interrupted => "Stopped: interrupted",
        Status::InProgress => "In progress",
    };
    let _ = writeln!(out, "## efix: {headline}\n");
    super::render_scope::weakness_notice(out, evidence);
    super::render_scope::reproduction_only_notice(out, evidence);
    let _ = writeln!(
        out,
        "**Command:** `{}`  ",
        one_line(&evidence.request.command)
    );
    let _ = writeln!(
        out,
        "**Outcome:** {} (exit code {})  ",
        one_line(&evidence.result.reason),
        evidence.result.exit_code
    );
    let _ = writeln!(
        out,
        "**Base:** `{}`",
        evidence
            .repo
            .base_commit
            .as_deref()
            .unwrap_or("(no commit)")
    );
    if evidence.request.dry_run {
        out.push_str("\nThis was a dry run: the change was not left applied.\n");
    }
    super::render_scope::narrowed(out, evidence);
    super::render_scope::related(out, evidence);
    out.push('\n');
}

/// The proof table: the reproduction before and after (with the last change tried when no fix
/// was proven), the suites with the change, then the tests before and after.
fn proof(out: &mut String, evidence: &Evidence) {
    let Some(repro) = &evidence.reproduction else {
        return;
    };
    out.push_str("### Proof\n\n");
    let mut rows = Vec::new();
    for id in &repro.runs {
        rows.extend(row(evidence, *id, "before: original source"));
    }
    let prove = proven_round(evidence).and_then(|r| r.prove.as_ref());
    if let Some((after, label)) = after_run(evidence) {
        rows.extend(row(evidence, after, &label));
    }
    if evidence.fix.is_some()
        && let Some(prove) = prove
    {
        for id in &prove.suites {
            if let Some(record) = evidence.command(*id) {
                let label = format!("suite `{}`, with this change", cell(&record.command));
                rows.extend(row(evidence, *id, &label));
            }
        }
        let related = proven_round(evidence).and_then(|r| r.related.as_ref());
        if let Some(id) = related.and_then(|r| r.fixed)
            && let Some(record) = evidence.command(id)
        {
            let label = format!(
                "related tests `{}`, with this change",
                cell(&record.command)
            );
            rows.extend(row(evidence, id, &label));
        }
    }
    super::text::table(out, &["run", "exit", "duration", "tests"], &rows);
    if repro.flaky {
        out.push_str("\nThe runs disagreed, so the failure is flaky and no fix is claimed.\n");
    }
    if !repro.failing_tests.is_empty() {
        let _ = writeln!(out, "\nFailing before: {}", code_list(&repro.failing_tests));
    }
    out.push('\n');
    if evidence.fix.is_some()
        && let Some(prove) = prove
    {
        test_table(out, prove);
    }
}

/// The round whose change the body shows: the proven one.
fn proven_round(evidence: &Evidence) -> Option<&Round> {
    evidence
        .fix
        .as_ref()
        .and_then(|fix| round(evidence, fix.round))
}

/// The reproduction's run after the change: with the proven fix, or, without one, with the last
/// change tried.
fn after_run(evidence: &Evidence) -> Option<(usize, String)> {
    match &evidence.fix {
        Some(_) => Some((
            proven_round(evidence)?.prove.as_ref()?.reproduction,
            "after: with this change".to_owned(),
        )),
        None => {
            let r = evidence.rounds.iter().rev().find(|r| r.prove.is_some())?;
            Some((
                r.prove.as_ref()?.reproduction,
                format!("after: with the change of round {} (not kept)", r.number),
            ))
        }
    }
}

/// The last lines of the reproduction's output before and after, folded.
fn outputs(out: &mut String, evidence: &Evidence) {
    let Some(repro) = &evidence.reproduction else {
        return;
    };
    if let Some(first) = repro.runs.first().and_then(|id| evidence.command(*id)) {
        output_details(out, first, "Output before the fix");
    }
    if let Some(record) = after_run(evidence).and_then(|(id, _)| evidence.command(id)) {
        let title = if evidence.fix.is_some() {
            "Output after the fix"
        } else {
            "Output with the last change tried"
        };
        output_details(out, record, title);
    }
}

fn row(evidence: &Evidence, id: usize, label: &str) -> Option<Vec<String>> {
    let record = evidence.command(id)?;
    Some(vec![
        format!("{label} (#{id})"),
        exit_cell(record),
        duration_cell(record),
        tests_text(record),
    ])
}

fn output_details(out: &mut String, record: &CommandRecord, title: &str) {
    let Some(outcome) = &record.outcome else {
        return;
    };
    let mut body = String::new();
    for (name, text) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
        let tail = last_lines(text, OUTPUT_TAIL_LINES);
        if tail.trim().is_empty() {
            continue;
        }
        let _ = writeln!(body, "{name}:\n\n{}", fenced(&tail, "text"));
    }
    if body.is_empty() {
        body.push_str("(no output)\n");
    }
    super::text::collapsed(out, &format!("{title} (#{}, last lines)", record.id), &body);
}

fn guard(out: &mut String, evidence: &Evidence, number: u32) {
    let Some(prevent) = round(evidence, number).and_then(|r| r.prevent.as_ref()) else {
        return;
    };
    out.push_str("### Regression guard\n\n");
    let name = match prevent.guard {
        Some(Guard::ChangedTests) => "the tests this change adds or modifies",
        Some(Guard::Reproduction) => "the reproduction's own failing tests",
        Some(Guard::NotRequired) => "none (not required by configuration)",
        None => "none",
    };
    let _ = writeln!(out, "**Guard:** {name}  ");
    let _ = writeln!(out, "{}\n", one_line(&prevent.detail));
    list_line(
        out,
        "failed with only the test changes applied",
        &prevent.failed_without_fix,
    );
    list_line(
        out,
        "passed with the whole change",
        &prevent.passed_with_fix,
    );
    out.push('\n');
}

fn test_table(out: &mut String, prove: &Prove) {
    let table = &prove.table;
    let rows: Vec<Vec<String>> = table
        .fixed
        .iter()
        .map(|t| (t, "failed", "passed"))
        .chain(table.still_failing.iter().map(|t| (t, "failed", "failed")))
        .chain(table.newly_failing.iter().map(|t| (t, "passed", "failed")))
        .chain(table.missing.iter().map(|t| (t, "failed", "did not run")))
        .chain(table.lost.iter().map(|t| (t, "recorded", "no record")))
        .map(|(name, before, after)| {
            vec![
                format!("`{}`", cell(name)),
                before.to_owned(),
                after.to_owned(),
            ]
        })
        .collect();
    if rows.is_empty() {
        out.push_str("The test runner's output gave no per-test results.\n");
    } else {
        super::text::table(out, &["test", "before", "after"], &rows);
    }
    let _ = writeln!(
        out,
        "\n{} fixed, {} still failing, {} newly failing, {} passing after the change.\n",
        table.fixed.len(),
        table.still_failing.len(),
        table.newly_failing.len(),
        table.passing_after
    );
}

/// The round's checks and canaries, folded under their counts.
fn checks(out: &mut String, evidence: &Evidence, number: u32) {
    let Some(round) = round(evidence, number) else {
        return;
    };
    if round.checks.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = round
        .checks
        .iter()
        .map(|check| {
            vec![
                format!("`{}`", check.id),
                check_result(check).to_owned(),
                cell(&check.detail),
            ]
        })
        .collect();
    let counted: Vec<String> = [
        ("pass", "passed"),
        ("FAIL", "failed"),
        ("NOT JUDGED", "not judged"),
        ("FLAGGED", "flagged"),
    ]
    .iter()
    .filter_map(|(result, words)| {
        let n = round
            .checks
            .iter()
            .filter(|c| check_result(c) == *result)
            .count();
        (n > 0).then(|| format!("{n} {words}"))
    })
    .collect();
    let mut body = String::new();
    super::text::table(&mut body, &["check", "result", "detail"], &rows);
    super::text::collapsed(
        out,
        &format!("Checks and canaries: {}", counted.join(", ")),
        &body,
    );
}

fn check_result(check: &CheckRecord) -> &'static str {
    match (check.passed, check.weakens) {
        (false, _) => "FAIL",
        (true, None) => "pass",
        (true, Some(Weakness::NotJudged)) => "NOT JUDGED",
        (true, Some(Weakness::Flagged)) => "FLAGGED",
    }
}

fn change(out: &mut String, fix: &FinalFix) {
    let _ = writeln!(
        out,
        "### Change\n\n{} file{} changed, +{} −{}: {}\n",
        fix.files.len(),
        if fix.files.len() == 1 { "" } else { "s" },
        fix.added,
        fix.removed,
        code_list(&fix.files)
    );
    let diff = if fix.diff.len() > PR_DIFF_MAX_BYTES {
        let mut cut = PR_DIFF_MAX_BYTES;
        while !fix.diff.is_char_boundary(cut) {
            cut -= 1;
        }
        format!(
            "{}\n… (cut; the whole diff is in patch.diff)\n",
            &fix.diff[..cut]
        )
    } else {
        fix.diff.clone()
    };
    let _ = writeln!(out, "{}", fenced(&diff, "diff"));
}

fn rounds_summary(out: &mut String, evidence: &Evidence) {
    if evidence.rounds.is_empty() {
        return;
    }
    out.push_str("### Why there is no proven fix\n\n");
    for round in &evidence.rounds {
        let _ = writeln!(
            out,
            "- round {}: {}",
            round.number,
            verdict_name(round.verdict)
        );
        for check in round.checks.iter().filter(|c| !c.passed) {
            let _ = writeln!(
                out,
                "  - failed `{}`: {}",
                check.id,
                one_line(&check.detail)
            );
        }
        for issue in &round.issues {
            let _ = writeln!(out, "  - {}", issue_text(issue));
        }
    }
    out.push('\n');
}

fn explanation(out: &mut String, evidence: &Evidence) {
    let hypothesis = evidence
        .localization
        .as_ref()
        .and_then(|l| l.hypothesis.as_deref());
    let chosen = match &evidence.fix {
        Some(fix) => round(evidence, fix.round).and_then(|r| r.attempts.last()),
        None => evidence.rounds.last().and_then(|r| r.attempts.last()),
    };
    let explanation = chosen.map(|a| &a.explanation);
    let has_text = hypothesis.is_some_and(|h| !h.trim().is_empty())
        || explanation.is_some_and(|e| {
            !(e.root_cause.is_empty() && e.fix_summary.is_empty() && e.tests_summary.is_empty())
        });
    if !has_text {
        return;
    }
    let mut body = String::from(
        "The model's own words, not checked by efix; every result above was measured by efix.\n\n",
    );
    let mut field = |title: &str, text: &str| {
        if !text.trim().is_empty() {
            let _ = writeln!(body, "{title}:\n\n{}", fenced(text.trim(), "text"));
        }
    };
    field("Hypothesis", hypothesis.unwrap_or_default());
    if let Some(e) = explanation {
        field("Root cause", &e.root_cause);
        field("Fix", &e.fix_summary);
        field("Tests", &e.tests_summary);
        field("Risk and rollback", &e.risk_rollback);
        let reasons: String = e
            .file_justifications
            .iter()
            .map(|j| format!("{}: {}\n", j.file, j.reason))
            .collect();
        field("Why each file changed", &reasons);
    }
    super::text::collapsed(
        out,
        "The model's explanation (its own words, not checked by efix)",
        &body,
    );
}

fn footer(out: &mut String) {
    out.push_str(
        "---\nRendered by efix from recorded evidence (`evidence.json`); `efix verify` re-runs \
         the recorded commands.\n",
    );
}

fn round(evidence: &Evidence, number: u32) -> Option<&Round> {
    evidence.rounds.iter().find(|r| r.number == number)
}

fn exit_text(outcome: &Outcome) -> String {
    if outcome.timed_out {
        return "timed out".to_owned();
    }
    match (outcome.exit_code, &outcome.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("killed by {signal}"),
        (None, None) => "unknown".to_owned(),
    }
}

fn exit_cell(record: &CommandRecord) -> String {
    record
        .outcome
        .as_ref()
        .map(exit_text)
        .unwrap_or_else(|| "–".to_owned())
}

fn duration_cell(record: &CommandRecord) -> String {
    record
        .outcome
        .as_ref()
        .map(|o| duration(o.duration_ms))
        .unwrap_or_else(|| "–".to_owned())
}

fn tests_text(record: &CommandRecord) -> String {
    if record.purpose == crate::evidence::Purpose::SuiteListing && record.outcome.is_some() {
        return "listed, no test run".to_owned();
    }
    results_text(record.tests.as_ref(), record.outcome.is_some())
}

/// The test results of a command in words (see `TestReport::counts_text`), or why there are
/// none: the command did not run, or its output is of no runner efix reads.
fn results_text(tests: Option<&crate::testreport::TestReport>, ran: bool) -> String {
    match tests {
        None if ran => "test results not recognised".to_owned(),
        None => "–".to_owned(),
        Some(t) => match t.counts_text() {
            text if text == crate::testreport::NO_TEST_RAN => text,
            text => format!("{text} ({})", t.format),
        },
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Setup => "setup",
        Phase::Reproduce => "reproduce",
        Phase::Prevent => "prevent",
        Phase::Prove => "prove",
    }
}

fn verdict_name(verdict: RoundVerdict) -> &'static str {
    match verdict {
        RoundVerdict::Proven => "proven",
        RoundVerdict::Rejected => "patch rejected",
        RoundVerdict::ProofFailed => "proof failed",
        RoundVerdict::NoChange => "the engine proposed no change",
        RoundVerdict::EngineFailed => "the engine gave no answer",
        RoundVerdict::Stopped => "stopped",
    }
}

fn patch_outcome_name(outcome: crate::patch::PatchOutcome) -> &'static str {
    match outcome {
        crate::patch::PatchOutcome::Applied => "applied",
        crate::patch::PatchOutcome::NoChange => "no change",
        crate::patch::PatchOutcome::Rejected => "rejected",
    }
}

fn issue_text(issue: &crate::policy::Issue) -> String {
    let location = match (&issue.path, issue.line) {
        (Some(path), Some(line)) => format!(" ({path}:{line})"),
        (Some(path), None) => format!(" ({path})"),
        _ => String::new(),
    };
    // The first line says what is wrong; output tails that follow are shown elsewhere.
    let first = issue.message.lines().next().unwrap_or("");
    format!("`{}`{location}: {}", issue.rule, one_line(first))
}

/// `- label: `a`, `b`` when there are items.
fn list_line(out: &mut String, label: &str, items: &[String]) {
    if !items.is_empty() {
        let _ = writeln!(out, "- {label}: {}", code_list(items));
    }
}

fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(count);
    lines[start..].join("\n")
}

/// A fenced block whose fence is longer than any backtick run inside the text.
fn fenced(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(fenced("a ```` b", "text"), "`````text\na ```` b\n`````\n");
        assert_eq!(fenced("plain\n", "diff"), "```diff\nplain\n```\n");
    }

    #[test]
    fn test_results_are_told_in_words_never_as_zero_counts_of_a_run_that_printed_results() {
        let parsed = |out: &str| crate::testreport::parse(out, "");
        let go = parsed("--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/parse\t0.004s\n");
        let pytest = parsed("ERROR tests/test_a.py\n1 error in 0.05s\n");
        let texts = [
            results_text(go.as_ref(), true),
            results_text(pytest.as_ref(), true),
            results_text(None, true),
            results_text(None, false),
        ];
        let expected = [
            "1 failed; passing tests not listed (go)",
            "0 passed, 1 error (pytest)",
            "test results not recognised",
            "–",
        ];
        assert_eq!(texts, expected);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(999), "999 ms");
        assert_eq!(duration(1234), "1.23 s");
    }
}
