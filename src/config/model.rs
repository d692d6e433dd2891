//! The resolved configuration ([`Config`]) and the inputs of resolution besides the file: the
//! command-line [`Overrides`] and the [`Env`] snapshot.
//!
//! This module only defines shapes; `resolve` fills them and holds every default.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::patch::PatchPolicy;
use crate::runner::RunnerSettings;

/// Which engine proposes plans and fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// An OpenAI-compatible HTTP API.
    Openai,
    /// An agent started as a subprocess, spoken to with the Agent Client Protocol over stdio.
    Acp,
    /// Recorded answers from a replay file.
    Replay,
}

impl EngineKind {
    /// Every engine, in the order they are documented.
    pub const ALL: [EngineKind; 3] = [EngineKind::Openai, EngineKind::Acp, EngineKind::Replay];

    /// The name used in the config file, the environment and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Openai => "openai",
            EngineKind::Acp => "acp",
            EngineKind::Replay => "replay",
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EngineKind {
    type Err = String;

    /// Parses `openai`, `acp` or `replay`; the error text is what was expected.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        EngineKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or_else(|| "one of openai, acp, replay".to_owned())
    }
}

/// Defines a config enum whose values are lowercase words, with its `as_str`.
macro_rules! config_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The name used in the config file.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

config_enum!(
    /// Which dialect of the OpenAI API the server speaks.
    OpenaiFlavor {
        /// `Authorization: Bearer` and plain URLs: OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
        /// OpenRouter.
        Openai => "openai",
        /// Azure OpenAI: an `api-key` header and an `api-version` query parameter.
        Azure => "azure",
    }
);

config_enum!(
    /// What an ACP agent may do.
    AcpMode {
        /// Every permission request is rejected; the agent's text is the answer.
        Answer => "answer",
        /// Tool calls that only edit files inside the repository are allowed once; the
        /// working tree's change is the answer.
        Edit => "edit",
    }
);

config_enum!(
    /// What happens when a prompt holds something the redaction rules match.
    SecretsInPrompt {
        /// The call is not made; the run stops with exit 1.
        Deny => "deny",
        /// The prompt is sent as it is.
        Allow => "allow",
        /// Each secret is replaced by a placeholder (`EFIX_SECRET_1`) before sending, and put
        /// back only into the files the applied patch writes.
        Tokenize => "tokenize",
    }
);

config_enum!(
    /// The form the fix prompt asks for.
    FixFormat {
        /// Exact-text replacements (`edits`): what models get right most often.
        Edits => "edits",
        /// One unified diff in `output`.
        Diff => "diff",
    }
);

/// The OpenAI-compatible engine's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenaiConfig {
    pub model: String,
    /// Name of the environment variable holding the API key (the key is read by the engine);
    /// empty when no key is sent.
    pub api_key_env: String,
    pub base_url: String,
    /// Timeout of one request.
    pub timeout: Duration,
    pub max_retries: u32,
    pub flavor: OpenaiFlavor,
    /// The `api-version` query parameter (Azure).
    pub api_version: String,
}

/// What one million tokens of a model cost, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub prompt: f64,
    pub completion: f64,
}

/// Limits on what the engine may consume over a run; `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineBudget {
    pub max_calls: Option<u32>,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    /// Prices per model name.
    pub prices: BTreeMap<String, Price>,
    /// Largest prompt sent, in bytes (system and user parts together).
    pub max_input_bytes: usize,
}

/// Test policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestConfig {
    /// A regression test (or proven reproduction guard) is required.
    pub required: bool,
    /// Suites that must pass after the fix (command strings).
    pub required_suites: Vec<String>,
    /// Longest baseline run of the derived whole suite before it is narrowed.
    pub suite_budget: Duration,
}

/// Who may trigger a run by a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerConfig {
    /// `author_association` values whose `/efix` comments are considered (upper case).
    pub allowed_associations: Vec<String>,
}

/// Prompt template overrides, already joined with the repository root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOverrides {
    /// Replaces the built-in plan prompt.
    pub plan: Option<PathBuf>,
    /// Replaces the built-in fix prompt.
    pub fix: Option<PathBuf>,
    /// A directory whose `system.md`, `plan.md`, `fix.md`, `feedback.md` and
    /// `malformed-retry.md` replace the built-in ones (each only when present).
    pub dir: Option<PathBuf>,
}

/// Everything a run needs, resolved; nothing here is optional except what is truly absent
/// (no config file, no ACP agent configured, no prompt override).
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the config came from (`None` = defaults only).
    pub source: Option<PathBuf>,
    pub engine: EngineKind,
    pub openai: OpenaiConfig,
    /// Command line of the ACP agent (`acp.command`), unsplit.
    pub acp_command: Option<String>,
    /// Timeout of one request to the ACP agent.
    pub acp_timeout: Duration,
    /// The ACP agent's environment: the commands' pass-through list plus the variables
    /// `acp.env-pass` names (its own credentials).
    pub acp_env: Vec<(OsString, OsString)>,
    pub acp_mode: AcpMode,
    /// Paths the ACP agent may also write (`acp.writable`).
    pub acp_writable: Vec<PathBuf>,
    pub test: TestConfig,
    /// Programs (basenames) that may be run.
    pub allow: Vec<String>,
    /// Per-command timeout.
    pub command_timeout: Duration,
    /// Commands run before the reproduction, with the network (`commands.setup`).
    pub setup: Vec<String>,
    /// Whether reproduction, fix and proof commands may use the network.
    pub network: bool,
    /// Names of environment variables whose values are redacted.
    pub redact: Vec<String>,
    pub secrets_in_prompt: SecretsInPrompt,
    /// Names listed in `sandbox.env-pass` (or present by default) that were not passed because
    /// they look like credentials.
    pub env_dropped: Vec<String>,
    /// Maximum number of fix rounds.
    pub max_rounds: u32,
    /// Fix candidates per round (`fix:`).
    pub candidates: Candidates,
    /// Timeout of the whole run.
    pub run_timeout: Duration,
    pub prompt_overrides: PromptOverrides,
    pub fix_format: FixFormat,
    pub engine_budget: EngineBudget,
    pub trigger: TriggerConfig,
    pub patch: PatchPolicy,
    pub runner: RunnerSettings,
}

/// How many fix answers a round asks for and how they are proven (`fix:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidates {
    /// Independent answers per round; 1 proves the one answer in the working tree.
    pub count: u32,
    /// Candidates proven at the same time, at least 1 and at most `count`.
    pub jobs: u32,
    /// Whether the first fully proven candidate wins and the others are cancelled.
    pub first_proven: bool,
}

/// Values given on the command line; each one, when present, beats the environment and the
/// file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Repository root (`--repo`); prompt override paths are joined to it. Empty means the
    /// current directory.
    pub repo: PathBuf,
    /// `--engine`.
    pub engine: Option<EngineKind>,
    /// `--timeout-seconds` of `efix run`: the whole run.
    pub run_timeout: Option<Duration>,
    /// `--max-rounds`.
    pub max_rounds: Option<u32>,
    /// `--candidates`.
    pub candidates: Option<u32>,
    /// `--jobs`.
    pub jobs: Option<u32>,
    /// `--first-proven`.
    pub first_proven: bool,
    /// `--suite`, repeatable. When non-empty it REPLACES `test.required-suites` (it is not
    /// appended), so a maintainer can narrow a run to the suites they care about.
    pub suites: Vec<String>,
    /// `--timeout-seconds` of `efix exec`: one command.
    pub command_timeout: Option<Duration>,
}

/// A snapshot of efix's own environment, taken once in `main`; resolution and the runner read
/// this, never `std::env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: Vec<(OsString, OsString)>,
}

impl Env {
    /// Snapshot the current process environment.
    pub fn capture() -> Self {
        std::env::vars_os().collect()
    }

    /// The value of `name`, if set (the last one wins if a name repeats).
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_os_str())
    }

    /// All variables, in the order captured.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }
}

impl<K: Into<OsString>, V: Into<OsString>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Env {
            vars: iter
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }
}
