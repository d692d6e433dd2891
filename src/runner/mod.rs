//! The sandboxed command runner: every child starts through efix's own helper mode, which
//! confines it (`no_new_privs`, seccomp, landlock, mount and network namespaces, a root
//! child's capabilities) and reports what the kernel enforced before executing it; then argv
//! only, own process group, parent-death signal, scrubbed environment, timeout with
//! TERM→grace→KILL on the whole group, bounded head+tail capture, redaction before anything is
//! stored, and a sweep that kills what the command left running.
//!
//! It does not decide *whether* a command may run (that is `policy::command`) and it never
//! goes through a shell.
//!
//! Layout: `model` (interface types and limits), `agent` (long-lived children an engine
//! speaks to over stdio, through the helper), `sandbox` (tiers and what is asked and
//! achieved), `env` (the child environment), `launch` (the parent side of helper mode),
//! `helper` (the child side), `landlock`, `seccomp` and `namespaces` (the mechanisms), `probe`
//! (what the machine gives), `sweep` (escaped processes), `spawn` (supervision), `rules` and
//! `redact` (what is redacted and how, over a stream), `capture` (head and ring tail), `linux`
//! (small platform calls).

mod agent;
#[doc(hidden)]
pub mod bench;
mod capture;
mod env;
mod helper;
#[cfg(target_os = "linux")]
mod landlock;
mod launch;
mod linux;
mod model;
#[cfg(target_os = "linux")]
mod namespaces;
mod probe;
mod redact;
mod rules;
mod sandbox;
#[cfg(target_os = "linux")]
mod seccomp;
mod spawn;
mod sweep;
mod tokens;

// The behaviour tests drive real processes through /proc, which only Linux has.
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod tests;

pub use agent::{Agent, create_writable, resolve_program, writable_state};
pub use env::{DEFAULT_ENV_PASS, child_env, is_github_channel, is_never_passed};
pub use helper::{HELPER_ARG, entry as helper_entry};
pub use model::{
    CommandSpec, DEFAULT_OUTPUT_HEAD_BYTES, DEFAULT_OUTPUT_TAIL_BYTES, DEFAULT_TERM_GRACE,
    DRAIN_TIMEOUT, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, Outcome, RunnerError, RunnerSettings,
    SandboxReport, Secret,
};
pub use probe::{TierUnavailable, check_required};
pub use redact::{SecretMatch, redact_text, secret_matches};
pub use sandbox::{Access, Confinement, Mechanism, Network, SELF_EXE, SandboxSettings, Tier};
pub use spawn::{run, run_cancellable};
pub use sweep::MARKER_VAR;

/// The redaction rules, for messages built outside the runner (GitHub's answers in `publish`).
pub(crate) use redact::Redactor;

/// Where `text` holds a configured secret's value (in any encoding the redaction knows) or a
/// provider token: the rules that guard code, which leave out fixture-shaped credentials such
/// as `postgres://test:test@localhost` and sample JWTs.
pub fn secrets_in_code(text: &str, secrets: &[Secret]) -> Result<Vec<SecretMatch>, RunnerError> {
    let redactor = redact::Redactor::cached(secrets)?;
    Ok(redactor
        .find_in_code(text.as_bytes())
        .into_iter()
        .map(|(rule, range)| SecretMatch { rule, range })
        .collect())
}

/// Harden efix itself before it starts any child: non-dumpable (children of the same uid
/// cannot read `/proc/<efix>/environ` or attach to it), a child subreaper (orphans of its
/// commands come back to it), and the declaration that this process starts children only
/// through the runner, so every orphan is known to be a command's. Returns whether efix is
/// non-dumpable afterwards, read back from the kernel.
///
/// Only the efix binary calls this; a library user that starts other children must not.
pub fn harden_self() -> bool {
    sweep::only_runner_children();
    sweep::ensure_subreaper();
    linux::harden_self()
}
