//! The runner's interface types: what the caller asks for ([`CommandSpec`], [`RunnerSettings`])
//! and what it gets back ([`Outcome`], [`SandboxReport`], [`RunnerError`]), with the default
//! limits.
//!
//! It does not run anything; `spawn` does.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sandbox::{Access, Network, SandboxSettings, Tier};

/// Bytes kept from the start of each stream by default (64 KiB): enough for the command's
/// banner and the first failures.
pub const DEFAULT_OUTPUT_HEAD_BYTES: usize = 64 * 1024;

/// Bytes kept from the end of each stream by default (256 KiB): test summaries are at the end,
/// so the tail gets the larger share.
pub const DEFAULT_OUTPUT_TAIL_BYTES: usize = 256 * 1024;

/// Time between SIGTERM and SIGKILL on timeout or cancel by default (5 s): long enough for a
/// test runner to print its summary, short enough not to stall a CI job.
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(5);

/// How long efix keeps reading the pipes after the command's process group is gone (500 ms).
///
/// A process that left the group (`setsid`) can hold the pipes open forever; after this bound
/// efix closes its ends and reports what it has.
pub const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

/// Exit code reported when the program does not exist (the shell's convention).
pub const EXIT_NOT_FOUND: i32 = 127;

/// Exit code reported when the program exists but cannot be executed (the shell's convention).
pub const EXIT_NOT_EXECUTABLE: i32 = 126;

/// Errors that stop the runner from producing an [`Outcome`] at all.
///
/// A command that fails, times out, is killed or does not exist is *not* an error: it is an
/// [`Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The argv was empty; the caller must reject the command before running it.
    #[error("run an empty command")]
    EmptyCommand,
    /// The working directory does not exist or is not a directory; the caller reports the
    /// path (it usually comes from `--repo`) and stops.
    #[error("use {} as the working directory", path.display())]
    WorkingDirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The redaction rules could not be compiled, in practice because a configured secret is
    /// enormous; the caller reports it and stops, since running without redaction could leak.
    #[error("build the redaction rules: {reason}")]
    Redaction { reason: String },
    /// The helper could not confine the child to the required tier (`sandbox.require`), so
    /// the command was not executed; the caller refuses the run (exit 4) with the reasons.
    #[error(
        "confine a command to the required sandbox tier: only `{achieved}` was achieved ({})",
        missing.join("; ")
    )]
    TierNotAchieved {
        achieved: Tier,
        missing: Vec<String>,
    },
    /// The sandbox helper failed before the command (a plan from another efix version, a
    /// helper that is not efix); the caller reports it and stops.
    #[error("start the command through the sandbox helper: {reason}")]
    Helper { reason: String },
    /// An OS call failed (pipe, fork, poll, wait); the caller reports it and stops.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl RunnerError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }
}

/// A secret whose exact value (and encodings) must never leave efix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// Environment variable name, used as the redaction rule id (`env:NAME`).
    pub name: String,
    /// The value as read from efix's own environment at start-up.
    pub value: String,
}

/// How every child is run; resolved once from the config.
#[derive(Debug, Clone)]
pub struct RunnerSettings {
    /// The complete environment the child gets (already scrubbed, see `child_env`).
    pub env: Vec<(OsString, OsString)>,
    /// Bytes kept from the start of each stream.
    pub output_head_bytes: usize,
    /// Bytes kept from the end of each stream.
    pub output_tail_bytes: usize,
    /// Time between SIGTERM and SIGKILL on timeout or cancel.
    pub term_grace: Duration,
    /// Secrets to redact by exact value and encoded forms.
    pub secrets: Vec<Secret>,
    /// How children are confined.
    pub sandbox: SandboxSettings,
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
    /// Network and repository access beyond what every command gets.
    pub access: Access,
}

/// What happened, as recorded evidence and as the `efix exec` JSON object.
///
/// Conventions: a program that does not exist gets `exit_code` 127 and stderr
/// `efix: program not found: NAME`; one that exists but cannot be executed gets 126 and
/// `efix: program not executable: NAME (REASON)`. A child stopped by efix (timeout, or a
/// cancel because efix itself was interrupted) has `timed_out: true`; `exit_code` is null and
/// `signal` names the signal when it died from one. Every text field, `argv` included, has
/// been redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// The command as run (redacted).
    pub argv: Vec<String>,
    /// Exit code; null when the process died from a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended the process (`SIGKILL`, `SIGTERM`, ...), if any.
    pub signal: Option<String>,
    /// Whether efix stopped the process (timeout or cancel).
    pub timed_out: bool,
    /// Wall time from spawn until the process exit was observed.
    pub duration_ms: u64,
    /// Redacted head and tail of stdout, with a marker line where bytes were omitted.
    pub stdout: String,
    /// Redacted head and tail of stderr, with a marker line where bytes were omitted.
    pub stderr: String,
    /// Exact number of bytes the child wrote to stdout (before redaction).
    pub stdout_bytes: u64,
    /// Exact number of bytes the child wrote to stderr (before redaction).
    pub stderr_bytes: u64,
    /// Whether bytes were omitted from `stdout` or `stderr`.
    pub truncated: bool,
    /// Redactions made, by rule id (`env:NAME`, `github-token`, ...).
    pub redactions: BTreeMap<String, u64>,
    /// The isolation actually applied.
    pub sandbox: SandboxReport,
}

/// What isolation was actually applied to a child, as observed, never assumed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SandboxReport {
    /// The strongest tier achieved (see [`Tier`]): `none` when nothing ran.
    pub tier: Tier,
    /// The child led its own process group (read back from `/proc/<pid>/stat`).
    pub process_group: bool,
    /// The child set SIGKILL as its parent-death signal (checked in the child before exec).
    pub parent_death_signal: bool,
    /// The child started from an empty environment plus the pass-through list.
    pub env_cleared: bool,
    /// Names of the variables the child received, sorted (`TMPDIR` is its private temporary
    /// directory, whose path is also the mark the sweep finds its processes by).
    pub env_passed: Vec<String>,
    /// efix itself was non-dumpable while the child ran (read back with `PR_GET_DUMPABLE`).
    pub non_dumpable_parent: bool,
    /// The child's stdin was `/dev/null`.
    pub stdin_null: bool,
    /// Whether the pipes were still held open (by a process that escaped the group) when the
    /// drain bound expired, so late output may be missing.
    pub drain_cut_short: bool,
    /// `no_new_privs` was set: setuid programs (`sudo`) and file capabilities gain nothing.
    #[serde(default)]
    pub no_new_privs: bool,
    /// The landlock ABI the kernel enforced on the child's writes; null when none.
    #[serde(default)]
    pub landlock_abi: Option<u32>,
    /// Where the child could write when landlock was enforced: the repository (unless read
    /// only), its private temporary directory, the configured caches and a few devices.
    #[serde(default)]
    pub writable: Vec<String>,
    /// The seccomp filter was installed (no `ptrace`, `process_vm_*`, `io_uring`, `bpf`,
    /// `perf_event_open`, `kexec_*`, keyring calls).
    #[serde(default)]
    pub seccomp: bool,
    /// How the network was left: `allowed`, `namespace` (isolated, loopback only),
    /// `seccomp` (IPv4/IPv6 sockets refused, no loopback) or `not-isolated`.
    #[serde(default)]
    pub network: Network,
    /// Loopback was usable.
    #[serde(default)]
    pub loopback: bool,
    /// Paths made read-only by a mount namespace (`.git`, an artifacts directory).
    #[serde(default)]
    pub read_only: Vec<String>,
    /// Capabilities removed from a root child (it could not regain them).
    #[serde(default)]
    pub capabilities_dropped: Vec<String>,
    /// Why each mechanism that was not applied is missing.
    #[serde(default)]
    pub missing: Vec<String>,
    /// Processes of the command still alive after it ended, killed by efix.
    #[serde(default)]
    pub leaked_processes: u64,
    /// Their command lines (redacted), the first 20 by pid.
    #[serde(default)]
    pub leaked: Vec<String>,
}
