//! The derived suite's baseline: run its forms before the fix, widest first, until one is a
//! baseline, and record every attempt with why it was dropped.
//!
//! A run counts as a baseline only if it ran the tests it claims: it did not stop before its
//! tests ran (a collection error that interrupted the session, a runner abort, a
//! `process.exit`, a crash, a usage error, no test at all), it stayed within the suite budget,
//! and its report holds the reproduction's own tests with the status the reproduction gave
//! them (failing tests by name always; passing ones where the output names passes). "No test
//! that passed before fails now" proves nothing over a run in which nothing ran.
//!
//! Time: the forms wider than the reproduction's own files share [`ATTEMPTS_BUDGET_FACTOR`]
//! suite budget(s) (`test.suite-budget-ms`), each at most one budget; a form left when that
//! share is spent is recorded as not run. The reproduction's own files (the last form) run like
//! the reproduction, under the command timeout only. So the attempts cost at most one suite
//! budget plus one run of the reproduction's files.
//!
//! Estimate: before a wider form runs, its tests are counted, by its runner's listing when it
//! has one (`suite/listing.rs`) or statically from its files (`suite/count.rs`), and its cost
//! estimated as a start-up plus the count times the reproduction's time per test. The rate is
//! measured once on the reproduction's first run: the test time its runner reports (`Ran 1
//! test in 0.004s`) over its tests, the rest of its wall time being the start-up; without a
//! reported time, its wall time less its own listing's; without either, its whole wall time
//! (every test then counts a start-up). The form's start-up is its listing's time when it has
//! one; counted statically, it is the reproduction's start-up per test file times the form's
//! files (modules are imported, node:test starts a process per file, Django sets up each app).
//! A form estimated over the time it could have is recorded with its estimate and never run;
//! the forms' listings' time counts in the share.
//!
//! The rate comes from the reproduction's few tests, picked because they fail, not because
//! they are typical: a wider form of slower tests is underestimated. So a form estimated within
//! its time runs for at most [`ESTIMATE_TOLERANCE`] times its estimate (never less than
//! [`ESTIMATE_FLOOR`]); stopped there, it is recorded as over its estimate and the next form
//! still has its time. A form with no estimate at all (no listing, nothing counted) gets half
//! of what is left of the share when a wider form follows it, so that form keeps the other half.

use std::time::Duration;

use crate::evidence::{
    BaselineVerdict, CommandRecord, Phase, Purpose, SuiteAttempt, SuiteChoice, SuiteFormKind,
    duration_text,
};
use crate::testreport::TestStatus;

use super::PipelineError;
use super::ctx::Ctx;
use super::estimate::{
    ESTIMATE_TOLERANCE, Sample, count_form, estimated, measure, millis, over_estimate, run_limit,
    tolerated,
};

/// The forms wider than the reproduction's files share this many suite budgets.
pub(crate) const ATTEMPTS_BUDGET_FACTOR: u32 = 1;

/// Output lines (lowercased) that show a session stopped before its tests ran; every part of
/// one entry must be on the line. pytest's interrupted collection and internal errors, jest's
/// `process.exit` and unknown options, argparse's usage errors, go's test timeout.
const STOP_MARKERS: &[&[&str]] = &[
    &["interrupted:", "during collection"],
    &["internalerror>"],
    &["process.exit called with"],
    &["unrecognized cli parameter"],
    &["error: unrecognized arguments"],
    &["panic: test timed out"],
];

/// Lines of the reproduction's tests quoted in an attempt's detail.
const MISSING_QUOTED: usize = 5;

/// Run the derived suite's forms before the fix until one establishes a baseline. Returns
/// the chosen form and its baseline run (`Some(None)` when none did), or `None` when the run
/// must stop. The tree is restored after each form.
pub(crate) fn choose(ctx: &mut Ctx<'_>) -> Result<Option<Option<(String, usize)>>, PipelineError> {
    let forms = ctx.evidence.request.suite_forms.clone();
    let budget = ctx.config.test.suite_budget;
    let share = budget.saturating_mul(ATTEMPTS_BUDGET_FACTOR);
    let mut spent = Duration::ZERO;
    let mut attempts = Vec::new();
    let mut chosen = None;
    // Measured once, at the first form that is counted.
    let mut sample: Option<Option<Sample>> = None;
    for (at, form) in forms.iter().cloned().enumerate() {
        let wider_follows = forms[at + 1..]
            .iter()
            .any(|f| f.kind != SuiteFormKind::ReproductionFiles);
        let limit = match form.kind {
            SuiteFormKind::ReproductionFiles => None,
            _ => {
                let left = share.saturating_sub(spent);
                if left.is_zero() {
                    attempts.push(SuiteAttempt {
                        kind: form.kind,
                        command: form.command,
                        baseline: None,
                        estimate: None,
                        verdict: BaselineVerdict::NotRun,
                        detail: format!(
                            "not run: the wider forms before it used the time they share \
                             ({ATTEMPTS_BUDGET_FACTOR} × the suite budget)"
                        ),
                    });
                    continue;
                }
                Some(left.min(budget))
            }
        };
        let mut estimate = None;
        if let Some(limit) = limit {
            let Some((took, counted)) = count_form(ctx, &form.command, limit, None)? else {
                return Ok(None);
            };
            spent += took;
            if let Some(counted) = counted {
                if sample.is_none() {
                    let Some(measured) = measure(ctx, counted.unit, limit, None)? else {
                        return Ok(None);
                    };
                    sample = Some(measured);
                }
                estimate = sample
                    .flatten()
                    .and_then(|sample| estimated(counted, sample));
            }
            let limit_ms = millis(share.saturating_sub(spent).min(budget));
            if let Some(found) = estimate.as_ref().filter(|e| e.estimate_ms > limit_ms) {
                let detail = over_estimate(found, limit_ms);
                ctx.reporter.info(&format!(
                    "the suite `{}` is not run: {detail}",
                    form.command
                ));
                attempts.push(SuiteAttempt {
                    kind: form.kind,
                    command: form.command,
                    baseline: None,
                    estimate,
                    verdict: BaselineVerdict::EstimatedOverBudget,
                    detail,
                });
                continue;
            }
        }
        let left = share.saturating_sub(spent);
        let limit = limit.map(|_| run_limit(left, budget, estimate.as_ref(), wider_follows));
        let id = ctx.run_command_within(
            &form.command,
            Phase::Reproduce,
            Purpose::SuiteBaseline,
            None,
            limit,
        )?;
        ctx.restore()?;
        let Some(id) = id else {
            return Ok(None);
        };
        let reproduction = ctx
            .evidence
            .reproduction
            .as_ref()
            .and_then(|r| r.runs.first())
            .and_then(|id| ctx.evidence.command(*id));
        let Some(record) = ctx.evidence.command(id) else {
            continue;
        };
        let duration_ms = record.outcome.as_ref().map_or(0, |o| o.duration_ms);
        spent += Duration::from_millis(duration_ms);
        let limit_ms = limit.map(millis);
        let (mut verdict, mut detail) = judge(reproduction, record, limit_ms);
        if let (BaselineVerdict::OverBudget, Some(found), Some(limit_ms)) =
            (verdict, &estimate, limit_ms)
            && limit_ms == millis(tolerated(found))
        {
            verdict = BaselineVerdict::OverEstimate;
            detail = format!(
                "stopped at {}, {ESTIMATE_TOLERANCE} × its estimate of {}: its tests are slower \
                 than the reproduction's (#{})",
                duration_text(limit_ms),
                duration_text(found.estimate_ms),
                found.reproduction,
            );
        }
        if verdict == BaselineVerdict::Established {
            chosen = Some((form.command.clone(), id));
        } else {
            ctx.reporter.warn(&format!(
                "the suite `{}` is not a baseline: {detail}",
                form.command
            ));
        }
        attempts.push(SuiteAttempt {
            kind: form.kind,
            command: form.command,
            baseline: Some(id),
            estimate,
            verdict,
            detail,
        });
        if chosen.is_some() {
            break;
        }
    }
    if let Some(repro) = ctx.evidence.reproduction.as_mut() {
        repro.suite_choice = Some(SuiteChoice {
            attempts,
            chosen: chosen.as_ref().map(|(command, _)| command.clone()),
            budget_ms: ctx.evidence.request.suite_budget_ms,
        });
    }
    Ok(Some(chosen))
}

/// Whether `run` is a baseline for the reproduction's tests, and why in words. `limit_ms` is
/// the time the run was given, when it had a budget.
pub(crate) fn judge(
    reproduction: Option<&CommandRecord>,
    run: &CommandRecord,
    limit_ms: Option<u64>,
) -> (BaselineVerdict, String) {
    let Some(outcome) = &run.outcome else {
        let why = run.policy.message.clone().unwrap_or_default();
        return (BaselineVerdict::NotRun, format!("refused: {why}"));
    };
    if let Some(limit) = limit_ms
        && (outcome.timed_out || outcome.duration_ms >= limit)
    {
        return (
            BaselineVerdict::OverBudget,
            format!(
                "its run took longer than {} (`test.suite-budget-ms`)",
                duration_text(limit)
            ),
        );
    }
    if outcome.timed_out {
        return (
            BaselineVerdict::StoppedEarly,
            "it timed out (`commands.timeout-ms`)".to_owned(),
        );
    }
    if outcome.exit_code.is_none() {
        return (
            BaselineVerdict::StoppedEarly,
            format!(
                "it was killed by {} before it finished",
                outcome.signal.as_deref().unwrap_or("a signal")
            ),
        );
    }
    if !run.succeeded()
        && let Some(line) = stop_line(&outcome.stdout, &outcome.stderr)
    {
        return (
            BaselineVerdict::StoppedEarly,
            format!("it stopped before its tests ran (`{line}`)"),
        );
    }
    if run.ran_no_tests() {
        return (BaselineVerdict::NoTests, "it ran no test".to_owned());
    }
    let expected = reproduction.and_then(|r| r.tests.as_ref());
    let Some(expected) = expected.filter(|e| !e.tests.is_empty()) else {
        return (
            BaselineVerdict::Established,
            "ran; the reproduction names no test to look for".to_owned(),
        );
    };
    let Some(report) = &run.tests else {
        return (
            BaselineVerdict::MissingTests,
            "its output gives no per-test results, so the reproduction's tests cannot be \
             found in it"
                .to_owned(),
        );
    };
    let missing: Vec<String> = expected
        .tests
        .iter()
        .filter(|case| match case.status {
            TestStatus::Failed => true,
            TestStatus::Passed => report.lists_passed,
            TestStatus::Skipped => false,
        })
        .filter(|case| {
            let found = report
                .tests
                .iter()
                .find(|t| t.id() == case.id() || t.name == case.name)
                .map(|t| t.status)
                .or_else(|| report.status_of(&case.name));
            found != Some(case.status)
        })
        .map(|case| {
            let word = match case.status {
                TestStatus::Failed => "failing",
                _ => "passing",
            };
            format!("`{}` ({word})", case.name)
        })
        .collect();
    if missing.is_empty() {
        return (
            BaselineVerdict::Established,
            format!(
                "{}, the reproduction's tests among them",
                report.counts_text()
            ),
        );
    }
    let more = missing.len().saturating_sub(MISSING_QUOTED);
    let mut quoted = missing[..missing.len().min(MISSING_QUOTED)].join(", ");
    if more > 0 {
        quoted.push_str(&format!(" and {more} more"));
    }
    (
        BaselineVerdict::MissingTests,
        format!("it does not report the reproduction's tests as the reproduction did: {quoted}"),
    )
}

/// The first output line (stderr first) that shows the session stopped, clipped.
fn stop_line(stdout: &str, stderr: &str) -> Option<String> {
    stderr
        .lines()
        .chain(stdout.lines())
        .find(|line| {
            let lower = line.to_ascii_lowercase();
            STOP_MARKERS
                .iter()
                .any(|parts| parts.iter().all(|part| lower.contains(part)))
        })
        .map(|line| {
            let line = line.trim().trim_matches(['=', '!']).trim();
            match line.char_indices().nth(160) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line.to_owned(),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::super::estimate::*;
    use super::*;
    use crate::evidence::PolicyDecision;
    use crate::evidence::{CountSource, ListedUnit, RateSource, SuiteEstimate};
    use crate::testreport::{TestCase, TestReport};

    fn record(exit: i32, stdout: &str, tests: Option<TestReport>, ms: u64) -> CommandRecord {
        let outcome = crate::runner::Outcome {
            argv: vec!["x".into()],
            exit_code: Some(exit),
            signal: None,
            timed_out: false,
            duration_ms: ms,
            stdout: stdout.to_owned(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            redactions: Default::default(),
            sandbox: Default::default(),
        };
        CommandRecord {
            id: 0,
            phase: Phase::Reproduce,
            purpose: Purpose::SuiteBaseline,
            round: None,
            command: "x".to_owned(),
            policy: PolicyDecision::allowed(),
            outcome: Some(outcome),
            tests,
            confirms: None,
            channel: None,
        }
    }

    fn report(cases: &[(&str, TestStatus)], lists_passed: bool) -> TestReport {
        let count = |s| cases.iter().filter(|(_, status)| *status == s).count() as u64;
        TestReport {
            format: "pytest".to_owned(),
            tests: cases
                .iter()
                .map(|(name, status)| TestCase {
                    name: (*name).to_owned(),
                    status: *status,
                    file: None,
                })
                .collect(),
            passed: count(TestStatus::Passed),
            failed: count(TestStatus::Failed),
            skipped: 0,
            errors: 0,
            lists_passed,
        }
    }

    fn estimate(source: CountSource, rate: RateSource) -> SuiteEstimate {
        SuiteEstimate {
            source,
            listing: (source == CountSource::Listing).then_some(2),
            files: (source == CountSource::CountedStatically).then_some(1_900),
            unit: ListedUnit::Tests,
            count: 17_441,
            reproduction: 0,
            rate,
            startup_ms: 1_400,
            per_unit_us: 50_000,
            estimate_ms: 1_400 + 17_441 * 50,
        }
    }

    #[test]
    fn a_form_estimated_over_its_time_says_how_it_was_counted_and_at_what_rate() {
        assert_eq!(
            over_estimate(
                &estimate(CountSource::Listing, RateSource::RunLessListing),
                600_000
            ),
            "not run: its runner lists 17441 tests (#2); at 50 ms a test as measured on the \
             reproduction (#0) plus a start-up of 1.40 s, it would take about 873.45 s, more \
             than the 600.00 s it could have (`test.suite-budget-ms`)"
        );
        assert_eq!(
            over_estimate(
                &estimate(CountSource::CountedStatically, RateSource::Reported),
                600_000
            ),
            "not run: counted statically, it has 17441 tests in 1900 files; at 50 ms a test as \
             its runner reported for the reproduction (#0) plus a start-up of 1.40 s (under 1 ms \
             a file), it would take about 873.45 s, more than the 600.00 s it could have \
             (`test.suite-budget-ms`)"
        );
    }

    #[test]
    fn the_rate_leaves_the_start_up_out_of_the_time_per_test() {
        let sample = Sample {
            reproduction: 0,
            wall_ms: 1_500,
            startup_ms: 1_496,
            source: RateSource::Reported,
            tests: 4,
            files: 1,
            startup_files: 1,
        };
        assert_eq!(sample.per_unit_us(ListedUnit::Tests), Some(1_000));
        assert_eq!(sample.per_unit_us(ListedUnit::TestFiles), Some(4_000));
        let counted = Count {
            source: CountSource::CountedStatically,
            unit: ListedUnit::Tests,
            count: 17_441,
            listing: None,
            files: Some(1_900),
        };
        // Counted statically, the start-up is the reproduction's per file, over the form's files.
        let found = estimated(counted, sample).unwrap();
        assert_eq!(found.startup_ms, 1_496 * 1_900);
        assert_eq!(found.estimate_ms, 1_496 * 1_900 + 17_441);
        let two_files = Sample {
            startup_files: 2,
            ..sample
        };
        assert_eq!(
            estimated(counted, two_files).unwrap().startup_ms,
            1_496 * 950
        );
        // A listing's time is the form's own start-up when it is longer than the reproduction's.
        let listed = Count {
            source: CountSource::Listing,
            listing: Some((3, 4_000)),
            files: None,
            ..counted
        };
        assert_eq!(estimated(listed, sample).unwrap().startup_ms, 4_000);
        let none = Sample { tests: 0, ..sample };
        assert_eq!(estimated(counted, none), None);
    }

    #[test]
    fn a_form_within_its_estimate_is_stopped_at_a_multiple_of_it_never_under_the_floor() {
        let mut found = estimate(CountSource::CountedStatically, RateSource::Reported);
        found.estimate_ms = 24_000;
        assert_eq!(tolerated(&found), Duration::from_secs(48));
        found.estimate_ms = 300;
        assert_eq!(tolerated(&found), ESTIMATE_FLOOR);
    }

    #[test]
    fn an_unestimated_form_leaves_half_of_the_share_to_the_wider_form_after_it() {
        let budget = Duration::from_secs(600);
        let left = budget;
        assert_eq!(
            run_limit(left, budget, None, true),
            Duration::from_secs(300)
        );
        assert_eq!(run_limit(left, budget, None, false), budget);
        assert_eq!(
            run_limit(Duration::from_secs(100), budget, None, false),
            Duration::from_secs(100)
        );
        let mut found = estimate(CountSource::CountedStatically, RateSource::Reported);
        found.estimate_ms = 24_000;
        assert_eq!(
            run_limit(left, budget, Some(&found), true),
            Duration::from_secs(48)
        );
        found.estimate_ms = 500_000;
        assert_eq!(run_limit(left, budget, Some(&found), true), budget);
    }

    #[test]
    fn a_suite_holding_the_reproduction_failing_test_is_a_baseline() {
        let repro = record(
            1,
            "",
            Some(report(&[("t::a", TestStatus::Failed)], false)),
            5,
        );
        let suite = record(
            1,
            "",
            Some(report(
                &[("t::a", TestStatus::Failed), ("t::b", TestStatus::Passed)],
                true,
            )),
            5,
        );
        assert_eq!(
            judge(Some(&repro), &suite, Some(1000)).0,
            BaselineVerdict::Established
        );
    }

    #[test]
    fn an_interrupted_collection_is_not_a_baseline_even_with_no_test_parsed() {
        let repro = record(
            1,
            "",
            Some(report(&[("t::a", TestStatus::Failed)], false)),
            5,
        );
        let out = "ERROR collecting stray.py\n!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!\n";
        let mut collapsed = report(&[], false);
        collapsed.errors = 1;
        let (verdict, detail) = judge(Some(&repro), &record(2, out, Some(collapsed), 5), None);
        assert_eq!(verdict, BaselineVerdict::StoppedEarly);
        assert_eq!(
            detail,
            "it stopped before its tests ran (`Interrupted: 1 error during collection`)"
        );
    }

    #[test]
    fn a_suite_without_the_reproduction_test_or_with_another_status_is_dropped() {
        let repro = record(
            1,
            "",
            Some(report(&[("t::a", TestStatus::Failed)], false)),
            5,
        );
        let other = record(
            1,
            "",
            Some(report(&[("t::z", TestStatus::Failed)], false)),
            5,
        );
        assert_eq!(
            judge(Some(&repro), &other, None),
            (
                BaselineVerdict::MissingTests,
                "it does not report the reproduction's tests as the reproduction did: `t::a` \
                 (failing)"
                    .to_owned()
            )
        );
        let passing = record(
            0,
            "",
            Some(report(&[("t::a", TestStatus::Passed)], true)),
            5,
        );
        assert_eq!(
            judge(Some(&repro), &passing, None).0,
            BaselineVerdict::MissingTests
        );
    }

    #[test]
    fn a_run_over_its_budget_or_with_no_test_is_dropped() {
        let repro = record(
            1,
            "",
            Some(report(&[("t::a", TestStatus::Failed)], false)),
            5,
        );
        let slow = record(
            1,
            "",
            Some(report(&[("t::a", TestStatus::Failed)], false)),
            50,
        );
        assert_eq!(
            judge(Some(&repro), &slow, Some(50)).0,
            BaselineVerdict::OverBudget
        );
        let empty = record(5, "", Some(report(&[], false)), 5);
        assert_eq!(
            judge(Some(&repro), &empty, None).0,
            BaselineVerdict::NoTests
        );
    }
}
