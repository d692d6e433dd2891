//! The run as a state machine over the five phases: Reproduce, Localize, Fix, Prevent, Prove,
//! then the report. Rounds, budgets, checkpoints and the nothing-lost guarantee live here.
//!
//! Phases call the runner, the engine and the patch engine; they never print (progress goes
//! through [`crate::report::Reporter`]) and never decide policy themselves.

mod artifacts;
mod checkpoint;
mod checks;
mod commands;
pub mod demo;
mod fix;
mod imports;
mod localize;
mod prevent;
mod prove;
mod reproduce;
mod run;
mod setup;
pub mod signals;
pub mod verify;

pub use artifacts::{ARTIFACT_FILES, RunSummary};
pub use checkpoint::{Checkpoint, EngineSpec};
pub use run::{RunOptions, run};

use std::path::PathBuf;

/// Errors that stop a run before it can record an outcome. Everything that is a result
/// (not reproduced, refused, no fix) is an outcome in the evidence instead.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The repository could not be opened or inspected.
    #[error("inspect the repository")]
    Git(#[from] crate::git::GitError),
    /// The working tree has changes; the user must commit or stash them first.
    #[error(
        "start: the working tree of {root} has uncommitted changes ({}); commit or stash them \
         (git stash -u), then run efix again, so that efix can restore it exactly",
        summarize(.paths)
    )]
    DirtyTree { root: PathBuf, paths: Vec<String> },
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
