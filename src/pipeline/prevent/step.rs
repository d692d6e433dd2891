//! Prevent's step in a fix round: refuse a change with no source side, run the reproduction
//! and the suites with only the test part of the change applied (refusing the change when
//! that alone makes the reproduction pass), and — once Prove has run with the whole change —
//! decide and record the guard.

use crate::evidence::{CommandRecord, Guard, Phase, Prevent, Purpose, Round, RoundVerdict};
use crate::patch::{self, FileChange};
use crate::policy::Issue;

use super::super::PipelineError;
use super::super::checks::check;
use super::super::ctx::Ctx;
use super::super::prove::Proof;
use super::super::shared::Shared;
use super::harness::{commands_in_play, tests_pass_without_fix};
use crate::integrity::guard::{Split, split};
use crate::integrity::guard::{decide, reported_with};
use crate::testreport::TestStatus;

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
    let commands = commands_in_play(&ctx.command, &ctx.suites, &ctx.config.patch.commands);
    let split = split(changes, &commands);
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
        let Some(ids) = tests_only_runs(ctx, number, &split, changes)? else {
            round.verdict = RoundVerdict::Stopped;
            return Ok(None);
        };
        runs = ids;
        if let Some(issue) = runs
            .first()
            .and_then(|&id| without_fix(ctx, id, &split, &runs, round))
        {
            ctx.restore()?;
            round.issues = vec![issue];
            round.verdict = RoundVerdict::ProofFailed;
            return Ok(None);
        }
    }
    // The tests related to the change, with only its test side (the original source when it
    // has none): their baseline, when the proof's suite is narrower than the whole suite.
    if !super::super::related::baseline(ctx, number, changes, &split, round)? {
        return Ok(None);
    }
    Ok(Some(TestsOnly { split, runs }))
}

/// The runs with only the test side of the change applied, their ids: the reproduction, then
/// the suites unless the reproduction passed (the change is then refused and the suites would
/// cost for nothing). In a round of candidates, made once for every candidate with the same
/// test side. The whole change is in the working tree on return; `None` when the run must
/// stop (the tree is restored).
fn tests_only_runs(
    ctx: &mut Ctx<'_>,
    number: u32,
    split: &Split,
    changes: &[FileChange],
) -> Result<Option<Vec<usize>>, PipelineError> {
    let Some(shared) = ctx.shared else {
        return make_tests_only_runs(ctx, number, split, changes);
    };
    let first = ctx.evidence.commands.len();
    let made: Shared<PipelineError> = shared.get_or_make(&split.tests_only, first, || {
        let ids = make_tests_only_runs(ctx, number, split, changes)?;
        Ok(ids.map(|ids| {
            ids.iter()
                .filter_map(|&id| ctx.evidence.command(id).cloned())
                .collect()
        }))
    });
    let ids_of = |records: &[CommandRecord]| records.iter().map(|r| r.id).collect();
    match made {
        Shared::MadeHere(result) => Ok(result?.map(|records| ids_of(&records))),
        Shared::Copied(records) => {
            ctx.reporter
                .info("prevent: the same test changes were run for another candidate");
            let ids = ids_of(&records);
            ctx.evidence.commands.extend(records);
            Ok(Some(ids))
        }
        Shared::Absent => make_tests_only_runs(ctx, number, split, changes),
    }
}

/// Run what [`tests_only_runs`] describes.
fn make_tests_only_runs(
    ctx: &mut Ctx<'_>,
    number: u32,
    split: &Split,
    changes: &[FileChange],
) -> Result<Option<Vec<usize>>, PipelineError> {
    ctx.restore()?;
    patch::write_changes(&ctx.root, &split.tests_only)?;
    // The reproduction runs alone first: when it passes with only the test side, the change
    // is refused before the suites cost anything.
    let reproduction = [(ctx.command.clone(), Purpose::TestsOnlyReproduction)];
    let Some(mut ids) = ctx.run_batch(reproduction, Phase::Prevent, Some(number))? else {
        ctx.restore()?;
        return Ok(None);
    };
    let refused = ids
        .first()
        .and_then(|&id| ctx.evidence.command(id))
        .is_some_and(|record| tests_pass_without_fix(record, &split.test_files).is_err());
    if !refused {
        let suites = ctx
            .suites
            .clone()
            .into_iter()
            .map(|s| (s, Purpose::TestsOnlySuite));
        let Some(more) = ctx.run_batch(suites, Phase::Prevent, Some(number))? else {
            ctx.restore()?;
            return Ok(None);
        };
        ids.extend(more);
    }
    ctx.restore()?;
    patch::write_changes(&ctx.root, changes)?;
    Ok(Some(ids))
}

/// Apply `prevent.tests-pass-without-fix` to the reproduction's run with only the test side
/// applied: record the check, and when the run passed, the round's Prevent record and the
/// issue to refuse the change with.
fn without_fix(
    ctx: &Ctx<'_>,
    id: usize,
    split: &Split,
    runs: &[usize],
    round: &mut Round,
) -> Option<Issue> {
    let record = ctx.evidence.command(id)?;
    match tests_pass_without_fix(record, &split.test_files) {
        Ok(detail) => {
            round
                .checks
                .push(check("prevent.tests-pass-without-fix", true, &detail));
            None
        }
        Err(issue) => {
            round.checks.push(check(
                "prevent.tests-pass-without-fix",
                false,
                &issue.message,
            ));
            round.prevent = Some(Prevent {
                test_files: split.test_files.clone(),
                changed_tests: split.changed_tests.clone(),
                tests_only_runs: runs.to_vec(),
                failed_without_fix: reported_with(
                    &split.changed_tests,
                    &[record],
                    TestStatus::Failed,
                ),
                passed_with_fix: Vec::new(),
                guard: None,
                detail: issue.message.clone(),
            });
            Some(issue)
        }
    }
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
