//! Dispatch of the parsed command line to the areas that do the work, and the mapping of
//! their results to exit codes. The only place that turns errors into messages.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

use crate::ExitStatus;
use crate::cli::{Cli, Command, ConfigCommand, EngineArg, PublishArgs, RunArgs, SchemaKind};
use crate::config::{self, Config, EngineKind, Env, Overrides};
use crate::engine::Engine;
use crate::engine::acp::{AcpEngine, AcpSettings};
use crate::engine::openai::OpenaiEngine;
use crate::engine::replay::ReplayEngine;
use crate::pipeline::{self, Checkpoint, RunOptions, signals};
use crate::publish::{self, Event, GithubEnv, PublishError, Verdict};
use crate::report::{self, Reporter};
use crate::runner::{self, CommandSpec};

/// Run efix with the given process arguments and return the exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitStatus {
    let args: Vec<OsString> = args.into_iter().collect();
    // Helper mode first: it must stay single-threaded and touch nothing else (see
    // `runner::helper_entry`); it only returns when the command could not be executed.
    if let Some(code) = runner::helper_entry(&args) {
        return ExitStatus::Raw(code);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let status = if err.use_stderr() {
                ExitStatus::Usage
            } else {
                ExitStatus::Success
            };
            let _ = err.print();
            return status;
        }
    };
    let env = Env::capture();
    let non_dumpable = runner::harden_self();
    tracing::debug!(non_dumpable, "hardened the efix process");
    match cli.command {
        Command::Run(args) => run_command(args, &env),
        Command::Demo(args) => demo(args.artifacts, &env),
        Command::Exec(args) => exec(args, &env),
        Command::Patch(args) => patch(args, &env),
        Command::Config(ConfigCommand::Check { file, engine }) => {
            config_check(file, engine.map(engine_kind), &env)
        }
        Command::Schema(args) => {
            report::stdout(&match args.which {
                SchemaKind::Config => config::schema_json(),
                SchemaKind::Evidence => crate::evidence::schema_json(),
                SchemaKind::Replay => crate::engine::replay::schema_json(),
            });
            ExitStatus::Success
        }
        Command::Verify(args) => verify(&args.artifacts, &env),
        Command::Restore(args) => restore(args.repo.unwrap_or_else(cwd)),
        Command::Publish(args) => publish_command(args, &env),
        Command::Triage(args) => crate::triage::run(args, &env),
        Command::Init(args) => crate::init::run(args, &env),
    }
}

fn github_actions(env: &Env) -> bool {
    env.get("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// Load and resolve the configuration for `repo`; errors are printed and mapped to exit 2.
fn resolve(
    repo: &Path,
    explicit: Option<&Path>,
    overrides: &Overrides,
    env: &Env,
) -> Result<Config, ExitStatus> {
    let file = config::load(repo, explicit).map_err(|err| {
        report::error(&err);
        ExitStatus::Usage
    })?;
    let config = Config::resolve(file, overrides, env).map_err(|err| {
        report::error(&err);
        ExitStatus::Usage
    })?;
    for name in &config.env_dropped {
        report::message(&format!(
            "efix: warning: not passing {name} to commands: it looks like a credential"
        ));
    }
    Ok(config)
}

fn exec(args: crate::cli::ExecArgs, env: &Env) -> ExitStatus {
    let repo = args.repo.unwrap_or_else(cwd);
    let overrides = Overrides {
        repo: repo.clone(),
        command_timeout: args.timeout_seconds.map(Duration::from_secs),
        ..Overrides::default()
    };
    let config = match resolve(&repo, args.config.as_deref(), &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    if let Err(refusal) = crate::policy::command::check_argv(&args.argv, &config.allow) {
        report::message(&format!(
            "efix: refused: {} [{}]",
            refusal.message, refusal.rule
        ));
        return ExitStatus::PolicyRefused;
    }
    if let Err(unavailable) = runner::check_required(&config.runner.sandbox) {
        report::message(&format!("efix: refused: {unavailable}; nothing was run"));
        return ExitStatus::PolicyRefused;
    }
    let spec = CommandSpec {
        argv: args.argv,
        cwd: repo,
        timeout: config.command_timeout,
        access: runner::Access::command(config.network),
    };
    signals::install();
    match runner::run_cancellable(&spec, &config.runner, &signals::CANCEL) {
        Ok(outcome) => {
            report::stdout(&serde_json::to_string_pretty(&outcome).unwrap_or_default());
            ExitStatus::Success
        }
        Err(err @ runner::RunnerError::TierNotAchieved { .. }) => {
            report::error(&err);
            ExitStatus::PolicyRefused
        }
        Err(err) => {
            report::error(&err);
            ExitStatus::Usage
        }
    }
}

fn patch(args: crate::cli::PatchArgs, env: &Env) -> ExitStatus {
    let overrides = Overrides {
        repo: args.repo.clone(),
        ..Overrides::default()
    };
    let config = match resolve(&args.repo, args.config.as_deref(), &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    let mut raw = String::new();
    if let Err(err) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut raw) {
        report::message(&format!(
            "efix: error: failed to read the model output on stdin: {err}"
        ));
        return ExitStatus::Usage;
    }
    let mode = if args.check {
        crate::patch::Mode::Check
    } else {
        crate::patch::Mode::Write
    };
    match crate::patch::process(&args.repo, &raw, &config.patch, mode) {
        Ok(result) => {
            report::stdout(&serde_json::to_string_pretty(&result).unwrap_or_default());
            match result.outcome {
                crate::patch::PatchOutcome::Rejected => ExitStatus::NoProvenFix,
                _ => ExitStatus::Success,
            }
        }
        Err(err) => {
            report::error(&err);
            ExitStatus::Usage
        }
    }
}

fn config_check(file: Option<PathBuf>, engine: Option<EngineKind>, env: &Env) -> ExitStatus {
    let repo = cwd();
    let overrides = Overrides {
        repo: repo.clone(),
        engine,
        ..Overrides::default()
    };
    // Without a file argument, `.efix.yml` here is checked if present, else the defaults.
    match resolve(&repo, file.as_deref(), &overrides, env) {
        Ok(config) => {
            report::stdout(&config::check_summary(&config));
            ExitStatus::Success
        }
        Err(status) => status,
    }
}

fn engine_kind(arg: EngineArg) -> EngineKind {
    match arg {
        EngineArg::Openai => EngineKind::Openai,
        EngineArg::Acp => EngineKind::Acp,
        EngineArg::Replay => EngineKind::Replay,
    }
}

/// Build the engine the configuration asks for.
fn build_engine(
    config: &Config,
    replay: Option<&Path>,
    root: &Path,
    env: &Env,
) -> Result<Box<dyn Engine>, ExitStatus> {
    let setup_failed = |err: crate::engine::EngineError| {
        report::error(&err);
        ExitStatus::Usage
    };
    match config.engine {
        EngineKind::Replay => {
            let Some(path) = replay else {
                report::message(
                    "efix: error: --engine replay needs --replay FILE (a replay file; see `efix \
                     schema replay`)",
                );
                return Err(ExitStatus::Usage);
            };
            ReplayEngine::from_path(path)
                .map(|e| Box::new(e) as Box<dyn Engine>)
                .map_err(setup_failed)
        }
        EngineKind::Openai => {
            let name = &config.openai.api_key_env;
            let key = if name.is_empty() {
                None
            } else {
                match env
                    .get(name)
                    .and_then(|v| v.to_str())
                    .filter(|v| !v.is_empty())
                {
                    Some(key) => Some(key.to_owned()),
                    None => {
                        return Err(setup_failed(crate::engine::EngineError::MissingKey {
                            variable: name.clone(),
                        }));
                    }
                }
            };
            OpenaiEngine::new(config.openai.clone(), key, config.runner.secrets.clone())
                .map(|e| Box::new(e) as Box<dyn Engine>)
                .map_err(setup_failed)
        }
        EngineKind::Acp => {
            let command = config.acp_command.as_deref().unwrap_or_default();
            let argv = match crate::policy::command::check(command, &config.allow) {
                Ok(argv) => argv,
                Err(refusal) => {
                    report::message(&format!(
                        "efix: refused: the ACP agent `{command}` (acp.command): {} [{}]",
                        refusal.message, refusal.rule
                    ));
                    return Err(ExitStatus::PolicyRefused);
                }
            };
            // The agent's program and the paths it may write exist before anything runs.
            let program = crate::runner::resolve_program(&argv, &config.acp_env, root)
                .and_then(|_| crate::runner::create_writable(&config.acp_writable));
            if let Err(message) = program {
                report::message(&format!("efix: error: {message}"));
                return Err(ExitStatus::Usage);
            }
            let settings = AcpSettings {
                argv,
                root: root.to_owned(),
                paths: config.patch.clone(),
                cancel: Some(&signals::CANCEL),
                runner: {
                    let mut runner = crate::runner::RunnerSettings {
                        env: config.acp_env.clone(),
                        ..config.runner.clone()
                    };
                    runner
                        .sandbox
                        .writable
                        .extend(config.acp_writable.iter().cloned());
                    runner
                },
                timeout: config.acp_timeout,
                mode: config.acp_mode,
            };
            AcpEngine::new(settings)
                .map(|e| Box::new(e) as Box<dyn Engine>)
                .map_err(setup_failed)
        }
    }
}

fn run_command(mut args: RunArgs, env: &Env) -> ExitStatus {
    if args.from_event
        && let Err(status) = from_event(&mut args, env)
    {
        return status;
    }
    let resume = match &args.resume {
        Some(dir) => match Checkpoint::load(dir) {
            Ok(checkpoint) => Some(checkpoint),
            Err(err) => {
                report::error(&err);
                return ExitStatus::Usage;
            }
        },
        None => None,
    };
    let repo = match (&resume, &args.repo) {
        (_, Some(repo)) => repo.clone(),
        (Some(checkpoint), None) => checkpoint.repo.clone(),
        (None, None) => cwd(),
    };
    let repo_root = match crate::git::Repo::open(&repo) {
        Ok(opened) => opened.root,
        Err(err) => {
            report::error(&err);
            return ExitStatus::Usage;
        }
    };
    let engine_arg = args.engine.map(engine_kind).or_else(|| {
        resume.as_ref().and_then(|c| match c.engine.kind.as_str() {
            "replay" => Some(EngineKind::Replay),
            "openai" => Some(EngineKind::Openai),
            "acp" => Some(EngineKind::Acp),
            _ => None,
        })
    });
    let replay = args
        .replay
        .clone()
        .or_else(|| resume.as_ref().and_then(|c| c.engine.replay.clone()));
    let overrides = Overrides {
        repo: repo_root.clone(),
        engine: engine_arg.or(replay.as_ref().map(|_| EngineKind::Replay)),
        run_timeout: args.timeout_seconds.map(Duration::from_secs),
        max_rounds: args.max_rounds,
        candidates: args.candidates,
        jobs: args.jobs,
        first_proven: args.first_proven,
        suites: args.suite.clone(),
        command_timeout: None,
    };
    let explicit = args
        .config
        .clone()
        .or_else(|| resume.as_ref().and_then(|c| c.config.clone()));
    let config = match resolve(&repo_root, explicit.as_deref(), &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    if let Err(err) = crate::prompt::Templates::load(&config.prompt_overrides) {
        report::error(&err);
        return ExitStatus::Usage;
    }
    let mut engine = match build_engine(&config, replay.as_deref(), &repo_root, env) {
        Ok(engine) => engine,
        Err(status) => return status,
    };
    let command = match (&args.repro, &resume) {
        (Some(command), _) => command.clone(),
        (None, Some(checkpoint)) => checkpoint.command.clone(),
        (None, None) => {
            report::message("efix: error: --repro CMD is required");
            return ExitStatus::Usage;
        }
    };
    let options = RunOptions {
        repo: repo_root,
        command,
        suites: config.test.required_suites.clone(),
        artifacts: args.artifacts.clone().or_else(|| args.resume.clone()),
        dry_run: args.dry_run,
        repeat: args.repeat,
        engine: pipeline::EngineSpec {
            kind: config.engine.as_str().to_owned(),
            replay: replay
                .as_ref()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())),
        },
    };
    execute(
        &options,
        &config,
        engine.as_mut(),
        env,
        resume,
        args.github_output.as_deref(),
    )
}

/// Run the pipeline and print the summary.
fn execute(
    options: &RunOptions,
    config: &Config,
    engine: &mut dyn Engine,
    env: &Env,
    resume: Option<Checkpoint>,
    github_output: Option<&Path>,
) -> ExitStatus {
    signals::install();
    let reporter = Reporter::new(github_actions(env));
    match pipeline::run(options, config, engine, reporter, &signals::CANCEL, resume) {
        Ok((summary, status)) => {
            report::stdout(&serde_json::to_string_pretty(&summary).unwrap_or_default());
            let result = serde_json::to_value(summary.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            write_outputs(
                github_output,
                &[("result", result), ("artifacts-dir", summary.artifacts)],
            );
            status
        }
        Err(err) => {
            report::error(&err);
            exit_for(&err)
        }
    }
}

/// The exit status of an error that stopped a command: 2 when the user must act before
/// anything can run (a dirty tree, another run in progress, an unrestored interrupted run,
/// an unsafe artifacts directory), 4 when the machine cannot give the required sandbox tier,
/// else 1.
fn exit_for(err: &pipeline::PipelineError) -> ExitStatus {
    use pipeline::PipelineError;
    match err {
        PipelineError::DirtyTree { .. }
        | PipelineError::Busy(_)
        | PipelineError::Unfinished { .. }
        | PipelineError::UnsafeArtifacts { .. }
        | PipelineError::Git(crate::git::GitError::Journal { .. }) => ExitStatus::Usage,
        PipelineError::Runner(crate::runner::RunnerError::TierNotAchieved { .. }) => {
            ExitStatus::PolicyRefused
        }
        _ => ExitStatus::NoProvenFix,
    }
}

/// `efix restore`: the summary as JSON on stdout, one line for people on stderr.
fn restore(repo: PathBuf) -> ExitStatus {
    match pipeline::durable::restore(&repo) {
        Ok(summary) => {
            let line = match (&summary.interrupted_run, &summary.changes) {
                (Some(run), Some(changes)) => {
                    format!("efix: {}", pipeline::durable::describe(run, changes))
                }
                _ => format!(
                    "efix: nothing to restore: no interrupted efix run left {} changed",
                    summary.repo
                ),
            };
            report::message(&line);
            report::stdout(&serde_json::to_string_pretty(&summary).unwrap_or_default());
            ExitStatus::Success
        }
        Err(err @ pipeline::PipelineError::Git(crate::git::GitError::NotARepository { .. })) => {
            report::error(&err);
            ExitStatus::Usage
        }
        Err(err) => {
            report::error(&err);
            exit_for(&err)
        }
    }
}

fn demo(artifacts: Option<PathBuf>, env: &Env) -> ExitStatus {
    let scratch = match tempfile::Builder::new().prefix("efix-demo-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            report::message(&format!(
                "efix: error: failed to create a scratch directory: {err}"
            ));
            return ExitStatus::NoProvenFix;
        }
    };
    // The scratch repository is kept so `efix verify` can re-run the recorded commands later.
    let scratch = scratch.keep();
    let root = match pipeline::demo::prepare(&scratch) {
        Ok(root) => root,
        Err(err) => {
            report::error(&err);
            return ExitStatus::NoProvenFix;
        }
    };
    let artifacts = artifacts.unwrap_or_else(|| cwd().join("efix-artifacts").join("demo"));
    let artifacts = std::path::absolute(&artifacts).unwrap_or(artifacts);
    let overrides = Overrides {
        repo: root.clone(),
        engine: Some(EngineKind::Replay),
        ..Overrides::default()
    };
    let config = match resolve(&root, None, &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    let mut engine =
        match ReplayEngine::from_str(pipeline::demo::REPLAY_NAME, pipeline::demo::REPLAY) {
            Ok(engine) => engine,
            Err(err) => {
                report::error(&err);
                return ExitStatus::NoProvenFix;
            }
        };
    report::message(&format!(
        "efix demo: `{}` in a scratch copy of examples/demo at {}",
        pipeline::demo::COMMAND,
        root.display()
    ));
    let options = RunOptions {
        repo: root,
        command: pipeline::demo::COMMAND.to_owned(),
        suites: Vec::new(),
        artifacts: Some(artifacts.clone()),
        dry_run: false,
        repeat: 1,
        engine: pipeline::EngineSpec {
            kind: "replay".to_owned(),
            replay: None,
        },
    };
    let status = execute(&options, &config, &mut engine, env, None, None);
    report::message(&format!(
        "efix demo: the PR body is at {}",
        artifacts.join("pr-body.md").display()
    ));
    status
}

fn verify(artifacts: &Path, env: &Env) -> ExitStatus {
    let evidence = match pipeline::verify::read_evidence(artifacts) {
        Ok(evidence) => evidence,
        Err(err) => {
            report::error(&err);
            return ExitStatus::Usage;
        }
    };
    let root = PathBuf::from(&evidence.repo.root);
    let overrides = Overrides {
        repo: root.clone(),
        ..Overrides::default()
    };
    let explicit = evidence.request.config.as_ref().map(PathBuf::from);
    let config = match resolve(&root, explicit.as_deref(), &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    let reporter = Reporter::new(github_actions(env));
    match pipeline::verify::verify(artifacts, &evidence, &config, reporter) {
        Ok(result) => {
            report::stdout(&serde_json::to_string_pretty(&result).unwrap_or_default());
            if result.holds {
                ExitStatus::Success
            } else {
                ExitStatus::NoProvenFix
            }
        }
        Err(err) => {
            report::error(&err);
            exit_for(&err)
        }
    }
}

/// Append step outputs when asked to; failing to is a warning, since the run itself is done.
fn write_outputs(file: Option<&Path>, pairs: &[(&str, String)]) {
    if let Some(file) = file
        && let Err(err) = report::github_output(file, pairs)
    {
        report::message(&format!(
            "efix: warning: failed to write the step outputs to {}: {err}",
            file.display()
        ));
    }
}

/// The exit status of a GitHub delivery error: the user's set-up (2), or GitHub refusing.
fn publish_status(err: &PublishError, refused: ExitStatus) -> ExitStatus {
    match err {
        PublishError::MissingEnv { .. }
        | PublishError::BadEnv { .. }
        | PublishError::NoToken { .. }
        | PublishError::Event { .. }
        | PublishError::NoCommand { .. } => ExitStatus::Usage,
        _ => refused,
    }
}

/// `efix run --from-event`: the trigger checks; on acceptance the event's command (and
/// suites) replace `--repro` (and an absent `--suite`).
fn from_event(args: &mut RunArgs, env: &Env) -> Result<(), ExitStatus> {
    let github = GithubEnv::from_env(env);
    let event = Event::load(&github).map_err(|err| {
        report::error(&err);
        ExitStatus::Usage
    })?;
    let repo = args.repo.clone().unwrap_or_else(cwd);
    let overrides = Overrides {
        repo: repo.clone(),
        ..Overrides::default()
    };
    let config = resolve(&repo, args.config.as_deref(), &overrides, env)?;
    let inputs = publish::Inputs {
        fallback: args.repro.as_deref(),
        associations: &config.trigger.allowed_associations,
        allow: &config.allow,
    };
    let token = publish::event::token(env, &args.token_env).ok();
    let reporter = Reporter::new(github_actions(env));
    // A check that cannot be completed (GitHub refused or was unreachable) fails closed.
    match publish::check_trigger(&event, &inputs, &github, token, &config, &reporter) {
        Ok(Verdict::Run {
            command, suites, ..
        }) => {
            report::message(&format!("efix: {} event: running `{command}`", event.name));
            args.repro = Some(command);
            if args.suite.is_empty() {
                args.suite = suites;
            }
            Ok(())
        }
        Ok(Verdict::Refuse(refusal)) => {
            report::message(&format!("efix: refused: {}", refusal.reason));
            write_outputs(
                args.github_output.as_deref(),
                &[("result", "refused".to_owned())],
            );
            Err(ExitStatus::PolicyRefused)
        }
        Err(err) => {
            report::error(&err);
            Err(publish_status(&err, ExitStatus::PolicyRefused))
        }
    }
}

fn publish_command(args: PublishArgs, env: &Env) -> ExitStatus {
    let evidence = match pipeline::verify::read_evidence(&args.artifacts) {
        Ok(evidence) => evidence,
        Err(err) => {
            report::error(&err);
            return ExitStatus::Usage;
        }
    };
    let mismatches = pipeline::mismatches(&args.artifacts, &evidence);
    for mismatch in &mismatches {
        report::message(&format!(
            "efix: refused: {} in {} {}; efix publishes only what the run wrote (run efix \
             again, or put the file back)",
            mismatch.file,
            args.artifacts.display(),
            mismatch.problem
        ));
    }
    if !mismatches.is_empty() {
        return ExitStatus::NoProvenFix;
    }
    let evidence_json = match std::fs::read(args.artifacts.join("evidence.json")) {
        Ok(bytes) => bytes,
        Err(err) => {
            report::message(&format!("efix: error: failed to read evidence.json: {err}"));
            return ExitStatus::Usage;
        }
    };
    let repo = args
        .repo
        .clone()
        .unwrap_or_else(|| PathBuf::from(&evidence.repo.root));
    let overrides = Overrides {
        repo: repo.clone(),
        ..Overrides::default()
    };
    let explicit = evidence.request.config.as_ref().map(PathBuf::from);
    let config = match resolve(&repo, explicit.as_deref(), &overrides, env) {
        Ok(config) => config,
        Err(status) => return status,
    };
    let github = GithubEnv::from_env(env);
    let event = match (&github.event_name, &github.event_path) {
        (Some(_), Some(_)) => match Event::load(&github) {
            Ok(event) => Some(event),
            Err(err) => {
                report::error(&err);
                return ExitStatus::Usage;
            }
        },
        _ => None,
    };
    let connection = if args.dry_run {
        publish::Connection::DryRun
    } else {
        match publish::event::token(env, &args.token_env) {
            Ok(token) => publish::Connection::Token(token),
            Err(err) => {
                report::error(&err);
                return ExitStatus::Usage;
            }
        }
    };
    let options = publish::Options {
        repo,
        create_pr: !args.no_pr,
        comment: !args.no_comment,
        draft: args.draft,
        labels: args.labels.clone(),
        issue: args.issue,
        base: args.base.clone(),
    };
    let reporter = Reporter::new(github_actions(env));
    match publish::publish(
        &options,
        &evidence,
        &evidence_json,
        &config,
        &github,
        event.as_ref(),
        connection,
        &reporter,
    ) {
        Ok(published) => {
            report::stdout(&serde_json::to_string_pretty(&published).unwrap_or_default());
            if let Some(note) = &published.note {
                report::message(&format!("efix publish: {note}"));
            }
            if !published.dry_run {
                let pull = published.pull_request.as_ref();
                write_outputs(
                    args.github_output.as_deref(),
                    &[
                        ("pr-url", pull.map(|p| p.url.clone()).unwrap_or_default()),
                        (
                            "pr-number",
                            pull.map(|p| p.number.to_string()).unwrap_or_default(),
                        ),
                    ],
                );
            }
            ExitStatus::Success
        }
        Err(err) => {
            report::error(&err);
            publish_status(&err, ExitStatus::NoProvenFix)
        }
    }
}
