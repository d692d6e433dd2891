//! Prove's canary step: with the whole change proven, run the reproduction's failing tests
//! again beside canaries in the user's own tree, where the proof ran (`integrity::canary`
//! builds and judges them; this file writes them under the run's journal, runs the commands
//! through the recorded runner, records the checks and puts the tree back as Prove leaves it:
//! the change in place, nothing else).

use sha2::{Digest, Sha256};

use crate::evidence::{Phase, Purpose, Round};
use crate::integrity::canary;
use crate::patch::{self, FileChange};
use crate::policy::Issue;

use super::PipelineError;
use super::ctx::Ctx;

/// Run the canaries of round `number`; their blocking issues, or `None` when the run must
/// stop (budget spent or interrupted). The whole change is in the working tree on entry and
/// on return; the canary files live there only between a journal entry and a restore.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    round: &mut Round,
) -> Result<Option<Vec<Issue>>, PipelineError> {
    let not_built = |round: &mut Round, reason: String| {
        round.checks.extend(canary::not_built(&[(
            "the reproduction".to_owned(),
            reason,
        )]));
    };
    let Some(argv) = shlex::split(&ctx.command) else {
        not_built(
            round,
            "the command could not be split into arguments".to_owned(),
        );
        return Ok(Some(Vec::new()));
    };
    let before = ctx
        .evidence
        .reproduction
        .as_ref()
        .and_then(|r| r.runs.first())
        .and_then(|id| ctx.evidence.command(*id))
        .and_then(|r| r.tests.clone());
    let seed: String = Sha256::digest(patch::diff_of(changes).as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let plan = match canary::plan(&argv, before.as_ref(), &ctx.root, &ctx.artifacts, &seed) {
        Ok(plan) => plan,
        Err(reason) => {
            not_built(round, reason);
            return Ok(Some(Vec::new()));
        }
    };
    round.checks.extend(canary::not_built(&plan.not_built));
    round
        .checks
        .extend(canary::not_applicable(&plan.inapplicable));
    if plan.targets.is_empty() {
        return Ok(Some(Vec::new()));
    }
    ctx.reporter.info("prove: running the canaries");
    let command = |selection| {
        shlex::try_join(
            plan.invocation
                .command(selection)
                .iter()
                .map(String::as_str),
        )
        .unwrap_or_default()
    };
    let mut alone = Vec::new();
    for (target, selection) in &plan.alone {
        let Some(id) = ctx.run_command_within(
            &command(selection),
            Phase::Prove,
            Purpose::Canary,
            Some(number),
            None,
        )?
        else {
            return Ok(None);
        };
        alone.push((target.clone(), id));
    }
    // A target that fails or times out alone (not one that exits 0 without a record: that
    // is an exit trick) passed beside the rest of the reproduction in the same tree, so the
    // fix depends on what else runs; nothing can be judged beside it, and the claim is
    // weaker for it, never silent.
    for (target, id) in &alone {
        let Some(record) = ctx.evidence.command(*id) else {
            not_built(
                round,
                format!("the target `{target}` run alone left no record"),
            );
            put_back(ctx, changes)?;
            return Ok(Some(Vec::new()));
        };
        let passed = record.tests.as_ref().and_then(|t| t.status_of(target))
            == Some(crate::testreport::TestStatus::Passed);
        if !passed && !record.succeeded() {
            not_built(
                round,
                format!(
                    "the target `{target}` does not pass alone ({}), so no canary can be \
                     judged beside it: the test passes only with others run before it",
                    super::checks::pass_text(record)
                ),
            );
            put_back(ctx, changes)?;
            return Ok(Some(Vec::new()));
        }
    }
    // The session starts from the tree the proof ran in: the change, nothing the alone runs
    // wrote. The canary files are journaled before they are written, so a restore (also
    // `efix restore` after kill -9) removes them and puts the target's file back.
    put_back(ctx, changes)?;
    if let Err(error) = ctx.write_files(&plan.writes) {
        tracing::warn!(%error, "canary not written");
        not_built(round, format!("the canaries could not be written: {error}"));
        put_back(ctx, changes)?;
        return Ok(Some(Vec::new()));
    }
    let mut session = Vec::new();
    for selection in &plan.session {
        let Some(id) = ctx.run_command_within(
            &command(selection),
            Phase::Prove,
            Purpose::Canary,
            Some(number),
            None,
        )?
        else {
            return Ok(None);
        };
        session.push(id);
    }
    put_back(ctx, changes)?;
    let records: Vec<_> = session
        .iter()
        .filter_map(|id| ctx.evidence.command(*id))
        .collect();
    let alone: Vec<_> = alone
        .iter()
        .filter_map(|(target, id)| Some((target.clone(), ctx.evidence.command(*id)?)))
        .collect();
    let (checks, issues) = canary::judge(&plan, &records, &alone);
    round.checks.extend(checks);
    // The dynamic special-case check only for a change the canaries let through: it tells a
    // special case from a fix, and costs two runs.
    if !issues.is_empty() {
        return Ok(Some(issues));
    }
    perturbed(ctx, number, changes, &plan, round)
}

/// Run the targets' perturbed copies alone on the base tree and on the change (the copies
/// journaled and written the same into both; every run of the copies on each tree) and judge
/// them; `None` when the run must stop. On return the tree holds the change, nothing else.
fn perturbed(
    ctx: &mut Ctx<'_>,
    number: u32,
    changes: &[FileChange],
    plan: &canary::Plan,
    round: &mut Round,
) -> Result<Option<Vec<Issue>>, PipelineError> {
    let copies = &plan.perturbed;
    round.checks.extend(canary::perturbed_not_run(copies));
    if copies.copies.is_empty() {
        return Ok(Some(Vec::new()));
    }
    ctx.reporter
        .info("prove: running the tests with their inputs perturbed, on the base and the change");
    let commands: Vec<String> = copies
        .runs
        .iter()
        .map(|selection| {
            shlex::try_join(
                plan.invocation
                    .command(selection)
                    .iter()
                    .map(String::as_str),
            )
            .unwrap_or_default()
        })
        .collect();
    // `ids[tree][run]`: the base's runs, then the change's.
    let mut ids: Vec<Vec<usize>> = Vec::new();
    for with_change in [false, true] {
        ctx.restore()?;
        if with_change {
            patch::write_changes(&ctx.root, changes)?;
        }
        // The copies go right after each target in the tree as it is: the base keeps its
        // own code where the target's file is also code the change edits (Rust's inline
        // tests).
        let written = copies
            .texts(&ctx.root)
            .and_then(|texts| ctx.write_files(&texts).map_err(|e| e.to_string()));
        if let Err(error) = written {
            tracing::warn!(%error, "perturbed copies not written");
            round.checks.push(crate::evidence::CheckRecord::not_judged(
                canary::PERTURBED,
                format!("the perturbed copies could not be written: {error}"),
            ));
            put_back(ctx, changes)?;
            return Ok(Some(Vec::new()));
        }
        let mut tree = Vec::new();
        for command in &commands {
            let Some(id) =
                ctx.run_command_within(command, Phase::Prove, Purpose::Canary, Some(number), None)?
            else {
                return Ok(None);
            };
            tree.push(id);
        }
        ids.push(tree);
    }
    put_back(ctx, changes)?;
    // A run with no record is judged as such (not judged), never skipped.
    let runs: Vec<_> = ids[0]
        .iter()
        .zip(&ids[1])
        .map_while(|(base, change)| {
            Some((ctx.evidence.command(*base)?, ctx.evidence.command(*change)?))
        })
        .collect();
    let (check, issue) = canary::judge_perturbed(copies, plan.invocation.runner, &runs);
    round.checks.push(check);
    Ok(Some(issue.into_iter().collect()))
}

/// Put the tree back as Prove leaves it: restored exactly (canary files gone, the target's
/// file as it was), then the change written again.
fn put_back(ctx: &mut Ctx<'_>, changes: &[FileChange]) -> Result<(), PipelineError> {
    ctx.restore()?;
    patch::write_changes(&ctx.root, changes)?;
    Ok(())
}
