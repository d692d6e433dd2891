//! Fix rounds until one is proven or the limit is reached: each round is a single fix
//! (`fix`) or, with `--candidates K`, K fixes chosen by proof (`candidates`). Every blocking
//! issue goes back to the engine as feedback for the next round.

use crate::engine::Engine;
use crate::evidence::{Round, RoundVerdict, Status, Weakness};
use crate::exit::ExitStatus;
use crate::policy::Issue;

use super::PipelineError;
use super::ctx::Ctx;
use super::fix::{Source, first_line, run_round};

/// Run fix rounds until one is proven or the limit is reached.
pub(crate) fn rounds(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
) -> Result<ExitStatus, PipelineError> {
    let first = ctx.evidence.rounds.len() as u32 + 1;
    let mut call_index: usize = ctx.evidence.rounds.iter().map(engine_calls).sum();
    for number in first..=ctx.config.max_rounds {
        if let Some(status) = ctx.stop_reason() {
            ctx.conclude_stop(status);
            return Ok(ExitStatus::NoProvenFix);
        }
        ctx.reporter
            .phase(&format!("fix, round {number} of {}", ctx.config.max_rounds));
        let round = if ctx.config.candidates.count > 1 {
            super::candidates::round(ctx, engine, number, &mut call_index)
        } else {
            run_round(ctx, Source::Engine(engine), number, &mut call_index)
        };
        ctx.reporter.end_phase();
        let round = round?;
        let verdict = round.verdict;
        let issues = round.issues.clone();
        ctx.evidence.rounds.push(round);
        ctx.save_checkpoint(super::checkpoint::Stage::Fixing)?;
        match verdict {
            RoundVerdict::Proven => {
                let (status, exit, reason) = proven_outcome(ctx, number);
                ctx.conclude(status, exit, reason);
                return Ok(exit);
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
                match (ctx.stop_reason(), budget_issue(&issues)) {
                    (Some(status), _) => ctx.conclude_stop(status),
                    (None, Some(spent)) => ctx.conclude(
                        Status::BudgetExhausted,
                        ExitStatus::NoProvenFix,
                        format!("{}; the run stopped in round {number}", spent.message),
                    ),
                    (None, None) => ctx.conclude_stop(Status::Interrupted),
                }
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

/// The status of a proven round `number`, weakest claim first (closed by default): a check
/// that could not be judged, then a flag for review, then a proof that no suite took part in,
/// else `fixed`.
pub(crate) fn proven_outcome(ctx: &Ctx<'_>, number: u32) -> (Status, ExitStatus, String) {
    let proven = format!(
        "fixed in round {number}: the reproduction passes with the change and the regression \
         guard is proven"
    );
    let weak = |weakness: Weakness| -> Vec<String> {
        ctx.evidence
            .rounds
            .iter()
            .find(|r| r.number == number)
            .map(|r| {
                r.checks
                    .iter()
                    .filter(|c| c.weakens == Some(weakness))
                    .map(|c| c.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    let not_judged = weak(Weakness::NotJudged);
    if !not_judged.is_empty() {
        return (
            Status::FixedNotJudged,
            ExitStatus::NeedsReview,
            format!(
                "{proven}, but not every check could be judged ({}): not fixed and proven; \
                 review the change",
                not_judged.join(", ")
            ),
        );
    }
    let flagged = weak(Weakness::Flagged);
    if !flagged.is_empty() {
        return (
            Status::FixedFlagged,
            ExitStatus::NeedsReview,
            format!(
                "{proven}, but the change is flagged for review ({})",
                flagged.join(", ")
            ),
        );
    }
    // `fixed` means the repository's tests were checked too; a proof that no suite took part
    // in says so in its status (still exit 0 for workflows).
    let reproduction_only = ctx
        .evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.suite_choice.as_ref())
        .is_some_and(|choice| choice.chosen.is_none());
    if reproduction_only {
        (
            Status::FixedReproductionOnly,
            ExitStatus::Success,
            format!("{proven}; no other test of the repository was run"),
        )
    } else {
        (Status::Fixed, ExitStatus::Success, proven)
    }
}

/// The fix calls a round made: its attempts, or with candidates one answer per candidate (a
/// candidate gets no contract retry; the winner's attempt in the round repeats its answer).
fn engine_calls(round: &Round) -> usize {
    if round.candidates.is_empty() {
        round.attempts.len()
    } else {
        round
            .candidates
            .iter()
            .map(|c| c.round.attempts.len())
            .sum()
    }
}

/// The issue of an engine budget that stopped a round.
fn budget_issue(issues: &[Issue]) -> Option<&Issue> {
    issues.iter().find(|i| i.rule.starts_with("budget."))
}
