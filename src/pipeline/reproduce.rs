//! Reproduce: run the command (N times with `--repeat`), decide whether it failed, whether the
//! runner ran any test, and whether runs disagree; then record the suites' baseline.

use std::collections::BTreeSet;

use crate::evidence::{CommandRecord, Phase, Purpose, Reproduction, Status};
use crate::exit::ExitStatus;
use crate::testreport::TestStatus;

use super::PipelineError;
use super::ctx::Ctx;

/// The runner's convention for a program that could not be found.
const NOT_FOUND_EXIT: i32 = 127;

/// Run the Reproduce phase. Returns an exit status when the run ends here.
pub(crate) fn run(ctx: &mut Ctx<'_>) -> Result<Option<ExitStatus>, PipelineError> {
    ctx.reporter.phase("reproduce");
    let result = reproduce(ctx);
    ctx.reporter.end_phase();
    result
}

fn reproduce(ctx: &mut Ctx<'_>) -> Result<Option<ExitStatus>, PipelineError> {
    let command = ctx.command.clone();
    let mut runs = Vec::new();
    for _ in 0..ctx.repeat {
        let id = ctx.run_command(&command, Phase::Reproduce, Purpose::Reproduction, None)?;
        ctx.restore()?;
        match id {
            Some(id) => runs.push(id),
            None => return Ok(Some(stop(ctx))),
        }
    }
    let records: Vec<&CommandRecord> = runs
        .iter()
        .filter_map(|id| ctx.evidence.command(*id))
        .collect();
    let failing_tests = failing_tests(&records);
    let failed: Vec<bool> = records.iter().map(|r| !r.succeeded()).collect();
    let not_found = records.iter().any(|r| {
        r.outcome.as_ref().is_some_and(|o| {
            o.exit_code == Some(NOT_FOUND_EXIT) && o.stderr.starts_with("efix: program not found")
        })
    });
    let no_tests = records.iter().any(|r| r.ran_no_tests());
    let all_failed = failed.iter().all(|f| *f);
    let flaky = !all_failed && failed.iter().any(|f| *f);
    ctx.evidence.reproduction = Some(Reproduction {
        runs: runs.clone(),
        suite_baselines: Vec::new(),
        reproduced: all_failed && !no_tests && !not_found,
        flaky,
        failing_tests,
    });
    if not_found {
        ctx.conclude(
            Status::NotReproduced,
            ExitStatus::NotReproduced,
            format!(
                "the program of `{command}` was not found, so nothing was reproduced; check \
                     the command and PATH"
            ),
        );
        return Ok(Some(ExitStatus::NotReproduced));
    }
    if no_tests {
        ctx.conclude(
            Status::NotReproduced,
            ExitStatus::NotReproduced,
            "the test runner reported that no test ran, which does not reproduce a failure; \
             check the test name or filter",
        );
        return Ok(Some(ExitStatus::NotReproduced));
    }
    if flaky {
        let count = failed.iter().filter(|f| **f).count();
        ctx.conclude(
            Status::Flaky,
            ExitStatus::NoProvenFix,
            format!(
                "the command failed in {count} of {} runs; efix does not claim fixes for flaky \
                 failures",
                failed.len()
            ),
        );
        return Ok(Some(ExitStatus::NoProvenFix));
    }
    if !all_failed {
        ctx.conclude(
            Status::NotReproduced,
            ExitStatus::NotReproduced,
            "the command passed, so there is nothing to fix",
        );
        return Ok(Some(ExitStatus::NotReproduced));
    }
    ctx.reporter.info("the failure reproduced");
    let mut baselines = Vec::new();
    for suite in ctx.suites.clone() {
        let id = ctx.run_command(&suite, Phase::Reproduce, Purpose::SuiteBaseline, None)?;
        ctx.restore()?;
        match id {
            Some(id) => baselines.push(id),
            None => return Ok(Some(stop(ctx))),
        }
    }
    if let Some(repro) = ctx.evidence.reproduction.as_mut() {
        repro.suite_baselines = baselines;
    }
    Ok(None)
}

fn stop(ctx: &mut Ctx<'_>) -> ExitStatus {
    let status = ctx.stop_reason().unwrap_or(Status::BudgetExhausted);
    ctx.conclude_stop(status);
    ExitStatus::NoProvenFix
}

/// Tests reported failing in any of the runs, sorted.
fn failing_tests(records: &[&CommandRecord]) -> Vec<String> {
    let names: BTreeSet<String> = records
        .iter()
        .filter_map(|r| r.tests.as_ref())
        .flat_map(|t| t.tests.iter())
        .filter(|t| t.status == TestStatus::Failed)
        .map(|t| t.name.clone())
        .collect();
    names.into_iter().collect()
}
