//! Configuration: the `.efix.yml` file layer (every field optional, unknown keys rejected) and
//! the resolved [`Config`] with every default in one place.
//!
//! Precedence is CLI > environment > file > default. After [`Config::resolve`] nothing is
//! optional and nothing reads the environment again.

use std::path::PathBuf;
use std::time::Duration;

use crate::patch::PatchPolicy;
use crate::runner::RunnerSettings;

/// Which engine proposes plans and fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Openai,
    Acp,
    Replay,
}

/// The OpenAI-compatible engine's settings.
#[derive(Debug, Clone)]
pub struct OpenaiConfig {
    pub model: String,
    pub api_key_env: String,
    pub base_url: String,
    pub timeout: Duration,
    pub max_retries: u32,
}

/// Test policy.
#[derive(Debug, Clone)]
pub struct TestConfig {
    /// A regression test (or proven reproduction guard) is required.
    pub required: bool,
    /// Suites that must pass after the fix (command strings).
    pub required_suites: Vec<String>,
}

/// Everything a run needs, resolved; nothing here is optional.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the config came from (`None` = defaults only).
    pub source: Option<PathBuf>,
    pub engine: EngineKind,
    pub openai: OpenaiConfig,
    pub test: TestConfig,
    /// Programs (basenames) that may be run.
    pub allow: Vec<String>,
    /// Per-command timeout.
    pub command_timeout: Duration,
    /// Whether children may use the network (recorded; enforced by later sandbox tiers).
    pub network: bool,
    /// Names of environment variables whose values are redacted.
    pub redact: Vec<String>,
    pub patch: PatchPolicy,
    pub runner: RunnerSettings,
}
