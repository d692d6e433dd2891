//! The run as a state machine over the five phases: Reproduce, Localize, Fix, Prevent, Prove,
//! then the report. Rounds, budgets, checkpoints and the nothing-lost guarantee live here.
//!
//! The file list reads like the run: `run` (the orchestrator) drives `reproduce`, `localize`
//! and `fix`; a fix round (`fix`) is answer (`answer`) → apply and `checks` → `prevent` →
//! `prove` → decide; with `--candidates K`, `candidates` runs K such rounds side by side in
//! `scratch` copies of the base and the winner once more in the tree. Every phase shares one
//! run context (`ctx`, with `commands` for running a recorded command), which imports no
//! phase; `options` and `checkpoint` are plain data, and `suite` derives the suite that
//! guards against regressions. Every engine call goes through
//! `call` (the `budget` governor, `secrets` in the prompt, and the `tree` check for agents
//! that can write files).
//!
//! Phases call the runner, the engine and the patch engine; they never print (progress goes
//! through [`crate::report::Reporter`]) and never decide policy themselves.

mod answer;
mod artifacts;
mod baseline;
mod budget;
mod call;
mod canary;
mod candidates;
mod checkpoint;
mod checks;
mod commands;
mod confirm;
mod ctx;
pub mod demo;
pub mod durable;
mod estimate;
mod fix;
mod localize;
mod options;
mod prevent;
mod prove;
mod related;
mod reproduce;
mod rounds;
mod run;
mod scratch;
mod secrets;
mod setup;
mod shared;
pub mod signals;
pub(crate) mod suite;
mod tree;
pub mod verify;

pub use artifacts::{ARTIFACT_FILES, ArtifactMismatch, RunSummary, mismatches, rendered};
pub use checkpoint::Checkpoint;
pub use options::{EngineSpec, RunOptions};
pub use run::run;

use std::path::PathBuf;

/// Errors that stop a run before it can record an outcome. Everything that is a result
/// (not reproduced, refused, no fix) is an outcome in the evidence instead.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The repository could not be opened or inspected; git's own message says what and
    /// what to do.
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    /// The working tree has changes; the user must commit or stash them first.
    #[error(
        "start: the working tree of {root} has uncommitted changes ({}); commit or stash them \
         (git stash -u), then run efix again, so that efix can restore it exactly",
        summarize(.paths)
    )]
    DirtyTree { root: PathBuf, paths: Vec<String> },
    /// Another efix process holds the working tree's lock (the git error names its pid and
    /// start time); the user must wait for it or stop it.
    #[error("start: {0}")]
    Busy(crate::git::GitError),
    /// A run died (killed, or its restore failed) and left the working tree changed; the user
    /// must run `efix restore`, or `efix run --resume` with that run's artifacts.
    #[error(
        "start: an interrupted efix run (pid {}, started {}) left the working tree of {root} \
         changed; run `efix restore` to put it back, or `efix run --resume {}` to put it back \
         and continue that run",
        run.pid,
        run.started_at,
        run.artifacts.as_deref().unwrap_or("ARTIFACTS_DIR")
    )]
    Unfinished {
        root: PathBuf,
        run: Box<crate::git::RunRecord>,
    },
    /// The working tree could not be put back at the end of the run; its journal is kept so
    /// `efix restore` can finish once the cause (permissions, a full disk) is fixed.
    #[error(
        "restore the working tree at the end of the run; it stays recorded, so `efix restore` \
         can put it back once the cause is fixed"
    )]
    Restore(#[source] Box<PipelineError>),
    /// The runner could not run a command at all.
    #[error("run a command")]
    Runner(#[from] crate::runner::RunnerError),
    /// The patch engine could not read or write files.
    #[error("apply the patch")]
    Patch(#[from] crate::patch::PatchError),
    /// Writing or reading artifacts failed.
    #[error("{what}")]
    Artifacts {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The artifacts directory is a symbolic link, passes through one, or is tracked by git;
    /// the user must remove it from the repository or pass `--artifacts DIR` (exit 2).
    #[error("use {} as the artifacts directory: it {reason}", path.display())]
    UnsafeArtifacts { path: PathBuf, reason: String },
    /// The checkpoint could not be used for `--resume`.
    #[error("resume from {path}: {message}")]
    Resume { path: PathBuf, message: String },
    /// An engine could not be set up (bad replay file, missing key).
    #[error("set up the engine")]
    Engine(#[from] crate::engine::EngineError),
    /// A configured prompt template could not be read.
    #[error("build the prompt")]
    Prompt(#[from] crate::prompt::PromptError),
    /// The evidence of `efix verify` is unreadable or from another version.
    #[error("read the evidence in {path}: {message}")]
    Evidence { path: PathBuf, message: String },
}

fn summarize(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}
