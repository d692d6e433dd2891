//! The related form of a fix round: when the derived suite the proof runs is narrower than
//! the runner's whole suite (the whole suite was dropped before the fix), the test files
//! outside it whose imports reach a file the change modifies, run in one invocation of the
//! reproduction's runner with only the change's test side applied (its baseline) and with the
//! whole change (`prove.related-suite`). A test elsewhere that uses the changed code is then
//! still run, at the cost of the tests that reach the change.
//!
//! The form depends on the change, so it is built in each round (in a candidate's scratch
//! copy too) and recorded in the round (`Round::related`). It is not built when suites are
//! configured (they are what the user asked the proof to run), when the proof runs the whole
//! suite already, or for a runner it has no form for.
//!
//! Its baseline must hold like a derived form's: a run stopped at the suite budget, stopped
//! early or that ran no test drops it, and a form estimated over the suite budget from its
//! runner's listing is never run; the round records why either way.

use crate::evidence::{
    BaselineVerdict, Phase, Purpose, RelatedSuite, RelatedTest, Round, RoundVerdict, SuiteFormKind,
};
use crate::integrity::guard::Split;
use crate::patch::{self, FileChange};

use super::PipelineError;
use super::ctx::Ctx;

/// Select, estimate and run the related form's baseline for `changes`, recording it in
/// `round.related`. The whole change is in the working tree on entry and on return. `false`
/// when the run must stop (the round's verdict says so; the tree is restored).
pub(crate) fn baseline(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    split: &Split,
    round: &mut Round,
) -> Result<bool, PipelineError> {
    let Some((mut record, argv)) = select(ctx, changes) else {
        return Ok(true);
    };
    let Some(argv) = argv else {
        round.related = Some(record);
        return Ok(true);
    };
    let budget = ctx.config.test.suite_budget;
    let Some(estimate) = super::estimate::estimate_related(ctx, &argv, budget, number)? else {
        return stopped(ctx, round, record);
    };
    if let Some((estimate, over)) = estimate {
        record.estimate = Some(estimate);
        if let Some(detail) = over {
            ctx.reporter
                .info(&format!("the related tests are not run: {detail}"));
            record.verdict = Some(BaselineVerdict::EstimatedOverBudget);
            record.detail = detail;
            round.related = Some(record);
            ctx.restore()?;
            patch::write_changes(&ctx.root, changes)?;
            return Ok(true);
        }
    }
    let Some(command) = record.command.clone() else {
        round.related = Some(record);
        return Ok(true);
    };
    ctx.reporter.info(&format!(
        "prevent: running the {} test file(s) related to the change, with only its test changes",
        record.selected.len()
    ));
    ctx.restore()?;
    patch::write_changes(&ctx.root, &split.tests_only)?;
    let id = ctx.run_command_within(
        &command,
        Phase::Prevent,
        Purpose::RelatedBaseline,
        Some(number),
        Some(budget),
    )?;
    ctx.restore()?;
    let Some(id) = id else {
        return stopped(ctx, round, record);
    };
    patch::write_changes(&ctx.root, changes)?;
    record.baseline = Some(id);
    if let Some(run) = ctx.evidence.command(id) {
        let limit_ms = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX);
        let (verdict, detail) = super::baseline::judge(None, run, Some(limit_ms));
        if verdict == BaselineVerdict::Established {
            let ran = run
                .tests
                .as_ref()
                .map_or_else(|| "ran".to_owned(), |t| t.counts_text());
            record.detail = format!("{}; before the change: {ran}", why(&record));
        } else {
            ctx.reporter.warn(&format!(
                "the related tests `{command}` are not a baseline: {detail}"
            ));
            record.detail = format!("dropped: {detail}");
        }
        record.verdict = Some(verdict);
    }
    round.related = Some(record);
    Ok(true)
}

fn stopped(
    ctx: &mut Ctx<'_>,
    round: &mut Round,
    record: RelatedSuite,
) -> Result<bool, PipelineError> {
    ctx.restore()?;
    round.related = Some(record);
    round.verdict = RoundVerdict::Stopped;
    Ok(false)
}

/// The related form's command to run with the whole change and its baseline run, when its
/// baseline holds.
pub(crate) fn planned(round: &Round) -> Option<(String, usize)> {
    let related = round.related.as_ref()?;
    (related.verdict == Some(BaselineVerdict::Established))
        .then(|| Some((related.command.clone()?, related.baseline?)))
        .flatten()
}

/// The related form's record and argv for `changes`, before anything runs; `None` when the
/// round has none (see the module's documentation).
fn select(ctx: &Ctx<'_>, changes: &[FileChange]) -> Option<(RelatedSuite, Option<Vec<String>>)> {
    if !ctx.evidence.request.suites.is_empty() {
        return None;
    }
    let choice = ctx.evidence.reproduction.as_ref()?.suite_choice.as_ref()?;
    let chosen = choice.chosen.as_ref();
    let chosen_kind = chosen.and_then(|c| {
        choice
            .attempts
            .iter()
            .find(|a| &a.command == c)
            .map(|a| a.kind)
    });
    if chosen_kind == Some(SuiteFormKind::WholeSuite) {
        return None;
    }
    let argv = crate::policy::command::split(&ctx.command).ok()?;
    let runner = super::suite::related_runner(&argv, &ctx.root)?;
    let chosen_argv = chosen
        .and_then(|c| crate::policy::command::split(c).ok())
        .unwrap_or_default();
    let tracked = ctx.snapshot.tracked_paths();
    let paths: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    let found =
        crate::localize::related_tests(&ctx.root, &tracked, &paths, &|path| runner.accepts(path));
    let (already, selected): (Vec<_>, Vec<_>) = found
        .tests
        .into_iter()
        .partition(|r| runner.runs(&chosen_argv, &r.test));
    let files: Vec<&str> = selected.iter().map(|r| r.test.as_str()).collect();
    let argv = runner.command(&files, &ctx.root);
    // Run with the runner's per-test output from the start: the proof needs the passing tests
    // by name, and a terse run would be run again to get them.
    let command = argv
        .as_ref()
        .and_then(|argv| shlex::try_join(argv.iter().map(String::as_str)).ok())
        .map(|command| super::confirm::per_test_command(&command, &ctx.root).unwrap_or(command));
    let mut record = RelatedSuite {
        changed: found.changed,
        selected: selected
            .into_iter()
            .map(|r| RelatedTest {
                test: r.test,
                reaches: r.reaches,
                chain: r.chain,
            })
            .collect(),
        already_run: already.into_iter().map(|r| r.test).collect(),
        searched: found.searched as u64,
        bounded: found.bounded,
        command: command.clone(),
        estimate: None,
        baseline: None,
        verdict: None,
        fixed: None,
        detail: String::new(),
    };
    record.detail = if record.selected.is_empty() {
        format!(
            "no test file outside the suite the proof runs reaches the changed files \
             ({} searched)",
            record.searched
        )
    } else if command.is_none() {
        "the selected test files cannot be given to the runner".to_owned()
    } else {
        String::new()
    };
    let argv = command
        .as_deref()
        .and_then(|c| crate::policy::command::split(c).ok());
    Some((record, argv))
}

/// Why the selected tests run, in a few words.
fn why(record: &RelatedSuite) -> String {
    format!(
        "{} test file(s) outside the suite the proof runs reach the changed files",
        record.selected.len()
    )
}
