//! What the proof covers, in the PR title and body: which form of the derived suite the
//! proof used and why the wider forms were dropped, or, when none wider than the
//! reproduction established a baseline, that only the reproduction was run and how to
//! configure a suite.

use std::fmt::Write as _;

use super::check::{CheckRecord, Weakness};
use super::model::{BaselineVerdict, Evidence, RelatedSuite, Status, SuiteChoice, SuiteFormKind};
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

/// Selected test files listed in the body; the rest are counted.
const RELATED_LISTED: usize = 20;

/// The related form of the round the body shows (the proven one, else the last that built
/// one): which test files were selected and the changed file each reaches, and whether they
/// ran.
pub(super) fn related(out: &mut String, evidence: &Evidence) {
    let round = match &evidence.fix {
        Some(fix) => evidence.rounds.iter().find(|r| r.number == fix.round),
        None => evidence.rounds.iter().rev().find(|r| r.related.is_some()),
    };
    let Some(related) = round.and_then(|r| r.related.as_ref()) else {
        return;
    };
    related_paragraph(out, related);
}

/// The paragraph about one related form.
fn related_paragraph(out: &mut String, related: &RelatedSuite) {
    // A paragraph of its own, however the one before it ended.
    let lead = if out.ends_with("\n\n") {
        "**Tests related to the change:**"
    } else {
        "\n**Tests related to the change:**"
    };
    let Some(command) = &related.command else {
        let _ = writeln!(out, "{lead} none run: {}.", one_line(&related.detail));
        return;
    };
    let what = "the test files outside the suite the proof runs whose imports reach a file the \
                change modifies";
    match (related.baseline, related.fixed) {
        (Some(before), Some(after)) => {
            let _ = writeln!(
                out,
                "{lead} `{}` ran without the change's source side (#{before}) and with the whole \
                 change (#{after}); it runs {what}:",
                one_line(command)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "{lead} `{}` would run {what}; {}:",
                one_line(command),
                one_line(&related.detail)
            );
        }
    }
    for test in related.selected.iter().take(RELATED_LISTED) {
        let chain: Vec<String> = test.chain.iter().map(|f| format!("`{f}`")).collect();
        let _ = writeln!(
            out,
            "- `{}` reaches `{}` ({})",
            test.test,
            test.reaches,
            chain.join(" → ")
        );
    }
    let more = related.selected.len().saturating_sub(RELATED_LISTED);
    if more > 0 {
        let _ = writeln!(
            out,
            "- and {more} more (`evidence.json`, `rounds[].related`)"
        );
    }
    notes(out, related);
}

/// What else a reader of the related form needs: tests left out because the proof's suite
/// runs them, and a search cut short by its bounds.
fn notes(out: &mut String, related: &RelatedSuite) {
    if !related.already_run.is_empty() {
        let _ = writeln!(
            out,
            "\n{} more test file(s) reach the change and are run by the proof's suite already.",
            related.already_run.len()
        );
    }
    if related.bounded {
        let _ = writeln!(
            out,
            "\nThe search stopped at its bounds ({} test files searched): a test that reaches \
             the change further than that may be missing.",
            related.searched
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{CountSource, ListedUnit, RateSource, RelatedTest, SuiteEstimate};

    fn related(selected: usize) -> RelatedSuite {
        RelatedSuite {
            changed: vec!["app/core.py".to_owned()],
            selected: (0..selected)
                .map(|i| RelatedTest {
                    test: format!("other/test_{i}.py"),
                    reaches: "app/core.py".to_owned(),
                    chain: vec![
                        format!("other/test_{i}.py"),
                        "app/__init__.py".to_owned(),
                        "app/core.py".to_owned(),
                    ],
                })
                .collect(),
            already_run: vec!["tests/test_core.py".to_owned()],
            searched: 4002,
            bounded: false,
            command: Some("pytest -rA other/".to_owned()),
            estimate: None,
            baseline: None,
            verdict: None,
            fixed: None,
            detail: String::new(),
        }
    }

    #[test]
    fn a_related_form_estimated_over_the_budget_says_so_and_still_names_its_tests() {
        let mut form = related(22);
        form.estimate = Some(SuiteEstimate {
            source: CountSource::Listing,
            listing: Some(5),
            files: None,
            unit: ListedUnit::Tests,
            count: 400,
            reproduction: 0,
            rate: RateSource::RunLessListing,
            startup_ms: 8_870,
            per_unit_us: 149_000,
            estimate_ms: 68_470,
        });
        form.verdict = Some(BaselineVerdict::EstimatedOverBudget);
        form.detail = "not run: its runner lists 400 tests (#5, 8.87 s); at 149 ms a test as \
                       measured on the reproduction (#0), it would take about 68.47 s, more than \
                       the 30.00 s it could have (`test.suite-budget-ms`)"
            .to_owned();
        form.bounded = true;
        let mut out = String::new();
        related_paragraph(&mut out, &form);
        insta::assert_snapshot!(out);
    }

    #[test]
    fn a_change_no_other_test_reaches_says_none_ran() {
        let mut form = related(0);
        form.command = None;
        form.detail = "no test file outside the suite the proof runs reaches the changed files \
                       (12 searched)"
            .to_owned();
        let mut out = String::new();
        related_paragraph(&mut out, &form);
        insta::assert_snapshot!(out, @r"

        **Tests related to the change:** none run: no test file outside the suite the proof runs reaches the changed files (12 searched).
        ");
    }
}
