//! The `efix init` command: the engine and agent (asked only on a terminal without `--yes`),
//! the plan, then printing (`--dry-run`) or writing, and the exit code.

use crate::ExitStatus;
use crate::cli::{AgentArg, InitArgs, InitEngineArg};
use crate::config::Env;
use crate::report;

use super::{Agent, EngineChoice, InitOptions};

/// Ask `question` until the answer is one of `choices` (empty: the first); `Err` after an
/// unknown answer, which is reported.
fn choose<T: Copy>(question: &str, choices: &[(&str, T)]) -> Result<T, ExitStatus> {
    let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
    let answer = report::ask(&format!("{question} [{}] ", names[0])).unwrap_or_default();
    let answer = if answer.is_empty() {
        names[0]
    } else {
        answer.as_str()
    };
    match choices.iter().find(|(name, _)| *name == answer) {
        Some((_, value)) => Ok(*value),
        None => {
            report::message(&format!(
                "efix: error: unknown answer `{answer}`: answer {}",
                names.join(" or ")
            ));
            Err(ExitStatus::Usage)
        }
    }
}

fn engine(args: &InitArgs, interactive: bool) -> Result<EngineChoice, ExitStatus> {
    let engine = match (args.engine, args.agent) {
        (Some(InitEngineArg::Openai), Some(_)) => {
            report::message(
                "efix: error: --agent configures the acp engine; drop it or use --engine acp",
            );
            return Err(ExitStatus::Usage);
        }
        (Some(engine), _) => engine,
        (None, Some(_)) => InitEngineArg::Acp,
        (None, None) if interactive => choose(
            "Engine: openai (an OpenAI-compatible API) or acp (a coding agent: Claude Code, \
             Gemini CLI)?",
            &[
                ("openai", InitEngineArg::Openai),
                ("acp", InitEngineArg::Acp),
            ],
        )?,
        (None, None) => InitEngineArg::Openai,
    };
    if engine == InitEngineArg::Openai {
        return Ok(EngineChoice::Openai);
    }
    let agent = match args.agent {
        Some(agent) => agent,
        None if interactive => choose(
            "Agent: claude (Claude Code) or gemini (Gemini CLI)?",
            &[("claude", AgentArg::Claude), ("gemini", AgentArg::Gemini)],
        )?,
        None => AgentArg::Claude,
    };
    Ok(EngineChoice::Acp(match agent {
        AgentArg::Claude => Agent::Claude,
        AgentArg::Gemini => Agent::Gemini,
    }))
}

/// Run `efix init`.
pub fn run(args: InitArgs, env: &Env) -> ExitStatus {
    let interactive = !args.yes && report::interactive();
    let engine = match engine(&args, interactive) {
        Ok(engine) => engine,
        Err(status) => return status,
    };
    let root = args
        .repo
        .clone()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| ".".into()));
    let options = InitOptions {
        root: root.clone(),
        engine,
        action: args.action.clone(),
    };
    let plan = match super::plan(&options, env) {
        Ok(plan) => plan,
        Err(err) => {
            report::error(&err);
            return ExitStatus::Usage;
        }
    };
    if args.dry_run {
        report::stdout(&super::dry_run(&plan, &root));
        return ExitStatus::Success;
    }
    if interactive {
        let names: Vec<&str> = plan.files.iter().map(|f| f.path).collect();
        let answer = report::ask(&format!("Write {}? [Y/n] ", names.join(" and ")));
        if !matches!(answer.as_deref(), Some("" | "y" | "Y" | "yes")) {
            report::message("efix: nothing was written");
            return ExitStatus::Success;
        }
    }
    if let Err(err) = super::write(&root, &plan, args.force) {
        report::error(&err);
        return ExitStatus::Usage;
    }
    report::stdout(&super::summary(&plan, true, &root));
    ExitStatus::Success
}
