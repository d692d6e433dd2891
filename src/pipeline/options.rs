//! What the user asked `efix run` to do, resolved: the options every phase reads and the
//! checkpoint records. Plain data; it imports nothing of the phases.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

/// How to rebuild the engine for a resumed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineSpec {
    /// `openai`, `acp` or `replay`.
    pub kind: String,
    /// The replay file, for `replay`.
    #[serde(default)]
    pub replay: Option<PathBuf>,
}
