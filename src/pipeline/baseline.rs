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
//! Time: each form wider than the reproduction's own files is stopped at
//! `test.suite-budget-ms`, and together they get at most [`ATTEMPTS_BUDGET_FACTOR`] times
//! it; a form left when that share is spent is recorded as not run. The reproduction's own
//! files (the last form) run like the reproduction, under the command timeout only. So the
//! attempts cost at most twice the suite budget plus one run of the reproduction's files.
//!
//! Estimate: before a wider form runs, its runner lists its tests when it can (see
//! `suite/listing.rs`); the form's cost is the listing's own time plus the count times the
//! reproduction's time per test (its run less its own listing's time, over its tests). A form
//! estimated over the time it could have is recorded with its estimate and never run; the
//! forms' listings' time counts in the wider forms' share. A form whose runner lists nothing runs
//! with what is left of that share, at most one suite budget, so the next form still has
//! its own.

use std::time::Duration;

use crate::evidence::{
    BaselineVerdict, CommandRecord, ListedUnit, Phase, Purpose, SuiteAttempt, SuiteChoice,
    SuiteEstimate, SuiteFormKind, duration_text,
};
use crate::testreport::TestStatus;

use super::PipelineError;
use super::ctx::Ctx;
use super::suite::Listing;

/// The forms wider than the reproduction's files share this many suite budgets.
pub(crate) const ATTEMPTS_BUDGET_FACTOR: u32 = 2;

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

/// What one listing found: its run, how many it counted and how long it took.
#[derive(Debug, Clone, Copy)]
struct Listed {
    id: usize,
    count: u64,
    duration_ms: u64,
}

/// The reproduction's measured cost of one listed unit, in microseconds, with the run it was
/// measured on.
#[derive(Debug, Clone, Copy)]
struct Rate {
    reproduction: usize,
    per_unit_us: u64,
}

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
    // Measured once, at the first form whose runner lists its tests.
    let mut rate: Option<Option<Rate>> = None;
    for form in forms {
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
        let listing = limit
            .and_then(|_| crate::policy::command::split(&form.command).ok())
            .and_then(|argv| super::suite::listing(&argv));
        let mut estimate = None;
        if let (Some(limit), Some(listing)) = (limit, listing) {
            if rate.is_none() {
                let Some(measured) = measure_rate(ctx, &listing, limit)? else {
                    return Ok(None);
                };
                rate = Some(measured);
            }
            if let Some(rate) = rate.flatten() {
                let left = share.saturating_sub(spent).min(limit);
                let Some((took, found)) = estimate_form(ctx, &listing, left, rate, None)? else {
                    return Ok(None);
                };
                spent += took;
                let limit_ms = millis(share.saturating_sub(spent).min(budget));
                match found {
                    Some((found, listed)) if found.estimate_ms > limit_ms => {
                        let detail = over_estimate(&found, listed, rate, limit_ms);
                        ctx.reporter.info(&format!(
                            "the suite `{}` is not run: {detail}",
                            form.command
                        ));
                        attempts.push(SuiteAttempt {
                            kind: form.kind,
                            command: form.command,
                            baseline: None,
                            estimate: Some(found),
                            verdict: BaselineVerdict::EstimatedOverBudget,
                            detail,
                        });
                        continue;
                    }
                    found => estimate = found.map(|(found, _)| found),
                }
            }
        }
        let limit = limit.map(|limit| share.saturating_sub(spent).min(limit));
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
        let (verdict, detail) = judge(reproduction, record, limit_ms);
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

/// A form's estimate and the listing it comes from.
type Estimated = (SuiteEstimate, Listed);

/// List a form within `limit` and estimate its run at `rate`: the listing's time, and the
/// estimate with its listing when the listing counted something. `None` when the run must
/// stop.
fn estimate_form(
    ctx: &mut Ctx<'_>,
    listing: &Listing,
    limit: Duration,
    rate: Rate,
    round: Option<u32>,
) -> Result<Option<(Duration, Option<Estimated>)>, PipelineError> {
    let Some((took, listed)) = list(ctx, listing, limit, round)? else {
        return Ok(None);
    };
    let found = listed.map(|listed| {
        let tests_ms = listed.count.saturating_mul(rate.per_unit_us) / 1000;
        let estimate = SuiteEstimate {
            listing: listed.id,
            unit: listing.unit,
            count: listed.count,
            estimate_ms: listed.duration_ms.saturating_add(tests_ms),
        };
        (estimate, listed)
    });
    Ok(Some((took, found)))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Run a listing within `limit` (recorded in Reproduce, or in Prevent for a fix round's
/// related form): the time it took and its count. `None` when the run must stop; no count
/// when the listing named nothing (it failed, or its runner printed no list).
fn list(
    ctx: &mut Ctx<'_>,
    listing: &Listing,
    limit: Duration,
    round: Option<u32>,
) -> Result<Option<(Duration, Option<Listed>)>, PipelineError> {
    let Ok(command) = shlex::try_join(listing.argv.iter().map(String::as_str)) else {
        return Ok(Some((Duration::ZERO, None)));
    };
    let phase = if round.is_some() {
        Phase::Prevent
    } else {
        Phase::Reproduce
    };
    let id = ctx.run_command_within(&command, phase, Purpose::SuiteListing, round, Some(limit))?;
    ctx.restore()?;
    let Some(id) = id else {
        return Ok(None);
    };
    let Some(outcome) = ctx.evidence.command(id).and_then(|r| r.outcome.as_ref()) else {
        return Ok(Some((Duration::ZERO, None)));
    };
    let took = Duration::from_millis(outcome.duration_ms);
    let count = (!outcome.timed_out)
        .then(|| listing.count(&outcome.stdout))
        .flatten();
    Ok(Some((
        took,
        count.map(|count| Listed {
            id,
            count,
            duration_ms: outcome.duration_ms,
        }),
    )))
}

/// The reproduction's time per listed unit: its first run's time less its own listing's
/// (the runner's start and collection), over the units its report names. `None` when the
/// run must stop; `Some(None)` when it cannot be measured.
fn measure_rate(
    ctx: &mut Ctx<'_>,
    form: &Listing,
    limit: Duration,
) -> Result<Option<Option<Rate>>, PipelineError> {
    let Some(run) = ctx
        .evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first().copied())
    else {
        return Ok(Some(None));
    };
    let Some(record) = ctx.evidence.command(run) else {
        return Ok(Some(None));
    };
    let units = units(record, form.unit);
    let ran_ms = record.outcome.as_ref().map_or(0, |o| o.duration_ms);
    let own = own_listing(record, form.unit);
    let (Some(own), true) = (own, units > 0) else {
        return Ok(Some(None));
    };
    // Measuring the rate is the reproduction's cost, not a form's: it takes none of their share.
    let Some((_, listed)) = list(ctx, &own, limit, None)? else {
        return Ok(None);
    };
    Ok(Some(listed.map(|listed| {
        Rate {
            reproduction: run,
            per_unit_us: ran_ms
                .saturating_sub(listed.duration_ms)
                .saturating_mul(1000)
                / units,
        }
    })))
}

/// How many units of `unit` the reproduction's run `record` names.
fn units(record: &CommandRecord, unit: ListedUnit) -> u64 {
    record.tests.as_ref().map_or(0, |report| match unit {
        ListedUnit::Tests => report.passed + report.failed + report.skipped,
        ListedUnit::TestFiles => {
            let mut files: Vec<&str> = report
                .tests
                .iter()
                .filter_map(|t| t.file.as_deref())
                .collect();
            files.sort_unstable();
            files.dedup();
            files.len().max(1) as u64
        }
    })
}

/// The reproduction's own listing, when it counts `unit`.
fn own_listing(record: &CommandRecord, unit: ListedUnit) -> Option<Listing> {
    crate::policy::command::split(&record.command)
        .ok()
        .and_then(|argv| super::suite::listing(&argv))
        .filter(|own| own.unit == unit)
}

/// The rate measured before the fix, read back from the evidence: the reproduction's first
/// run and its own listing's recorded run. `None` when none was measured.
fn recorded_rate(ctx: &Ctx<'_>, unit: ListedUnit) -> Option<Rate> {
    let run = ctx.evidence.reproduction.as_ref()?.runs.first().copied()?;
    let record = ctx.evidence.command(run)?;
    let own = own_listing(record, unit)?;
    let command = shlex::try_join(own.argv.iter().map(String::as_str)).ok()?;
    let listed = ctx.evidence.commands.iter().find(|c| {
        c.purpose == Purpose::SuiteListing && c.round.is_none() && c.command == command
    })?;
    let outcome = listed.outcome.as_ref().filter(|o| !o.timed_out)?;
    own.count(&outcome.stdout)?;
    let units = units(record, unit);
    let ran_ms = record.outcome.as_ref().map_or(0, |o| o.duration_ms);
    (units > 0).then(|| Rate {
        reproduction: run,
        per_unit_us: ran_ms
            .saturating_sub(outcome.duration_ms)
            .saturating_mul(1000)
            / units,
    })
}

/// A related form's estimate, and why it is not run when it is over its limit.
pub(crate) type RelatedEstimate = (SuiteEstimate, Option<String>);

/// A fix round's related form estimated before it runs, at the rate measured on the
/// reproduction before the fix: the estimate, and why it is not run when it is over `limit`.
/// `None` when the run must stop; `Some(None)` when it cannot be estimated (its runner lists
/// nothing, or no rate was measured). The listing leaves the tree restored.
pub(crate) fn estimate_related(
    ctx: &mut Ctx<'_>,
    argv: &[String],
    limit: Duration,
    round: u32,
) -> Result<Option<Option<RelatedEstimate>>, PipelineError> {
    let Some(listing) = super::suite::listing(argv) else {
        return Ok(Some(None));
    };
    let Some(rate) = recorded_rate(ctx, listing.unit) else {
        return Ok(Some(None));
    };
    let Some((_, found)) = estimate_form(ctx, &listing, limit, rate, Some(round))? else {
        return Ok(None);
    };
    let limit_ms = millis(limit);
    Ok(Some(found.map(|(estimate, listed)| {
        let over = (estimate.estimate_ms > limit_ms)
            .then(|| over_estimate(&estimate, listed, rate, limit_ms));
        (estimate, over)
    })))
}

/// Why a form was not run, in words: its listing, the rate, the estimate and the limit.
fn over_estimate(estimate: &SuiteEstimate, listed: Listed, rate: Rate, limit_ms: u64) -> String {
    let (plural, singular) = match estimate.unit {
        ListedUnit::Tests => ("tests", "test"),
        ListedUnit::TestFiles => ("test files", "test file"),
    };
    format!(
        "not run: its runner lists {} {plural} (#{}, {}); at {} a {singular} as measured on \
         the reproduction (#{}), it would take about {}, more than the {} it could have \
         (`test.suite-budget-ms`)",
        estimate.count,
        listed.id,
        duration_text(listed.duration_ms),
        per_unit_text(rate.per_unit_us),
        rate.reproduction,
        duration_text(estimate.estimate_ms),
        duration_text(limit_ms),
    )
}

/// A time per unit, in the evidence's words for durations.
fn per_unit_text(us: u64) -> String {
    if us < 1000 {
        "under 1 ms".to_owned()
    } else {
        duration_text(us / 1000)
    }
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
    use super::*;
    use crate::evidence::PolicyDecision;
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

    #[test]
    fn a_form_estimated_over_its_time_says_what_was_listed_and_at_what_rate() {
        let listed = Listed {
            id: 2,
            count: 12_700,
            duration_ms: 4_200,
        };
        let estimate = SuiteEstimate {
            listing: 2,
            unit: ListedUnit::Tests,
            count: 12_700,
            estimate_ms: 4_200 + 12_700 * 50,
        };
        let rate = Rate {
            reproduction: 0,
            per_unit_us: 50_000,
        };
        assert_eq!(
            over_estimate(&estimate, listed, rate, 600_000),
            "not run: its runner lists 12700 tests (#2, 4.20 s); at 50 ms a test as measured on \
             the reproduction (#0), it would take about 639.20 s, more than the 600.00 s it \
             could have (`test.suite-budget-ms`)"
        );
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
