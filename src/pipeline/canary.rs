//! Prove's canary step: with the whole change proven, run the reproduction's failing tests
//! again beside canaries in a scratch copy (`integrity::canary` builds and judges them; this
//! file only runs the commands through the recorded runner and records the checks).

use sha2::{Digest, Sha256};

use crate::evidence::{Phase, Purpose, Round};
use crate::integrity::canary::{self, Scratch};
use crate::patch::{self, FileChange};
use crate::policy::Issue;

use super::PipelineError;
use super::ctx::Ctx;

/// Run the canaries of round `number`; their blocking issues, or `None` when the run must
/// stop (budget spent or interrupted). The user's tree is only read.
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
    let scratch = match Scratch::copy(&ctx.root, &ctx.artifacts) {
        Ok(scratch) => scratch,
        Err(error) => {
            tracing::warn!(%error, "no canary copy");
            not_built(round, format!("no scratch copy could be made: {error}"));
            return Ok(Some(Vec::new()));
        }
    };
    let plan = match canary::plan(&argv, before.as_ref(), scratch.root(), &seed) {
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
        let Some(id) = ctx.run_command_at(
            scratch.root(),
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
    // A target that fails or times out alone in the copy (not one that exits 0 without a
    // record: that is an exit trick) says the copy does not reproduce the proof, for
    // instance a test that reads files git ignores. Nothing can be judged there; the evidence
    // says so rather than refusing a fix that passed in the tree.
    for (target, id) in &alone {
        let Some(record) = ctx.evidence.command(*id) else {
            continue;
        };
        let passed = record.tests.as_ref().and_then(|t| t.status_of(target))
            == Some(crate::testreport::TestStatus::Passed);
        if !passed && !record.succeeded() {
            not_built(
                round,
                format!(
                    "the target `{target}` does not pass alone in the scratch copy ({}), so no \
                     canary can be judged there: the test may depend on files git ignores",
                    super::checks::pass_text(record)
                ),
            );
            return Ok(Some(Vec::new()));
        }
    }
    for (path, text) in &plan.writes {
        if let Err(error) = scratch.write(path, text) {
            tracing::warn!(%error, "canary not written");
            not_built(round, format!("the canaries could not be written: {error}"));
            return Ok(Some(Vec::new()));
        }
    }
    let mut session = Vec::new();
    for selection in &plan.session {
        let Some(id) = ctx.run_command_at(
            scratch.root(),
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
    drop(scratch);
    Ok(Some(issues))
}
