//! The orchestrator: the working tree's lock, preflight (the snapshot, made durable by its
//! journal before anything runs), then the phases in order, each followed by a checkpoint,
//! then the artifacts. Whatever happens inside the phases (an outcome, an error, a panic), the
//! working tree is restored before `run` returns, unless a proven fix is to stay applied; if
//! efix dies instead, the journal lets `efix restore` (or `efix run --resume`) do it.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::config::Config;
use crate::engine::Engine;
use crate::evidence::{
    EngineRecord, Evidence, Phase, Purpose, RepoInfo, RunRequest, RunResult, SCHEMA_VERSION,
    Status, SuiteForm,
};
use crate::exit::ExitStatus;
use crate::git::{Journal, Repo, RunRecord};
use crate::report::Reporter;

use super::artifacts::{self, RunSummary};
use super::checkpoint::{Checkpoint, Stage};
use super::ctx::Ctx;
use super::options::RunOptions;
use super::{PipelineError, durable, localize, reproduce, rounds, setup, suite};

/// Run the pipeline. Returns the summary (also written as `run.json`) and the exit status.
pub fn run(
    options: &RunOptions,
    config: &Config,
    engine: &mut dyn Engine,
    reporter: Reporter,
    cancel: &AtomicBool,
    resume: Option<Checkpoint>,
) -> Result<(RunSummary, ExitStatus), PipelineError> {
    let started = Instant::now();
    let repo = Repo::open(&options.repo)?;
    // Held until `run` returns (the kernel drops it if efix dies): one run per working tree.
    let _lock = durable::lock(&repo)?;
    if let Some((run, changes)) = durable::settle_unfinished(&repo, resume.is_some())? {
        reporter.info(&durable::describe(&run, &changes));
    }
    if let Some(dir) = super::scratch::remove_left(&repo)? {
        reporter.info(&format!("removed the candidates' scratch directory {dir}"));
    }
    let root = repo.root.clone();
    let artifacts_dir = options
        .artifacts
        .clone()
        .unwrap_or_else(|| root.join(artifacts::DEFAULT_DIR));
    let artifacts_dir = std::path::absolute(&artifacts_dir).unwrap_or(artifacts_dir);
    artifacts::refuse_unsafe(&repo, &root, &artifacts_dir)?;
    artifacts::prepare_dir(&root, &artifacts_dir)?;
    // Commands must not change what efix records: an artifacts directory inside the
    // repository is mounted read-only for them where the machine allows.
    let mut config = config.clone();
    config.runner.sandbox.read_only.push(artifacts_dir.clone());
    let config = &config;

    reporter.phase("preflight");
    // The snapshot's scan is also the clean-tree check.
    let snapshot = tracing::debug_span!("snapshot").in_scope(|| repo.snapshot())?;
    if !snapshot.dirty_paths().is_empty() {
        reporter.end_phase();
        return Err(PipelineError::DirtyTree {
            root,
            paths: snapshot.dirty_paths().to_vec(),
        });
    }
    let base = repo.head_commit()?;
    let evidence = match &resume {
        Some(checkpoint) => resumed_evidence(checkpoint, base.as_deref(), &artifacts_dir)?,
        None => new_evidence(options, config, engine, &root, base.clone()),
    };
    let checkpoint = match resume {
        Some(checkpoint) => checkpoint,
        None => {
            let mut suites = options.suites.clone();
            suites.extend(evidence.request.derived_suite.clone());
            Checkpoint::new(options, config, suites, evidence.clone())
        }
    };
    // Durable before the first command runs: from here on even `kill -9` loses nothing.
    let journal = tracing::debug_span!("journal").in_scope(|| {
        Journal::begin(
            &repo,
            &snapshot,
            RunRecord {
                pid: std::process::id(),
                started_at: evidence.started_at.clone(),
                root: root.display().to_string(),
                artifacts: Some(artifacts_dir.display().to_string()),
            },
        )
    })?;
    let mut ctx = Ctx {
        config,
        reporter,
        root,
        artifacts: artifacts_dir,
        cancel,
        deadline: started + config.run_timeout,
        snapshot,
        journal: Some(journal),
        commands_since_restore: false,
        evidence,
        command: checkpoint.command.clone(),
        suites: checkpoint.suites.clone(),
        repeat: checkpoint.repeat.max(1),
        dry_run: checkpoint.dry_run,
        checkpoint,
        shared: None,
    };
    let exit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(&mut ctx, engine)));
    // Whatever happened, the tree goes back to its start unless a proven fix stays applied;
    // even a bug in efix (a panic) must not leave the user's files half-patched. The journal
    // ends only once the tree is as it must stay; if the restore fails, it is kept for
    // `efix restore`.
    let keep = ctx
        .evidence
        .fix
        .as_ref()
        .is_some_and(|fix| fix.left_applied);
    let restored = if keep { Ok(()) } else { ctx.restore() };
    let settled = restored
        .and_then(|()| ctx.finish_journal())
        .map_err(|err| PipelineError::Restore(Box::new(err)));
    let exit = match exit {
        Ok(exit) => exit,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    if let (Err(_), Err(phase)) = (&settled, &exit) {
        tracing::error!(error = %phase, "the run failed before its restore failed too");
    }
    settled?;
    let exit = exit?;
    ctx.evidence.finished_at = Some(artifacts::now_rfc3339());
    // An interrupted or out-of-time run keeps its stage so `--resume` can continue it.
    let resumable = matches!(
        ctx.evidence.result.status,
        Status::Interrupted | Status::BudgetExhausted
    );
    let stage = if resumable {
        ctx.checkpoint.stage
    } else {
        Stage::Finished
    };
    ctx.save_checkpoint(stage)?;
    let summary = artifacts::write_all(&ctx.root, &ctx.artifacts, &ctx.evidence)?;
    ctx.reporter.info(&format!(
        "{}: evidence in {}",
        summary.status_text,
        ctx.artifacts.display()
    ));
    Ok((summary, exit))
}

/// The phases in order; returns the exit status recorded in the evidence.
fn drive(ctx: &mut Ctx<'_>, engine: &mut dyn Engine) -> Result<ExitStatus, PipelineError> {
    if let Some(refusal) = preflight_policy(ctx) {
        ctx.reporter.end_phase();
        ctx.conclude(Status::PolicyRefused, ExitStatus::PolicyRefused, refusal);
        return Ok(ExitStatus::PolicyRefused);
    }
    ctx.reporter.end_phase();
    if ctx.checkpoint.stage < Stage::Reproduced {
        if let Some(exit) = setup::run(ctx)? {
            return Ok(exit);
        }
        if let Some(exit) = reproduce::run(ctx)? {
            return Ok(exit);
        }
        ctx.save_checkpoint(Stage::Reproduced)?;
    }
    if ctx.checkpoint.stage < Stage::Localized {
        let localized = tracing::debug_span!("localize").in_scope(|| localize::run(ctx, engine));
        if let Some(exit) = localized? {
            return Ok(exit);
        }
        ctx.save_checkpoint(Stage::Localized)?;
    }
    rounds::rounds(ctx, engine)
}

/// Check the required sandbox tier and every command against the allowlist before anything
/// runs; on refusal record it and return the reason.
fn preflight_policy(ctx: &mut Ctx<'_>) -> Option<String> {
    if let Err(unavailable) = crate::runner::check_required(&ctx.config.runner.sandbox) {
        ctx.reporter.warn(&unavailable.to_string());
        return Some(format!("{unavailable}; nothing was run"));
    }
    let commands: Vec<(String, Purpose)> = ctx
        .config
        .setup
        .iter()
        .map(|s| (s.clone(), Purpose::Setup))
        .chain(std::iter::once((
            ctx.command.clone(),
            Purpose::Reproduction,
        )))
        .chain(
            ctx.suites
                .iter()
                .map(|s| (s.clone(), Purpose::SuiteBaseline)),
        )
        .collect();
    for (command, purpose) in commands {
        if let Err(refusal) = crate::policy::command::check(&command, &ctx.config.allow) {
            let id = ctx.evidence.commands.len();
            ctx.evidence.commands.push(crate::evidence::CommandRecord {
                id,
                phase: if purpose == Purpose::Setup {
                    Phase::Setup
                } else {
                    Phase::Reproduce
                },
                purpose,
                round: None,
                command: command.clone(),
                policy: crate::evidence::PolicyDecision::refused(&refusal),
                outcome: None,
                tests: None,
                channel: None,
                confirms: None,
            });
            ctx.reporter
                .warn(&format!("refused `{command}`: {}", refusal.message));
            return Some(format!(
                "`{command}` was refused: {} ({})",
                refusal.message, refusal.rule
            ));
        }
    }
    None
}

fn new_evidence(
    options: &RunOptions,
    config: &Config,
    engine: &dyn Engine,
    root: &Path,
    base: Option<String>,
) -> Evidence {
    let derived = derived_suites(options, config, root);
    Evidence {
        schema_version: SCHEMA_VERSION,
        efix_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at: artifacts::now_rfc3339(),
        finished_at: None,
        request: RunRequest {
            command: options.command.clone(),
            suites: options.suites.clone(),
            derived_suite: derived.first().map(|form| form.command.clone()),
            suite_forms: derived,
            suite_budget_ms: u64::try_from(config.test.suite_budget.as_millis())
                .unwrap_or(u64::MAX),
            repeat: options.repeat.max(1),
            max_rounds: config.max_rounds,
            dry_run: options.dry_run,
            config: config.source.as_ref().map(|p| p.display().to_string()),
            timeout_ms: u64::try_from(config.run_timeout.as_millis()).unwrap_or(u64::MAX),
            test_required: config.test.required,
            sandbox_require: config.runner.sandbox.require,
        },
        repo: RepoInfo {
            root: root.display().to_string(),
            base_commit: base,
        },
        engine: EngineRecord {
            info: engine.info(),
            calls: Vec::new(),
        },
        sandbox: None,
        commands: Vec::new(),
        reproduction: None,
        localization: None,
        rounds: Vec::new(),
        result: RunResult {
            status: Status::InProgress,
            exit_code: ExitStatus::NoProvenFix.code(),
            reason: "the run did not finish".to_owned(),
        },
        fix: None,
    }
}

/// With no suite configured, the forms of the suite derived from the reproduction, widest
/// first. A derived command the allowlist refuses is left out: the user did not ask for it, so
/// it must not refuse the run.
fn derived_suites(options: &RunOptions, config: &Config, root: &Path) -> Vec<SuiteForm> {
    if !options.suites.is_empty() {
        return Vec::new();
    }
    let Ok(argv) = crate::policy::command::split(&options.command) else {
        return Vec::new();
    };
    let suite::Derivation::Forms(forms) = suite::derive(&argv, root) else {
        return Vec::new();
    };
    forms
        .into_iter()
        .filter(|form| {
            let allowed = crate::policy::command::check_argv(&form.argv, &config.allow).is_ok();
            if !allowed {
                tracing::info!(suite = ?form.argv, "not deriving a suite the allowlist refuses");
            }
            allowed
        })
        .filter_map(|form| {
            let command = shlex::try_join(form.argv.iter().map(String::as_str)).ok()?;
            Some(SuiteForm {
                kind: form.kind,
                command,
            })
        })
        .collect()
}

fn resumed_evidence(
    checkpoint: &Checkpoint,
    base: Option<&str>,
    artifacts: &Path,
) -> Result<Evidence, PipelineError> {
    let recorded = checkpoint.evidence.repo.base_commit.as_deref();
    if recorded != base {
        return Err(PipelineError::Resume {
            path: artifacts.to_owned(),
            message: format!(
                "the checkpoint was made at commit {} but HEAD is now {}; check out that commit \
                 or start a new run",
                recorded.unwrap_or("(none)"),
                base.unwrap_or("(none)")
            ),
        });
    }
    if checkpoint.stage == Stage::Finished {
        return Err(PipelineError::Resume {
            path: artifacts.to_owned(),
            message: "that run already finished; start a new run instead".to_owned(),
        });
    }
    let mut evidence = checkpoint.evidence.clone();
    // A round cut short is run again from its start; its commands stay recorded.
    evidence
        .rounds
        .retain(|round| round.verdict != crate::evidence::RoundVerdict::Stopped);
    evidence.result = RunResult {
        status: Status::InProgress,
        exit_code: ExitStatus::NoProvenFix.code(),
        reason: "the run did not finish".to_owned(),
    };
    Ok(evidence)
}
