//! The `.efix.yml` file layer: exactly what a user may write, every field optional except
//! `version`, unknown keys rejected.
//!
//! This module owns the serde and JSON Schema shape of the file and nothing else: defaults,
//! precedence and validation of values live in `resolve`, and reading the file lives in `load`.
//! Numbers use small newtypes ([`Millis`], [`Bytes`], [`Count`]) whose only job is to say what
//! was expected in a wrong-type error ("expected an integer number of milliseconds" instead of
//! serde's "expected u64"); the doc comments on fields become the schema's descriptions, which
//! are the user's documentation of each key.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::{AcpMode, EngineKind, FixFormat, OpenaiFlavor, SecretsInPrompt};

/// The only config format version this build reads.
pub const CONFIG_VERSION: u64 = 1;

/// The `.efix.yml` file as written, before defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of keys such as `version: 1`"
)]
#[schemars(title = "efix configuration (.efix.yml)")]
pub struct FileConfig {
    /// Format version of this file; must be `1`.
    pub version: Version,
    /// Which engine proposes plans and fixes: `openai` (an OpenAI-compatible HTTP API), `acp`
    /// (an agent started as a subprocess, Agent Client Protocol over stdio) or `replay` (recorded
    /// answers from a file). Default `openai`; overridden by `EFIX_ENGINE` and `--engine`.
    pub engine: Option<EngineKind>,
    /// Settings of the OpenAI-compatible engine.
    pub openai: Option<OpenaiFile>,
    /// Settings of the ACP (Agent Client Protocol) engine.
    pub acp: Option<AcpFile>,
    /// What the fix must prove about tests.
    pub test: Option<TestFile>,
    /// Hard limits on the size of the change, measured on the applied diff.
    pub diff: Option<DiffFile>,
    /// Which programs efix may run, and for how long.
    pub commands: Option<CommandsFile>,
    /// Network access and secret redaction.
    pub security: Option<SecurityFile>,
    /// What commands see of efix's environment and how much of their output is kept.
    pub sandbox: Option<SandboxFile>,
    /// Which files a patch may touch.
    pub paths: Option<PathsFile>,
    /// Limits on the whole run.
    pub budget: Option<BudgetFile>,
    /// How many fix candidates each round asks for and proves side by side.
    pub fix: Option<FixFile>,
    /// Prompt template overrides.
    pub prompts: Option<PromptsFile>,
    /// Who may start efix with a `/efix <command>` comment.
    pub trigger: Option<TriggerFile>,
}

/// `openai:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `openai` keys"
)]
pub struct OpenaiFile {
    /// Model name sent to the API. Default `gpt-4o-mini`; overridden by `EFIX_OPENAI_MODEL`.
    pub model: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself). Default
    /// `OPENAI_API_KEY`; `""` sends no key (local servers such as Ollama need none). A run
    /// whose variable is unset stops with exit 2 naming it.
    pub api_key_env: Option<String>,
    /// Base URL of the OpenAI-compatible API, up to and including the version path. Default
    /// `https://api.openai.com/v1`; overridden by `EFIX_OPENAI_BASE_URL`.
    pub base_url: Option<String>,
    /// Timeout of one API request, in milliseconds. Default 120000.
    pub timeout_ms: Option<Millis>,
    /// How many times a request is retried after HTTP 429, a 5xx, a reset connection or a
    /// timeout (exponential backoff with full jitter, honouring `Retry-After`), within the
    /// run's time budget. Default 2.
    pub max_retries: Option<Count>,
    /// `openai` (default: OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter) or `azure`
    /// (Azure OpenAI: `api-key` header and `api-version` query; `base-url` is the deployment,
    /// `https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT`).
    pub flavor: Option<OpenaiFlavor>,
    /// The `api-version` query parameter sent with `flavor: azure`. Default `2024-10-21`.
    pub api_version: Option<String>,
}

/// `acp:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `acp` keys"
)]
pub struct AcpFile {
    /// Command line of the agent to start (split like a shell would, but never run by one),
    /// e.g. `my-agent --acp`. Required when `engine` is `acp`.
    pub command: Option<String>,
    /// Timeout of one request to the agent, in milliseconds; the agent's process group is
    /// killed when it runs out. Default 600000.
    pub timeout_ms: Option<Millis>,
    /// Names of environment variables passed to the agent on top of the built-in list (PATH,
    /// HOME, LANG...): its own credentials, such as `ANTHROPIC_API_KEY`. Only these are
    /// passed; efix's own API key never is.
    pub env_pass: Option<StringList>,
    /// `answer` (default): every permission request is rejected and the agent's text is the
    /// answer. `edit`: a tool call that only edits files inside the repository is allowed
    /// once, and the change the agent made is the answer (efix restores the tree and applies
    /// the change itself, through the same checks).
    pub mode: Option<AcpMode>,
    /// Directories (or files) the agent may write besides its private temporary directory and
    /// the caches of `sandbox.writable`: its own state outside the repository, such as
    /// `~/.claude`, `~/.claude.json` or `~/.gemini`. Absolute, or starting with `~/`. Default
    /// none: under landlock an agent that writes its home directory fails until they are
    /// listed here.
    pub writable: Option<StringList>,
}

/// `test:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `test` keys"
)]
pub struct TestFile {
    /// Whether a fix must come with a regression test proven to fail before and pass after
    /// (or a reproduction command that proves the same). Default `true`.
    pub required: Option<bool>,
    /// Commands that must pass after the fix, e.g. `cargo test`. Default none; `--suite` on the
    /// command line replaces this list.
    pub required_suites: Option<StringList>,
    /// With no suite configured, efix runs the whole suite of the reproduction's runner
    /// (`pytest` for `pytest tests/a.py::t`) before and after the fix. When that suite's run
    /// before the fix takes longer than this, efix narrows it to the reproduction's files or
    /// targets and says so in the PR title and body. Default 600000 (10 minutes).
    pub suite_budget_ms: Option<Millis>,
}

/// `diff:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `diff` keys"
)]
pub struct DiffFile {
    /// Maximum number of files a fix may change. Default 8.
    pub max_files: Option<Count>,
    /// Maximum number of changed lines (added plus removed). Default 300.
    pub max_loc: Option<Count>,
}

/// `commands:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `commands` keys"
)]
pub struct CommandsFile {
    /// Program names (basenames, not paths) that may be run. Replaces the default list `node
    /// npm npx pnpm yarn pytest cargo go python python3 make`. Shells and wrappers such as
    /// `bash`, `env` or `sudo` run only when listed here by name.
    pub allow: Option<StringList>,
    /// Timeout of one command, in milliseconds. Default 600000; overridden by
    /// `EFIX_COMMAND_TIMEOUT_MS`.
    pub timeout_ms: Option<Millis>,
    /// Time between SIGTERM and SIGKILL when a command times out, in milliseconds. Default
    /// 5000.
    pub term_grace_ms: Option<Millis>,
    /// Commands run once before the reproduction, with the network allowed, to fetch
    /// dependencies (e.g. `cargo fetch`, `npm ci`, `pip install -e .`); recorded as setup.
    /// Each must pass the allowlist like any other command. Default none.
    pub setup: Option<StringList>,
}

/// `security:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `security` keys"
)]
pub struct SecurityFile {
    /// Whether the reproduction, fix and proof commands may use the network. Default `false`:
    /// they run in a network namespace of their own with loopback up (test suites may start
    /// local servers), or, where the machine has no namespaces, with IPv4 and IPv6 sockets
    /// refused. `commands.setup` always has the network.
    pub network: Option<bool>,
    /// Names of environment variables whose values are redacted from all output. Replaces the
    /// default list `GITHUB_TOKEN OPENAI_API_KEY`.
    pub redact: Option<StringList>,
    /// What to do when a prompt holds a secret (a value of a `redact` variable or a token the
    /// redaction rules know): `deny` (default; the call is not made and the run stops with
    /// exit 1), `tokenize` (each secret becomes a placeholder such as `EFIX_SECRET_1`, put
    /// back only into the files the applied patch writes) or `allow`.
    pub secrets_in_prompt: Option<SecretsInPrompt>,
}

/// `sandbox:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `sandbox` keys"
)]
pub struct SandboxFile {
    /// Extra environment variable names passed to commands, on top of the built-in list (PATH,
    /// HOME, LANG, toolchain variables...). Names that look like credentials are never passed.
    pub env_pass: Option<StringList>,
    /// Bytes kept from the start of each output stream of a command. Default 65536.
    pub output_head_bytes: Option<Bytes>,
    /// Bytes kept from the end of each output stream of a command. Default 262144.
    pub output_tail_bytes: Option<Bytes>,
    /// The weakest sandbox tier commands may run under: `none` (default: best effort, the tier
    /// achieved is recorded), `process` (no_new_privs and the seccomp filter), `filesystem`
    /// (plus landlock: writes only to the repository, a private temporary directory and the
    /// caches) or `full` (plus namespaces: `.git` read-only and, without network, a network
    /// namespace). When the machine cannot give it, efix refuses before running anything
    /// (exit 4) and names the missing mechanism.
    pub require: Option<RequiredTier>,
    /// Paths commands may write besides the repository and their private temporary
    /// directory: absolute, or starting with `~/`. Replaces the default list, the package and
    /// build caches of cargo (`$CARGO_HOME/registry`, `$CARGO_HOME/git` and its lock files),
    /// npm (`~/.npm`), pip (`~/.cache/pip`), uv (`~/.cache/uv`) and go (`GOCACHE`,
    /// `GOMODCACHE`), plus `CARGO_TARGET_DIR` when it is set.
    pub writable: Option<StringList>,
}

/// A value of `sandbox.require`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RequiredTier {
    /// Best effort: run under whatever the machine gives, and record it.
    None,
    /// `no_new_privs` and the seccomp filter.
    Process,
    /// Plus landlock write confinement.
    Filesystem,
    /// Plus mount and network namespaces.
    Full,
}

/// `paths:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `paths` keys"
)]
pub struct PathsFile {
    /// Globs no patch may touch. Replaces the default list `.github/workflows/**`, `.efix.yml`.
    pub protected: Option<StringList>,
    /// When non-empty, globs of the only paths a patch may touch. Default empty (anywhere not
    /// protected).
    pub allow: Option<StringList>,
    /// Whether a patch may delete files. Default `false`.
    pub allow_delete: Option<bool>,
    /// Globs of test-harness files a patch may change all the same. Default empty: a change to
    /// `conftest.py`, `pytest.ini`, `tox.ini`, `setup.cfg` test sections, `pyproject.toml` test
    /// tables, `sitecustomize.py`/`usercustomize.py`/`*.pth`, jest, vitest, mocha, ava or karma
    /// configs, the `scripts`, `jest`, `mocha`, `ava` and `tap` fields of `package.json`,
    /// `.cargo/config.toml`, `build.rs`, or a file that defines a command efix runs (`Makefile`
    /// for `make test`) is refused as `check.test-harness`, because it can make failing tests
    /// pass without a fix. List a file here (e.g. `tests/conftest.py`) when a fix legitimately
    /// needs to change it; the change then counts as part of the test side of the fix.
    pub allow_harness: Option<StringList>,
}

/// `fix:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `fix` keys"
)]
pub struct FixFile {
    /// Independent fix answers per round, each proven in its own scratch copy of the base
    /// commit; the smallest fully proven one wins. Default 1 (one answer, proven in the
    /// working tree); overridden by `--candidates`.
    pub candidates: Option<Count>,
    /// Candidates proven at the same time. Default: the number of cores, at most
    /// `candidates`; overridden by `--jobs`.
    pub jobs: Option<Count>,
    /// Whether the first fully proven candidate wins at once (the others are cancelled).
    /// Default `false`; set by `--first-proven`.
    pub first_proven: Option<bool>,
}

/// `budget:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `budget` keys"
)]
pub struct BudgetFile {
    /// Maximum number of fix rounds. Default 3; overridden by `EFIX_MAX_ROUNDS` and
    /// `--max-rounds`.
    pub max_rounds: Option<Count>,
    /// Timeout of the whole run, in milliseconds. Default 1800000; overridden by
    /// `--timeout-seconds`.
    pub run_timeout_ms: Option<Millis>,
    /// Most engine calls (plan and fix) per run. Default: no limit beyond the rounds.
    pub max_engine_calls: Option<Count>,
    /// Most tokens (prompt plus completion, as the engine reports them) per run. Default: no
    /// limit.
    pub max_tokens: Option<Tokens>,
    /// Most US dollars per run, priced with `prices`. Default: no limit. Needs a price for
    /// the model.
    pub max_cost_usd: Option<Usd>,
    /// Prices per model name, e.g. `gpt-4o-mini: {prompt-usd-per-mtok: 0.15,
    /// completion-usd-per-mtok: 0.6}`.
    pub prices: Option<BTreeMap<String, PriceFile>>,
    /// Largest prompt sent to the engine, in bytes; longer prompts are cut (file lists, then
    /// file contents, then the failure output) and the cut is recorded. Default 200000.
    pub max_input_bytes: Option<Bytes>,
}

/// The price of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping with `prompt-usd-per-mtok` and `completion-usd-per-mtok`"
)]
pub struct PriceFile {
    /// US dollars per million prompt tokens.
    pub prompt_usd_per_mtok: Usd,
    /// US dollars per million completion tokens.
    pub completion_usd_per_mtok: Usd,
}

/// `prompts:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `prompts` keys"
)]
pub struct PromptsFile {
    /// Path of a template replacing the built-in plan prompt, relative to the repository root.
    pub plan: Option<String>,
    /// Path of a template replacing the built-in fix prompt, relative to the repository root.
    pub fix: Option<String>,
    /// Directory (relative to the repository root) whose `system.md`, `plan.md`, `fix.md`,
    /// `feedback.md` and `malformed-retry.md` replace the built-in prompts, each only when
    /// present. `plan` and `fix` above win over this directory.
    pub dir: Option<String>,
    /// What the fix prompt asks for: `edits` (default; exact-text replacements, which models
    /// get right most often) or `diff` (one unified diff).
    pub fix_format: Option<FixFormat>,
}

/// `trigger:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename_all = "kebab-case",
    deny_unknown_fields,
    expecting = "a mapping of `trigger` keys"
)]
pub struct TriggerFile {
    /// `author_association` values (as GitHub spells them: `OWNER`, `MEMBER`, `COLLABORATOR`,
    /// `CONTRIBUTOR`, `FIRST_TIME_CONTRIBUTOR`, `FIRST_TIMER`, `MANNEQUIN`, `NONE`) whose
    /// `/efix` comments are considered. Default `OWNER MEMBER COLLABORATOR`. The commenter must
    /// also have write, maintain or admin permission on the repository, whatever this says.
    pub allowed_associations: Option<StringList>,
}

/// The `version` key: only [`CONFIG_VERSION`] is accepted, so a file written for a future
/// format fails loudly instead of being half understood.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Version;

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl Visitor<'_> for VersionVisitor {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "{CONFIG_VERSION} (the only config version this efix reads)"
                )
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Version, E> {
                if value == CONFIG_VERSION {
                    Ok(Version)
                } else {
                    Err(E::invalid_value(de::Unexpected::Unsigned(value), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Version, E> {
                Err(E::invalid_value(de::Unexpected::Signed(value), &self))
            }
        }
        deserializer.deserialize_u64(VersionVisitor)
    }
}

impl JsonSchema for Version {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Version".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer", "const": CONFIG_VERSION })
    }
}

/// Defines a non-negative integer newtype whose wrong-type error names the unit.
macro_rules! integer_newtype {
    ($(#[$doc:meta])* $name:ident($inner:ty), $expecting:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_u64<E: de::Error>(self, value: u64) -> Result<$name, E> {
                        <$inner>::try_from(value)
                            .map($name)
                            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(value), &self))
                    }
                    fn visit_i64<E: de::Error>(self, value: i64) -> Result<$name, E> {
                        u64::try_from(value)
                            .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
                            .and_then(|value| self.visit_u64(value))
                    }
                }
                deserializer.deserialize_u64(V)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "integer",
                    "minimum": 0,
                    "maximum": <$inner>::MAX,
                })
            }
        }
    };
}

integer_newtype!(
    /// A duration in milliseconds.
    Millis(u64),
    "an integer number of milliseconds"
);
integer_newtype!(
    /// A size in bytes.
    Bytes(u64),
    "an integer number of bytes"
);
integer_newtype!(
    /// A count (files, lines, rounds, retries).
    Count(u32),
    "a whole number"
);
integer_newtype!(
    /// A number of tokens.
    Tokens(u64),
    "an integer number of tokens"
);

/// An amount of US dollars, a non-negative number.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
pub struct Usd(pub f64);

// Amounts come from YAML numbers, never NaN (rejected below), so equality is total.
impl Eq for Usd {}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Usd;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative number of US dollars")
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Usd, E> {
                if value.is_finite() && value >= 0.0 {
                    Ok(Usd(value))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(value), &self))
                }
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Usd, E> {
                Ok(Usd(value as f64))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Usd, E> {
                Err(E::invalid_value(de::Unexpected::Signed(value), &self))
            }
        }
        deserializer.deserialize_f64(V)
    }
}

impl JsonSchema for Usd {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Usd".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "number", "minimum": 0 })
    }
}

/// A list of strings; its own type so that a scalar where a list belongs says "expected a list
/// of strings" rather than "expected a sequence".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StringList(pub Vec<String>);

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = StringList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringList, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(StringList(items))
            }
        }
        deserializer.deserialize_seq(ListVisitor)
    }
}

impl JsonSchema for StringList {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StringList".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "array", "items": { "type": "string" } })
    }
}

/// The JSON Schema of the file layer, pretty-printed with a trailing newline; this is what
/// `efix schema config` prints and what `schemas/config.schema.json` holds.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(FileConfig);
    // Serializing a `serde_json::Value`-backed schema cannot fail; an empty result would be
    // caught by the committed-schema test.
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
