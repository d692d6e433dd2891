//! One fix round, the short sequence answer → apply → Prevent → Prove → decide, with one
//! extra answer for output that breaks the contract. The rounds themselves are in `rounds`.

use crate::engine::{Engine, FixResponse};
use crate::evidence::{Attempt, Explanation, FinalFix, PatchRecord, Round, RoundVerdict};
use crate::patch::{self, Mode, PatchOutcome, PatchReport};
use crate::policy::Issue;

use super::answer::answer;
use super::call::Failure;
use super::checks::{apply_detail, check, policy_checks, read_flags, summary};
use super::ctx::Ctx;
use super::{PipelineError, prevent, prove};

/// Prefix of the patch contract's rule ids (answers that break it get one retry per round).
const CONTRACT_RULE_PREFIX: &str = "contract.";

/// Where a round's answer comes from.
pub(crate) enum Source<'e> {
    /// Asked of the engine, with one extra answer when the first breaks the contract.
    Engine(&'e mut dyn Engine),
    /// Already received (a candidate's answer); it has no contract retry.
    Given(Option<FixResponse>),
}

pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

pub(crate) fn new_round(number: u32) -> Round {
    Round {
        number,
        candidates: Vec::new(),
        attempts: Vec::new(),
        checks: Vec::new(),
        prevent: None,
        prove: None,
        related: None,
        issues: Vec::new(),
        verdict: RoundVerdict::Rejected,
    }
}

/// One round: answer → apply → Prevent → Prove → decide.
pub(crate) fn run_round(
    ctx: &mut Ctx<'_>,
    source: Source<'_>,
    number: u32,
    call_index: &mut usize,
) -> Result<Round, PipelineError> {
    let mut round = new_round(number);
    let Some(report) = apply(ctx, source, &mut round, call_index)? else {
        return Ok(round);
    };
    let Some(tests_only) = prevent::run(ctx, number, &report.changes, &mut round)? else {
        return Ok(round);
    };
    let Some(proof) = prove::run(ctx, number, &report.changes, &mut round)? else {
        return Ok(round);
    };
    let guard_issue = prevent::guard(ctx, &tests_only, &proof, &mut round);
    let mut issues = proof.issues;
    issues.extend(guard_issue);
    // Once proven, the reads the change adds are flagged for review; they never block.
    if issues.is_empty() {
        round.checks.extend(read_flags(&report.changes));
    }
    decide(ctx, number, &report, round, issues)
}

/// Ask for answers until one applies (one extra answer when the first breaks the contract),
/// then run the policy checks on the applied change; record every attempt and check. `None`
/// when the round ends without an accepted change (its verdict says why; the tree is as it
/// was).
fn apply(
    ctx: &mut Ctx<'_>,
    mut source: Source<'_>,
    round: &mut Round,
    call_index: &mut usize,
) -> Result<Option<PatchReport>, PipelineError> {
    let number = round.number;
    let mut contract_feedback: Vec<Issue> = Vec::new();
    let (report, response) = loop {
        let answer = match &mut source {
            Source::Engine(engine) => {
                answer(ctx, &mut **engine, number, *call_index, &contract_feedback)?
            }
            Source::Given(given) => Ok(given.take().unwrap_or_default()),
        };
        let index = *call_index;
        *call_index += 1;
        let retry = !contract_feedback.is_empty();
        let (response, text) = match answer {
            Ok(response) => {
                let text = response.patch_text();
                (response, text)
            }
            // The call failed because the run was stopped meanwhile (SIGINT, SIGTERM, the
            // run's time budget): the round stops, and the run with it.
            Err(Failure::Engine(message) | Failure::Fatal(message))
                if ctx.stop_reason().is_some() =>
            {
                round.verdict = RoundVerdict::Stopped;
                round.issues.push(Issue::new("engine.error", message));
                return Ok(None);
            }
            Err(Failure::Engine(message) | Failure::Fatal(message)) => {
                round.verdict = RoundVerdict::EngineFailed;
                round.issues.push(Issue::new("engine.error", message));
                return Ok(None);
            }
            Err(Failure::Secrets(reason)) => {
                round.verdict = RoundVerdict::EngineFailed;
                round
                    .issues
                    .push(Issue::new("security.secrets-in-prompt", reason));
                return Ok(None);
            }
            Err(Failure::Budget(spent)) => {
                round.verdict = RoundVerdict::Stopped;
                round.issues.push(Issue::new(spent.rule, spent.reason));
                return Ok(None);
            }
            // An answer cut off or empty is handled like one that broke the contract.
            Err(Failure::Contract(issue)) => (FixResponse::default(), Err(issue)),
        };
        ctx.save_checkpoint(super::checkpoint::Stage::Fixing)?;
        if ctx.stop_reason().is_some() {
            round.verdict = RoundVerdict::Stopped;
            return Ok(None);
        }
        if text.as_ref().is_ok_and(|text| text.trim() == "NO_CHANGE") {
            round
                .attempts
                .push(attempt(index, retry, &no_change_report(), &response));
            round.checks.push(check(
                "patch.contract",
                true,
                "the engine answered NO_CHANGE",
            ));
            round.verdict = RoundVerdict::NoChange;
            return Ok(None);
        }
        // An answer unusable before parsing (both fields filled, cut off) is a contract
        // rejection like any other. The files that define this run's commands are test
        // harness too. A usable answer is checked first and written through the context,
        // so the journal names the files before they change.
        let mut policy = prevent::patch_policy(&ctx.config.patch, &ctx.command, &ctx.suites);
        policy.expectations = expectations(ctx);
        let report = match text {
            Ok(text) => patch::process(&ctx.root, &text, &policy, Mode::Check)?,
            Err(issue) => PatchReport::rejected(vec![issue]),
        };
        if report.outcome == PatchOutcome::Applied {
            ctx.write_changes(&report.changes)?;
        }
        round
            .attempts
            .push(attempt(index, retry, &report, &response));
        ctx.reporter.info(&format!(
            "answer #{}: patch {:?}",
            index + 1,
            report.outcome
        ));
        match report.outcome {
            PatchOutcome::Applied => break (report, response),
            PatchOutcome::Rejected => {
                let contract = report
                    .issues
                    .iter()
                    .any(|i| i.rule.starts_with(CONTRACT_RULE_PREFIX));
                let may_retry = matches!(source, Source::Engine(_));
                if contract && !retry && may_retry {
                    ctx.reporter
                        .info("the answer broke the output contract; asking once more");
                    round.checks.push(check(
                        "patch.contract",
                        false,
                        &format!(
                            "answer #{} rejected: {}",
                            index + 1,
                            summary(&report.issues)
                        ),
                    ));
                    contract_feedback = report.issues.clone();
                    continue;
                }
                ctx.restore()?;
                let id = if contract {
                    "patch.contract"
                } else {
                    "patch.apply"
                };
                round
                    .checks
                    .push(check(id, false, &summary(&report.issues)));
                round.issues = report.issues.clone();
                round.verdict = RoundVerdict::Rejected;
                return Ok(None);
            }
            PatchOutcome::NoChange => {
                ctx.restore()?;
                let issues = if report.issues.is_empty() {
                    vec![Issue::new(
                        "patch.no-effect",
                        "the patch leaves every file as it was; change the code that causes the \
                         failure, or answer NO_CHANGE",
                    )]
                } else {
                    report.issues.clone()
                };
                round
                    .checks
                    .push(check("patch.apply", false, &summary(&issues)));
                round.issues = issues;
                round.verdict = RoundVerdict::Rejected;
                return Ok(None);
            }
        }
    };
    round.checks.push(check(
        "patch.contract",
        true,
        "one patch in a form the contract accepts",
    ));
    round
        .checks
        .push(check("patch.apply", true, &apply_detail(&report)));
    let policy_issues = policy_checks(ctx, &report.changes, &response, &mut round.checks);
    if !policy_issues.is_empty() {
        ctx.restore()?;
        round.issues = policy_issues;
        round.verdict = RoundVerdict::Rejected;
        return Ok(None);
    }
    Ok(Some(report))
}

/// What the reproduction's failing tests expect, read from their source as the round starts
/// (a test the model rewrote is read as it is now; the harness checks refuse such rewrites).
fn expectations(ctx: &Ctx<'_>) -> Vec<crate::integrity::special_case::Expectation> {
    let failing = ctx
        .evidence
        .reproduction
        .as_ref()
        .map(|r| r.failing_tests.clone())
        .unwrap_or_default();
    if failing.is_empty() {
        return Vec::new();
    }
    crate::integrity::special_case::for_failing_tests(
        &ctx.root,
        &ctx.snapshot.tracked_paths(),
        &failing,
    )
}

fn attempt(index: usize, retry: bool, report: &PatchReport, response: &FixResponse) -> Attempt {
    Attempt {
        call_index: index,
        contract_retry: retry,
        patch: PatchRecord::from(report),
        explanation: Explanation::from(response),
    }
}

fn no_change_report() -> PatchReport {
    PatchReport {
        outcome: PatchOutcome::NoChange,
        files: Vec::new(),
        issues: Vec::new(),
        diff: String::new(),
        changes: Vec::new(),
    }
}

/// The round's verdict from the blocking issues of Prevent and Prove: with none, the change is
/// proven and becomes the run's fix (left applied unless a dry run); otherwise the tree is
/// restored and the issues go back to the engine.
fn decide(
    ctx: &mut Ctx<'_>,
    number: u32,
    report: &PatchReport,
    mut round: Round,
    issues: Vec<Issue>,
) -> Result<Round, PipelineError> {
    if !issues.is_empty() {
        ctx.restore()?;
        round.issues = issues;
        round.verdict = RoundVerdict::ProofFailed;
        return Ok(round);
    }
    let (_, added, removed) = patch::diff_stats(&report.changes);
    let left_applied = !ctx.dry_run;
    if !left_applied {
        ctx.restore()?;
    }
    ctx.evidence.fix = Some(FinalFix {
        round: number,
        diff: if report.diff.is_empty() {
            patch::diff_of(&report.changes)
        } else {
            report.diff.clone()
        },
        files: report.changes.iter().map(|c| c.path.clone()).collect(),
        added: added as u64,
        removed: removed as u64,
        guard: prevent::proven_guard(&round),
        left_applied,
    });
    round.verdict = RoundVerdict::Proven;
    Ok(round)
}
