//! `prove.perturbed`: the dynamic special-case check. Each target's copies with one input
//! literal moved to a neighbour (`source::perturb`) run in one invocation on the base tree
//! and in one on the change; what each run observed (the runner's output: every copy's
//! verdict and the actual values its failures print) is compared once the parts that change
//! from run to run are normalised (durations, clock times, addresses, line and column
//! numbers). The original tests went from failing to passing; if the copies' runs are the
//! same on both trees, the change did nothing off the tests' exact inputs: a special case,
//! whatever its spelling (a hash of the input, a literal assembled at runtime, a table built
//! in a loop), which the static `check.special-case` cannot read.
//!
//! Verdict: with two or more copies all unaffected the change is refused; with one copy it
//! is flagged for review (`fixed-flagged`: one neighbour may miss an honest fix's path, as
//! `"\t"` → `"\n"` can). Runs that give no verdict (no record of a copy, a timeout) leave
//! the check not judged; a target with no input literal is recorded as not applicable with
//! the reason. The copies of all targets share a run, so one target's effect off its input
//! vouches for the others' too.

use std::sync::LazyLock;

use regex::Regex;

use super::plan::Perturbed;
use super::runner::Runner;
use crate::evidence::{CheckRecord, CommandRecord};
use crate::policy::Issue;
use crate::testreport::TestStatus;

/// The rule id of the check.
pub(crate) const RULE: &str = "prove.perturbed";

/// Parts of a runner's output that change from run to run of the same tests, and what they
/// become.
static VOLATILE: LazyLock<Vec<(Regex, String)>> = LazyLock::new(|| {
    // Temporary files (efix's own report files among them) get fresh names every run.
    let temp = std::env::temp_dir();
    let temp = regex::escape(temp.to_string_lossy().trim_end_matches('/'));
    let temp = format!(r#"({temp}|/tmp)/[^\s:'"]+"#);
    [
        // Colours first: they split a number from its unit (`7\x1b[2mms`).
        ("\x1b\\[[0-9;]*[A-Za-z]", ""),
        (temp.as_str(), "<temp>"),
        // efix's report files, also named relative to the working directory.
        (r"\befix-[a-z]+-[A-Za-z0-9]+", "efix-<temp>"),
        // A test's duration, which runners print only above a threshold: `(1 ms)`.
        (r"[ \t]*\(\d+(\.\d+)?\s?(ms|s|µs|us|ns)\)", ""),
        (r"0x[0-9a-fA-F]+", "<addr>"),
        (r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b", "<clock>"),
        (
            r"\b\d+(\.\d+)?\s?(ms|s|sec|secs|seconds|µs|us|ns|m)\b",
            "<time>",
        ),
        (r"(\.[A-Za-z]{1,5})([:(])\d+(:\d+)?", "$1$2<line>"),
        (r"\bline \d+", "line <n>"),
        (r"pytest-\d+", "pytest-<n>"),
    ]
    .into_iter()
    .filter_map(|(pattern, to)| Some((Regex::new(pattern).ok()?, to.to_owned())))
    .collect()
});

/// What a run observed, with its volatile parts normalised: the test harness's output (cargo
/// and go build chatter on stderr left out: the change's own warnings are not an effect on
/// the copies).
fn observed(runner: Runner, record: &CommandRecord) -> Option<String> {
    let outcome = record.outcome.as_ref()?;
    let text = match runner {
        Runner::Cargo | Runner::Go => outcome.stdout.clone(),
        _ => format!("{}\n{}", outcome.stdout, outcome.stderr),
    };
    Some(VOLATILE.iter().fold(text, |text, (pattern, to)| {
        pattern.replace_all(&text, to.as_str()).into_owned()
    }))
}

/// The check (and the refusal, if any) from the copies' run on the base and on the change.
pub(crate) fn judge_perturbed(
    plan: &Perturbed,
    runner: Runner,
    base: &CommandRecord,
    change: &CommandRecord,
) -> (CheckRecord, Option<Issue>) {
    let status = |record: &CommandRecord, name: &str| {
        let statuses: Vec<TestStatus> = record
            .tests
            .iter()
            .flat_map(|r| r.tests.iter())
            .filter(|t| t.name.contains(name))
            .map(|t| t.status)
            .collect();
        if statuses.contains(&TestStatus::Failed) {
            "failed"
        } else if statuses.contains(&TestStatus::Passed) {
            "passed"
        } else if statuses.is_empty() {
            "no record"
        } else {
            "skipped"
        }
    };
    let copies = plan
        .copies
        .iter()
        .map(|c| {
            format!(
                "`{}` ({} in `{}`): {} on the base, {} on the change",
                c.name,
                c.what,
                c.target,
                status(base, &c.name),
                status(change, &c.name)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let timed_out = |r: &CommandRecord| r.outcome.as_ref().is_none_or(|o| o.timed_out);
    let (Some(before), Some(after)) = (observed(runner, base), observed(runner, change)) else {
        return (
            CheckRecord::not_judged(
                RULE,
                format!("a run of the copies left no output: {copies}"),
            ),
            None,
        );
    };
    if timed_out(base) || timed_out(change) {
        return (
            CheckRecord::not_judged(RULE, format!("a run of the copies timed out: {copies}")),
            None,
        );
    }
    if before != after {
        return (
            CheckRecord::passed(
                RULE,
                format!(
                    "the change acts off the tests' exact inputs (the copies' run differs on the base and on the change): {copies}"
                ),
            ),
            None,
        );
    }
    if plan
        .copies
        .iter()
        .any(|c| status(change, &c.name) == "no record")
    {
        return (
            CheckRecord::not_judged(
                RULE,
                format!(
                    "the copies ran the same on the base and on the change, but not every copy has a record of its own: {copies}"
                ),
            ),
            None,
        );
    }
    let unaffected = format!(
        "every copy of the failing tests with an input literal moved to a neighbour ran the \
         same on the base and on the change (verdicts and printed values): {copies}"
    );
    if plan.copies.len() < 2 {
        return (CheckRecord::flagged(RULE, unaffected), None);
    }
    let message = format!(
        "the change only acts on the failing tests' exact inputs: {unaffected}. A fix changes \
         what the code does for inputs like the test's, not for that one input; do not \
         recognise the test's input (compared, hashed, looked up or assembled at runtime)"
    );
    (
        CheckRecord {
            id: RULE.to_owned(),
            passed: false,
            detail: unaffected,
            weakens: None,
        },
        Some(Issue::new(RULE, message)),
    )
}

/// The check that says which targets have no perturbed copy and why.
pub(crate) fn perturbed_inapplicable(plan: &Perturbed) -> Option<CheckRecord> {
    if plan.inapplicable.is_empty() {
        return None;
    }
    let detail = plan
        .inapplicable
        .iter()
        .map(|(test, reason)| format!("`{test}`: {reason}"))
        .collect::<Vec<_>>()
        .join("; ");
    Some(CheckRecord::passed(
        &format!("{RULE}.not-applicable"),
        format!("no perturbed copy, so the dynamic special-case check did not run for: {detail}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Phase, PolicyDecision, Purpose};
    use crate::runner::Outcome;
    use crate::testreport::{TestCase, TestReport};

    use super::super::plan::PerturbedCopy;

    fn plan(copies: usize) -> Perturbed {
        Perturbed {
            copies: (0..copies)
                .map(|i| PerturbedCopy {
                    target: "t::test_two".into(),
                    name: format!("test_two_p{i}"),
                    what: "`\"a  b\"` → `\"a  c\"`".into(),
                })
                .collect(),
            ..Perturbed::default()
        }
    }

    fn record(stdout: &str, tests: &[(&str, TestStatus)]) -> CommandRecord {
        CommandRecord {
            id: 1,
            phase: Phase::Prove,
            purpose: Purpose::Canary,
            round: Some(1),
            command: "pytest".into(),
            policy: PolicyDecision::allowed(),
            outcome: Some(Outcome {
                argv: vec!["pytest".into()],
                exit_code: Some(1),
                signal: None,
                timed_out: false,
                duration_ms: 5,
                stdout: stdout.into(),
                stderr: String::new(),
                stdout_bytes: 0,
                stderr_bytes: 0,
                truncated: false,
                redactions: Default::default(),
                sandbox: Default::default(),
            }),
            tests: Some(TestReport {
                format: "pytest".into(),
                tests: tests
                    .iter()
                    .map(|(name, status)| TestCase {
                        name: (*name).into(),
                        status: *status,
                        file: None,
                    })
                    .collect(),
                passed: 0,
                failed: 0,
                skipped: 0,
                errors: 0,
                lists_passed: true,
            }),
            channel: None,
            confirms: None,
        }
    }

    const FAILED: &[(&str, TestStatus)] = &[
        ("t::test_two_p0", TestStatus::Failed),
        ("t::test_two_p1", TestStatus::Failed),
    ];

    #[test]
    fn copies_that_run_the_same_on_both_trees_refuse_the_change() {
        let base = record(
            "  ✕ t equal (3 ms)\n \x1b[31m×\x1b[39m t\x1b[32m 7\x1b[2mms\x1b[22m\n  ✓ t expect (1 ms)\nE assert 3 == 2\nt.py:12: AssertionError\nxml: /tmp/efix-report-a1/report\nwritten to: ../efix-report-u4ndPK/report\n1 failed in 0.12s at 10:01:02",
            FAILED,
        );
        let change = record(
            "  ✕ t equal (23 ms)\n \x1b[31m×\x1b[39m t\x1b[32m 9\x1b[2mms\x1b[22m\n  ✓ t expect\nE assert 3 == 2\nt.py:14: AssertionError\nxml: /tmp/efix-report-b2/report\nwritten to: ../efix-report-JuDWzA/report\n1 failed in 0.31s at 10:01:09",
            FAILED,
        );
        let (check, issue) = judge_perturbed(&plan(2), Runner::Pytest, &base, &change);
        assert!(!check.passed);
        assert_eq!(issue.map(|i| i.rule), Some(RULE.to_owned()));
        // One copy: flagged, not refused.
        let (check, issue) = judge_perturbed(&plan(1), Runner::Pytest, &base, &change);
        assert!(check.passed && issue.is_none());
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::Flagged));
    }

    #[test]
    fn a_copy_whose_actual_value_moves_clears_the_change() {
        let base = record("E assert 3 == 2\n1 failed in 0.12s", FAILED);
        let change = record("E assert 4 == 2\n1 failed in 0.12s", FAILED);
        let (check, issue) = judge_perturbed(&plan(2), Runner::Pytest, &base, &change);
        assert!(check.passed && check.weakens.is_none() && issue.is_none());
        assert!(
            check
                .detail
                .contains("failed on the base, failed on the change")
        );
    }

    #[test]
    fn copies_without_records_leave_the_check_not_judged() {
        let base = record("error: could not compile", &[]);
        let change = record("error: could not compile", &[]);
        let (check, issue) = judge_perturbed(&plan(2), Runner::Cargo, &base, &change);
        assert_eq!(check.weakens, Some(crate::evidence::Weakness::NotJudged));
        assert!(issue.is_none());
    }
}
