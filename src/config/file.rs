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

use super::EngineKind;

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
    /// Prompt template overrides.
    pub prompts: Option<PromptsFile>,
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
    /// `OPENAI_API_KEY`.
    pub api_key_env: Option<String>,
    /// Base URL of the OpenAI-compatible API, up to and including the version path. Default
    /// `https://api.openai.com/v1`; overridden by `EFIX_OPENAI_BASE_URL`.
    pub base_url: Option<String>,
    /// Timeout of one API request, in milliseconds. Default 120000.
    pub timeout_ms: Option<Millis>,
    /// How many times a failed request is retried. Default 2.
    pub max_retries: Option<Count>,
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
    /// Timeout of one request to the agent, in milliseconds. Default 600000.
    pub timeout_ms: Option<Millis>,
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
    /// `GOMODCACHE`).
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
