//! The sandboxed command runner: argv only, own process group, parent-death signal, scrubbed
//! environment, timeout with TERM→grace→KILL on the whole group, bounded head+tail capture and
//! redaction before anything is stored.
//!
//! It does not decide *whether* a command may run (that is `policy::command`) and it never
//! goes through a shell. Stronger sandbox tiers (landlock, network namespaces) plug in here.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Errors that stop the runner from producing an [`Outcome`] at all.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The argv was empty; the caller must reject the command before running it.
    #[error("run an empty command")]
    EmptyCommand,
    /// An OS call failed (pipe, fork, wait); the caller reports it and stops.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// A secret whose exact value (and encodings) must never leave efix.
#[derive(Debug, Clone)]
pub struct Secret {
    /// Environment variable name, used as the redaction rule id (`env:NAME`).
    pub name: String,
    /// The value as read from efix's own environment at start-up.
    pub value: String,
}

/// How every child is run; resolved once from the config.
#[derive(Debug, Clone)]
pub struct RunnerSettings {
    /// The complete environment the child gets (already scrubbed).
    pub env: Vec<(OsString, OsString)>,
    /// Bytes kept from the start of each stream.
    pub output_head_bytes: usize,
    /// Bytes kept from the end of each stream.
    pub output_tail_bytes: usize,
    /// Time between SIGTERM and SIGKILL on timeout.
    pub term_grace: Duration,
    /// Secrets to redact by exact value.
    pub secrets: Vec<Secret>,
}

/// One command to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Program and arguments; never interpreted by a shell.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Wall-clock limit.
    pub timeout: Duration,
}

/// What happened, as recorded evidence and as the `efix exec` JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub argv: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub truncated: bool,
    pub redactions: BTreeMap<String, u64>,
    pub sandbox: SandboxReport,
}

/// What isolation was actually applied to a child, as observed, never assumed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SandboxReport {
    pub tier: String,
    pub process_group: bool,
    pub parent_death_signal: bool,
    pub env_cleared: bool,
    pub env_passed: Vec<String>,
    pub non_dumpable_parent: bool,
}

/// Run one command to completion (or timeout) under the sandbox.
pub fn run(spec: &CommandSpec, settings: &RunnerSettings) -> Result<Outcome, RunnerError> {
    let _ = (spec, settings);
    todo!("runner helper implements this")
}

/// Names passed to every child unless dropped by [`is_never_passed`].
pub const DEFAULT_ENV_PASS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TMPDIR",
    "CI",
    "TZ",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOROOT",
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "NODE_PATH",
    "JAVA_HOME",
];

/// Whether a variable is never handed to a child, even when listed explicitly.
pub fn is_never_passed(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
    ];
    const PREFIXES: &[&str] = &["ACTIONS_", "INPUT_"];
    const FRAGMENTS: &[&str] = &["TOKEN", "SECRET", "KEY", "PASSWORD"];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || FRAGMENTS.iter().any(|f| upper.contains(f))
}

fn is_passed(name: &str, extra_pass: &[String]) -> bool {
    DEFAULT_ENV_PASS.contains(&name)
        || name.starts_with("LC_")
        || extra_pass.iter().any(|extra| extra == name)
}

/// Build the child environment from efix's own environment: cleared, then the pass-through
/// list plus `extra_pass`; returns the environment and the listed names that were dropped
/// because they look like credentials.
pub fn child_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    extra_pass: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env = Vec::new();
    let mut dropped = Vec::new();
    for (name, value) in parent {
        let Some(text) = name.to_str() else { continue };
        if !is_passed(text, extra_pass) {
            continue;
        }
        if is_never_passed(text) {
            tracing::warn!(
                name = text,
                "not passing a credential-like variable to commands"
            );
            dropped.push(text.to_owned());
            continue;
        }
        env.push((name, value));
    }
    env.sort();
    dropped.sort();
    (env, dropped)
}

/// Make efix non-dumpable so children cannot read `/proc/<pid>/environ`.
pub fn harden_self() -> bool {
    todo!("runner helper implements this")
}
