//! Prevent's step in a fix round: refuse a change with no source side, run the reproduction
//! and the suites with only the test part of the change applied, and — once Prove has run
//! with the whole change — decide and record the guard.

use crate::evidence::{CommandRecord, Guard, Phase, Prevent, Purpose, Round, RoundVerdict};
use crate::patch::{self, FileChange};
use crate::policy::Issue;

use super::super::PipelineError;
use super::super::checks::check;
use super::super::ctx::Ctx;
use super::super::prove::Proof;
use super::guard::decide;
use super::split::{Split, split};

/// What Prevent ran before Prove: the split of the change and the ids of the runs made with
/// only its test part applied.
pub(crate) struct TestsOnly {
    pub split: Split,
    pub runs: Vec<usize>,
}

/// Split the change and run the reproduction and the suites with only its test part applied.
/// The whole change is in the working tree on entry and on return. `None` when the round ends
/// here: the change was refused or the run must stop (the verdict says which; the tree is
/// restored).
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    round: &mut Round,
) -> Result<Option<TestsOnly>, PipelineError> {
    let split = split(changes);
    if !split.touches_source {
        ctx.restore()?;
        let issue = Issue::new(
            "prevent.tests-only",
            "the change only touches tests; fix the code that causes the failure and add a regression test for it",
        );
        round
            .checks
            .push(check("prevent.guard", false, &issue.message));
        round.issues = vec![issue];
        round.verdict = RoundVerdict::Rejected;
        return Ok(None);
    }
    let mut runs = Vec::new();
    if !split.tests_only.is_empty() {
        ctx.reporter.info(&format!(
            "prevent: running with only the test changes ({})",
            split.test_files.join(", ")
        ));
        ctx.restore()?;
        patch::write_changes(&ctx.root, &split.tests_only)?;
        let batch = std::iter::once((ctx.command.clone(), Purpose::TestsOnlyReproduction)).chain(
            ctx.suites
                .clone()
                .into_iter()
                .map(|s| (s, Purpose::TestsOnlySuite)),
        );
        let Some(ids) = ctx.run_batch(batch, Phase::Prevent, Some(number))? else {
            ctx.restore()?;
            round.verdict = RoundVerdict::Stopped;
            return Ok(None);
        };
        runs = ids;
        ctx.restore()?;
        patch::write_changes(&ctx.root, changes)?;
    }
    Ok(Some(TestsOnly { split, runs }))
}

/// Decide which guard held from the tests-only runs and Prove's runs, record it in the round,
/// and return the blocking issue when none did.
pub(crate) fn guard(
    ctx: &Ctx<'_>,
    tests_only: &TestsOnly,
    proof: &Proof,
    round: &mut Round,
) -> Option<Issue> {
    let evidence = &ctx.evidence;
    let records = |ids: &[usize]| -> Vec<&CommandRecord> {
        ids.iter().filter_map(|id| evidence.command(*id)).collect()
    };
    let without_fix = records(&tests_only.runs);
    let mut fixed_ids = vec![proof.reproduction];
    fixed_ids.extend(proof.suites.iter().copied());
    let fixed = records(&fixed_ids);
    let failing_before = evidence
        .reproduction
        .as_ref()
        .map(|r| r.failing_tests.clone())
        .unwrap_or_default();
    let split = &tests_only.split;
    let original = evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first())
        .and_then(|id| evidence.command(*id));
    let decision = decide(
        split,
        &without_fix,
        &fixed,
        &failing_before,
        (original, evidence.command(proof.reproduction)),
        ctx.config.test.required,
    );
    round.checks.push(check(
        "prevent.guard",
        decision.guard.is_some(),
        &decision.detail,
    ));
    let issue = decision.guard.is_none().then(|| {
        Issue::new(
            "prevent.no-guard",
            format!(
                "no regression guard was proven ({}); add a test that fails without the fix and passes with it",
                decision.detail
            ),
        )
    });
    round.prevent = Some(Prevent {
        test_files: split.test_files.clone(),
        changed_tests: split.changed_tests.clone(),
        tests_only_runs: tests_only.runs.clone(),
        failed_without_fix: decision.failed_without_fix,
        passed_with_fix: decision.passed_with_fix,
        guard: decision.guard,
        detail: decision.detail,
    });
    issue
}

/// The guard a proven round records (`not-required` when none was needed).
pub(crate) fn proven_guard(round: &Round) -> Guard {
    round
        .prevent
        .as_ref()
        .and_then(|p| p.guard)
        .unwrap_or(Guard::NotRequired)
}
