//! The orchestrator: preflight, then the phases in order, each followed by a checkpoint, then
//! the artifacts. Every path out of a run goes through [`Ctx::finish`], which restores the
//! working tree unless a proven fix is to stay applied.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::Engine;
use crate::evidence::{
    EngineRecord, Evidence, Phase, Purpose, RepoInfo, RunRequest, RunResult, SCHEMA_VERSION, Status,
};
use crate::exit::ExitStatus;
use crate::git::{Repo, Snapshot};
use crate::report::Reporter;

use super::artifacts::{self, RunSummary};
use super::checkpoint::{Checkpoint, EngineSpec, Stage};
use super::{PipelineError, fix, localize, reproduce, setup};

/// What the user asked `efix run` to do, resolved.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The repository (any path inside it).
    pub repo: PathBuf,
    /// The reproduction command.
    pub command: String,
    /// Suites that must pass after the fix.
    pub suites: Vec<String>,
    /// Artifacts directory (`None`: `efix-artifacts/` under the repository root).
    pub artifacts: Option<PathBuf>,
    pub dry_run: bool,
    pub repeat: u32,
    /// How to rebuild the engine on `--resume`.
    pub engine: EngineSpec,
}

/// The state of a run in progress, shared by the phases.
pub(crate) struct Ctx<'a> {
    pub config: &'a Config,
    pub reporter: Reporter,
    pub root: PathBuf,
    pub artifacts: PathBuf,
    pub cancel: &'a AtomicBool,
    pub deadline: Instant,
    pub snapshot: Snapshot,
    pub evidence: Evidence,
    pub checkpoint: Checkpoint,
    pub command: String,
    pub suites: Vec<String>,
    pub repeat: u32,
    pub dry_run: bool,
}

impl Ctx<'_> {
    /// Why the run must stop now, if it must.
    pub(crate) fn stop_reason(&self) -> Option<Status> {
        if self.cancel.load(Ordering::Relaxed) {
            Some(Status::Interrupted)
        } else if Instant::now() >= self.deadline {
            Some(Status::BudgetExhausted)
        } else {
            None
        }
    }

    /// Time left in the run's budget.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Put the working tree back exactly as it was at the start.
    pub(crate) fn restore(&self) -> Result<(), PipelineError> {
        let report = self.snapshot.restore()?;
        if !report.is_noop() {
            tracing::debug!(?report, "restored the working tree");
        }
        Ok(())
    }

    /// Save the checkpoint (evidence so far plus engine answers) after a phase or answer.
    pub(crate) fn save_checkpoint(&mut self, stage: Stage) -> Result<(), PipelineError> {
        self.checkpoint.stage = stage;
        self.checkpoint.evidence = self.evidence.clone();
        self.checkpoint.save(&self.root, &self.artifacts)
    }

    /// The plan or fix prompt template: the configured override, else the built-in one.
    pub(crate) fn template(&self, plan: bool) -> String {
        let (path, builtin) = if plan {
            (
                &self.config.prompt_overrides.plan,
                crate::prompt::PLAN_TEMPLATE,
            )
        } else {
            (
                &self.config.prompt_overrides.fix,
                crate::prompt::FIX_TEMPLATE,
            )
        };
        match path {
            Some(path) => std::fs::read_to_string(path).unwrap_or_else(|err| {
                self.reporter.warn(&format!(
                    "cannot read prompt override {}: {err}; using the built-in prompt",
                    path.display()
                ));
                builtin.to_owned()
            }),
            None => builtin.to_owned(),
        }
    }

    /// Set the result.
    pub(crate) fn conclude(&mut self, status: Status, exit: ExitStatus, reason: impl Into<String>) {
        self.evidence.result = RunResult {
            status,
            exit_code: exit.code(),
            reason: reason.into(),
        };
    }

    /// The result for a stop caused by budget or signal.
    pub(crate) fn conclude_stop(&mut self, status: Status) {
        let reason = match status {
            Status::Interrupted => "efix was interrupted; the working tree was restored and the \
                                    run can be continued with --resume"
                .to_owned(),
            _ => format!(
                "the time budget of {} ran out; the working tree was restored",
                crate::evidence::duration_text(self.evidence.request.timeout_ms)
            ),
        };
        self.conclude(status, ExitStatus::NoProvenFix, reason);
    }
}

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
    let dirty = repo.dirty_paths()?;
    if !dirty.is_empty() {
        reporter.end_phase();
        return Err(PipelineError::DirtyTree { root, paths: dirty });
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
    let snapshot = repo.snapshot()?;
    let mut ctx = Ctx {
        config,
        reporter,
        root,
        artifacts: artifacts_dir,
        cancel,
        deadline: started + config.run_timeout,
        snapshot,
        evidence,
        command: checkpoint.command.clone(),
        suites: checkpoint.suites.clone(),
        repeat: checkpoint.repeat.max(1),
        dry_run: checkpoint.dry_run,
        checkpoint,
    };
    let exit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(&mut ctx, engine)));
    // Whatever happened, the tree goes back to its start unless a proven fix stays applied;
    // even a bug in efix (a panic) must not leave the user's files half-patched.
    let keep = ctx
        .evidence
        .fix
        .as_ref()
        .is_some_and(|fix| fix.left_applied);
    let restored = if keep { Ok(()) } else { ctx.restore() };
    let exit = match exit {
        Ok(exit) => exit,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let exit = exit?;
    restored?;
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
        if let Some(exit) = localize::run(ctx, engine)? {
            return Ok(exit);
        }
        ctx.save_checkpoint(Stage::Localized)?;
    }
    fix::rounds(ctx, engine)
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
    Evidence {
        schema_version: SCHEMA_VERSION,
        efix_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at: artifacts::now_rfc3339(),
        finished_at: None,
        request: RunRequest {
            command: options.command.clone(),
            suites: options.suites.clone(),
            derived_suite: derived_suite(options),
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

/// The reproduction without its test filter, when no suite is configured.
fn derived_suite(options: &RunOptions) -> Option<String> {
    if !options.suites.is_empty() {
        return None;
    }
    let argv = crate::policy::command::split(&options.command).ok()?;
    let derived = super::prove::derive_suite(&argv)?;
    shlex::try_join(derived.iter().map(String::as_str)).ok()
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
