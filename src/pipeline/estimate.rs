//! Estimating a suite form before it runs: its count (its runner's listing, else counted
//! statically), the reproduction's measured start-up and time per test, and from them the
//! estimate, the time a form may run for, and the words for one not run. Used for the derived
//! suite's forms before the fix (`baseline`) and a round's related form (`related`).

use std::time::Duration;

use crate::evidence::{
    CountSource, ListedUnit, Phase, Purpose, RateSource, SuiteEstimate, duration_text,
};

use super::PipelineError;
use super::ctx::Ctx;
use super::suite::Listing;

/// A form estimated within its time is stopped at this many times its estimate.
pub(super) const ESTIMATE_TOLERANCE: u32 = 2;

/// The least time a form estimated within its time is given: below it, start-up noise on a
/// loaded machine would stop quick forms that fit.
pub(super) const ESTIMATE_FLOOR: Duration = Duration::from_secs(30);

/// What one count found: how many, and the listing run it comes from (none when counted
/// statically) with its time, or the files read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Count {
    pub(super) source: CountSource,
    pub(super) unit: ListedUnit,
    pub(super) count: u64,
    pub(super) listing: Option<(usize, u64)>,
    pub(super) files: Option<u64>,
}

/// The reproduction's measured start-up and test time, with the run they were measured on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sample {
    pub(super) reproduction: usize,
    pub(super) wall_ms: u64,
    pub(super) startup_ms: u64,
    pub(super) source: RateSource,
    pub(super) tests: u64,
    pub(super) files: u64,
    /// The reproduction's test files as a static count reads them (at least one): its start-up
    /// is spread over them for forms counted statically.
    pub(super) startup_files: u64,
}

impl Sample {
    /// The time per unit in microseconds; `None` when the reproduction ran none.
    pub(super) fn per_unit_us(&self, unit: ListedUnit) -> Option<u64> {
        let units = match unit {
            ListedUnit::Tests => self.tests,
            ListedUnit::TestFiles => self.files,
        };
        (units > 0).then(|| {
            self.wall_ms
                .saturating_sub(self.startup_ms)
                .saturating_mul(1000)
                / units
        })
    }
}

/// The time a wider form runs for: what is left of the share, at most one budget; at most a
/// multiple of its estimate when it has one, else half of what is left when a wider form
/// follows it (that form keeps the other half).
pub(super) fn run_limit(
    left: Duration,
    budget: Duration,
    estimate: Option<&SuiteEstimate>,
    wider_follows: bool,
) -> Duration {
    let limit = left.min(budget);
    match estimate {
        Some(found) => limit.min(tolerated(found)),
        None if wider_follows => limit.min(left / 2),
        None => limit,
    }
}

/// The time a form estimated within its time may run: a multiple of its estimate, never
/// under the floor.
pub(super) fn tolerated(estimate: &SuiteEstimate) -> Duration {
    Duration::from_millis(
        estimate
            .estimate_ms
            .saturating_mul(u64::from(ESTIMATE_TOLERANCE)),
    )
    .max(ESTIMATE_FLOOR)
}

/// A form's estimate from its count and the reproduction's sample; `None` when the sample
/// has no unit of the count's kind.
pub(super) fn estimated(counted: Count, sample: Sample) -> Option<SuiteEstimate> {
    let per_unit_us = sample.per_unit_us(counted.unit)?;
    let startup_ms = match (counted.listing, counted.files) {
        (Some((_, listing_ms)), _) => listing_ms.max(sample.startup_ms),
        // No listing measured the form's own start-up: it grows with its files (imports,
        // node:test's process per file, Django's apps), at the reproduction's per file.
        (None, Some(files)) => (sample.startup_ms.saturating_mul(files)
            / sample.startup_files.max(1))
        .max(sample.startup_ms),
        (None, None) => sample.startup_ms,
    };
    let tests_ms = counted.count.saturating_mul(per_unit_us) / 1000;
    Some(SuiteEstimate {
        source: counted.source,
        listing: counted.listing.map(|(id, _)| id),
        files: counted.files,
        unit: counted.unit,
        count: counted.count,
        reproduction: sample.reproduction,
        rate: sample.source,
        startup_ms,
        per_unit_us,
        estimate_ms: startup_ms.saturating_add(tests_ms),
    })
}

/// Count a form's tests within `limit`: its runner's listing when it has one (the listing's
/// time is returned), else statically. `None` when the run must stop; no count when nothing
/// could be counted.
pub(super) fn count_form(
    ctx: &mut Ctx<'_>,
    command: &str,
    limit: Duration,
    round: Option<u32>,
) -> Result<Option<(Duration, Option<Count>)>, PipelineError> {
    let Ok(argv) = crate::policy::command::split(command) else {
        return Ok(Some((Duration::ZERO, None)));
    };
    if let Some(listing) = super::suite::listing(&argv) {
        return list(ctx, &listing, limit, round);
    }
    let counted = super::suite::count(&argv, &ctx.root)
        .filter(|c| c.tests > 0)
        .map(|c| Count {
            source: CountSource::CountedStatically,
            unit: ListedUnit::Tests,
            count: c.tests,
            listing: None,
            files: Some(c.files),
        });
    Ok(Some((Duration::ZERO, counted)))
}

pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Run a listing within `limit`: the time it took and its count. `None` when the run must
/// stop; no count when the listing named nothing (it failed, or its runner printed no list).
pub(super) fn list(
    ctx: &mut Ctx<'_>,
    listing: &Listing,
    limit: Duration,
    round: Option<u32>,
) -> Result<Option<(Duration, Option<Count>)>, PipelineError> {
    let Ok(command) = shlex::try_join(listing.argv.iter().map(String::as_str)) else {
        return Ok(Some((Duration::ZERO, None)));
    };
    // Before the fix, or in a fix round (a related form's listing).
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
        count.map(|count| Count {
            source: CountSource::Listing,
            unit: listing.unit,
            count,
            listing: Some((id, outcome.duration_ms)),
            files: None,
        }),
    )))
}

/// The reproduction's start-up and test time, from its first run: the test time its runner
/// reported, else its wall time less its own listing's (run within `limit` when its unit is
/// `unit`), else its whole wall time. `None` when the run must stop; `Some(None)` when it ran
/// no test to measure.
pub(super) fn measure(
    ctx: &mut Ctx<'_>,
    unit: ListedUnit,
    limit: Duration,
    round: Option<u32>,
) -> Result<Option<Option<Sample>>, PipelineError> {
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
    let Some(outcome) = record.outcome.as_ref() else {
        return Ok(Some(None));
    };
    let (tests, files) = record.tests.as_ref().map_or((0, 0), |report| {
        let mut files: Vec<&str> = report
            .tests
            .iter()
            .filter_map(|t| t.file.as_deref())
            .collect();
        files.sort_unstable();
        files.dedup();
        let tests = report.passed + report.failed + report.skipped;
        (tests, files.len().max(1) as u64)
    });
    if tests == 0 {
        return Ok(Some(None));
    }
    let wall_ms = outcome.duration_ms;
    let startup_files = crate::policy::command::split(&record.command)
        .ok()
        .and_then(|argv| super::suite::count(&argv, &ctx.root))
        .map_or(files, |counted| counted.files)
        .max(1);
    let sample = |startup_ms: u64, source| Sample {
        reproduction: run,
        wall_ms,
        startup_ms: startup_ms.min(wall_ms),
        source,
        tests,
        files,
        startup_files,
    };
    if let Some(reported) = crate::testreport::reported_ms(&outcome.stdout, &outcome.stderr)
        .filter(|reported| *reported <= wall_ms)
    {
        return Ok(Some(Some(sample(wall_ms - reported, RateSource::Reported))));
    }
    let own = crate::policy::command::split(&record.command)
        .ok()
        .and_then(|argv| super::suite::listing(&argv))
        .filter(|own| own.unit == unit);
    let Some(own) = own else {
        return Ok(Some(Some(sample(0, RateSource::WholeRun))));
    };
    // Measuring the rate is the reproduction's cost, not a form's: it takes none of their share.
    let Some((_, listed)) = list(ctx, &own, limit, round)? else {
        return Ok(None);
    };
    Ok(Some(Some(match listed.and_then(|l| l.listing) {
        Some((_, listing_ms)) => sample(listing_ms, RateSource::RunLessListing),
        None => sample(0, RateSource::WholeRun),
    })))
}

/// A related form's estimate, and why it is not run when it is over its limit.
pub(crate) type RelatedEstimate = (SuiteEstimate, Option<String>);

/// Fix round `round`'s related form (`argv`) estimated before it runs, as the wider forms are
/// before the fix: its count (its runner's listing, else counted statically) at the rate of
/// the reproduction's first run. The estimate, and why it is not run when it is over `limit`.
/// `None` when the run must stop; `Some(None)` when it cannot be estimated. A listing leaves
/// the tree restored.
pub(crate) fn estimate_related(
    ctx: &mut Ctx<'_>,
    argv: &[String],
    limit: Duration,
    round: u32,
) -> Result<Option<Option<RelatedEstimate>>, PipelineError> {
    let Ok(command) = shlex::try_join(argv.iter().map(String::as_str)) else {
        return Ok(Some(None));
    };
    let Some((_, counted)) = count_form(ctx, &command, limit, Some(round))? else {
        return Ok(None);
    };
    let Some(counted) = counted else {
        return Ok(Some(None));
    };
    let Some(sample) = measure(ctx, counted.unit, limit, Some(round))? else {
        return Ok(None);
    };
    let Some(estimate) = sample.and_then(|sample| estimated(counted, sample)) else {
        return Ok(Some(None));
    };
    let limit_ms = millis(limit);
    let over = (estimate.estimate_ms > limit_ms).then(|| over_estimate(&estimate, limit_ms));
    Ok(Some(Some((estimate, over))))
}

/// Why a form was not run, in words: its count, the rate, the estimate and the limit.
pub(super) fn over_estimate(estimate: &SuiteEstimate, limit_ms: u64) -> String {
    let (plural, singular) = match estimate.unit {
        ListedUnit::Tests => ("tests", "test"),
        ListedUnit::TestFiles => ("test files", "test file"),
    };
    let counted = match (estimate.source, estimate.listing, estimate.files) {
        (CountSource::Listing, Some(id), _) => {
            format!("its runner lists {} {plural} (#{id})", estimate.count)
        }
        (_, _, Some(files)) => format!(
            "counted statically, it has {} {plural} in {files} file{}",
            estimate.count,
            if files == 1 { "" } else { "s" }
        ),
        _ => format!("it has {} {plural}", estimate.count),
    };
    let measured = match estimate.rate {
        RateSource::Reported => "as its runner reported for the reproduction",
        RateSource::RunLessListing => "as measured on the reproduction",
        RateSource::WholeRun => "as measured on the reproduction, start-up included",
    };
    let startup = match (estimate.listing, estimate.files) {
        (None, Some(files)) if files > 1 => format!(
            "{} ({} a file)",
            duration_text(estimate.startup_ms),
            per_unit_text(estimate.startup_ms.saturating_mul(1000) / files)
        ),
        _ => duration_text(estimate.startup_ms),
    };
    format!(
        "not run: {counted}; at {} a {singular} {measured} (#{}) plus a start-up of {startup}, \
         it would take about {}, more than the {} it could have (`test.suite-budget-ms`)",
        per_unit_text(estimate.per_unit_us),
        estimate.reproduction,
        duration_text(estimate.estimate_ms),
        duration_text(limit_ms),
    )
}

/// A time per unit, in the evidence's words for durations.
pub(super) fn per_unit_text(us: u64) -> String {
    if us < 1000 {
        "under 1 ms".to_owned()
    } else {
        duration_text(us / 1000)
    }
}
