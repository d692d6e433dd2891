//! What the proof covers, in the PR title and body: which form of the derived suite the
//! proof used and why the wider forms were dropped, or, when none wider than the
//! reproduction established a baseline, that only the reproduction was run and how to
//! configure a suite.

use std::fmt::Write as _;

use super::model::{BaselineVerdict, Evidence, Status, SuiteChoice, SuiteFormKind};
use super::text::{duration, one_line};

/// The derived suite's choice, when there was one to make.
fn choice(evidence: &Evidence) -> Option<&SuiteChoice> {
    evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.suite_choice.as_ref())
}

/// What the title adds after `make `CMD` pass`: the narrowed proof, or why only the
/// reproduction proves the fix.
pub(super) fn title_suffix(evidence: &Evidence) -> Option<String> {
    let choice = choice(evidence)?;
    match evidence.result.status {
        Status::FixedReproductionOnly => Some(format!(" (reproduction only: {})", why(choice))),
        Status::Fixed if dropped(choice) => choice
            .chosen
            .as_ref()
            .map(|chosen| format!(" (proof on a narrowed suite: `{}`)", one_line(chosen))),
        _ => None,
    }
}

/// Whether a form wider than the chosen one was tried and dropped.
fn dropped(choice: &SuiteChoice) -> bool {
    choice
        .attempts
        .iter()
        .any(|a| a.verdict != BaselineVerdict::Established)
}

/// Why no wider form established a baseline, in a few words.
fn why(choice: &SuiteChoice) -> &'static str {
    if choice.attempts.is_empty() {
        return "efix derives no wider suite from this command";
    }
    let over_budget = choice.attempts.iter().all(|a| {
        matches!(
            a.verdict,
            BaselineVerdict::OverBudget | BaselineVerdict::NotRun
        )
    });
    if over_budget {
        "every wider suite exceeded the suite budget"
    } else {
        "no wider suite established a baseline"
    }
}

/// The first lines of a reproduction-only proof's body: no other test ran, why, and what to
/// configure.
pub(super) fn reproduction_only_notice(out: &mut String, evidence: &Evidence) {
    if evidence.result.status != Status::FixedReproductionOnly {
        return;
    }
    let Some(choice) = choice(evidence) else {
        return;
    };
    let example = choice.attempts.first().map_or_else(
        || "<the command that runs your tests>".to_owned(),
        |a| one_line(&a.command),
    );
    let _ = writeln!(
        out,
        "**Only the reproduction was run as proof:** no other test of the repository was run \
         before and after this change, so a test it breaks elsewhere would not be noticed \
         ({}). To have the repository's tests checked, list the commands that run them as \
         `test.required-suites` in `.efix.yml` (`required-suites: [\"{}\"]`) or pass `--suite`.\n",
        why(choice),
        example.replace('"', "\\\""),
    );
    attempts(out, choice);
}

/// For a narrowed proof: the suite used and the wider forms dropped before it.
pub(super) fn narrowed(out: &mut String, evidence: &Evidence) {
    if evidence.result.status == Status::FixedReproductionOnly {
        return;
    }
    let Some(choice) = choice(evidence).filter(|c| dropped(c)) else {
        return;
    };
    let Some(chosen) = &choice.chosen else {
        return;
    };
    let _ = writeln!(
        out,
        "\n**The proof covers a narrowed suite:** `{}` ({}), because the wider forms tried \
         before the fix were dropped (suite budget {}, `test.suite-budget-ms`):",
        one_line(chosen),
        choice
            .attempts
            .iter()
            .find(|a| &a.command == chosen)
            .map_or("", |a| kind_name(a.kind)),
        duration(choice.budget_ms),
    );
    attempts(out, choice);
}

/// One line per dropped attempt, widest first.
fn attempts(out: &mut String, choice: &SuiteChoice) {
    let mut any = false;
    for attempt in choice
        .attempts
        .iter()
        .filter(|a| a.verdict != BaselineVerdict::Established)
    {
        any = true;
        let run = attempt
            .baseline
            .map(|id| format!(" (#{id})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- `{}`{run}, {}: {}",
            one_line(&attempt.command),
            kind_name(attempt.kind),
            one_line(&attempt.detail),
        );
    }
    if any {
        out.push('\n');
    }
}

fn kind_name(kind: SuiteFormKind) -> &'static str {
    match kind {
        SuiteFormKind::WholeSuite => "the whole suite",
        SuiteFormKind::TestRoot => "the test directory",
        SuiteFormKind::NoSelector => "the program with no test selector",
        SuiteFormKind::WiderSelector => "a wider test selector",
        SuiteFormKind::ReproductionFiles => "the reproduction's files",
    }
}
