//! Fix rounds: engine answer → contract, parse, checks, apply → Prevent → Prove. Every blocking
//! issue goes back to the engine as feedback for the next round, up to the round limit, with
//! one extra answer per round for output that breaks the contract.

use std::collections::BTreeMap;

use crate::engine::{Engine, FixRequest, FixResponse};
use crate::evidence::{
    Attempt, CallKind, CommandRecord, EngineCall, Explanation, FinalFix, PatchRecord, Phase,
    Prevent, Prove, Purpose, Round, RoundVerdict, Status,
};
use crate::exit::ExitStatus;
use crate::patch::{self, Mode, PatchOutcome, PatchReport};
use crate::policy::Issue;

use super::checks::{apply_detail, check, policy_checks, summary};
use super::run::Ctx;
use super::{PipelineError, localize, prevent, prove};

/// Prefix of the patch contract's rule ids (answers that break it get one retry per round).
const CONTRACT_RULE_PREFIX: &str = "contract.";
/// Issues of earlier rounds sent back at most (the newest are kept).
const MAX_FEEDBACK_ISSUES: usize = 20;

/// Run fix rounds until one is proven or the limit is reached.
pub(crate) fn rounds(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
) -> Result<ExitStatus, PipelineError> {
    let first = ctx.evidence.rounds.len() as u32 + 1;
    let mut call_index: usize = ctx.evidence.rounds.iter().map(|r| r.attempts.len()).sum();
    for number in first..=ctx.config.max_rounds {
        if let Some(status) = ctx.stop_reason() {
            ctx.conclude_stop(status);
            return Ok(ExitStatus::NoProvenFix);
        }
        ctx.reporter
            .phase(&format!("fix, round {number} of {}", ctx.config.max_rounds));
        let round = run_round(ctx, engine, number, &mut call_index);
        ctx.reporter.end_phase();
        let round = round?;
        let verdict = round.verdict;
        let issues = round.issues.clone();
        ctx.evidence.rounds.push(round);
        ctx.save_checkpoint(super::checkpoint::Stage::Fixing)?;
        match verdict {
            RoundVerdict::Proven => {
                ctx.conclude(
                    Status::Fixed,
                    ExitStatus::Success,
                    format!(
                        "fixed in round {number}: the reproduction passes with the change and the \
                     regression guard is proven"
                    ),
                );
                return Ok(ExitStatus::Success);
            }
            RoundVerdict::NoChange => {
                ctx.conclude(
                    Status::NoChange,
                    ExitStatus::NoProvenFix,
                    format!("the engine answered NO_CHANGE in round {number}"),
                );
                return Ok(ExitStatus::NoProvenFix);
            }
            RoundVerdict::EngineFailed => {
                let why = issues
                    .first()
                    .map(|i| i.message.clone())
                    .unwrap_or_default();
                ctx.conclude(
                    Status::NoProvenFix,
                    ExitStatus::NoProvenFix,
                    format!("the engine gave no answer in round {number}: {why}"),
                );
                return Ok(ExitStatus::NoProvenFix);
            }
            RoundVerdict::Stopped => {
                let status = ctx.stop_reason().unwrap_or(Status::Interrupted);
                ctx.conclude_stop(status);
                return Ok(ExitStatus::NoProvenFix);
            }
            RoundVerdict::Rejected | RoundVerdict::ProofFailed => {
                for issue in &issues {
                    ctx.reporter
                        .info(&format!("{}: {}", issue.rule, first_line(&issue.message)));
                }
            }
        }
    }
    let last = ctx
        .evidence
        .rounds
        .last()
        .and_then(|r| r.issues.first())
        .map(|i| format!(" (last: {}: {})", i.rule, first_line(&i.message)))
        .unwrap_or_default();
    let rounds = ctx.evidence.rounds.len();
    ctx.conclude(
        Status::NoProvenFix,
        ExitStatus::NoProvenFix,
        format!(
            "no proven fix after {rounds} round{}{last}",
            if rounds == 1 { "" } else { "s" }
        ),
    );
    Ok(ExitStatus::NoProvenFix)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn new_round(number: u32) -> Round {
    Round {
        number,
        attempts: Vec::new(),
        checks: Vec::new(),
        prevent: None,
        prove: None,
        issues: Vec::new(),
        verdict: RoundVerdict::Rejected,
    }
}

fn run_round(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: &mut usize,
) -> Result<Round, PipelineError> {
    let mut round = new_round(number);
    let mut contract_feedback: Vec<Issue> = Vec::new();
    let (report, response) = loop {
        let answer = answer(ctx, engine, number, *call_index, &contract_feedback);
        let index = *call_index;
        *call_index += 1;
        let response = match answer {
            Ok(response) => response,
            Err(message) => {
                round.verdict = RoundVerdict::EngineFailed;
                round.issues.push(Issue::new("engine.error", message));
                return Ok(round);
            }
        };
        ctx.save_checkpoint(super::checkpoint::Stage::Fixing)?;
        if ctx.stop_reason().is_some() {
            round.verdict = RoundVerdict::Stopped;
            return Ok(round);
        }
        let retry = !contract_feedback.is_empty();
        if response.output.trim() == "NO_CHANGE" {
            round
                .attempts
                .push(attempt(index, retry, &no_change_report(), &response));
            round.checks.push(check(
                "patch.contract",
                true,
                "the engine answered NO_CHANGE",
            ));
            round.verdict = RoundVerdict::NoChange;
            return Ok(round);
        }
        let report = patch::process(&ctx.root, &response.output, &ctx.config.patch, Mode::Write)?;
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
                if contract && !retry {
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
                return Ok(round);
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
                return Ok(round);
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
        return Ok(round);
    }
    prove_round(ctx, number, &report, round)
}

/// The engine's answer for this call: from the checkpoint when a resumed run already paid
/// for it, else from the engine. Records the call.
fn answer(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: usize,
    contract_feedback: &[Issue],
) -> Result<FixResponse, String> {
    let request = fix_request(ctx, number, call_index, contract_feedback);
    let prompt_bytes = request.prompt.len() as u64;
    if let Some(recorded) = ctx.checkpoint.fix_answers.get(call_index).cloned() {
        ctx.evidence.engine.calls.push(EngineCall {
            kind: CallKind::Fix,
            round: Some(number),
            prompt_bytes,
            usage: None,
            reused: true,
            error: None,
        });
        return Ok(recorded);
    }
    match engine.fix(&request) {
        Ok(reply) => {
            ctx.evidence.engine.calls.push(EngineCall {
                kind: CallKind::Fix,
                round: Some(number),
                prompt_bytes,
                usage: reply.usage,
                reused: false,
                error: None,
            });
            ctx.checkpoint.fix_answers.push(reply.response.clone());
            Ok(reply.response)
        }
        Err(err) => {
            ctx.evidence.engine.calls.push(EngineCall {
                kind: CallKind::Fix,
                round: Some(number),
                prompt_bytes,
                usage: None,
                reused: false,
                error: Some(err.to_string()),
            });
            Err(err.to_string())
        }
    }
}

fn fix_request(ctx: &Ctx<'_>, number: u32, call_index: usize, contract: &[Issue]) -> FixRequest {
    let localization = ctx.evidence.localization.clone();
    let excerpts = localization
        .as_ref()
        .map(|l| localize::excerpts(ctx, l))
        .unwrap_or_default();
    let hypothesis = localization
        .as_ref()
        .and_then(|l| l.hypothesis.clone())
        .unwrap_or_default();
    let mut feedback: Vec<Issue> = ctx
        .evidence
        .rounds
        .iter()
        .flat_map(|r| r.issues.iter().cloned())
        .collect();
    feedback.extend(contract.iter().cloned());
    let skip = feedback.len().saturating_sub(MAX_FEEDBACK_ISSUES);
    let feedback: Vec<Issue> = feedback.into_iter().skip(skip).collect();
    let failure = localize::failure_text(ctx);
    let feedback_text = if feedback.is_empty() {
        String::new()
    } else {
        let items: Vec<String> = feedback
            .iter()
            .map(|i| {
                let at = match (&i.path, i.line) {
                    (Some(p), Some(l)) => format!(" ({p}:{l})"),
                    (Some(p), None) => format!(" ({p})"),
                    _ => String::new(),
                };
                format!("- [{}]{at} {}", i.rule, i.message)
            })
            .collect();
        format!(
            "Earlier answers were not accepted. Fix these problems:\n{}",
            items.join("\n")
        )
    };
    let excerpt_text: String = excerpts
        .iter()
        .map(|e| {
            format!(
                "--- {}{}\n{}\n",
                e.path,
                if e.truncated { " (cut)" } else { "" },
                e.numbered
            )
        })
        .collect();
    let prompt = crate::prompt::render(
        &ctx.template(false),
        &BTreeMap::from([
            ("round", number.to_string()),
            ("command", ctx.command.clone()),
            ("failure", failure.clone()),
            (
                "hypothesis",
                if hypothesis.is_empty() {
                    "(none)".to_owned()
                } else {
                    hypothesis.clone()
                },
            ),
            ("excerpts", excerpt_text),
            ("feedback", feedback_text),
        ]),
    );
    FixRequest {
        round: number,
        call_index,
        command: ctx.command.clone(),
        failure,
        hypothesis,
        excerpts,
        feedback,
        prompt,
    }
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

/// Prevent and Prove for an applied change; the change is in the working tree on entry.
fn prove_round(
    ctx: &mut Ctx<'_>,
    number: u32,
    report: &PatchReport,
    mut round: Round,
) -> Result<Round, PipelineError> {
    let split = prevent::split(&report.changes);
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
        return Ok(round);
    }
    let command = ctx.command.clone();
    let suites = ctx.suites.clone();
    let mut tests_only_runs = Vec::new();
    if !split.tests_only.is_empty() {
        ctx.reporter.info(&format!(
            "prevent: running with only the test changes ({})",
            split.test_files.join(", ")
        ));
        ctx.restore()?;
        patch::write_changes(&ctx.root, &split.tests_only)?;
        let batch = std::iter::once((command.clone(), Purpose::TestsOnlyReproduction))
            .chain(suites.iter().map(|s| (s.clone(), Purpose::TestsOnlySuite)));
        for (cmd, purpose) in batch {
            match ctx.run_command(&cmd, Phase::Prevent, purpose, Some(number))? {
                Some(id) => tests_only_runs.push(id),
                None => return stopped(ctx, round),
            }
        }
        ctx.restore()?;
        patch::write_changes(&ctx.root, &report.changes)?;
    }
    ctx.reporter.info("prove: running with the whole change");
    let Some(fixed_repro) = ctx.run_command(
        &command,
        Phase::Prove,
        Purpose::FixedReproduction,
        Some(number),
    )?
    else {
        return stopped(ctx, round);
    };
    let mut fixed_suites = Vec::new();
    for suite in &suites {
        match ctx.run_command(suite, Phase::Prove, Purpose::FixedSuite, Some(number))? {
            Some(id) => fixed_suites.push(id),
            None => return stopped(ctx, round),
        }
    }
    // Commands may have written files; put the change back exactly.
    ctx.restore()?;
    patch::write_changes(&ctx.root, &report.changes)?;

    let evidence = &ctx.evidence;
    let records = |ids: &[usize]| -> Vec<&CommandRecord> {
        ids.iter().filter_map(|id| evidence.command(*id)).collect()
    };
    let repro_before = evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first())
        .and_then(|id| evidence.command(*id));
    let baselines: Vec<usize> = evidence
        .reproduction
        .as_ref()
        .map(|r| r.suite_baselines.clone())
        .unwrap_or_default();
    let fixed_repro_record = evidence.command(fixed_repro);
    let mut pairs = vec![(repro_before, fixed_repro_record)];
    for (i, id) in fixed_suites.iter().enumerate() {
        pairs.push((
            baselines.get(i).and_then(|b| evidence.command(*b)),
            evidence.command(*id),
        ));
    }
    let table = prove::table(&pairs);

    let mut issues = Vec::new();
    let repro_ok = fixed_repro_record.is_some_and(prove::passes);
    round.checks.push(check(
        "prove.reproduction",
        repro_ok,
        &fixed_repro_record
            .map(|r| format!("`{}` {}", r.command, pass_text(r)))
            .unwrap_or_default(),
    ));
    if !repro_ok && let Some(record) = fixed_repro_record {
        issues.push(prove::failure_issue(
            "prove.reproduction",
            "the reproduction",
            record,
        ));
    }
    let derived = ctx.evidence.request.derived_suite.clone();
    for (i, id) in fixed_suites.iter().enumerate() {
        let Some(record) = evidence.command(*id) else {
            continue;
        };
        let is_derived = derived.as_deref() == Some(record.command.as_str());
        let baseline = baselines.get(i).and_then(|b| evidence.command(*b));
        let ok = if is_derived {
            // A derived suite may have failures that predate the fix; it must not gain any.
            let newly = prove::table(&[(baseline, Some(record))]).newly_failing;
            newly.is_empty()
                && (record.tests.is_some()
                    || !baseline.is_some_and(prove::passes)
                    || prove::passes(record))
        } else {
            prove::passes(record)
        };
        let id_name = if is_derived {
            "prove.derived-suite"
        } else {
            "prove.suite"
        };
        round.checks.push(check(
            id_name,
            ok,
            &format!("`{}` {}", record.command, pass_text(record)),
        ));
        if !ok {
            issues.push(prove::failure_issue(id_name, "a test suite", record));
        }
    }
    let newly_ok = table.newly_failing.is_empty();
    round.checks.push(check(
        "prove.no-new-failures",
        newly_ok,
        &if newly_ok {
            "no test that passed before fails now".to_owned()
        } else {
            format!("newly failing: {}", table.newly_failing.join(", "))
        },
    ));
    if !newly_ok && issues.is_empty() {
        issues.push(Issue::new(
            "prove.no-new-failures",
            format!(
                "the change makes these tests fail: {}",
                table.newly_failing.join(", ")
            ),
        ));
    }

    let tests_only = records(&tests_only_runs);
    let mut fixed_ids = vec![fixed_repro];
    fixed_ids.extend(fixed_suites.iter().copied());
    let fixed = records(&fixed_ids);
    let failing_before = evidence
        .reproduction
        .as_ref()
        .map(|r| r.failing_tests.clone())
        .unwrap_or_default();
    let decision = prevent::decide(
        &split,
        &tests_only,
        &fixed,
        &failing_before,
        fixed_repro_record,
        ctx.config.test.required,
    );
    round.checks.push(check(
        "prevent.guard",
        decision.guard.is_some(),
        &decision.detail,
    ));
    if decision.guard.is_none() {
        issues.push(Issue::new(
            "prevent.no-guard",
            format!(
                "no regression guard was proven ({}); add a test that fails without the fix and passes with it",
                decision.detail
            ),
        ));
    }
    round.prevent = Some(Prevent {
        test_files: split.test_files.clone(),
        changed_tests: split.changed_tests.clone(),
        tests_only_runs,
        failed_without_fix: decision.failed_without_fix,
        passed_with_fix: decision.passed_with_fix,
        guard: decision.guard,
        detail: decision.detail,
    });
    round.prove = Some(Prove {
        reproduction: fixed_repro,
        suites: fixed_suites,
        table,
    });
    if !issues.is_empty() {
        ctx.restore()?;
        round.issues = issues;
        round.verdict = RoundVerdict::ProofFailed;
        return Ok(round);
    }
    let (files, added, removed) = patch::diff_stats(&report.changes);
    let _ = files;
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
        guard: round
            .prevent
            .as_ref()
            .and_then(|p| p.guard)
            .unwrap_or(crate::evidence::Guard::NotRequired),
        left_applied,
    });
    round.verdict = RoundVerdict::Proven;
    Ok(round)
}

fn stopped(ctx: &mut Ctx<'_>, mut round: Round) -> Result<Round, PipelineError> {
    ctx.restore()?;
    round.verdict = RoundVerdict::Stopped;
    Ok(round)
}

fn pass_text(record: &CommandRecord) -> String {
    let exit = record
        .outcome
        .as_ref()
        .map(|o| {
            if o.timed_out {
                "timed out".to_owned()
            } else {
                o.exit_code
                    .map(|c| format!("exit {c}"))
                    .unwrap_or_else(|| "killed".to_owned())
            }
        })
        .unwrap_or_else(|| "not run".to_owned());
    match &record.tests {
        Some(t) => format!("{exit}, {} passed, {} failed", t.passed, t.failed),
        None => exit,
    }
}
