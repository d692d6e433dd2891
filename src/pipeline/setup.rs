//! Setup: the `commands.setup` list (dependency fetches such as `cargo fetch`, `npm ci`,
//! `pip install -e .`), run once before the reproduction with the network allowed, each
//! recorded as setup. What they change in tracked files is put back before the reproduction;
//! what they add to ignored directories (`node_modules/`, `target/`) stays for the run.
//!
//! A failing setup ends the run: a reproduction on a half-installed tree would blame the code
//! for the environment.

use crate::evidence::{Phase, Purpose, Status};
use crate::exit::ExitStatus;

use super::PipelineError;
use super::ctx::Ctx;

/// Run the setup commands. Returns an exit status when the run ends here.
pub(crate) fn run(ctx: &mut Ctx<'_>) -> Result<Option<ExitStatus>, PipelineError> {
    let commands = ctx.config.setup.clone();
    if commands.is_empty() {
        return Ok(None);
    }
    ctx.reporter.phase("setup");
    let result = setup(ctx, &commands);
    ctx.reporter.end_phase();
    result
}

fn setup(ctx: &mut Ctx<'_>, commands: &[String]) -> Result<Option<ExitStatus>, PipelineError> {
    for command in commands {
        let id = ctx.run_command(command, Phase::Setup, Purpose::Setup, None)?;
        ctx.restore()?;
        let Some(id) = id else {
            let status = ctx.stop_reason().unwrap_or(Status::BudgetExhausted);
            ctx.conclude_stop(status);
            return Ok(Some(ExitStatus::NoProvenFix));
        };
        let failed = ctx.evidence.command(id).is_some_and(|r| !r.succeeded());
        if failed {
            ctx.conclude(
                Status::NoProvenFix,
                ExitStatus::NoProvenFix,
                format!(
                    "the setup command `{command}` failed, so the reproduction would not test \
                     the code; fix `commands.setup` (it runs with the network, before \
                     everything else)"
                ),
            );
            return Ok(Some(ExitStatus::NoProvenFix));
        }
    }
    Ok(None)
}
