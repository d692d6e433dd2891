//! Reproduce: run the command (N times with `--repeat`), decide whether it failed, whether the
//! runner ran any test, and whether runs disagree; then record the suites' baseline.

use std::collections::BTreeSet;

use crate::evidence::{CommandRecord, Phase, Purpose, Reproduction, Status, SuiteChoice};
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
    for run in 0..ctx.repeat {
        if run > 0 {
            // Each repetition starts from the tree as it was.
            ctx.restore()?;
        }
        let id = ctx.run_command(&command, Phase::Reproduce, Purpose::Reproduction, None)?;
        // The suites' baselines run next in the same state, as the proof's commands do after
        // the fix; the tree is restored after them (or at the end of the phase, or of the run
        // when it ends here), which spares one walk of the whole tree.
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
    // A command that failed for want of the network before any test ran reproduces the
    // sandbox, not the bug.
    let offline = (!ctx.config.network)
        .then(|| records.iter().find_map(|r| needs_network(r)))
        .flatten();
    // The same for a write the sandbox refused (a build directory outside the repository).
    let confined = records.iter().find_map(|r| refused_write(r));
    let all_failed = failed.iter().all(|f| *f);
    let flaky = !all_failed && failed.iter().any(|f| *f);
    ctx.evidence.reproduction = Some(Reproduction {
        runs: runs.clone(),
        suite_baselines: Vec::new(),
        reproduced: all_failed
            && !no_tests
            && !not_found
            && offline.is_none()
            && confined.is_none(),
        flaky,
        failing_tests,
        suite_choice: None,
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
    if let Some(line) = offline {
        ctx.conclude(
            Status::NotReproduced,
            ExitStatus::NotReproduced,
            format!(
                "`{command}` failed before any test ran because it needed the network, which \
                 efix turns off for reproduction and proof (`{line}`); fetch dependencies in \
                 `commands.setup` (`cargo fetch`, `npm ci`, `pip install -e .`), which runs \
                 with the network first, or set `security.network: true`"
            ),
        );
        return Ok(Some(ExitStatus::NotReproduced));
    }
    if let Some(line) = confined {
        ctx.conclude(
            Status::NotReproduced,
            ExitStatus::NotReproduced,
            format!(
                "`{command}` failed before any test ran because the sandbox refused a write \
                 (`{line}`); commands write only to the repository, their own TMPDIR and the \
                 paths of `sandbox.writable`: add the directory it needs there (a build or \
                 cache directory such as a shared CARGO_TARGET_DIR)"
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
        let derived = ctx.evidence.request.derived_suite.as_deref() == Some(suite.as_str());
        if derived {
            // The derived suite's forms are tried in turn until one is a baseline.
            let Some(chosen) = super::baseline::choose(ctx)? else {
                return Ok(Some(stop(ctx)));
            };
            replace_derived(ctx, &suite, chosen.as_ref().map(|(form, _)| form.clone()));
            baselines.extend(chosen.map(|(_, id)| id));
            continue;
        }
        let id = ctx.run_command(&suite, Phase::Reproduce, Purpose::SuiteBaseline, None)?;
        ctx.restore()?;
        let Some(id) = id else {
            return Ok(Some(stop(ctx)));
        };
        baselines.push(id);
    }
    let nothing_wider = ctx.suites.is_empty() && reproduction_is_not_whole(ctx);
    if let Some(repro) = ctx.evidence.reproduction.as_mut() {
        repro.suite_baselines = baselines;
        if nothing_wider {
            // No suite and none derived: the proof can only be the reproduction.
            repro.suite_choice.get_or_insert(SuiteChoice {
                attempts: Vec::new(),
                chosen: None,
                budget_ms: ctx.evidence.request.suite_budget_ms,
            });
        }
    }
    // Localization reads the tree as it was (a walk only when no baseline ran since).
    ctx.restore()?;
    Ok(None)
}

/// Whether the reproduction is something other than its runner's whole suite (which proves
/// the repository's tests by itself).
fn reproduction_is_not_whole(ctx: &Ctx<'_>) -> bool {
    let argv = crate::policy::command::split(&ctx.command).unwrap_or_default();
    super::suite::derive(&argv, &ctx.root) != super::suite::Derivation::Whole
}

/// Put the chosen form in the derived suite's place (or drop it when none was chosen), in
/// the suites the proof runs and in the checkpoint, and say so when it is not the first.
fn replace_derived(ctx: &mut Ctx<'_>, whole: &str, chosen: Option<String>) {
    let replace = |suites: &mut Vec<String>| {
        let at = suites.iter().position(|s| s == whole);
        match (at, &chosen) {
            (Some(at), Some(form)) => suites[at] = form.clone(),
            (Some(at), None) => {
                suites.remove(at);
            }
            (None, _) => {}
        }
    };
    replace(&mut ctx.suites);
    replace(&mut ctx.checkpoint.suites);
    match &chosen {
        Some(form) if form != whole => ctx.reporter.warn(&format!(
            "the suite `{whole}` is not a baseline; the proof covers `{form}` instead"
        )),
        Some(_) => {}
        None => ctx.reporter.warn(&format!(
            "no suite wider than the reproduction is a baseline (from `{whole}` down); the \
             proof covers the reproduction only"
        )),
    }
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

/// What package managers and HTTP clients print when they cannot reach the network (name
/// resolution, an unreachable network, offline mode without a cached package).
const NETWORK_FAILURES: [&str; 10] = [
    "could not resolve host",
    "could not resolve hostname",
    "temporary failure in name resolution",
    "name or service not known",
    "getaddrinfo enotfound",
    "getaddrinfo eai_again",
    "network is unreachable",
    "failed to establish a new connection",
    "you're using offline mode",
    "enotcached",
];

/// What the kernel says when landlock or a read-only mount refuses a write.
const WRITE_REFUSALS: [&str; 3] = [
    "permission denied",
    "read-only file system",
    "operation not permitted",
];

/// The first output line of a failed run that shows a network failure, when the runner
/// reported no test (a run whose tests ran failed for a reason of its own).
fn needs_network(record: &CommandRecord) -> Option<String> {
    first_line_before_tests(record, &NETWORK_FAILURES)
}

/// The first output line of a failed run, under landlock, that shows a refused write, when
/// the runner reported no test.
fn refused_write(record: &CommandRecord) -> Option<String> {
    let sandbox = &record.outcome.as_ref()?.sandbox;
    if sandbox.landlock_abi.is_none() && sandbox.read_only.is_empty() {
        return None;
    }
    first_line_before_tests(record, &WRITE_REFUSALS)
}

/// The first line (stderr first) of a failed run that reported no test holding one of
/// `markers`, clipped.
fn first_line_before_tests(record: &CommandRecord, markers: &[&str]) -> Option<String> {
    if record.succeeded() || record.tests.as_ref().is_some_and(|t| !t.ran_no_tests()) {
        return None;
    }
    let outcome = record.outcome.as_ref()?;
    outcome
        .stderr
        .lines()
        .chain(outcome.stdout.lines())
        .find(|line| {
            let lower = line.to_ascii_lowercase();
            markers.iter().any(|marker| lower.contains(marker))
        })
        .map(|line| {
            let line = line.trim();
            match line.char_indices().nth(160) {
                Some((cut, _)) => format!("{}…", &line[..cut]),
                None => line.to_owned(),
            }
        })
}
