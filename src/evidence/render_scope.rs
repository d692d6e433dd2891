//! What the proof covers, in the PR title and body: which form of the derived suite the
//! proof used and why the wider forms were dropped, or, when none wider than the
//! reproduction established a baseline, that only the reproduction was run and how to
//! configure a suite.

use std::fmt::Write as _;

use super::check::{CheckRecord, Weakness};
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
    match evidence.result.status {
        Status::FixedNotJudged => {
            return Some(format!(
                " (not fully proven: {})",
                ids(&weakening(evidence, Weakness::NotJudged))
            ));
        }
        Status::FixedFlagged => {
            return Some(format!(
                " (flagged for review: {})",
                ids(&weakening(evidence, Weakness::Flagged))
            ));
        }
        _ => {}
    }
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

/// The checks of the fix's round that weaken the claim this way.
fn weakening(evidence: &Evidence, weakness: Weakness) -> Vec<&CheckRecord> {
    let Some(fix) = &evidence.fix else {
        return Vec::new();
    };
    evidence
        .rounds
        .iter()
        .filter(|r| r.number == fix.round)
        .flat_map(|r| r.checks.iter())
        .filter(|c| c.weakens == Some(weakness))
        .collect()
}

/// The checks' ids, each once, in order.
fn ids(checks: &[&CheckRecord]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for check in checks {
        if !seen.contains(&check.id.as_str()) {
            seen.push(&check.id);
        }
    }
    seen.join(", ")
}

/// The first lines of a fix whose claim is weaker than "fixed and proven": which checks could
/// not be judged or flagged the change, and what each found.
pub(super) fn weakness_notice(out: &mut String, evidence: &Evidence) {
    let (weakness, lead) = match evidence.result.status {
        Status::FixedNotJudged => (
            Weakness::NotJudged,
            "**Not fully proven:** the change passed every check that ran, but these checks \
             could not be built or judged, so efix does not claim it is fixed and proven. \
             Review the change before merging; the pull request is a draft.",
        ),
        Status::FixedFlagged => (
            Weakness::Flagged,
            "**Flagged for review:** the change passed the proof, but it reads something code \
             can use to behave one way under the tests and another for users. Legitimate uses \
             exist (a command-line program reads its arguments); check each read below before \
             merging; the pull request is a draft.",
        ),
        _ => return,
    };
    let _ = writeln!(
        out,
        "{lead}
"
    );
    for check in weakening(evidence, weakness) {
        let _ = writeln!(out, "- `{}`: {}", check.id, one_line(&check.detail));
    }
    out.push('\n');
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
            BaselineVerdict::OverBudget
                | BaselineVerdict::NotRun
                | BaselineVerdict::EstimatedOverBudget
                | BaselineVerdict::OverEstimate
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
    // A weaker claim (not judged, flagged) may rest on the reproduction alone too: say both.
    let fixed = matches!(
        evidence.result.status,
        Status::FixedReproductionOnly | Status::FixedNotJudged | Status::FixedFlagged
    );
    let Some(choice) = choice(evidence).filter(|c| fixed && c.chosen.is_none()) else {
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
