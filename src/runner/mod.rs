//! The sandboxed command runner: argv only, own process group, parent-death signal, scrubbed
//! environment, timeout with TERM→grace→KILL on the whole group, bounded head+tail capture and
//! redaction before anything is stored.
//!
//! It does not decide *whether* a command may run (that is `policy::command`) and it never
//! goes through a shell. Stronger sandbox tiers (landlock, network namespaces) plug in here.
//!
//! Layout: `model` (interface types and limits), `env` (the child environment), `spawn`
//! (spawn and supervise), `rules` and `redact` (what is redacted and how, over a stream),
//! `capture` (head and ring tail), `interactive` (a long-lived child spoken to over its pipes,
//! such as an ACP agent), `linux` (platform calls).

#[doc(hidden)]
pub mod bench;
mod capture;
mod env;
mod interactive;
mod linux;
mod model;
mod redact;
mod rules;
mod spawn;

// The behaviour tests drive real processes through /proc, which only Linux has.
#[cfg(all(test, target_os = "linux"))]
mod tests;

pub use env::{DEFAULT_ENV_PASS, child_env, is_github_channel, is_never_passed};
pub use interactive::{interactive_command, kill_process_group};
pub use linux::harden_self;
pub use model::{
    CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, DEFAULT_OUTPUT_TAIL_BYTES, DEFAULT_TERM_GRACE,
    DRAIN_TIMEOUT, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, Outcome, RunnerError, RunnerSettings,
    SandboxReport, Secret,
};
pub use redact::{SecretMatch, redact_text, secret_matches};
pub use spawn::{run, run_cancellable};

/// The redaction rules, for messages built outside the runner (GitHub's answers in `publish`).
pub(crate) use redact::Redactor;
