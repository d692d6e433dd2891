//! Checkpoints: the run's state saved in the artifacts directory after every phase and every
//! engine answer, so `efix run --resume DIR` continues an interrupted run without paying for
//! engine answers again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::engine::{FixResponse, PlanResponse};
use crate::evidence::Evidence;

use super::PipelineError;
use super::options::{EngineSpec, RunOptions};

/// File name of the checkpoint inside the artifacts directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// The checkpoint format version this build reads and writes.
const CHECKPOINT_VERSION: u32 = 1;

/// How far the run got. Ordered: later stages compare greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Started,
    Reproduced,
    Localized,
    /// Inside the fix rounds.
    Fixing,
    Finished,
}

/// The saved state of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Checkpoint {
    pub version: u32,
    pub stage: Stage,
    pub repo: PathBuf,
    #[serde(default)]
    pub config: Option<PathBuf>,
    pub command: String,
    pub suites: Vec<String>,
    pub dry_run: bool,
    pub repeat: u32,
    pub engine: EngineSpec,
    /// The plan answer, once received.
    #[serde(default)]
    pub plan: Option<PlanResponse>,
    /// Every fix answer received, by call index.
    pub fix_answers: Vec<FixResponse>,
    pub evidence: Evidence,
}

impl Checkpoint {
    /// A fresh checkpoint for a new run.
    pub(crate) fn new(
        options: &RunOptions,
        config: &Config,
        suites: Vec<String>,
        evidence: Evidence,
    ) -> Checkpoint {
        Checkpoint {
            version: CHECKPOINT_VERSION,
            stage: Stage::Started,
            repo: options.repo.clone(),
            config: config.source.clone(),
            command: options.command.clone(),
            suites,
            dry_run: options.dry_run,
            repeat: options.repeat.max(1),
            engine: options.engine.clone(),
            plan: None,
            fix_answers: Vec::new(),
            evidence,
        }
    }

    /// Read the checkpoint of an artifacts directory.
    pub fn load(artifacts: &Path) -> Result<Checkpoint, PipelineError> {
        let path = artifacts.join(CHECKPOINT_FILE);
        // The directory is the user's choice; the file in it is never read through a link.
        let text = crate::nofollow::Dir::open(artifacts, artifacts, false)
            .and_then(|dir| dir.read(CHECKPOINT_FILE))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|err| PipelineError::Resume {
                path: artifacts.to_owned(),
                message: format!(
                    "cannot read {}: {}; give the artifacts directory of an interrupted run",
                    path.display(),
                    err.reason
                ),
            })?;
        let checkpoint: Checkpoint =
            serde_json::from_str(&text).map_err(|err| PipelineError::Resume {
                path: artifacts.to_owned(),
                message: format!("{} is not a valid checkpoint: {err}", path.display()),
            })?;
        if checkpoint.version != CHECKPOINT_VERSION {
            return Err(PipelineError::Resume {
                path: artifacts.to_owned(),
                message: format!(
                    "checkpoint version {} is not supported (this efix writes {CHECKPOINT_VERSION})",
                    checkpoint.version
                ),
            });
        }
        Ok(checkpoint)
    }

    /// Write the checkpoint atomically (temp file, then rename), never through a link
    /// below the repository `root`.
    pub(crate) fn save(&self, root: &Path, artifacts: &Path) -> Result<(), PipelineError> {
        let text = serde_json::to_string(self).map_err(|err| PipelineError::Artifacts {
            what: "serialize the checkpoint".to_owned(),
            source: std::io::Error::other(err),
        })?;
        super::artifacts::write_atomic(root, artifacts, CHECKPOINT_FILE, text.as_bytes())
    }
}
